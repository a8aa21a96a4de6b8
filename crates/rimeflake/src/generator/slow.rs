//! The slow path: everything the hot path hands over. Serialized by `Inner::slow`; it re-reads
//! the counter, the fence and the clock under the lock and decides from those fresh readings.

use super::io_thread::{SwitchJob, Ticket};
use super::stats::Counters;
use super::{Inner, RollbackPolicy, CLOSED_FENCE, SEALED};
use crate::clock::{monotonic_ns, Clock};
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
    /// The switch to clock-id `next` is being stored by the I/O thread.
    Switch { next: u64 },
}

/// A wait of one call: when it started on the generator's monotonic clock (waits for the
/// clock) and on the real one (waits for the I/O thread, which runs in real time), the first
/// step back seen, and the I/O thread's progress count when the call last decided.
#[derive(Default)]
struct Waiting {
    started_ns: Option<u64>,
    io_started_ns: Option<u64>,
    behind: Option<u64>,
    io_seen: u64,
    /// Counted in `Stats::waits`: at its first slice actually slept, so that a call that gives
    /// up before sleeping (a caller's hook that says "interrupted" at once, to retry the call
    /// elsewhere) does not count a wait its retry counts again.
    counted: bool,
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
    pub(super) fn slow_claim(&self, n: u64, interrupted: &mut dyn FnMut() -> bool) -> Result<u64> {
        let k = &self.shape;
        let hot = &*self.hot;
        let mut waiting = Waiting::default();
        loop {
            if let Some(io) = self.durable.io.get() {
                waiting.io_seen = io.progress(); // before deciding: no wake-up is missed
            }
            let s = lock(&self.slow);
            if s.closed {
                return Err(Error::new(ErrorKind::Closed, "the generator is closed"));
            }
            if let Some(e) = self.durable.lease_error() {
                return Err(e);
            }
            // No switch can happen while we hold the lock: fresh readings decide.
            if let Some(first) = self.claim(n) {
                return Ok(first);
            }
            let cur = hot.counter.load(Acquire);
            let high = hot.high.load(Acquire);
            let fence = hot.fence.load(Acquire);
            let now_ms = self.clock.now_ms();
            let now = self.layout.time_of(now_ms)?;
            // Every way on from here (a switch, the counter within the fence) issues from this
            // reading: its unit must end before the lease deadline, as in the hot path.
            if !self.unit_opens(now_ms - k.epoch_ms) {
                return Err(self.deadline_error());
            }
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
                        let state = self.durable.snapshot();
                        if let Some(next) =
                            free_clock_id(&state, &self.layout, cid, now, self.strict_monotonic)
                        {
                            if self.switch(cid, next, now)? {
                                continue;
                            }
                            // The I/O thread is storing the switch: wait for it, then decide.
                            drop(s);
                            self.wait_slice(&mut waiting, WaitFor::Switch { next }, interrupted)?;
                            continue;
                        }
                        // No clock-id is free for this reading: wait, as `Wait` does
                        // (docs/guarantees.md, "The clock going back").
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
                if last > base + k.drift_span {
                    // Past max_drift ahead of the clock: wait for the clock first. The
                    // reservation this batch then needs lies within a holder's reach past the
                    // clock, which is as far as any save reserves.
                    WaitFor::Lead
                } else if last > fence && self.durable.io.get().is_none() {
                    // No I/O thread: move the reservation ourselves, then decide again.
                    self.durable.need.fetch_max(self.time_of(last), AcqRel);
                    self.extend_reservation();
                    if self.durable.failure().is_none() {
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
        let field_end = (cur & self.shape.cid_mask)
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
    /// reservation are stored (synced) before the fence lets the first ID through. With an I/O
    /// thread, storing is its job and this call never waits for it: `Ok(false)` means "posted,
    /// or still being written: wait, then decide again".
    fn switch(&self, from: u64, next: u64, now: u64) -> Result<bool> {
        let d = &self.durable;
        if d.store.is_none() {
            d.update(|s| {
                s.clock_id = next;
                s.raise(next, now);
            });
            // No lease here: nothing is ever lost, so the ticket always opens.
            if let Some(old) = self.publish_switch(from, next, now, self.ticket()) {
                d.update(|s| s.raise(from, self.time_of(old))); // in memory, what was issued
            }
            return Ok(true);
        }
        let Some(io) = d.io.get() else {
            let ticket = self.ticket();
            self.save_switch(next, now)?;
            return Ok(self.publish_switch(from, next, now, ticket).is_some());
        };
        let mut jobs = io.jobs.lock().unwrap_or_else(|p| p.into_inner());
        match jobs.switch.take() {
            None => {
                jobs.switch = Some(SwitchJob {
                    from,
                    next,
                    now,
                    outcome: None,
                });
                drop(jobs);
                io.wake();
                Ok(false)
            }
            Some(job @ SwitchJob { outcome: None, .. }) => {
                jobs.switch = Some(job);
                Ok(false)
            }
            Some(SwitchJob {
                outcome: Some(Err(e)),
                ..
            }) => Err(e),
            Some(SwitchJob {
                from,
                next,
                now,
                outcome: Some(Ok(ticket)),
            }) => {
                drop(jobs);
                // Stored, perhaps for a call that gave up waiting: a stored switch is safe to
                // make as long as the counter is still on the clock-id it left, and opens the
                // fence only if the lease was not lost since it was sent (else decide again:
                // the next switch, sent after, may).
                if self.clock_id_of(self.hot.counter.load(Acquire)) == from {
                    return Ok(self.publish_switch(from, next, now, ticket).is_some());
                }
                Ok(true)
            }
        }
    }

    /// Points the hot words at clock-id `next` from time `now`, the switch having been stored
    /// with `ticket`; returns the old counter. `None`, and nothing changed, when the lease was
    /// lost since the switch was sent ([`Inner::open_fence`]).
    fn publish_switch(&self, from: u64, next: u64, now: u64, ticket: Ticket) -> Option<u64> {
        let hot = &*self.hot;
        let reserved_until = match self.durable.store {
            Some(_) => self.switch_until(now),
            None => self.layout.max_time(),
        };
        // The fence first: a hot path holding the old counter now sees another clock-id and
        // defers to us; one that loaded the old fence can still commit below it, and the swap
        // below captures what it committed.
        let fence = self
            .layout
            .counter(next, reserved_until, self.layout.max_sequence());
        // Lost since the switch was sent: nothing changes. Lost while the fence is stored: it
        // is shut again, and the switch goes on shut, as the lease keeper left it.
        let mut stored = false;
        self.open_fence(ticket, || {
            hot.fence.store(fence, SeqCst);
            stored = true;
            true
        });
        if !stored {
            return None;
        }
        hot.high
            .store((next << self.layout.time_bits()) | now, Release);
        let restart = self.shape.spread_start(
            self.layout.counter_before(next, now),
            self.layout.counter(next, now, 0),
            now,
        );
        let old = hot.counter.swap(restart, AcqRel);
        self.stats.new_epoch(old, restart);
        self.durable.need.store(0, Release); // a time the old clock-id needed means nothing now
        Counters::add(&self.stats.bumps, 1);
        if next < from {
            Counters::add(&self.stats.reuses, 1);
        }
        Some(old)
    }

    /// How far a switch at time `now` reserves its new clock-id.
    pub(super) fn switch_until(&self, now: u64) -> u64 {
        (now + self.durable.ahead_units).min(self.layout.max_time())
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

    /// The error of a call whose clock reading is in a time unit that ends after the lease
    /// deadline: the lease was not renewed in time (the keeper thread may not have run yet).
    pub(super) fn deadline_error(&self) -> Error {
        let deadline = self.hot.deadline.load(Acquire);
        let now = crate::clock::boottime_ns();
        let when = match now.checked_sub(deadline) {
            Some(past) => format!("{} ms ago", past / 1_000_000),
            None => format!(
                "in {} ms, within the current time unit",
                (deadline - now) / 1_000_000
            ),
        };
        Error::new(
            ErrorKind::Lease,
            format!(
                "worker ID {}: the lease was not renewed by its deadline (three quarters of the \
                 TTL after the last renewal was sent), which passes {when}; no ID is issued past \
                 it until a renewal succeeds",
                self.worker_id
            ),
        )
    }

    fn rollback_error(&self, behind_units: u64, why: &str) -> Error {
        Error::new(
            ErrorKind::ClockRollback,
            format!(
                "the clock went back by {} ms, more than max_drift ({} ms), and {why}",
                behind_units * self.shape.unit_ms,
                self.shape.drift_units * self.shape.unit_ms
            ),
        )
    }

    /// Sleeps one slice (at most one time unit) of a bounded wait, or fails when `max_wait` has
    /// run out or the caller's hook says it was interrupted. Waits for the I/O thread block on
    /// its progress and are measured on the real clock, since the store answers in real time.
    fn wait_slice(
        &self,
        waiting: &mut Waiting,
        wait_for: WaitFor,
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<()> {
        let io = match wait_for {
            WaitFor::Reservation | WaitFor::Switch { .. } => self.durable.io.get(),
            _ => None,
        };
        let now_ns = || match io {
            Some(_) => monotonic_ns(),
            None => self.clock.monotonic_ns(),
        };
        let start = now_ns();
        let started = *match io {
            Some(_) => &mut waiting.io_started_ns,
            None => &mut waiting.started_ns,
        }
        .get_or_insert(start);
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
        if !std::mem::replace(&mut waiting.counted, true) {
            Counters::add(&self.stats.waits, 1);
        }
        let slice = (self.shape.unit_ms.saturating_mul(1_000_000)).min(self.max_wait_ns - elapsed);
        match io {
            Some(io) => {
                io.wait_progress(waiting.io_seen, Duration::from_nanos(slice));
            }
            None => self.clock.sleep(Duration::from_nanos(slice)),
        }
        Counters::add(&self.stats.waited_ns, now_ns().saturating_sub(start));
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
                    self.shape.drift_units * self.shape.unit_ms
                ),
            ),
            WaitFor::Reservation | WaitFor::Switch { .. } => {
                let store = self.durable.describe();
                let what = match wait_for {
                    WaitFor::Switch { next } => {
                        format!("the switch to clock-id {next} (after the clock went back)")
                    }
                    _ => "the reservation".to_string(),
                };
                let failure = self.durable.failure();
                Error::new(
                    // A write refused because the lease is gone is a lease error.
                    match &failure {
                        Some(e) if e.kind() == ErrorKind::Lease => ErrorKind::Lease,
                        _ => ErrorKind::State,
                    },
                    match failure {
                        Some(e) => format!("{what} could not be stored in {store} ({e}); {waited}"),
                        None => format!(
                            "{what} was not stored in {store} in time (the store does not \
                             answer); {waited}"
                        ),
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
        self.hot.fence.store(CLOSED_FENCE, Release);
        // Seal the counter: a call that loaded the old fence just before can no longer commit,
        // so `last` is the last ID this generator will ever have issued.
        let last = self.hot.counter.fetch_or(SEALED, AcqRel) & !SEALED;
        drop(s);
        if self.durable.store.is_some() {
            // Bounded by max_wait where an I/O thread makes the write; it frees the lease after.
            let result = self.close_io(last);
            let lease = self
                .durable
                .lease
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .take();
            if let Some(lease) = lease {
                lease.release();
            }
            return result;
        }
        self.wait_past_last_id()
    }

    /// In memory: waits (at most `max_wait`, in slices of at most one unit) until the clock has
    /// passed the last ID's time. Past the end of the time field the clock has passed every ID.
    fn wait_past_last_id(&self) -> Result<()> {
        let last_time = self.time_of(self.hot.counter.load(Acquire));
        let started = self.clock.monotonic_ns();
        loop {
            let now_ms = self.clock.now_ms();
            let behind_ms = match self.layout.time_of(now_ms) {
                Ok(now) if now > last_time => return Ok(()),
                Ok(now) => (last_time - now + 1) * self.shape.unit_ms,
                Err(_) if now_ms >= self.layout.epoch_ms() => return Ok(()), // past the field
                Err(_) => (last_time + 1) * self.shape.unit_ms + (self.layout.epoch_ms() - now_ms),
            };
            let elapsed = self.clock.monotonic_ns().saturating_sub(started);
            if elapsed >= self.max_wait_ns {
                return Err(Error::new(
                    ErrorKind::ClockRollback,
                    format!(
                        "closed, but the clock is still {behind_ms} ms behind the last ID after \
                         {} ms (max_wait): an in-memory generator restarted now could repeat IDs",
                        elapsed / 1_000_000
                    ),
                ));
            }
            let slice = self
                .shape
                .unit_ms
                .saturating_mul(1_000_000)
                .min(self.max_wait_ns - elapsed);
            self.clock.sleep(Duration::from_nanos(slice));
        }
    }
}
