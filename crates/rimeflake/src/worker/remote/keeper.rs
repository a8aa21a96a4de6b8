//! The keeper: one thread per remote lease that renews it, off the hot path, and shuts the
//! generator before the lease can have expired.
//!
//! A renewal that succeeds makes the lease valid for [`Timing::valid_for`] from when it was
//! *sent*, on `CLOCK_BOOTTIME` (which counts through a suspend, as the server's TTL does). When
//! that runs out without another success (the server is down, paused, or unreachable), or the
//! server says the lease is no longer ours, the keeper tells the generator, which shuts its hot
//! path and returns lease errors. It keeps trying: once the server gives the same worker ID back
//! to the same token, the generator goes on (its state writes are conditional on the state's
//! version too, so if another process held the worker ID in between, they keep failing and the
//! generator stays shut). Every server call is bounded by the connection's timeout, a tenth of
//! the TTL, so the keeper is never stuck past a deadline.

use super::{connect, Conn, RemoteLease, Timing};
use crate::backend::Backend;
use crate::clock::boottime_ns;
use crate::error::{Error, ErrorKind, Result};
use std::sync::atomic::{AtomicBool, Ordering::*};
use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;

/// What the keeper tells the generator.
pub(crate) trait Holder: Send + Sync {
    /// The lease is lost, or may be: stop issuing IDs, answer with `why`.
    fn lease_lost(&self, why: Error);
    /// The lease is held again: go on.
    fn lease_back(&self);
}

/// What the keeper shares with its lease.
#[derive(Debug, Default)]
pub(crate) struct Shared {
    /// Set when the lease is released or forgotten: the keeper stops, without a server call.
    stop: AtomicBool,
    thread: OnceLock<std::thread::Thread>,
}

impl Shared {
    /// Stops the keeper (it exits at its next wake-up, which this brings forward).
    pub(crate) fn stop(&self) {
        self.stop.store(true, SeqCst);
        if let Some(t) = self.thread.get() {
            t.unpark();
        }
    }
}

/// A keeper not started yet: what it needs of its lease, taken before the lease moves on.
pub(crate) struct Keeper {
    backend: Backend,
    namespace: String,
    worker_id: u64,
    token: String,
    timing: Timing,
    shared: Arc<Shared>,
    holder: Weak<dyn Holder>,
}

impl RemoteLease {
    /// The keeper of this lease, to start once the generator exists.
    pub(crate) fn keeper(&self) -> (Keeper, u64) {
        let k = Keeper {
            backend: self.backend.clone(),
            namespace: self.namespace.clone(),
            worker_id: self.worker_id,
            token: self.token.clone(),
            timing: self.timing,
            shared: Arc::clone(&self.keeper),
            holder: Weak::<Nobody>::new(),
        };
        (k, self.sent_boottime_ns)
    }
}

/// The holder of a keeper not started yet.
struct Nobody;
impl Holder for Nobody {
    fn lease_lost(&self, _: Error) {}
    fn lease_back(&self) {}
}

/// Starts `keeper` (with the send time of its lease's acquiring call) for the generator `holder`.
pub(crate) fn spawn((keeper, sent): (Keeper, u64), holder: Weak<dyn Holder>) -> Result<()> {
    let k = Keeper { holder, ..keeper };
    std::thread::Builder::new()
        .name("rimeflake-lease".into())
        .spawn(move || k.run(sent))
        .map(|_| ())
        .map_err(|e| {
            Error::new(
                ErrorKind::Lease,
                format!("cannot start the lease keeper thread: {e}"),
            )
        })
}

impl Keeper {
    fn run(self, acquired_sent: u64) {
        let _ = self.shared.thread.set(std::thread::current());
        let ns = |d: Duration| d.as_nanos() as u64;
        let mut conn: Option<Box<dyn Conn>> = None;
        let mut valid_until = acquired_sent + ns(self.timing.valid_for());
        let mut last_sent = acquired_sent;
        let mut lost = false;
        loop {
            if self.shared.stop.load(SeqCst) {
                return;
            }
            let now = boottime_ns();
            if !lost && now >= valid_until {
                lost = true;
                let why = self.error(format!(
                    "the lease was not renewed in time (the server did not answer for {} ms)",
                    (now - last_sent) / 1_000_000
                ));
                if !self.tell(|h| h.lease_lost(why)) {
                    return;
                }
            }
            // Renew on schedule; while lost, try to take the worker ID back at the same pace.
            let next = last_sent + ns(self.timing.renew_every());
            if now < next {
                let until = if lost { next } else { next.min(valid_until) };
                std::thread::park_timeout(Duration::from_nanos(until.saturating_sub(now)));
                continue;
            }
            let sent = boottime_ns();
            last_sent = sent;
            let outcome = self.call(&mut conn, lost);
            if self.shared.stop.load(SeqCst) {
                return; // released meanwhile: whatever the call did, the release decides
            }
            match outcome {
                Ok(true) => {
                    valid_until = sent + ns(self.timing.valid_for());
                    if lost {
                        lost = false;
                        if !self.tell(|h| h.lease_back()) {
                            return;
                        }
                    }
                }
                Ok(false) if !lost => {
                    lost = true;
                    let why = self.error(
                        "the lease is no longer this process's (it expired, or its key or row \
                         was changed by someone else)"
                            .to_string(),
                    );
                    if !self.tell(|h| h.lease_lost(why)) {
                        return;
                    }
                }
                Ok(false) => {}
                Err(_) => conn = None, // reconnect at the next try; the deadline decides
            }
        }
    }

    /// One renewal (or, while lost, one try to take the worker ID back).
    fn call(&self, conn: &mut Option<Box<dyn Conn>>, lost: bool) -> Result<bool> {
        if conn.is_none() {
            *conn = Some(connect(&self.backend, self.timing)?);
        }
        let c = conn.as_mut().expect("connected above");
        let ttl_ms = self.timing.ttl.as_millis() as u64;
        if lost {
            c.acquire(&self.namespace, self.worker_id, &self.token, ttl_ms)
        } else {
            c.renew(&self.namespace, self.worker_id, &self.token, ttl_ms)
        }
    }

    /// Calls the generator, if it still exists; `false` when it does not (the keeper stops).
    fn tell(&self, f: impl FnOnce(&dyn Holder)) -> bool {
        match self.holder.upgrade() {
            Some(h) => {
                f(&*h);
                true
            }
            None => false,
        }
    }

    fn error(&self, why: String) -> Error {
        Error::new(
            ErrorKind::Lease,
            format!(
                "worker ID {} of namespace {} on {}: {why}; no IDs are issued until it is held \
                 again",
                self.worker_id, self.namespace, self.backend
            ),
        )
    }
}
