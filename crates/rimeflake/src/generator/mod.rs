//! [`Generator`]: the rollback-safe state machine (docs/architecture.md, "The generator's state
//! machine", draws it and says where each move happens).
//!
//! The hot path ([`Generator::next_id`] when nothing unusual happens) is lock-free and touches no
//! I/O. It works on two atomic words: the packed `counter` (`clock_id:time:sequence`) and the
//! `fence` (`clock_id:reserved_until:max_sequence`), the highest counter value it may commit.
//! Everything else (switching clock-ids, moving the reservation, waiting, errors) runs in the
//! slow path ([`slow`]), serialized by a mutex, and in the I/O thread ([`io_thread`]), which makes
//! every write of the durable state: no lock is ever held across store I/O, so a hung disk
//! makes calls fail after `max_wait` instead of blocking them, and interrupts get through.
//!
//! Words: a call *issues* IDs (`Generator::issue`) by *claiming* counter values below the
//! fence, in the hot path (`Inner::claim`) or, when that cannot decide, the slow path
//! (`Inner::slow_claim`); a *reservation* is only ever the durable bound the I/O thread stores,
//! which the fence follows.
//!
//! Guarantees, by name:
//! - **Unique**: no two calls of one generator return the same ID, across threads, restarts
//!   (durable state), and forks (the child takes a new worker ID).
//! - **Increasing**: IDs of one generator strictly increase, except across a clock-id reuse
//!   (counted in [`Stats::clock_id_reuses`], forbidden by `strict_monotonic`).
//! - **Reserved**: no ID's time is past the durable reservation of its clock-id.
//! - **Bounded lead**: no ID's time is more than `max_drift` ahead of the clock reading that
//!   issued it; beyond that the generator waits for the clock (a restart right after a burst
//!   may wait up to the reservation window).
//! - **Bounded waits**: every wait is cut into slices of at most one time unit and ends in an
//!   error after `max_wait`, including waits for a store that hangs (`close` too). Building a
//!   generator reads and writes its state on the caller's thread: that is bounded by the store.
//! - **No wrap**: the time field never carries into the clock-id or sign bits.
//! - **Deadline**: on a server lease, no ID is issued from a clock reading taken after the
//!   lease deadline (`CLOCK_BOOTTIME`), whether or not the keeper thread has run since: a time
//!   unit is opened to IDs only if it ends before the deadline (see [`hot`]).

mod builder;
mod floor;
mod hot;
mod io_thread;
mod lease;
#[cfg(test)]
mod lease_tests;
#[cfg(all(test, feature = "redis"))]
mod redis_tests;
mod restart;
mod set;
mod skew;
mod slow;
mod start;
mod stats;

pub use builder::{Builder, RollbackPolicy, DEFAULT_MAX_DRIFT, DEFAULT_MAX_WAIT};
pub use set::SettingValue;
pub use stats::{LeaseState, MetricKind, StatField, StatUnit, StatValue, Stats};

use crate::clock::{Clock, SystemClock};
use crate::error::{ErrorKind, Result};
pub(crate) use crate::fork::CLOSED_FENCE;
use crate::fork::{self, WipeOnFork};
use crate::layout::Layout;
use crate::sync::{AtomicU64, CachePadded, Mutex, Ordering::*};
use stats::Counters;
use std::sync::atomic::{AtomicBool, AtomicPtr};
use std::sync::Arc;

/// Set in the counter by `close`: no counter value has it (IDs use at most 63 bits), so every
/// compare-and-swap that expected an older value fails from then on.
pub(crate) const SEALED: u64 = 1 << 63;

/// A rollback-safe generator of 64-bit, time-ordered, unique IDs. `Send + Sync`: share it by
/// reference or `Arc` between threads.
///
/// # Example
/// ```
/// use rimeflake::{Generator, Layout};
///
/// let generator = Generator::builder().layout(Layout::twitter()).worker_id(1).in_memory().build()?;
/// let a = generator.next_id()?;
/// let b = generator.next_id()?;
/// assert!(a < b);
/// assert_eq!(generator.layout().decode(b)?.worker_id, 1);
/// # Ok::<(), rimeflake::Error>(())
/// ```
pub struct Generator<C: Clock = SystemClock> {
    /// The running generator. Replaced only in a forked child, which leaves the parent's
    /// `Inner` untouched (never dropped) and starts its own with a new lease.
    inner: AtomicPtr<Inner<C>>,
    recipe: Builder<C>,
    /// Set by [`Generator::close`]. Here, in ordinary memory, rather than read from the fence:
    /// a forked child inherits it (so a generator closed before the fork stays closed), while
    /// every fence reads as shut in a child, closed or not.
    closed: AtomicBool,
    /// The latest start of a new `Inner` off the callers' threads (a move to another worker ID,
    /// or a forked child's own lease); null before the first.
    moving: AtomicPtr<restart::Move<C>>,
}

/// The words every call touches, in memory that reads as zero in a forked child.
#[derive(Default)]
pub(crate) struct Hot {
    pub(crate) counter: CachePadded<AtomicU64>,
    /// The highest clock reading seen, packed as `clock_id:time` (`counter >> seq_bits` form).
    pub(crate) high: CachePadded<AtomicU64>,
    pub(crate) fence: AtomicU64,
    /// The lease deadline on `CLOCK_BOOTTIME`, in ns (`NO_DEADLINE` without a server lease):
    /// a time unit is opened to IDs only if it ends before it (see [`hot`]).
    pub(crate) deadline: AtomicU64,
}

/// The deadline of a generator whose worker ID no server leases.
pub(crate) const NO_DEADLINE: u64 = u64::MAX;

/// The counter's shape, derived once from the layout and options: the widths and masks of its
/// fields, the time unit and epoch, how far it may lead the clock (`max_drift`), and the worker
/// bits that composing an ID puts in. Constant for the generator's life; the hot path reads it.
#[derive(Debug)]
pub(crate) struct CounterShape {
    pub(crate) seq_bits: u32,
    time_bits: u32,
    pub(crate) cid_mask: u64,
    /// The start of the epoch's time unit: time units are Unix-aligned.
    epoch_ms: u64,
    pub(crate) unit_ms: u64,
    /// Largest `now_ms - epoch_ms` inside the time field.
    max_span_ms: u64,
    pub(crate) drift_units: u64,
    /// `drift_units` whole units plus a sequence: how far past `compose(now, 0)` a counter may go.
    pub(crate) drift_span: u64,
    low_mask: u64,
    worker_bits: u32,
    worker_part: u64,
    /// `random_sequence_start`: a unit entered after an idle spell starts at an offset drawn
    /// from `spread_key` and the unit (see [`hot`]).
    pub(crate) spread: bool,
    spread_key: u64,
}

/// How far (time units) a stored reservation may lead the clock of the holder that stored it:
/// the counter runs up to `max_drift` ahead of the clock and a save reserves `reserve_ahead`
/// past the counter; no save reserves farther (a quick restart that resumes above a reservation
/// up to that far ahead reserves no more, and IDs wait for the clock past `max_drift`).
pub(crate) fn reach_units(drift_units: u64, ahead_units: u64) -> u64 {
    drift_units + ahead_units
}

pub(crate) struct Inner<C: Clock> {
    hot: WipeOnFork<Hot>,
    /// The rollback last counted: `high` when it was seen, and the lowest reading since.
    rollback_high: AtomicU64,
    rollback_low: AtomicU64,
    pub(crate) shape: CounterShape,
    pub(crate) clock: C,
    stats: Counters,
    slow: Mutex<slow::Slow>,
    pub(crate) durable: start::Durable,
    pub(crate) layout: Layout,
    worker_id: u64,
    policy: RollbackPolicy,
    strict_monotonic: bool,
    pub(crate) max_wait_ns: u64,
    /// The process that started this generator: any other pid is a forked child.
    pid: u32,
    fork_slot: &'static fork::Slot,
}

impl Generator<SystemClock> {
    /// A builder with the defaults: `default` layout, embedded default worker lease, system clock,
    /// `max_drift` 2 s, `max_wait` 5 s.
    pub fn builder() -> Builder<SystemClock> {
        Builder::new()
    }
}

impl<C: Clock> Generator<C> {
    fn start(recipe: Builder<C>, interrupted: &mut dyn FnMut() -> bool) -> Result<Self> {
        let inner = Inner::start(&recipe, interrupted)?;
        Ok(Generator {
            inner: AtomicPtr::new(Arc::into_raw(inner) as *mut Inner<C>),
            recipe,
            closed: AtomicBool::new(false),
            moving: AtomicPtr::new(std::ptr::null_mut()),
        })
    }

    #[inline]
    fn inner(&self) -> &Inner<C> {
        // SAFETY: the pointer comes from Arc::into_raw and stays alive while `self` does: it is
        // released only in Drop, and a replaced one (in a forked child, or after a server gave
        // the worker ID to another process) is never released.
        unsafe { &*self.inner.load(Acquire) }
    }

    /// The next ID.
    ///
    /// # Errors
    /// [`ErrorKind::ClockRollback`](crate::ErrorKind::ClockRollback) after a large rollback, as
    /// the policy says; [`ErrorKind::Overloaded`](crate::ErrorKind::Overloaded) when the clock
    /// did not catch up within `max_wait`; [`ErrorKind::State`](crate::ErrorKind::State) when the
    /// reservation could not be extended; [`ErrorKind::TimeRange`](crate::ErrorKind::TimeRange)
    /// before the epoch or past the end of the time field;
    /// [`ErrorKind::Closed`](crate::ErrorKind::Closed) after [`Generator::close`];
    /// [`ErrorKind::Lease`](crate::ErrorKind::Lease) in a forked child of a generator with a
    /// fixed worker ID.
    ///
    /// # Example
    /// ```
    /// # let generator = rimeflake::Generator::builder().worker_id(3).in_memory().build()?;
    /// let ids: Vec<u64> = (0..1000).map(|_| generator.next_id()).collect::<Result<_, _>>()?;
    /// assert!(ids.windows(2).all(|w| w[0] < w[1]));
    /// # Ok::<(), rimeflake::Error>(())
    /// ```
    #[inline]
    pub fn next_id(&self) -> Result<u64> {
        match self.try_next_id() {
            Some(id) => Ok(id),
            None => self.next_id_with(&mut || false),
        }
    }

    /// The next ID if the hot path can give one at once: no wait, no error, no lock. `None`
    /// means "call [`Generator::next_id`] or [`Generator::next_id_with`]", which decide.
    #[inline]
    pub fn try_next_id(&self) -> Option<u64> {
        let i = self.inner();
        i.claim(1).map(|c| i.compose(c))
    }

    /// [`Generator::next_id`], calling `interrupted` between the slices of any wait: when it
    /// returns `true` the call fails with [`ErrorKind::Interrupted`](crate::ErrorKind::Interrupted).
    /// Bindings use it to honour signals (Ctrl-C) while they wait.
    ///
    /// # Errors
    /// As [`Generator::next_id`], and `Interrupted`.
    pub fn next_id_with(&self, interrupted: &mut dyn FnMut() -> bool) -> Result<u64> {
        let first = self.issue(1, interrupted)?;
        Ok(self.inner().compose(first))
    }

    /// Fills `ids` with increasing IDs. Each chunk of up to `max_drift` worth of IDs is
    /// reserved with one atomic step; a batch that cannot fit in the rest of the time field is
    /// refused before any ID is issued.
    ///
    /// # Errors
    /// As [`Generator::next_id`].
    ///
    /// # Example
    /// ```
    /// # let generator = rimeflake::Generator::builder().worker_id(3).in_memory().build()?;
    /// let mut ids = [0u64; 4096];
    /// generator.fill(&mut ids)?;
    /// assert!(ids.windows(2).all(|w| w[0] < w[1]));
    /// # Ok::<(), rimeflake::Error>(())
    /// ```
    pub fn fill(&self, ids: &mut [u64]) -> Result<()> {
        self.fill_with(ids, &mut || false)
    }

    /// [`Generator::fill`] with an interrupt hook, as [`Generator::next_id_with`].
    ///
    /// # Errors
    /// As [`Generator::next_id_with`].
    pub fn fill_with(&self, ids: &mut [u64], interrupted: &mut dyn FnMut() -> bool) -> Result<()> {
        self.inner().check_batch_fits(ids.len() as u64)?;
        let chunk = (self.inner().shape.drift_span + 1) as usize;
        for part in ids.chunks_mut(chunk) {
            let first = self.issue(part.len() as u64, interrupted)?;
            let i = self.inner();
            for (j, id) in part.iter_mut().enumerate() {
                *id = i.compose(first + j as u64);
            }
        }
        Ok(())
    }

    /// [`Generator::fill_with`] into memory that others may read or write meanwhile (a
    /// binding's buffer, shared with code Rust cannot see): each ID is written with a relaxed
    /// atomic store, so a concurrent access is never a data race on the Rust side.
    ///
    /// # Errors
    /// As [`Generator::next_id_with`].
    ///
    /// # Example
    /// ```
    /// use std::sync::atomic::{AtomicU64, Ordering};
    /// # let generator = rimeflake::Generator::builder().worker_id(3).in_memory().build()?;
    /// let ids: Vec<AtomicU64> = (0..4100).map(|_| AtomicU64::new(0)).collect();
    /// generator.fill_atomic_with(&ids, &mut || false)?;
    /// assert!(ids.windows(2).all(|w| w[0].load(Ordering::Relaxed) < w[1].load(Ordering::Relaxed)));
    /// # Ok::<(), rimeflake::Error>(())
    /// ```
    pub fn fill_atomic_with(
        &self,
        ids: &[std::sync::atomic::AtomicU64],
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<()> {
        self.inner().check_batch_fits(ids.len() as u64)?;
        let chunk = (self.inner().shape.drift_span + 1) as usize;
        // Composed into a local array first, where the loop vectorizes, then stored one by one
        // (atomic stores do not vectorize).
        let mut staged = [0u64; 64];
        for part in ids.chunks(chunk) {
            let first = self.issue(part.len() as u64, interrupted)?;
            let i = self.inner();
            for (n, out) in part.chunks(staged.len()).enumerate() {
                let base = first + (n * staged.len()) as u64;
                let staged = &mut staged[..out.len()];
                for (j, id) in staged.iter_mut().enumerate() {
                    *id = i.compose(base + j as u64);
                }
                for (slot, &id) in out.iter().zip(staged.iter()) {
                    slot.store(id, std::sync::atomic::Ordering::Relaxed);
                }
            }
        }
        Ok(())
    }

    /// `n` increasing IDs.
    ///
    /// # Errors
    /// As [`Generator::fill`].
    pub fn next_ids(&self, n: usize) -> Result<Vec<u64>> {
        let mut ids = vec![0; n];
        self.fill(&mut ids)?;
        Ok(ids)
    }

    /// Commits `n` counter values: the hot path, else the slow path; in a forked child, first a
    /// new generator with a new lease.
    fn issue(&self, n: u64, interrupted: &mut dyn FnMut() -> bool) -> Result<u64> {
        loop {
            let i = self.inner();
            if let Some(first) = i.claim(n) {
                return Ok(first);
            }
            if i.pid == fork::pid() {
                let r = i.slow_claim(n, interrupted);
                let Err(e) = &r else { return r };
                if !std::ptr::eq(self.inner(), i) {
                    continue; // another thread moved it to another worker ID meanwhile
                }
                if self.moves_after(i, e) {
                    self.restart_elsewhere(i, r, move_deadline(i), interrupted)?;
                    continue;
                }
                return r;
            }
            self.restart_after_fork(i, move_deadline(i), interrupted)?;
        }
    }

    /// Whether the generator can issue an ID now, asked without issuing one (a readiness probe
    /// that spends no ID): not closed, its server lease (if any) held and short of its
    /// deadline, and its last state write (if any) stored. An `Ok` is no promise for the next
    /// call (the clock may step back, a reservation may need a write first); an error is the
    /// one an ID asked for now would most likely get. Takes no lock but the state's.
    ///
    /// # Errors
    /// [`ErrorKind::Closed`](crate::ErrorKind::Closed) once closed;
    /// [`ErrorKind::Lease`](crate::ErrorKind::Lease) while the lease is lost or past its
    /// deadline; [`ErrorKind::State`](crate::ErrorKind::State) while the last write failed.
    ///
    /// # Example
    /// ```
    /// # let generator = rimeflake::Generator::builder().worker_id(3).in_memory().build()?;
    /// generator.ready()?;
    /// assert_eq!(generator.stats().ids_issued, 0);
    /// # Ok::<(), rimeflake::Error>(())
    /// ```
    pub fn ready(&self) -> Result<()> {
        if self.is_closed() {
            return Err(crate::Error::new(
                ErrorKind::Closed,
                "the generator is closed",
            ));
        }
        let i = self.inner();
        match i.ready() {
            // Closed by a start again on its worker ID, not by the caller: a lease error until
            // the new start is installed.
            Err(e) if e.kind() == ErrorKind::Closed && self.rejoins(i) => Err(i.rejoin_error(None)),
            r => r,
        }
    }

    /// [`Generator::ready`], after first doing what the next call for an ID would do to become
    /// ready, without issuing one: a generator whose leased worker ID went to another process
    /// meanwhile (its lease expired and was taken, a server that lost its data) moves to
    /// another worker ID, waiting at most `max_wait` and calling `interrupted` between slices
    /// of the wait. A readiness probe that gates requests uses it, so that the generator does
    /// not stay unready until a request for an ID happens to come. When [`Generator::ready`]
    /// is `Ok`, it is the same cheap check.
    ///
    /// # Errors
    /// As [`Generator::ready`], and [`ErrorKind::Interrupted`](crate::ErrorKind::Interrupted).
    pub fn recheck(&self, interrupted: &mut dyn FnMut() -> bool) -> Result<()> {
        let i = self.inner();
        match self.ready() {
            Err(e) if i.pid == fork::pid() && self.moves_after(i, &e) => {
                self.restart_elsewhere(i, Err(e), move_deadline(i), interrupted)?;
                self.ready()
            }
            r => r,
        }
    }

    /// Whether error `e` of `i` is that of a worker ID gone to another process, which moves
    /// the generator to another one, or of a fixed worker ID whose lease came back on another
    /// server, which starts it again on the same one (`i` is then closed by that start, hence
    /// `Closed`); any other (a wait interrupted, the clock) is the caller's to see.
    fn moves_after(&self, i: &Inner<C>, e: &crate::Error) -> bool {
        if self.rejoins(i) {
            return matches!(
                e.kind(),
                ErrorKind::Lease | ErrorKind::State | ErrorKind::Closed
            );
        }
        matches!(e.kind(), ErrorKind::Lease | ErrorKind::State)
            && i.durable.lease_taken.load(SeqCst)
            && self.recipe.takes_any_worker()
    }

    /// Whether `i`, of a fixed worker ID, starts again on it (see `restart::restart_elsewhere`).
    fn rejoins(&self, i: &Inner<C>) -> bool {
        !self.recipe.takes_any_worker() && i.durable.lease_elsewhere.load(SeqCst)
    }

    /// The generator's counters.
    pub fn stats(&self) -> Stats {
        self.inner().stats()
    }

    /// The layout of this generator's IDs.
    pub fn layout(&self) -> &Layout {
        &self.recipe.layout
    }

    /// The worker ID in use. In a forked child that has issued no ID yet, that is still the
    /// parent's: [`frontend::current_worker_id`](crate::frontend::current_worker_id) gives the
    /// child's own.
    pub fn worker_id(&self) -> u64 {
        self.inner().worker_id
    }

    /// The worker ID this generator's next ID carries. In a forked child that has issued no ID
    /// yet, it first takes the child's own worker ID, as its first ID would (waiting at most
    /// `max_wait`, calling `interrupted` between slices of the wait).
    ///
    /// # Errors
    /// As [`Generator::next_id`] in a forked child: [`ErrorKind::Lease`](crate::ErrorKind::Lease)
    /// for a fixed worker ID or a lease not taken within `max_wait`,
    /// [`ErrorKind::Closed`](crate::ErrorKind::Closed) when closed.
    pub(crate) fn current_worker_id(&self, interrupted: &mut dyn FnMut() -> bool) -> Result<u64> {
        loop {
            let i = self.inner();
            if i.pid == fork::pid() {
                return Ok(i.worker_id);
            }
            self.restart_after_fork(i, move_deadline(i), interrupted)?;
        }
    }

    /// Closes the generator: later calls fail with
    /// [`ErrorKind::Closed`](crate::ErrorKind::Closed). A durable generator stops its
    /// reservation thread, makes sure its last reservation is stored and frees its lease; an
    /// in-memory one waits (at most `max_wait`) until the clock has passed its last ID, so an
    /// immediate rerun cannot repeat one. In a forked child it touches nothing of the parent's.
    /// Closing twice is harmless.
    ///
    /// # Errors
    /// [`ErrorKind::State`](crate::ErrorKind::State) when the last reservation could not be
    /// stored; [`ErrorKind::ClockRollback`](crate::ErrorKind::ClockRollback) when an in-memory
    /// generator's clock did not pass the last ID within `max_wait`. The generator is closed
    /// all the same.
    pub fn close(&self) -> Result<()> {
        self.closed.store(true, SeqCst);
        self.abandon_move();
        // SAFETY: as `inner()`; SeqCst pairs with `restart_after_fork`, which may be installing a
        // new generator in another thread of a child.
        let i = unsafe { &*self.inner.load(SeqCst) };
        if i.pid != fork::pid() {
            // Inherited from the parent: nothing of it is ours to stop, store or free, and no lock
            // of it may be taken (a parent thread may have held one at the fork).
            i.fork_slot.abandon(&i.hot.fence);
            return Ok(());
        }
        i.close()
    }

    /// Whether [`Generator::close`] was called (in this process, or before the fork that made
    /// it). A generator inherited by a forked child is not closed: it takes a new lease at its
    /// first ID there. Takes no lock.
    pub fn is_closed(&self) -> bool {
        self.closed.load(Acquire)
    }
}

impl<C: Clock> Drop for Generator<C> {
    fn drop(&mut self) {
        let ptr = *self.inner.get_mut();
        // SAFETY: see `inner()`.
        let i = unsafe { &*ptr };
        if i.pid != fork::pid() {
            // The parent's generator, inherited by a fork: leave it untouched, never freed (its
            // locks, lease and threads are the parent's).
            i.fork_slot.abandon(&i.hot.fence);
            return;
        }
        self.abandon_move();
        let _ = i.close();
        // SAFETY: from Arc::into_raw; this was the generator's reference. The last reference
        // (this one, or the reservation thread's) releases the fork slot.
        drop(unsafe { Arc::from_raw(ptr) });
    }
}

/// How long a call waits for a move to another worker ID (or a forked child's new lease)
/// before it fails with a lease error: `max_wait`.
fn move_deadline<C: Clock>(i: &Inner<C>) -> u64 {
    crate::clock::monotonic_ns().saturating_add(i.max_wait_ns)
}

impl<C: Clock> std::fmt::Debug for Generator<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let i = self.inner();
        f.debug_struct("Generator")
            .field("layout", &i.layout.name())
            .field("worker_id", &i.worker_id)
            .field("policy", &i.policy)
            .field("closed", &self.is_closed())
            .finish()
    }
}

impl<C: Clock> Inner<C> {
    fn ready(&self) -> Result<()> {
        if self.hot.fence.load(Acquire) == CLOSED_FENCE {
            return Err(crate::Error::new(
                ErrorKind::Closed,
                "the generator is closed",
            ));
        }
        if let Some(e) = self.durable.lease_error() {
            return Err(e);
        }
        let deadline = self.hot.deadline.load(Acquire);
        if deadline != NO_DEADLINE && crate::clock::boottime_ns() >= deadline {
            return Err(self.deadline_error());
        }
        match self.durable.failure() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// The lease's state, and while held, its remaining validity in ms.
    fn lease_now(&self) -> (LeaseState, u64) {
        let deadline = self.hot.deadline.load(Acquire);
        if deadline == NO_DEADLINE {
            return (LeaseState::None, 0);
        }
        let now = crate::clock::boottime_ns();
        if self.durable.lease_lost.load(SeqCst) || now >= deadline {
            return (LeaseState::Lost, 0);
        }
        (LeaseState::Held, (deadline - now) / 1_000_000)
    }

    pub(crate) fn clock_id_of(&self, counter: u64) -> u64 {
        (counter & self.shape.cid_mask) >> (self.layout.time_bits() as u32 + self.shape.seq_bits)
    }

    /// The time field of a counter or fence value.
    pub(crate) fn time_of(&self, counter: u64) -> u64 {
        (counter >> self.shape.seq_bits) & self.layout.max_time()
    }
}

impl<C: Clock> Drop for Inner<C> {
    /// The generator dies: its fork slot is released, before the fence's page is unmapped and
    /// after a lease still held here is freed. This covers every way an `Inner` dies: a dropped generator, the loser of a restart race in a child, and a
    /// start-up that failed once the fence existed (the reservation thread did not spawn).
    fn drop(&mut self) {
        // `get_mut`, not `lock`: no lock, even one a parent thread held at a fork.
        let lease = self.durable.lease.get_mut();
        let lease = lease.unwrap_or_else(|p| p.into_inner()).take();
        if self.pid != fork::pid() {
            // Never reached (an inherited generator is never freed in a child); were it, the
            // lease must be forgotten, not unlocked: its lock is the parent's.
            self.fork_slot.abandon(&self.hot.fence);
            if let Some(lease) = lease {
                lease.forget_after_fork();
            }
            return;
        }
        drop(lease); // while the slot is still ours: it forgets the descriptor, then closes it
        self.fork_slot.release();
    }
}
