//! The slow path: everything the hot path hands over. Serialized by `Inner::slow`; it re-reads
//! the counter, the fence and the clock under the lock and decides from those fresh readings.

use super::stats::Counters;
use super::{Inner, RollbackPolicy, CLOSED_FENCE, SEALED};
use crate::clock::Clock;
use crate::error::{Error, ErrorKind, Result};
use crate::layout::Layout;
use crate::state::WorkerState;
use crate::sync::{lock, Ordering::*};
use std::time::Duration;

/// State only the slow path touches.
#[derive(Default)]
pub(crate) struct Slow {
    closed: bool,
}

/// Why a call waits, which decides the error when `max_wait` runs out.
#[derive(Clone, Copy, Debug)]
enum WaitFor {
    /// The clock is behind the highest reading by `behind` units, beyond `max_drift`.
    Rollback { behind: u64 },
    /// The IDs have run `max_drift` ahead of the clock.
    Lead,
    /// The durable reservation is used up and has not been extended yet.
    Reservation,
}

/// A wait of one call: when it started on the monotonic clock, and the first step back seen.
#[derive(Default)]
struct Waiting {
    started_ns: Option<u64>,
    behind: Option<u64>,
}

/// A clock-id that can serve a reading of `now`: the lowest one above `current` whose
/// reservations lie below `now` (IDs keep increasing), else, unless `strict`, any other whose
/// reservations lie below `now` (its old IDs are all older than its new ones).
pub(super) fn free_clock_id(
    state: &WorkerState,
    layout: &Layout,
    current: u64,
    now: u64,
    strict: bool,
) -> Option<u64> {
    let free = |c: u64| state.reserved_of(c).is_none_or(|r| r < now);
    (current + 1..=layout.max_clock_id())
        .find(|&c| free(c))
        .or_else(|| {
            if strict {
                None
            } else {
                (0..current).find(|&c| free(c))
            }
        })
}

impl<C: Clock> Inner<C> {
    /// Decides what the hot path could not, waiting (in bounded slices) where the rules say so.
    pub(super) fn slow_reserve(
        &self,
        n: u64,
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<u64> {
        let k = &self.k;
        let hot = &*self.hot;
        let mut waiting = Waiting::default();
        loop {
            let s = lock(&self.slow);
            if s.closed {
                return Err(Error::new(ErrorKind::Closed, "the generator is closed"));
            }
            // No switch can happen while we hold the lock: fresh readings decide.
            if let Some(first) = self.reserve(n) {
                return Ok(first);
            }
            let cur = hot.counter.load(Acquire);
            let high = hot.high.load(Acquire);
            let fence = hot.fence.load(Acquire);
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
                        let state = self
                            .durable
                            .writer
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .state
                            .clone();
                        if let Some(next) =
                            free_clock_id(&state, &self.layout, cid, now, self.strict_monotonic)
                        {
                            self.switch(cid, next, now)?;
                            continue;
                        }
                        // No clock-id is free for this reading: wait, as DESIGN.md says.
                    }
                    RollbackPolicy::Wait => {}
                }
                WaitFor::Rollback { behind }
            } else {
                let base = cid_base | (now << k.seq_bits);
                let first = (cur + 1).max(base);
                let field_end = cid_base
                    | self
                        .layout
                        .counter(0, self.layout.max_time(), self.layout.max_sequence());
                let last = match first.checked_add(n - 1) {
                    Some(last) if last <= field_end => last,
                    _ => return Err(self.layout.exhausted(self.clock.now_ms())),
                };
                if last > fence && self.durable.refresh.is_zero() {
                    // No reservation thread: move the reservation ourselves, then decide again.
                    let mut w = self
                        .durable
                        .writer
                        .lock()
                        .unwrap_or_else(|p| p.into_inner());
                    w.need = w.need.max(self.time_of(last));
                    self.extend_reservation(&mut w);
                    if w.failure.is_none() {
                        continue;
                    }
                    WaitFor::Reservation
                } else if last > fence {
                    self.nudge(self.time_of(last));
                    // The clock jumped past the reservation: keep issuing inside it from the
                    // counter while the reservation thread catches up.
                    if cur + n <= fence
                        && hot
                            .counter
                            .compare_exchange(cur, cur + n, AcqRel, Acquire)
                            .is_ok()
                    {
                        return Ok(cur + 1);
                    }
                    WaitFor::Reservation
                } else if last > base + k.drift_span {
                    WaitFor::Lead
                } else {
                    continue; // the state moved under us: decide again
                }
            };
            drop(s);
            self.wait_slice(&mut waiting, wait_for, interrupted)?;
        }
    }

    /// Refuses a batch of `n` that cannot fit in what is left of the time field, before any ID
    /// of it is issued.
    pub(super) fn check_batch_fits(&self, n: u64) -> Result<()> {
        let cur = self.hot.counter.load(Acquire) & !SEALED;
        let field_end = (cur & self.k.cid_mask)
            | self
                .layout
                .counter(0, self.layout.max_time(), self.layout.max_sequence());
        let room = field_end.saturating_sub(cur);
        if n > room {
            return Err(Error::new(
                ErrorKind::TimeRange,
                format!(
                    "a batch of {n} IDs does not fit in what is left of layout {}'s time field \
                     ({room} IDs); nothing was issued",
                    self.layout.name()
                ),
            ));
        }
        Ok(())
    }

    /// Moves to clock-id `next`, restarting the time at `now`. The new clock-id and its
    /// reservation are stored (synced) before the fence lets the first ID through.
    fn switch(&self, from: u64, next: u64, now: u64) -> Result<()> {
        let hot = &*self.hot;
        let (max_time, max_seq) = (self.layout.max_time(), self.layout.max_sequence());
        let mut w = self
            .durable
            .writer
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let mut state = w.state.clone();
        state.clock_id = next;
        let reserved_until = match &w.store {
            Some(store) => {
                let until = (now + self.durable.ahead_units).min(max_time);
                state.raise(next, until);
                store.save(&state)?;
                until
            }
            None => {
                state.raise(next, now);
                max_time
            }
        };
        // The fence first: a hot path holding the old counter now sees another clock-id and
        // defers to us; one that loaded the old fence can still commit below it, and the swap
        // below captures what it committed.
        hot.fence
            .store(self.layout.counter(next, reserved_until, max_seq), Release);
        hot.high
            .store((next << self.layout.time_bits()) | now, Release);
        let restart = self.layout.counter_before(next, now);
        let old = hot.counter.swap(restart, AcqRel);
        self.stats.new_epoch(old, restart);
        if w.store.is_none() {
            state.raise(from, self.time_of(old)); // in memory, the reservation is what was issued
        }
        w.state = state;
        w.need = 0; // a time the old clock-id needed means nothing under the new one
        Counters::add(&self.stats.bumps, 1);
        if next < from {
            Counters::add(&self.stats.reuses, 1);
        }
        Ok(())
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
            return Err(self.wait_error(waiting, wait_for, elapsed));
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

    fn wait_error(&self, waiting: &Waiting, wait_for: WaitFor, elapsed: u64) -> Error {
        let waited = format!("waited {} ms (max_wait)", elapsed / 1_000_000);
        match wait_for {
            WaitFor::Rollback { behind } => self.rollback_error(
                waiting.behind.unwrap_or(behind),
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
            WaitFor::Reservation => {
                let w = self.durable.writer.lock().unwrap_or_else(|p| p.into_inner());
                let store = w.store.as_ref().map_or(String::new(), |s| s.describe());
                Error::new(
                    ErrorKind::State,
                    match &w.failure {
                        Some(e) => format!("the reservation in {store} could not be extended ({e}); {waited}"),
                        None => format!("the reservation in {store} was not extended in time; {waited}"),
                    },
                )
            }
        }
    }

    /// Closes: the fence shuts the hot path, the slow path reports `Closed`. A durable generator
    /// stops its reservation thread, rewrites its last state if a write had failed, and frees
    /// its lease; an in-memory one waits until the clock has passed its last ID.
    pub(super) fn close(&self) -> Result<()> {
        let mut s = lock(&self.slow);
        if s.closed {
            return Ok(());
        }
        s.closed = true;
        self.closed.store(true, Release);
        self.hot.fence.store(CLOSED_FENCE, Release);
        // Seal the counter: a call that loaded the old fence just before can no longer commit,
        // so `last` is the last ID this generator will ever have issued.
        let last = self.hot.counter.fetch_or(SEALED, AcqRel) & !SEALED;
        drop(s);
        self.stop_reserver();
        let mut w = self
            .durable
            .writer
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        w.failure = None;
        if let Some(store) = &w.store {
            // Reservations only rise; what a clean close adds is the last ID itself, so a
            // restart can continue right above it instead of above the reservation.
            let mut state = w.state.clone();
            if self.clock_id_of(last) == state.clock_id {
                state.closed_at = Some(last);
            }
            let result = store.save(&state);
            if result.is_ok() {
                w.state = state;
            }
            drop(w);
            if let Some(lease) = self
                .durable
                .lease
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .take()
            {
                lease.release();
            }
            return result;
        }
        drop(w);
        self.wait_past_last_id()
    }

    /// In memory: waits (at most `max_wait`) until the clock has passed the last ID's time.
    fn wait_past_last_id(&self) -> Result<()> {
        let last_time = self.time_of(self.hot.counter.load(Acquire));
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
            self.clock
                .sleep(Duration::from_nanos(self.k.unit_ms * 1_000_000));
        }
    }
}
