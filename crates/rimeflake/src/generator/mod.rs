//! [`Generator`]: the rollback-safe state machine of DESIGN.md.
//!
//! The hot path ([`Generator::next_id`] when nothing unusual happens) is lock-free and touches no
//! I/O. It works on two atomic words: the packed `counter` (`clock_id:time:sequence`) and the
//! `fence` (`clock_id:reserved_until:max_sequence`), the highest counter value it may commit.
//! Everything else (switching clock-ids, waiting, errors) runs in the slow path ([`slow`]),
//! serialized by a mutex.
//!
//! Guarantees, by name:
//! - **Unique**: no two calls of one generator return the same ID, across threads.
//! - **Increasing**: IDs of one generator strictly increase, except across a clock-id reuse
//!   (counted in [`Stats::clock_id_reuses`], forbidden by `strict_monotonic`).
//! - **Bounded lead**: no ID's time is more than `max_drift` ahead of the clock reading that
//!   issued it; beyond that the generator waits for the clock.
//! - **Bounded waits**: every wait is cut into slices of at most one time unit and ends in an
//!   error after `max_wait`.
//! - **No wrap**: the time field never carries into the clock-id or sign bits.

mod builder;
mod slow;
mod stats;

pub use builder::{Builder, RollbackPolicy, DEFAULT_MAX_DRIFT, DEFAULT_MAX_WAIT};
pub use stats::Stats;

use crate::clock::{Clock, SystemClock};
use crate::error::Result;
use crate::layout::{mask, FieldOrder, Layout};
use crate::state::WorkerState;
use crate::sync::{AtomicU64, CachePadded, Mutex, Ordering::*};
use builder::Storage;
use stats::Counters;
use std::sync::Arc;

/// A fence value no counter can pass: the generator is closed (or belongs to a forked parent).
const CLOSED_FENCE: u64 = 0;

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
    inner: Arc<Inner<C>>,
}

/// Constants of the hot path, derived once from the layout and options.
#[derive(Debug)]
struct Consts {
    seq_bits: u32,
    cid_mask: u64,
    epoch_ms: u64,
    unit_ms: u64,
    /// Largest `now_ms - epoch_ms` inside the time field.
    max_span_ms: u64,
    drift_units: u64,
    /// `drift_units` whole units plus a sequence: how far past `compose(now, 0)` a counter may go.
    drift_span: u64,
    low_mask: u64,
    worker_bits: u32,
    worker_part: u64,
}

pub(crate) struct Inner<C: Clock> {
    counter: CachePadded<AtomicU64>,
    /// The highest clock reading seen, packed as `clock_id:time` (`counter >> seq_bits` form).
    high: CachePadded<AtomicU64>,
    fence: AtomicU64,
    /// The rollback last counted: `high` when it was seen, and the lowest reading since.
    rollback_high: AtomicU64,
    rollback_low: AtomicU64,
    k: Consts,
    clock: C,
    stats: Counters,
    slow: Mutex<slow::Slow>,
    layout: Layout,
    worker_id: u64,
    policy: RollbackPolicy,
    strict_monotonic: bool,
    max_wait_ns: u64,
}

impl Generator<SystemClock> {
    /// A builder with the defaults: `default` layout, embedded default worker lease, system clock,
    /// `max_drift` 2 s, `max_wait` 5 s.
    pub fn builder() -> Builder<SystemClock> {
        Builder::new()
    }
}

impl<C: Clock> Generator<C> {
    fn start(b: Builder<C>, policy: RollbackPolicy) -> Result<Self> {
        let layout = b.layout;
        let worker_id = match (&b.worker, &b.storage) {
            (Some(crate::worker::WorkerSource::Fixed(id)), Storage::InMemory) => *id,
            (None, Storage::InMemory) => {
                return Err(crate::Error::config(
                    "worker_id: an in-memory generator needs a fixed worker ID",
                ))
            }
            (_, Storage::Dir(_)) => {
                return Err(crate::Error::config(
                    "state_dir: durable state is not available in this build; use in_memory()",
                ))
            }
        };
        if worker_id > layout.max_worker_id() {
            return Err(crate::Error::config(format!(
                "worker_id: {worker_id} is out of range for layout {} (0 to {})",
                layout.name(),
                layout.max_worker_id()
            )));
        }
        let seq_bits = layout.sequence_bits() as u32;
        let unit_ms = layout.unit_ms();
        let drift_units = (b.max_drift.as_millis() as u64) / unit_ms;
        let low_bits = match layout.order() {
            FieldOrder::SequenceBelowWorker => layout.sequence_bits(),
            FieldOrder::SequenceAboveWorker => 0,
        };
        let k = Consts {
            seq_bits,
            cid_mask: mask(layout.clock_id_bits()) << (layout.time_bits() as u32 + seq_bits),
            epoch_ms: layout.epoch_ms(),
            unit_ms,
            max_span_ms: (layout.max_time() + 1).saturating_mul(unit_ms) - 1,
            drift_units,
            drift_span: (drift_units << seq_bits) | mask(seq_bits as u8),
            low_mask: mask(low_bits),
            worker_bits: layout.worker_bits() as u32,
            worker_part: worker_id << low_bits,
        };
        let now = layout.time_of(b.clock.now_ms())?;
        let state = WorkerState::fresh(layout.max_clock_id() as usize + 1);
        let counter = layout.counter_before(state.clock_id, now);
        let inner = Inner {
            counter: CachePadded(AtomicU64::new(counter)),
            high: CachePadded(AtomicU64::new(counter >> seq_bits)),
            fence: AtomicU64::new(layout.counter(
                state.clock_id,
                layout.max_time(),
                layout.max_sequence(),
            )),
            rollback_high: AtomicU64::new(u64::MAX),
            rollback_low: AtomicU64::new(u64::MAX),
            k,
            clock: b.clock,
            stats: Counters::default(),
            slow: Mutex::new(slow::Slow::new(state)),
            layout,
            worker_id,
            policy,
            strict_monotonic: b.strict_monotonic,
            max_wait_ns: b.max_wait.as_nanos().min(u64::MAX as u128) as u64,
        };
        Ok(Generator {
            inner: Arc::new(inner),
        })
    }

    /// The next ID.
    ///
    /// # Errors
    /// [`ErrorKind::ClockRollback`](crate::ErrorKind::ClockRollback) after a large rollback, as
    /// the policy says; [`ErrorKind::Overloaded`](crate::ErrorKind::Overloaded) when the clock
    /// did not catch up within `max_wait`; [`ErrorKind::TimeRange`](crate::ErrorKind::TimeRange)
    /// before the epoch or past the end of the time field;
    /// [`ErrorKind::Closed`](crate::ErrorKind::Closed) after [`Generator::close`].
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
        let i = &*self.inner;
        i.reserve(1).map(|c| i.compose(c))
    }

    /// [`Generator::next_id`], calling `interrupted` between the slices of any wait: when it
    /// returns `true` the call fails with [`ErrorKind::Interrupted`](crate::ErrorKind::Interrupted).
    /// Bindings use it to honour signals (Ctrl-C) while they wait.
    ///
    /// # Errors
    /// As [`Generator::next_id`], and `Interrupted`.
    pub fn next_id_with(&self, interrupted: &mut dyn FnMut() -> bool) -> Result<u64> {
        let i = &*self.inner;
        match i.reserve(1) {
            Some(c) => Ok(i.compose(c)),
            None => i.slow_reserve(1, interrupted).map(|c| i.compose(c)),
        }
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
        let i = &*self.inner;
        i.check_batch_fits(ids.len() as u64)?;
        let chunk = (i.k.drift_span + 1) as usize;
        for part in ids.chunks_mut(chunk) {
            let n = part.len() as u64;
            let first = match i.reserve(n) {
                Some(c) => c,
                None => i.slow_reserve(n, interrupted)?,
            };
            for (j, id) in part.iter_mut().enumerate() {
                *id = i.compose(first + j as u64);
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

    /// The generator's counters.
    pub fn stats(&self) -> Stats {
        let i = &*self.inner;
        let s = &i.stats;
        let unit = i.k.unit_ms;
        Stats {
            ids_issued: s.issued(),
            rollbacks: Counters::get(&s.rollbacks),
            largest_rollback_ms: Counters::get(&s.largest_rollback_units) * unit,
            clock_id_bumps: Counters::get(&s.bumps),
            clock_id_reuses: Counters::get(&s.reuses),
            waits: Counters::get(&s.waits),
            waited_ms: Counters::get(&s.waited_ns) / 1_000_000,
            borrowed_ms: Counters::get(&s.borrowed_units) * unit,
            clock_id: (i.counter.load(Acquire) & i.k.cid_mask)
                >> (i.layout.time_bits() as u32 + i.k.seq_bits),
        }
    }

    /// The layout of this generator's IDs.
    pub fn layout(&self) -> &Layout {
        &self.inner.layout
    }

    /// The worker ID in use.
    pub fn worker_id(&self) -> u64 {
        self.inner.worker_id
    }

    /// Closes the generator: later calls fail with
    /// [`ErrorKind::Closed`](crate::ErrorKind::Closed). An in-memory generator first waits
    /// (at most `max_wait`) until the clock has passed its last ID, so an immediate rerun cannot
    /// repeat one. Closing twice is harmless.
    ///
    /// # Errors
    /// [`ErrorKind::ClockRollback`](crate::ErrorKind::ClockRollback) when the clock did not pass
    /// the last ID within `max_wait` (the generator is closed all the same).
    pub fn close(&self) -> Result<()> {
        self.inner.close()
    }

    /// Whether [`Generator::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.inner.fence.load(Acquire) == CLOSED_FENCE
    }
}

impl<C: Clock> Drop for Generator<C> {
    fn drop(&mut self) {
        let _ = self.inner.close();
    }
}

impl<C: Clock> std::fmt::Debug for Generator<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Generator")
            .field("layout", &self.inner.layout.name())
            .field("worker_id", &self.inner.worker_id)
            .field("policy", &self.inner.policy)
            .field("closed", &self.is_closed())
            .finish()
    }
}

impl<C: Clock> Inner<C> {
    /// The ID of counter value `c`: the worker bits inserted where the layout puts them.
    #[inline]
    fn compose(&self, c: u64) -> u64 {
        let k = &self.k;
        ((c & !k.low_mask) << k.worker_bits) | k.worker_part | (c & k.low_mask)
    }

    /// The hot path: commits `n` consecutive counter values and returns the first, or `None`
    /// when anything needs the slow path to decide (a large rollback, the lead or the fence
    /// reached, the clock outside the time field, the generator closed or switching clock-ids).
    #[inline]
    fn reserve(&self, n: u64) -> Option<u64> {
        let k = &self.k;
        // Load the state before reading the clock: a reading below `high` is then a real step
        // back of the clock, not a reading that another thread merely published first.
        let mut cur = self.counter.load(Acquire);
        let high = self.high.load(Acquire);
        let fence = self.fence.load(Acquire);
        let since_epoch = self.clock.now_ms().wrapping_sub(k.epoch_ms);
        if since_epoch > k.max_span_ms {
            return None; // before the epoch (wrapped) or past the end of the time field
        }
        let now = if k.unit_ms == 1 {
            since_epoch
        } else {
            since_epoch / k.unit_ms
        };
        let cid_base = cur & k.cid_mask;
        if (fence ^ cur) & k.cid_mask != 0 {
            return None; // a clock-id switch is under way, or the generator is closed
        }
        let now_high = (cid_base >> k.seq_bits) | now;
        if now_high > high {
            // A new highest reading. Losing this race only leaves `high` a unit low.
            let _ = self.high.compare_exchange(high, now_high, Relaxed, Relaxed);
        } else if now_high < high {
            if high - now_high > k.drift_units {
                return None; // a large rollback: the policy decides
            }
            // A small rollback: keep counting from the counter, so IDs stay increasing.
            self.note_rollback(high, now_high);
        }
        let base = cid_base | (now << k.seq_bits);
        let limit = (base + k.drift_span).min(fence);
        loop {
            let first = (cur + 1).max(base);
            let last = first + (n - 1);
            if last > limit {
                return None; // the lead past the clock, or the reservation, is used up
            }
            match self
                .counter
                .compare_exchange_weak(cur, last, AcqRel, Acquire)
            {
                Ok(_) => {
                    if last >> k.seq_bits > (cur >> k.seq_bits).max(now_high) {
                        self.note_borrowed(last >> k.seq_bits, (cur >> k.seq_bits).max(now_high));
                    }
                    self.stats.add_issued(n);
                    return Some(first);
                }
                // Another thread won: retry with its counter, unless it switched clock-ids, in
                // which case our reading is stale and the slow path must re-read and re-decide.
                Err(actual) if (actual ^ cur) & k.cid_mask != 0 => return None,
                Err(actual) => cur = actual,
            }
        }
    }

    #[cold]
    fn note_borrowed(&self, to: u64, from: u64) {
        Counters::add(&self.stats.borrowed_units, to - from);
    }
}
