//! The slow path: everything the hot path hands over. Serialized by `Inner::slow`; it re-reads
//! the counter, the fence and the clock under the lock and decides from those fresh readings.

use super::stats::Counters;
use super::{Inner, RollbackPolicy, CLOSED_FENCE};
use crate::clock::Clock;
use crate::error::{Error, ErrorKind, Result};
use crate::state::WorkerState;
use crate::sync::{lock, Ordering::*};
use std::time::Duration;

/// State only the slow path touches.
pub(crate) struct Slow {
    state: WorkerState,
    closed: bool,
}

impl Slow {
    pub(crate) fn new(state: WorkerState) -> Self {
        Slow {
            state,
            closed: false,
        }
    }
}

/// Why a call waits, which decides the error when `max_wait` runs out.
#[derive(Clone, Copy, Debug)]
enum WaitFor {
    /// The clock is behind the highest reading by `behind` units, beyond `max_drift`.
    Rollback { behind: u64 },
    /// The IDs have run `max_drift` ahead of the clock.
    Lead,
}

/// A wait of one call: when it started on the monotonic clock, and the first step back seen.
struct Waiting {
    started_ns: Option<u64>,
    behind: Option<u64>,
}

impl<C: Clock> Inner<C> {
    /// Decides what the hot path could not, waiting (in bounded slices) where the rules say so.
    pub(super) fn slow_reserve(
        &self,
        n: u64,
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<u64> {
        let k = &self.k;
        let mut waiting = Waiting {
            started_ns: None,
            behind: None,
        };
        loop {
            let mut s = lock(&self.slow);
            if s.closed {
                return Err(Error::new(ErrorKind::Closed, "the generator is closed"));
            }
            // No switch can happen while we hold the lock: fresh readings decide.
            if let Some(first) = self.reserve(n) {
                return Ok(first);
            }
            let cur = self.counter.load(Acquire);
            let high = self.high.load(Acquire);
            let now = self.layout.time_of(self.clock.now_ms())?;
            let cid = self.clock_id_of(cur);
            let cid_base = cur & k.cid_mask;
            let high_time = high & self.layout.max_time();
            let wait_for = if now + k.drift_units < high_time {
                // The clock went back by more than max_drift.
                let behind = high_time - now;
                self.note_rollback(high, cid_base >> k.seq_bits | now);
                match self.policy {
                    RollbackPolicy::Error => {
                        return Err(self.rollback_error(behind, "the rollback policy is Error"))
                    }
                    RollbackPolicy::BumpClock => {
                        if let Some(next) = self.free_clock_id(&s.state, cid, now) {
                            self.switch(&mut s, cid, next, now);
                            continue;
                        }
                        // No clock-id is free for this reading: wait, as DESIGN.md says.
                    }
                    RollbackPolicy::Wait => {}
                }
                WaitFor::Rollback { behind }
            } else {
                let first = (cur + 1).max(cid_base | (now << k.seq_bits));
                let field_end = cid_base
                    | self
                        .layout
                        .counter(0, self.layout.max_time(), self.layout.max_sequence());
                match first.checked_add(n - 1) {
                    Some(last) if last <= field_end => {}
                    _ => return Err(self.layout.exhausted(self.clock.now_ms())),
                }
                WaitFor::Lead
            };
            drop(s);
            self.wait_slice(&mut waiting, wait_for, interrupted)?;
        }
    }

    /// Refuses a batch of `n` that cannot fit in what is left of the time field, before any ID
    /// of it is issued.
    pub(super) fn check_batch_fits(&self, n: u64) -> Result<()> {
        let cur = self.counter.load(Acquire);
        let field_end = (cur & self.k.cid_mask)
            | self
                .layout
                .counter(0, self.layout.max_time(), self.layout.max_sequence());
        if n > field_end.saturating_sub(cur) {
            return Err(Error::new(
                ErrorKind::TimeRange,
                format!(
                    "a batch of {n} IDs does not fit in what is left of layout {}'s time field \
                     ({} IDs); nothing was issued",
                    self.layout.name(),
                    field_end.saturating_sub(cur)
                ),
            ));
        }
        Ok(())
    }

    fn clock_id_of(&self, counter: u64) -> u64 {
        (counter & self.k.cid_mask) >> (self.layout.time_bits() as u32 + self.k.seq_bits)
    }

    /// A clock-id that can serve a reading of `now`: the lowest one above `current` whose
    /// reservations lie below `now` (IDs keep increasing), else, unless `strict_monotonic`, any
    /// other whose reservations lie below `now` (its old IDs are all older than its new ones).
    fn free_clock_id(&self, state: &WorkerState, current: u64, now: u64) -> Option<u64> {
        let free = |c: u64| state.reserved_of(c).is_none_or(|r| r < now);
        let max = self.layout.max_clock_id();
        (current + 1..=max)
            .find(|&c| free(c))
            .or_else(|| match self.strict_monotonic {
                true => None,
                false => (0..current).find(|&c| free(c)),
            })
    }

    /// Moves to clock-id `next`, restarting the time at `now`.
    fn switch(&self, s: &mut Slow, from: u64, next: u64, now: u64) {
        let k = &self.k;
        let (max_time, max_seq) = (self.layout.max_time(), self.layout.max_sequence());
        // The fence first: a hot path holding the old counter now sees another clock-id and
        // defers to us; one that loaded the old fence can still commit below it, and the swap
        // below captures what it committed.
        self.fence
            .store(self.layout.counter(next, max_time, max_seq), Release);
        self.high
            .store((next << self.layout.time_bits()) | now, Release);
        let old = self
            .counter
            .swap(self.layout.counter_before(next, now), AcqRel);
        s.state.raise(from, (old >> k.seq_bits) & max_time);
        s.state.raise(next, now);
        s.state.clock_id = next;
        Counters::add(&self.stats.bumps, 1);
        if next < from {
            Counters::add(&self.stats.reuses, 1);
        }
    }

    /// Counts a step back of the clock once, however many calls see it: a reading below `high`
    /// is a new step unless a step from the same `high` to a reading at most this low was
    /// counted already. Lock-free, since the hot path calls it (the slow path too, under its
    /// lock); two threads seeing a new step at the same instant may both count it.
    #[cold]
    pub(super) fn note_rollback(&self, high: u64, now_high: u64) {
        let (marked, lowest) = (&self.rollback_high, &self.rollback_low);
        let seen = marked.load(Acquire);
        if seen == high {
            if lowest.fetch_min(now_high, AcqRel) <= now_high {
                return; // the same step back, seen again while the clock catches up
            }
        } else if marked.compare_exchange(seen, high, AcqRel, Acquire).is_ok() {
            lowest.store(now_high, Release);
        } else {
            lowest.fetch_min(now_high, AcqRel);
            return;
        }
        Counters::add(&self.stats.rollbacks, 1);
        let mask = self.layout.max_time();
        let behind = (high & mask).saturating_sub(now_high & mask);
        self.stats.largest_rollback_units.fetch_max(behind, Relaxed);
    }

    fn rollback_error(&self, behind_units: u64, why: &str) -> Error {
        Error::new(
            ErrorKind::ClockRollback,
            format!(
                "the clock went back by {} ms, more than max_drift ({} ms), and {why}",
                behind_units * self.k.unit_ms,
                self.k.drift_units * self.k.unit_ms
            ),
        )
    }

    /// Sleeps one slice (at most one time unit) of a bounded wait, or fails when `max_wait` has
    /// run out or the caller's hook says it was interrupted.
    fn wait_slice(
        &self,
        waiting: &mut Waiting,
        wait_for: WaitFor,
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<()> {
        let start = self.clock.monotonic_ns();
        let started = *waiting.started_ns.get_or_insert_with(|| {
            Counters::add(&self.stats.waits, 1);
            start
        });
        if let WaitFor::Rollback { behind } = wait_for {
            waiting.behind.get_or_insert(behind);
        }
        let elapsed = start.saturating_sub(started);
        if elapsed >= self.max_wait_ns {
            let waited = format!("waited {} ms (max_wait)", elapsed / 1_000_000);
            return Err(match wait_for {
                WaitFor::Rollback { behind } => self.rollback_error(
                    *waiting.behind.get_or_insert(behind),
                    &format!(
                        "{}; {waited} for the clock to catch up",
                        match self.policy {
                            RollbackPolicy::BumpClock => "no clock-id is free for the reading",
                            _ => "the rollback policy is Wait",
                        }
                    ),
                ),
                WaitFor::Lead => Error::new(
                    ErrorKind::Overloaded,
                    format!(
                        "IDs ran {} ms ahead of the clock (max_drift) and it did not catch up: {waited}",
                        self.k.drift_units * self.k.unit_ms
                    ),
                ),
            });
        }
        if interrupted() {
            return Err(Error::new(
                ErrorKind::Interrupted,
                "interrupted while waiting for the clock",
            ));
        }
        let slice = (self.k.unit_ms * 1_000_000).min(self.max_wait_ns - elapsed);
        self.clock.sleep(Duration::from_nanos(slice));
        let slept = self.clock.monotonic_ns().saturating_sub(start);
        Counters::add(&self.stats.waited_ns, slept);
        Ok(())
    }

    /// Closes: the fence shuts the hot path, the slow path reports `Closed`. An in-memory
    /// generator waits until the clock has passed its last ID.
    pub(super) fn close(&self) -> Result<()> {
        let mut s = lock(&self.slow);
        if s.closed {
            return Ok(());
        }
        s.closed = true;
        self.fence.store(CLOSED_FENCE, Release);
        let last = self.counter.load(Acquire);
        let last_time = (last >> self.k.seq_bits) & self.layout.max_time();
        drop(s);
        let started = self.clock.monotonic_ns();
        loop {
            let now = self.layout.time_of(self.clock.now_ms()).unwrap_or(0);
            if now > last_time {
                return Ok(());
            }
            let elapsed = self.clock.monotonic_ns().saturating_sub(started);
            if elapsed >= self.max_wait_ns {
                return Err(Error::new(
                    ErrorKind::ClockRollback,
                    format!(
                        "closed, but the clock is still {} ms behind the last ID after {} ms: an \
                         in-memory generator restarted now could repeat IDs",
                        (last_time - now + 1) * self.k.unit_ms,
                        elapsed / 1_000_000
                    ),
                ));
            }
            let need = (last_time - now + 1) * self.k.unit_ms * 1_000_000;
            self.clock
                .sleep(Duration::from_nanos(need.min(self.k.unit_ms * 1_000_000)));
        }
    }
}
