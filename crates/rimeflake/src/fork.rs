//! Fork safety: a child process must never continue its parent's counter under the parent's
//! worker ID, nor hold or release the parent's lease.
//!
//! Three mechanisms, so that every kind of fork is caught:
//! - The hot words of each generator (counter, highest reading, fence) live in a page marked
//!   `MADV_WIPEONFORK` on Linux: in a child they read as zero, which shuts the hot path and sends
//!   the first call to the slow path, where the pid tells it the process forked.
//! - An at-fork child handler (armed once with `pthread_atfork`, and callable by bindings through
//!   [`after_fork_in_child`]) shuts every inherited generator's fence and closes the lease
//!   descriptors the child inherited, **without unlocking them**: an `flock` belongs to the open
//!   file description shared with the parent, so unlocking in the child would free the parent's
//!   lease.
//! - The slow path compares the pid with the generator's own, which catches forks that skip the
//!   handlers on systems without `MADV_WIPEONFORK`.
//!
//! # The registry: one owner, one lifecycle
//!
//! Each running generator (its `Inner`) holds one `Slot` from the moment its fence exists until
//! it dies, and is the slot's only owner:
//! - **Claimed** by `register` in the process that starts the generator; the slot records that
//!   pid as its owner.
//! - **Lease descriptor**: the lease is handed to the slot (`Slot::hold_lease`), which records its
//!   descriptor and returns a `HeldLease`. However that is dropped or released (by `close`, by
//!   the I/O thread after its last write, by a failed start-up), the slot forgets the descriptor
//!   *before* the lease closes it, so the number is never registered while another file may
//!   hold it.
//! - **Released** by `Slot::release` when the generator dies (`Inner`'s `Drop`), whatever the
//!   way: dropped, closed and dropped, the loser of a restart race in a child, or a start-up that
//!   failed after the fence existed. It is released before the fence's page is unmapped.
//! - **Abandoned** only in a process other than its owner (a forked child), by the at-fork handler
//!   or by the child's first use of the inherited generator: the fence is shut, the descriptor
//!   closed without unlocking, and the slot becomes free for the child's own generators. In the
//!   owner's process, abandoning is a no-op, so [`after_fork_in_child`] called anywhere but in a
//!   child does nothing.
//!
//! The registry is lock-free on purpose: a child handler must not take a lock that another
//! thread of the parent may have held at the instant of the fork; it uses only atomics,
//! `getpid` and `close`, all async-signal-safe.

use crate::sync::{AtomicU64, Ordering::*};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, AtomicU32};
use std::sync::OnceLock;

/// A fence value no counter can pass: the generator is closed, or belongs to a forked parent
/// (the at-fork handler stores it in every inherited generator's fence).
pub(crate) const CLOSED_FENCE: u64 = 0;

/// A leased worker ID, whatever holds it: a lock file ([`LocalLease`](crate::lease::LocalLease)) or a server (a remote
/// lease, whose keeper thread renews it). The generator's fork slot holds it; the I/O thread
/// frees it only after its last write.
pub(crate) trait Lease: Send + std::fmt::Debug {
    /// The descriptor a forked child's handler must close without unlocking (a local lock).
    fn lock_fd(&self) -> Option<i32> {
        None
    }
    /// Frees the worker ID (in the process that took it; elsewhere it does nothing).
    fn release(self: Box<Self>);
    /// In a forked child: forgets the lease without unlocking, renewing, releasing or writing
    /// anything through it (it is the parent's).
    fn forget_after_fork(self: Box<Self>);
}

/// One generator's entry. Entries are never freed (a few bytes each) and are reused once free,
/// so a walk never meets freed memory.
pub(crate) struct Slot {
    /// The pid of the process whose generator holds the slot; 0 while the slot is free.
    /// Claimed first and cleared last, so a slot with an owner is never handed out twice.
    owner: AtomicU32,
    /// The generator's fence; null while free, and while being claimed, released or abandoned.
    fence: AtomicPtr<AtomicU64>,
    /// The lease's lock descriptor, or -1.
    lock_fd: AtomicI32,
    next: *const Slot,
}

// SAFETY: `next` is written once before the slot is published and never changes; the other
// fields are atomics.
unsafe impl Sync for Slot {}

static HEAD: AtomicPtr<Slot> = AtomicPtr::new(std::ptr::null_mut());
/// Set once the at-fork handler is armed. An atomic, not a `Once`: a `Once` caught mid-call by
/// a fork would block every later call in the child.
static ARMED: AtomicBool = AtomicBool::new(false);

/// This process's pid, as the registry records it (`getpid`: async-signal-safe).
fn me() -> u32 {
    #[cfg(unix)]
    {
        // SAFETY: getpid has no preconditions and cannot fail.
        (unsafe { libc::getpid() }) as u32
    }
    #[cfg(not(unix))]
    {
        std::process::id()
    }
}

/// Claims a slot for a generator's fence (its lock descriptor comes later), owned by this
/// process. Arms the at-fork handler on first use. The caller releases it when the generator
/// dies ([`Slot::release`]).
pub(crate) fn register(fence: &AtomicU64) -> &'static Slot {
    arm();
    let pid = me();
    let fence_ptr = fence as *const AtomicU64 as *mut AtomicU64;
    let mut at = HEAD.load(Acquire) as *const Slot;
    // SAFETY: slots are leaked, never freed.
    while let Some(slot) = unsafe { at.as_ref() } {
        if slot.owner.compare_exchange(0, pid, AcqRel, Acquire).is_ok() {
            // A free slot's descriptor is already -1 (cleared before the owner was).
            slot.fence.store(fence_ptr, Release);
            return slot;
        }
        at = slot.next;
    }
    let slot: &'static mut Slot = Box::leak(Box::new(Slot {
        owner: AtomicU32::new(pid),
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

/// A generator's lease, whose lock descriptor its fork slot knows. Dropping (or releasing) it
/// makes the slot forget the descriptor first and only then frees the lease, which closes it.
pub(crate) struct HeldLease {
    lease: Option<Box<dyn Lease>>,
    slot: &'static Slot,
}

impl HeldLease {
    /// Frees the lease: unlock, then close (the slot forgot the descriptor just before).
    pub(crate) fn release(self) {
        drop(self)
    }

    /// In a process that did not take the lease (a forked child): forgets it without unlocking
    /// (its lock is the parent's) and without closing (the child's handler closed it, and its
    /// number may belong to another file by now).
    pub(crate) fn forget_after_fork(mut self) {
        self.slot.abandon_if(None);
        if let Some(lease) = self.lease.take() {
            lease.forget_after_fork();
        }
    }
}

impl Drop for HeldLease {
    fn drop(&mut self) {
        if let Some(lease) = self.lease.take() {
            // Forgotten before the close below: no later fork's child may close the number
            // once another file has it. (A fork in between leaves the child a copy of a
            // descriptor whose lock the parent is about to drop: harmless.)
            if let Some(fd) = lease.lock_fd() {
                self.slot.forget_lock_fd(fd);
            }
            lease.release();
        }
    }
}

impl Slot {
    /// Takes charge of the generator's lease: records its lock descriptor, for a child's
    /// handler to close, until the returned [`HeldLease`] frees it.
    pub(crate) fn hold_lease(&'static self, lease: Box<dyn Lease>) -> HeldLease {
        if let Some(fd) = lease.lock_fd() {
            self.lock_fd.store(fd, Release);
        }
        HeldLease {
            lease: Some(lease),
            slot: self,
        }
    }

    /// Forgets the lease's descriptor `fd`, before the lease closes it (only if the slot still
    /// records that one: it never erases another generator's).
    fn forget_lock_fd(&self, fd: i32) {
        let _ = self.lock_fd.compare_exchange(fd, -1, AcqRel, Acquire);
    }

    /// Frees the slot: its generator is dying in the process that owns it, and the fence's page
    /// is still mapped. Elsewhere (which the generator never does) it abandons instead.
    pub(crate) fn release(&self) {
        if self.owner.load(Acquire) != me() {
            self.abandon_if(None);
            return;
        }
        self.lock_fd.store(-1, Release);
        self.fence.store(std::ptr::null_mut(), Release);
        self.owner.store(0, Release);
    }

    /// In a child: shuts the inherited generator whose fence is `fence` and closes its lock
    /// descriptor without unlocking it. Does nothing in the process that owns the slot, or when
    /// the slot no longer holds that generator (abandoned already, or taken over since by one of
    /// the child's own). Idempotent.
    pub(crate) fn abandon(&self, fence: &AtomicU64) {
        self.abandon_if(Some(fence as *const AtomicU64 as *mut AtomicU64));
    }

    /// Abandons the slot if another process owns it (and, given `expected`, it still holds that
    /// fence). Async-signal-safe: atomics and `close`.
    fn abandon_if(&self, expected: Option<*mut AtomicU64>) {
        let owner = self.owner.load(Acquire);
        if owner == 0 || owner == me() {
            return; // free, or this process's own generator
        }
        let fence = self.fence.load(Acquire);
        if fence.is_null() || expected.is_some_and(|e| e != fence) {
            return; // being claimed or given up in the parent at the fork, or abandoned already
        }
        // Whoever takes the fence out does the rest, once: two threads of a child (or a thread and
        // a binding's hook) may abandon the same slot at once.
        if self
            .fence
            .compare_exchange(fence, std::ptr::null_mut(), AcqRel, Acquire)
            .is_err()
        {
            return;
        }
        // SAFETY: the fence was registered, so its page is mapped: the owner releases the slot
        // before unmapping it, and in this process (a child) the owner's generator never dies.
        unsafe { &*fence }.store(CLOSED_FENCE, Release);
        let fd = self.lock_fd.swap(-1, AcqRel);
        if fd >= 0 {
            // SAFETY: the descriptor is the inherited lease's (the owner forgets it before closing
            // it, so it was open at the fork); close() does not unlock an flock while the parent
            // still holds the same open file description.
            #[cfg(unix)]
            unsafe {
                libc::close(fd)
            };
        }
        // Free for this process's own generators.
        self.owner.store(0, Release);
    }
}

/// Call in a child process right after `fork()`: shuts every generator inherited from the
/// parent and closes their lease descriptors without unlocking them. Each generator then takes
/// a new lease at its next ID (or, with a fixed worker ID, refuses with a clear error).
///
/// It acts only on generators that another process started: called in the process that started
/// them (which did not fork since), it does nothing. Calling it more than once after one fork is
/// harmless. Async-signal-safe (atomics, `getpid`, `close`).
///
/// The core arms this with `pthread_atfork`; bindings call it from their own hooks too (such as
/// Python's `os.register_at_fork`).
pub fn after_fork_in_child() {
    let mut at = HEAD.load(Acquire) as *const Slot;
    // SAFETY: slots are leaked, never freed.
    while let Some(slot) = unsafe { at.as_ref() } {
        slot.abandon_if(None);
        at = slot.next;
    }
}

/// What the child handler runs after it has walked the registry: the reset of a layer above
/// that keeps per-process state of its own (the SkyWalking IDs' generation), registered by
/// [`arm_with`] before that state is first used. Read with an atomic load alone in the handler.
static CHILD_HOOK: OnceLock<fn()> = OnceLock::new();

/// As [`arm`], and the child handler calls `hook` too, after the registry's walk. One hook per
/// process (the SkyWalking IDs'): a later call keeps the first.
pub(crate) fn arm_with(hook: fn()) {
    let _ = CHILD_HOOK.set(hook);
    arm();
}

/// Arms the child handler, for the registry (before the first slot is claimed) and, through
/// [`arm_with`], for `skywalking` (before its first ID). Threads racing the first call may each
/// arm it: the handler is idempotent, and no caller returns before it is armed.
pub(crate) fn arm() {
    if ARMED.load(Acquire) {
        return;
    }
    #[cfg(unix)]
    {
        extern "C" fn child() {
            after_fork_in_child();
            if let Some(hook) = CHILD_HOOK.get() {
                hook();
            }
        }
        // SAFETY: registering a handler that only walks the lock-free registry and stores to
        // atomics (async-signal-safe).
        unsafe { libc::pthread_atfork(None, None, Some(child)) };
    }
    ARMED.store(true, Release);
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

// SAFETY: it owns the `T` behind `ptr` alone (no other pointer to it is kept), so sending it
// sends a `T`, which is Send.
unsafe impl<T: Send + Sync> Send for WipeOnFork<T> {}
// SAFETY: shared, it gives out only `&T` (Deref), so sharing it shares a `T`, which is Sync.
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

impl<T> WipeOnFork<T> {
    /// Whether the memory reads as zero in a forked child (else it is ordinary heap memory).
    pub(crate) fn wipes_on_fork(&self) -> bool {
        self.mapped
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
