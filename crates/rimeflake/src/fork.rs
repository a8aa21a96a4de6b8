//! Fork safety: a child process must never continue its parent's counter under the parent's
//! worker ID, nor hold or release the parent's lease.
//!
//! Three mechanisms, so that every kind of fork is caught:
//! - The hot words of each generator (counter, highest reading, fence) live in a page marked
//!   `MADV_WIPEONFORK` on Linux: in a child they read as zero, which shuts the hot path and sends
//!   the first call to the slow path, where the pid tells it the process forked.
//! - An at-fork child handler (armed once with `pthread_atfork`, and callable by bindings through
//!   [`after_fork_in_child`]) shuts every generator's fence and closes the lease descriptors
//!   the child inherited, **without unlocking them**: an `flock` belongs to the open file
//!   description shared with the parent, so unlocking in the child would free the parent's lease.
//! - The slow path compares the pid with the generator's own, which catches forks that skip the
//!   handlers on systems without `MADV_WIPEONFORK`.
//!
//! The registry below is lock-free on purpose: a child handler must not take a lock that
//! another thread of the parent may have held at the instant of the fork.

use crate::sync::{AtomicU64, Ordering::*};
use std::sync::atomic::{AtomicI32, AtomicPtr};
use std::sync::Once;

/// One generator's entry: where its fence is and which lock descriptor it holds. Entries are
/// never freed (a few bytes each) and are reused once released, so a walk never meets freed
/// memory.
pub(crate) struct Slot {
    fence: AtomicPtr<AtomicU64>,
    lock_fd: AtomicI32,
    next: *const Slot,
}

// SAFETY: `next` is written once before the slot is published and never changes; the other
// fields are atomics.
unsafe impl Sync for Slot {}

static HEAD: AtomicPtr<Slot> = AtomicPtr::new(std::ptr::null_mut());
static ARM: Once = Once::new();

/// Registers a generator's fence (and later its lock descriptor). Arms the at-fork handler on
/// first use.
pub(crate) fn register(fence: &AtomicU64) -> &'static Slot {
    arm();
    let fence_ptr = fence as *const AtomicU64 as *mut AtomicU64;
    let mut at = HEAD.load(Acquire) as *const Slot;
    while let Some(slot) = unsafe { at.as_ref() } {
        if slot
            .fence
            .compare_exchange(std::ptr::null_mut(), fence_ptr, AcqRel, Acquire)
            .is_ok()
        {
            return slot;
        }
        at = slot.next;
    }
    let slot: &'static mut Slot = Box::leak(Box::new(Slot {
        fence: AtomicPtr::new(fence_ptr),
        lock_fd: AtomicI32::new(-1),
        next: std::ptr::null(),
    }));
    let mut head = HEAD.load(Acquire);
    loop {
        slot.next = head;
        match HEAD.compare_exchange(head, slot, AcqRel, Acquire) {
            Ok(_) => return slot,
            Err(actual) => head = actual,
        }
    }
}

impl Slot {
    /// Records the lease's lock descriptor, for the child handler to close.
    pub(crate) fn set_lock_fd(&self, fd: i32) {
        self.lock_fd.store(fd, Release);
    }

    /// Forgets the generator (it is being dropped in the process that made it).
    pub(crate) fn release(&self) {
        self.lock_fd.store(-1, Release);
        self.fence.store(std::ptr::null_mut(), Release);
    }

    /// In a child: shuts the fence and closes the inherited lock descriptor without unlocking
    /// it, if the slot still belongs to the generator whose fence is `fence`. Idempotent, and
    /// never touches a slot that a generator made since (in the child) has taken over.
    pub(crate) fn abandon(&self, fence: &AtomicU64) {
        self.abandon_if(fence as *const AtomicU64 as *mut AtomicU64);
    }

    fn abandon_if(&self, expected: *mut AtomicU64) {
        // The slot is reused only once its fence pointer is null, so while it still points at
        // `expected` the descriptor below is that generator's.
        if expected.is_null() || self.fence.load(Acquire) != expected {
            return;
        }
        // SAFETY: a registered fence outlives its registration (see `release`).
        unsafe { &*expected }.store(super::generator::CLOSED_FENCE, Release);
        let fd = self.lock_fd.swap(-1, AcqRel);
        if fd >= 0 {
            // SAFETY: the descriptor was the lease's and nothing else in this process uses it
            // since the slot gave it up; close() on an flock'd descriptor does not unlock it
            // while the parent still holds the same open file description.
            #[cfg(unix)]
            unsafe {
                libc::close(fd)
            };
        }
        let _ = self
            .fence
            .compare_exchange(expected, std::ptr::null_mut(), AcqRel, Acquire);
    }
}

/// Call in a child process right after `fork()`: shuts every generator inherited from the
/// parent and closes their lease descriptors without unlocking them. Each generator then takes
/// a new lease at its next ID (or, with a fixed worker ID, refuses with a clear error).
///
/// The core arms this with `pthread_atfork`; bindings call it from their own hooks too (such as
/// Python's `os.register_at_fork`). Calling it more than once after one fork is harmless.
pub fn after_fork_in_child() {
    let mut at = HEAD.load(Acquire) as *const Slot;
    while let Some(slot) = unsafe { at.as_ref() } {
        slot.abandon_if(slot.fence.load(Acquire));
        at = slot.next;
    }
}

fn arm() {
    ARM.call_once(|| {
        #[cfg(unix)]
        {
            extern "C" fn child() {
                after_fork_in_child();
            }
            // SAFETY: registering a handler that only walks the lock-free registry.
            unsafe { libc::pthread_atfork(None, None, Some(child)) };
        }
    });
}

/// This process's id (a system call: for the slow path only).
pub(crate) fn pid() -> u32 {
    std::process::id()
}

/// Memory for a generator's hot words that reads as zero in a forked child where the system
/// allows it (`MADV_WIPEONFORK`, Linux 4.14+); elsewhere ordinary heap memory.
pub(crate) struct WipeOnFork<T> {
    ptr: *mut T,
    mapped: bool,
}

// SAFETY: it owns a `T` that is itself Send + Sync.
unsafe impl<T: Send + Sync> Send for WipeOnFork<T> {}
unsafe impl<T: Send + Sync> Sync for WipeOnFork<T> {}

impl<T> WipeOnFork<T> {
    /// Places `value` in a wipe-on-fork page, or on the heap when that is not possible.
    /// `T`'s all-zero bit pattern must be a valid value (a child reads zeros).
    pub(crate) fn new(value: T) -> Self {
        #[cfg(all(target_os = "linux", not(loom)))]
        {
            let len = std::mem::size_of::<T>().max(4096).next_multiple_of(4096);
            // SAFETY: an anonymous private mapping of `len` bytes, checked before use.
            let page = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                )
            };
            if page != libc::MAP_FAILED {
                // SAFETY: `page` is ours; MADV_WIPEONFORK = 18 (not in every libc crate).
                let wiped = unsafe { libc::madvise(page, len, 18) } == 0;
                if wiped && std::mem::align_of::<T>() <= 4096 {
                    let ptr = page as *mut T;
                    // SAFETY: the page is large and aligned enough for a T.
                    unsafe { ptr.write(value) };
                    return WipeOnFork { ptr, mapped: true };
                }
                // SAFETY: unmapping what we mapped.
                unsafe { libc::munmap(page, len) };
            }
        }
        WipeOnFork {
            ptr: Box::into_raw(Box::new(value)),
            mapped: false,
        }
    }
}

impl<T> std::ops::Deref for WipeOnFork<T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        // SAFETY: `ptr` points to a live T for as long as self lives.
        unsafe { &*self.ptr }
    }
}

impl<T> Drop for WipeOnFork<T> {
    fn drop(&mut self) {
        if self.mapped {
            #[cfg(all(target_os = "linux", not(loom)))]
            {
                let len = std::mem::size_of::<T>().max(4096).next_multiple_of(4096);
                // SAFETY: drop the T in place, then unmap the page mapped in `new`.
                unsafe {
                    std::ptr::drop_in_place(self.ptr);
                    libc::munmap(self.ptr as *mut libc::c_void, len);
                }
            }
        } else {
            // SAFETY: made by Box::into_raw in `new`.
            drop(unsafe { Box::from_raw(self.ptr) });
        }
    }
}
