//! Starting a generator again in place: in a forked child (the parent's lease is not the
//! child's), and on a server backend after another process took the worker ID, or after the
//! lease came back on another server than the one it lapsed on (a fixed worker ID then starts
//! again on the same one, as a process restart would). Either way the old `Inner` is left in
//! place, never freed: other threads may still be reading it.
//!
//! The new `Inner` is started on a thread of its own (a [`Move`]): taking a lease is a round of
//! server calls, which the callers' threads must not wait on past `max_wait`. A call that finds
//! the move still running waits for it until its own deadline, then fails with a lease error;
//! a later call picks the new `Inner` up.

use super::{Generator, Inner};
use crate::clock::Clock;
use crate::error::{Error, ErrorKind, Result};
use crate::sync::Ordering::SeqCst;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// One start of a new `Inner` off the callers' threads. Never freed once published (a thread
/// may still be reading it; moves are rare), and never touched by another process than the one
/// that made it (a forked child starts its own).
pub(super) struct Move<C: Clock> {
    pid: u32,
    state: Mutex<MoveState<C>>,
    done: Condvar,
}

enum MoveState<C: Clock> {
    Running,
    /// Finished; taken by the first call that installs it (then `Taken`).
    Done(Result<Arc<Inner<C>>>),
    Taken,
    /// The generator closed or dropped while it ran: the thread closes what it started.
    Abandoned,
}

/// How often a call waiting for a move asks its interrupt hook.
const SLICE: Duration = Duration::from_millis(50);

impl<C: Clock> Generator<C> {
    /// The move of this process, started now if none is running or waiting to be installed.
    /// With `give_up`, a move started now first closes that `Inner` (its lease released on the
    /// server, its keeper stopped first), so that the start can take the same worker ID.
    fn current_move(&self, give_up: Option<&Inner<C>>) -> Result<&'static Move<C>> {
        let pid = crate::fork::pid();
        let seen = self.moving.load(SeqCst);
        // SAFETY: a published move is never freed.
        if let Some(m) = unsafe { seen.as_ref() } {
            if m.pid == pid {
                let st = m.state.lock().unwrap_or_else(|p| p.into_inner());
                if !matches!(*st, MoveState::Taken) {
                    return Ok(m);
                }
            }
        }
        let m: &'static Move<C> = Box::leak(Box::new(Move {
            pid,
            state: Mutex::new(MoveState::Running),
            done: Condvar::new(),
        }));
        let ptr = m as *const Move<C> as *mut Move<C>;
        if let Err(other) = self.moving.compare_exchange(seen, ptr, SeqCst, SeqCst) {
            // Another thread published one first: use it (ours was never started; it stays
            // leaked, a few bytes).
            // SAFETY: as above.
            return Ok(unsafe { &*other });
        }
        let recipe = self.recipe.clone();
        let give_up = give_up.map(|stale| {
            let ptr = stale as *const Inner<C>;
            // SAFETY: every `Inner` a generator installs comes from Arc::into_raw and is alive
            // while the generator is (a replaced one is never freed); the count taken here is
            // the thread's own.
            unsafe {
                Arc::increment_strong_count(ptr);
                Arc::from_raw(ptr)
            }
        });
        std::thread::Builder::new()
            .name("rimeflake-move".into())
            .spawn(move || {
                if let Some(stale) = give_up {
                    // Its final write is refused without a server call; then its I/O thread
                    // drops the lease, which stops the keeper and releases it by its token. A
                    // release that fails leaves the lease to expire: the start below fails
                    // until then, and a later call tries again.
                    let _ = stale.close();
                }
                let started = Inner::start(&recipe, &mut || false);
                let mut st = m.state.lock().unwrap_or_else(|p| p.into_inner());
                if matches!(*st, MoveState::Abandoned) {
                    drop(st);
                    if let Ok(fresh) = started {
                        let _ = fresh.close();
                    }
                    return;
                }
                *st = MoveState::Done(started);
                m.done.notify_all();
            })
            .map_err(|e| {
                *m.state.lock().unwrap_or_else(|p| p.into_inner()) = MoveState::Taken;
                Error::new(
                    ErrorKind::Lease,
                    format!("cannot start a thread to take another worker ID: {e}"),
                )
            })?;
        Ok(m)
    }

    /// Waits for the move of this process until `deadline_ns` (on the monotonic clock), asking
    /// `interrupted` between slices; then installs its `Inner` in place of `stale`. `Ok(true)`:
    /// installed (or another thread did); `Ok(false)`: still running at the deadline; `Err`: the
    /// start failed (the next call starts another move). `in_place`: the move takes `stale`'s
    /// worker ID again, giving `stale` up first (see `current_move`).
    fn finish_move(
        &self,
        stale: &Inner<C>,
        in_place: bool,
        deadline_ns: u64,
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<bool> {
        let m = self.current_move(in_place.then_some(stale))?;
        let mut st = m.state.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            match &*st {
                MoveState::Running => {}
                MoveState::Abandoned => {
                    return Err(Error::new(ErrorKind::Closed, "the generator is closed"))
                }
                MoveState::Taken => return Ok(true),
                MoveState::Done(_) => break,
            }
            let now = crate::clock::monotonic_ns();
            if now >= deadline_ns {
                return Ok(false);
            }
            st = m
                .done
                .wait_timeout(st, Duration::from_nanos(deadline_ns - now).min(SLICE))
                .unwrap_or_else(|p| p.into_inner())
                .0;
            if matches!(*st, MoveState::Running) && interrupted() {
                return Err(Error::new(
                    ErrorKind::Interrupted,
                    "interrupted while taking another worker ID",
                ));
            }
        }
        let MoveState::Done(started) = std::mem::replace(&mut *st, MoveState::Taken) else {
            unreachable!("matched Done above")
        };
        drop(st);
        let fresh = Arc::into_raw(started?) as *mut Inner<C>;
        let stale_ptr = stale as *const Inner<C> as *mut Inner<C>;
        if self
            .inner
            .compare_exchange(stale_ptr, fresh, SeqCst, SeqCst)
            .is_err()
        {
            // Replaced meanwhile (only by a move or a fork restart, which took this one's
            // place): give back the new lease.
            // SAFETY: `fresh` came from Arc::into_raw above and was never shared.
            let _ = unsafe { Arc::from_raw(fresh) }.close();
            return Ok(true);
        }
        if stale.pid == crate::fork::pid() {
            let _ = stale.close();
        } else {
            // Dropping the parent's fork slot is the child's to do only through `abandon`.
            stale.fork_slot.abandon(&stale.hot.fence);
        }
        if self.closed.load(SeqCst) {
            // `close` may have run while we installed: it set the flag before loading `inner`,
            // so either it saw `fresh` and closes it, or we see the flag here.
            // SAFETY: `fresh` is now the generator's, alive while `self` is.
            let _ = unsafe { &*fresh }.close();
        }
        Ok(true)
    }

    /// Stops a move still running or waiting to be installed (at close and drop): what it
    /// started is closed.
    pub(super) fn abandon_move(&self) {
        // SAFETY: a published move is never freed.
        let Some(m) = (unsafe { self.moving.load(SeqCst).as_ref() }) else {
            return;
        };
        if m.pid != crate::fork::pid() {
            return; // the parent's: not ours to touch
        }
        let mut st = m.state.lock().unwrap_or_else(|p| p.into_inner());
        match std::mem::replace(&mut *st, MoveState::Abandoned) {
            MoveState::Done(Ok(fresh)) => {
                drop(st);
                let _ = fresh.close();
            }
            MoveState::Taken => *st = MoveState::Taken,
            _ => m.done.notify_all(),
        }
    }

    /// On a server backend, after another process took the worker ID while this generator had
    /// lost its lease: starts it again with another worker ID off this thread, and installs it
    /// when that is done by `deadline_ns` (on the monotonic clock). Returns `failed` (the call's
    /// lease error) when it cannot (yet): the old generator's threads stop once the new one is
    /// installed.
    ///
    /// With a fixed worker ID, after the lease came back on another server than the one it
    /// lapsed on (`Generator::rejoins`): the same, on the same worker ID. The move's thread
    /// closes the old generator first, which releases its lease, then starts anew from the
    /// recipe as a process restart would: the state it finds was stored on another server (or
    /// is gone), so its start raises the floor a reach ahead of the clock (`Usage::floor_lead_ms`)
    /// above whatever another holder may have issued meanwhile. A leased worker ID moves to
    /// another one instead, as when it was taken.
    #[cold]
    pub(super) fn restart_elsewhere(
        &self,
        stale: &Inner<C>,
        failed: Result<u64>,
        deadline_ns: u64,
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<()> {
        if self.closed.load(SeqCst) {
            return failed.map(|_| ());
        }
        let stale_ptr = stale as *const Inner<C> as *mut Inner<C>;
        if self.inner.load(SeqCst) != stale_ptr {
            return Ok(()); // another thread restarted it first: the caller goes on with that one
        }
        let in_place = self.rejoins(stale);
        match self.finish_move(stale, in_place, deadline_ns, interrupted) {
            Ok(true) => Ok(()),
            Err(e) if e.kind() == ErrorKind::Interrupted => Err(e),
            // Still running, or failed (the server decides again at the next call).
            Ok(false) | Err(_) if self.inner.load(SeqCst) != stale_ptr => Ok(()),
            // The old generator, closed by the move, says `Closed`, but the caller did not close
            // (a move abandoned by `close` is `Closed` too, as `failed` then is).
            Ok(false) if in_place => Err(stale.rejoin_error(None)),
            Err(e) if in_place && e.kind() != ErrorKind::Closed => {
                Err(stale.rejoin_error(Some(&e)))
            }
            Ok(false) | Err(_) => failed.map(|_| ()),
        }
    }

    /// In a forked child: abandons the parent's generator without touching its locks, lease or
    /// threads, and starts a new one with a new lease, off this thread, installed when ready by
    /// `deadline_ns` on the monotonic clock (else a lease error; a later call picks it up). A
    /// generator closed (before the fork or in the child) stays closed; a fixed worker ID cannot
    /// be taken twice, so it is refused.
    #[cold]
    pub(super) fn restart_after_fork(
        &self,
        stale: &Inner<C>,
        deadline_ns: u64,
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<()> {
        stale.fork_slot.abandon(&stale.hot.fence);
        if self.closed.load(SeqCst) {
            return Err(Error::new(ErrorKind::Closed, "the generator is closed"));
        }
        if !self.recipe.takes_any_worker() {
            return Err(Error::new(
                ErrorKind::Lease,
                format!(
                    "this generator was made in process {} before a fork, with fixed worker ID {}: \
                     the child must not use it; make a new generator in the child (the embedded \
                     default leases a free worker ID by itself)",
                    stale.pid, stale.worker_id
                ),
            ));
        }
        if self.finish_move(stale, false, deadline_ns, interrupted)? {
            return Ok(());
        }
        Err(Error::new(
            ErrorKind::Lease,
            format!(
                "this process (forked from process {}) is still taking a worker ID of its own: \
                 not done within max_wait ({} ms); a later call uses it once it is",
                stale.pid,
                stale.max_wait_ns / 1_000_000
            ),
        ))
    }
}

impl<C: Clock> Inner<C> {
    /// The lease error of a generator with a fixed worker ID that is starting again on it
    /// after its lease came back on another server (it may already be closed for that): still
    /// running, or `failed` with that error (the next call starts it again).
    pub(super) fn rejoin_error(&self, failed: Option<&Error>) -> Error {
        let how = match failed {
            None => format!(
                "not done within max_wait ({} ms), a later call uses it once it is",
                self.max_wait_ns / 1_000_000
            ),
            Some(e) => format!("that failed ({e}), the next call tries again"),
        };
        Error::new(
            ErrorKind::Lease,
            format!(
                "{}: the lease came back on another server than the one it was lost on (a \
                 replica promoted, a server restarted), where another process may have held the \
                 worker ID meanwhile; starting again on it, above anything issued meanwhile, as \
                 a process restart would: {how}",
                self.durable.describe()
            ),
        )
    }
}
