//! The reservation thread: keeps the durable `reserved_until` ahead of the counter, so that
//! `next_id` never waits for the disk. A reservation reaches the fence only once it is stored
//! (synced); when the store fails, the fence stays where it was, so the generator fails closed
//! when it reaches it, and recovers by itself as soon as a write succeeds again.

use super::start::Writer;
use super::{Inner, CLOSED_FENCE};
use crate::clock::Clock;
use crate::error::{Error, ErrorKind, Result};
use crate::sync::Ordering::*;
use std::sync::{Arc, MutexGuard};
use std::time::Duration;

/// How soon a failed write is tried again.
const RETRY: Duration = Duration::from_millis(20);

pub(super) fn spawn<C: Clock>(inner: &Arc<Inner<C>>) -> Result<()> {
    let me = Arc::clone(inner);
    let handle = std::thread::Builder::new()
        .name("rimeflake-reserve".into())
        .spawn(move || run(&me))
        .map_err(|e| {
            Error::new(
                ErrorKind::State,
                format!("cannot start the reservation thread: {e}"),
            )
        })?;
    *inner
        .durable
        .thread
        .lock()
        .unwrap_or_else(|p| p.into_inner()) = Some(handle);
    Ok(())
}

fn run<C: Clock>(inner: &Inner<C>) {
    let d = &inner.durable;
    let mut w = d.writer.lock().unwrap_or_else(|p| p.into_inner());
    loop {
        if !w.nudged && !w.stop {
            let pause = if w.failure.is_some() {
                RETRY.min(d.refresh)
            } else {
                d.refresh
            };
            w = d
                .wake
                .wait_timeout(w, pause)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        if w.stop {
            return;
        }
        w.nudged = false;
        inner.extend_reservation(&mut w);
    }
}

impl<C: Clock> Inner<C> {
    /// Moves the reservation of the current clock-id to `reserve_ahead` past the later of the
    /// clock and the counter; publishes it to the fence once stored.
    pub(super) fn extend_reservation(&self, w: &mut MutexGuard<'_, Writer>) {
        let hot = &*self.hot;
        let fence = hot.fence.load(Acquire);
        if fence == CLOSED_FENCE {
            return;
        }
        let cid = self.clock_id_of(fence);
        let counter = hot.counter.load(Acquire);
        let Ok(now) = self.layout.time_of(self.clock.now_ms()) else {
            return; // outside the time field: the slow path reports it
        };
        let target = (now.max(self.time_of(counter)) + self.durable.ahead_units)
            .max(w.need)
            .min(self.layout.max_time());
        if target <= self.time_of(fence) && w.failure.is_none() {
            return;
        }
        let mut next = w.state.clone();
        next.clock_id = cid;
        next.raise(cid, target.max(self.time_of(fence)));
        let Some(store) = w.store.as_ref() else {
            return;
        };
        match store.save(&next) {
            Ok(()) => {
                let reserved = next.reserved_of(cid).unwrap_or(target);
                w.state = next;
                w.failure = None;
                w.need = 0; // met
                let new_fence = self
                    .layout
                    .counter(cid, reserved, self.layout.max_sequence());
                // Only the lock holder moves the fence within a clock-id; `close` may have shut it.
                let _ = hot
                    .fence
                    .compare_exchange(fence, new_fence.max(fence), AcqRel, Acquire);
            }
            Err(e) => w.failure = Some(e),
        }
    }

    /// Asks the reservation thread to move the reservation now, at least to `need`.
    pub(super) fn nudge(&self, need: u64) {
        let d = &self.durable;
        let mut w = d.writer.lock().unwrap_or_else(|p| p.into_inner());
        if w.store.is_some() {
            w.need = w.need.max(need);
            w.nudged = true;
            d.wake.notify_one();
        }
    }

    /// Stops the reservation thread and waits for it.
    pub(super) fn stop_reserver(&self) {
        let d = &self.durable;
        d.writer.lock().unwrap_or_else(|p| p.into_inner()).stop = true;
        d.wake.notify_all();
        if let Some(handle) = d.thread.lock().unwrap_or_else(|p| p.into_inner()).take() {
            let _ = handle.join();
        }
    }
}
