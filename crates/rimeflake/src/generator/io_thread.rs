//! The I/O thread: every write of a durable generator's state happens here, so no caller ever
//! holds a lock across store I/O or blocks on a disk for longer than `max_wait`.
//!
//! It keeps the durable `reserved_until` ahead of the counter (so `next_id` never waits for the
//! disk), stores clock-id switches for the slow path, and makes the final write of `close()`.
//! Callers post a job and wait for its outcome in bounded slices: when the store hangs, they
//! give up with a state error after `max_wait`, and the job finishes whenever the store answers.
//! A reservation reaches the fence only once it is stored (synced); when the store fails, the
//! fence stays where it was, so the generator fails closed when it reaches it, and recovers by
//! itself as soon as a write succeeds again. The thread owns the lease and drops it only after
//! its last write has returned, so a write still pending in a hung store can never land after
//! another process has taken the worker ID.

use super::Inner;
use crate::clock::{monotonic_ns, Clock};
use crate::error::{Error, ErrorKind, Result};
use crate::fork::HeldLease;
use crate::sync::Ordering::*;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

/// How soon a failed write is tried again.
const RETRY: Duration = Duration::from_millis(20);

/// The thread's jobs and their outcomes. Locked only to post or take a job: never across I/O.
#[derive(Default)]
pub(crate) struct Jobs {
    /// A clock-id switch asked for by the slow path (one at a time).
    pub(crate) switch: Option<SwitchJob>,
    /// `close()` asked for the final write: the sealed counter of the last ID.
    close: Option<u64>,
    /// The final write's outcome; the thread has stopped once it is set.
    closed: Option<Result<()>>,
    /// A caller needs the reservation moved now.
    nudged: bool,
    /// Bumped whenever the thread finishes a job or moves the fence: waiters re-decide.
    progress: u64,
}

/// A switch to clock-id `next`, restarting the time at `now`, from clock-id `from`.
pub(crate) struct SwitchJob {
    pub(crate) from: u64,
    pub(crate) next: u64,
    pub(crate) now: u64,
    /// `None` until the thread has written it; once written, the ticket it was sent with.
    pub(crate) outcome: Option<Result<Ticket>>,
}

/// What a write that may open the fence saw when it was sent: the count of lease losses. A
/// loss since (even with the lease back by the time the write is answered) and the write opens
/// nothing; the next one, sent after, may. Every write that opens the fence (an extension of the
/// reservation, a clock-id switch) goes through [`Inner::open_fence`] with its ticket.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ticket(u64);

/// The I/O thread of a durable generator.
pub(crate) struct Io {
    pub(crate) jobs: Mutex<Jobs>,
    done: Condvar,
    /// Set by the thread itself when it starts.
    thread: OnceLock<std::thread::Thread>,
}

fn lock(jobs: &Mutex<Jobs>) -> MutexGuard<'_, Jobs> {
    jobs.lock().unwrap_or_else(|p| p.into_inner())
}

/// Starts the I/O thread of `inner`, which owns `lease` from now on.
pub(super) fn spawn<C: Clock>(inner: &Arc<Inner<C>>, lease: Option<HeldLease>) -> Result<()> {
    let io = Io {
        jobs: Mutex::new(Jobs::default()),
        done: Condvar::new(),
        thread: OnceLock::new(),
    };
    if inner.durable.io.set(io).is_err() {
        unreachable!("one I/O thread per generator");
    }
    let me = Arc::clone(inner);
    std::thread::Builder::new()
        .name("rimeflake-io".into())
        .spawn(move || {
            let outcome = run(&me);
            // Only now: no write of ours can land after another process takes the worker ID.
            drop(lease);
            if let Some(io) = me.durable.io.get() {
                io.finish(|jobs| jobs.closed = Some(outcome));
            }
        })
        .map_err(|e| {
            Error::new(
                ErrorKind::State,
                format!("cannot start the state writer thread: {e}"),
            )
        })?;
    Ok(())
}

/// The thread's loop, until `close` asks for the final write; returns that write's outcome.
fn run<C: Clock>(inner: &Inner<C>) -> Result<()> {
    let d = &inner.durable;
    let io = d.io.get().expect("set before the thread starts");
    // Before the first look at the jobs: a caller that found no thread to wake posted its job
    // before this line, so the look below sees it.
    let _ = io.thread.set(std::thread::current());
    loop {
        let job = {
            let mut jobs = lock(&io.jobs);
            if let Some(last) = jobs.close.take() {
                Job::Close(last)
            } else if let Some(sw) = jobs.switch.as_ref().filter(|s| s.outcome.is_none()) {
                Job::Switch(sw.next, sw.now)
            } else if std::mem::take(&mut jobs.nudged) {
                Job::Extend
            } else {
                Job::Idle
            }
        };
        let moved = match job {
            Job::Close(last) => return inner.save_final(last),
            Job::Switch(next, now) => {
                let ticket = inner.ticket();
                let outcome = inner.save_switch(next, now).map(|()| ticket);
                io.finish(|jobs| {
                    if let Some(sw) = jobs.switch.as_mut() {
                        sw.outcome = Some(outcome);
                    }
                });
                continue;
            }
            Job::Extend => inner.extend_reservation(),
            Job::Idle => {
                let pause = if d.failure().is_some() {
                    RETRY.min(d.refresh)
                } else {
                    d.refresh
                };
                std::thread::park_timeout(pause);
                let jobs = lock(&io.jobs);
                let waiting = jobs.close.is_some()
                    || jobs.switch.as_ref().is_some_and(|s| s.outcome.is_none());
                drop(jobs);
                if waiting {
                    continue; // a job came in: it goes first
                }
                inner.extend_reservation()
            }
        };
        if moved {
            io.finish(|_| {});
        }
    }
}

enum Job {
    Close(u64),
    Switch(u64, u64),
    Extend,
    Idle,
}

impl Io {
    /// Wakes the thread.
    pub(crate) fn wake(&self) {
        if let Some(t) = self.thread.get() {
            t.unpark();
        }
    }

    /// Records a finished job (or a moved fence) and wakes the callers waiting for one.
    fn finish(&self, record: impl FnOnce(&mut Jobs)) {
        let mut jobs = lock(&self.jobs);
        record(&mut jobs);
        jobs.progress += 1;
        self.done.notify_all();
    }

    /// Waits (at most `slice`, on the real clock) for the thread to finish a job or move the
    /// fence after progress count `seen`; returns the progress count now.
    pub(crate) fn wait_progress(&self, seen: u64, slice: Duration) -> u64 {
        let jobs = lock(&self.jobs);
        if jobs.progress != seen {
            return jobs.progress;
        }
        let (jobs, _) = self
            .done
            .wait_timeout(jobs, slice)
            .unwrap_or_else(|p| p.into_inner());
        jobs.progress
    }

    pub(crate) fn progress(&self) -> u64 {
        lock(&self.jobs).progress
    }
}

impl<C: Clock> Inner<C> {
    /// Moves the reservation of the current clock-id to `reserve_ahead` past the later of the
    /// clock and the counter (and any need a waiting call posted); publishes it to the fence
    /// once stored. Returns whether the fence moved. Store I/O happens outside every lock.
    pub(super) fn extend_reservation(&self) -> bool {
        let hot = &*self.hot;
        let d = &self.durable;
        let ticket = self.ticket();
        let fence = hot.fence.load(SeqCst);
        // A lost lease keeps the fence shut (see `shut_for_lease`): checked after the fence is
        // read, so a fence shut after this check makes the compare-and-swap below fail.
        if fence == super::CLOSED_FENCE || d.lease_lost.load(SeqCst) {
            return false;
        }
        let Some(store) = d.store.as_ref() else {
            return false;
        };
        let cid = self.clock_id_of(fence);
        let counter = hot.counter.load(Acquire);
        let Ok(now) = self.layout.time_of(self.clock.now_ms()) else {
            return false; // outside the time field: the slow path reports it
        };
        let need = d.need.load(Acquire);
        // Never more than a holder's reach (`max_drift` plus `reserve_ahead`) past the clock,
        // whatever a batch needs (it waits for the clock anyway before it issues past
        // `max_drift`): a successor that finds the state lost then knows how far it may have
        // gone.
        let reach = super::reach_units(self.shape.drift_units, d.ahead_units);
        let target = (now.max(self.time_of(counter)) + d.ahead_units)
            .max(need)
            .min(now + reach)
            .min(self.layout.max_time());
        if target <= self.time_of(fence) && d.failure().is_none() && !d.resave.swap(false, SeqCst) {
            return false;
        }
        let mut next = d.snapshot();
        next.clock_id = cid;
        next.raise(cid, target.max(self.time_of(fence)));
        match self.stats.timed_write(|| store.save(&next)) {
            Ok(()) => {
                let reserved = next.reserved_of(cid).unwrap_or(target);
                d.stored(next);
                // Met: clear the need unless a caller raised it meanwhile.
                let _ = d.need.compare_exchange(need, 0, AcqRel, Acquire);
                let new_fence = self
                    .layout
                    .counter(cid, reserved, self.layout.max_sequence());
                // Only this thread moves the fence within a clock-id; a switch or `close` may
                // have replaced it meanwhile, and then this compare-and-swap leaves it alone.
                self.open_fence(ticket, || {
                    hot.fence
                        .compare_exchange(fence, new_fence.max(fence), SeqCst, SeqCst)
                        .is_ok()
                })
            }
            Err(e) => {
                d.failed(e);
                false
            }
        }
    }

    /// The ticket of a write sent now.
    pub(super) fn ticket(&self) -> Ticket {
        Ticket(self.durable.lease_losses.load(SeqCst))
    }

    /// The one way a stored write opens the fence: `open` raises it, unless the lease was lost
    /// since the write was sent (by `ticket`), or is lost now. Checked again after raising, since
    /// a loss in between may have found the fence still low (a shut of a lowered fence changes
    /// nothing): then the fence is shut again. Returns whether it opened.
    pub(super) fn open_fence(&self, ticket: Ticket, open: impl FnOnce() -> bool) -> bool {
        let d = &self.durable;
        let held = || !d.lease_lost.load(SeqCst) && d.lease_losses.load(SeqCst) == ticket.0;
        if !held() {
            return false;
        }
        let opened = open();
        if opened && !held() {
            self.shut_for_lease();
            return false;
        }
        opened
    }

    /// Stores the switch to clock-id `next` at time `now` (its reservation and the new current
    /// clock-id), before the slow path lets its first ID through.
    pub(super) fn save_switch(&self, next: u64, now: u64) -> Result<()> {
        let d = &self.durable;
        let mut state = d.snapshot();
        state.clock_id = next;
        let until = (now + d.ahead_units).min(self.layout.max_time());
        state.raise(next, until);
        if let Some(store) = d.store.as_ref() {
            if let Err(e) = self.stats.timed_write(|| store.save(&state)) {
                d.failed(e.clone());
                return Err(e);
            }
        }
        d.stored(state);
        Ok(())
    }

    /// The final write of `close()`: what a clean close adds is the last ID itself, so a
    /// restart can continue right above it instead of above the reservation (reservations
    /// never go down).
    pub(super) fn save_final(&self, last: u64) -> Result<()> {
        let d = &self.durable;
        let Some(store) = d.store.as_ref() else {
            return Ok(());
        };
        let mut state = d.snapshot();
        if self.clock_id_of(last) == state.clock_id {
            state.closed_at = Some(last);
        }
        let result = self.stats.timed_write(|| store.save(&state));
        if result.is_ok() {
            d.stored(state);
        }
        result
    }

    /// Asks for the reservation to be moved now, at least to `need`. Lock-free for the caller
    /// but for the instant of posting.
    pub(super) fn nudge(&self, need: u64) {
        let d = &self.durable;
        d.need.fetch_max(need, AcqRel);
        if let Some(io) = d.io.get() {
            lock(&io.jobs).nudged = true;
            io.wake();
        }
    }

    /// Posts the final write to the I/O thread and waits for it, at most `max_wait`. On a
    /// timeout the thread finishes the write (and then frees the lease) whenever the store
    /// answers.
    pub(super) fn close_io(&self, last: u64) -> Result<()> {
        let Some(io) = self.durable.io.get() else {
            return self.save_final(last);
        };
        lock(&io.jobs).close = Some(last);
        io.wake();
        let started = monotonic_ns();
        let mut seen = io.progress();
        loop {
            if let Some(outcome) = lock(&io.jobs).closed.take() {
                return outcome;
            }
            let waited = monotonic_ns().saturating_sub(started);
            if waited >= self.max_wait_ns {
                return Err(Error::new(
                    ErrorKind::State,
                    format!(
                        "closed, but the state store {} did not answer within max_wait ({} ms): \
                         the last state is written, and the lease freed, when it does",
                        self.durable.describe(),
                        self.max_wait_ns / 1_000_000
                    ),
                ));
            }
            let slice = Duration::from_nanos((self.max_wait_ns - waited).min(10_000_000));
            seen = io.wait_progress(seen, slice);
        }
    }
}
