//! What the service takes on at once, and the refusals past it, so that overload is answered
//! fast rather than parked: requests in flight (in all), the bytes of answers not yet written to
//! their clients (per connection and in all: a client that does not read its answers is
//! refused before its answers fill the memory), and the requests that wait for a generator
//! (the clock, a reservation), whose number and expected wait are bounded.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

/// The bytes an ID takes in an answer, for the budgets: 19 digits and a line break, about the
/// longest decimal ID (JSON adds quotes and a comma; base62 and base32 are shorter).
pub(crate) const BYTES_PER_ID: u64 = 20;

/// Answers smaller than this are not counted in the bytes in flight (see [`Flow`]).
pub(crate) const SMALL: u64 = 1024;

/// The most requests that wait for a generator at once, on the blocking pool (each holds a
/// thread); past it, a 503.
pub(crate) const MAX_WAITING: u64 = 64;

/// The service's limits and what they hold now.
pub(crate) struct Limits {
    /// Answer bytes produced and not yet written, in all; its bound.
    unsent: AtomicU64,
    pub(crate) max_unsent: u64,
    /// One connection's bound on them.
    pub(crate) max_unsent_conn: u64,
    /// Requests being answered; their bound.
    requests: AtomicU64,
    pub(crate) max_requests: u64,
    /// Requests waiting for a generator on the blocking pool.
    waiting: AtomicU64,
    /// How long a request may wait for a generator.
    pub(crate) deadline: Duration,
}

impl Limits {
    pub(crate) fn new(max_ids: u64, max_n: u64, max_requests: u64, deadline: Duration) -> Self {
        let max_unsent = max_ids.saturating_mul(BYTES_PER_ID);
        Limits {
            unsent: AtomicU64::new(0),
            max_unsent,
            // A sixteenth of all, but always room for one answer of the largest batch.
            max_unsent_conn: (max_unsent / 16).max(max_n.saturating_mul(BYTES_PER_ID + 4)),
            requests: AtomicU64::new(0),
            max_requests,
            waiting: AtomicU64::new(0),
            deadline,
        }
    }

    /// IDs' worth of answers not yet written, in all (for /metrics).
    pub(crate) fn unsent_ids(&self) -> u64 {
        self.unsent.load(Relaxed) / BYTES_PER_ID
    }

    pub(crate) fn requests_now(&self) -> u64 {
        self.requests.load(Relaxed)
    }

    pub(crate) fn waiting_now(&self) -> u64 {
        self.waiting.load(Relaxed)
    }

    /// A request starts: `None` past `max_requests`. (A borrow, not an `Arc`: every request
    /// takes one, and a shared count costs what it moves between cores.)
    pub(crate) fn enter(&self) -> Option<InFlight<'_>> {
        let before = self.requests.fetch_add(1, Relaxed);
        let guard = InFlight(self);
        (before < self.max_requests).then_some(guard)
    }

    /// A request will wait for a generator: `None` past [`MAX_WAITING`].
    pub(crate) fn wait(self: &Arc<Self>) -> Option<Waiting> {
        let before = self.waiting.fetch_add(1, Relaxed);
        let guard = Waiting(self.clone());
        (before < MAX_WAITING).then_some(guard)
    }
}

/// A request being answered, counted until dropped.
pub(crate) struct InFlight<'a>(&'a Limits);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.requests.fetch_sub(1, Relaxed);
    }
}

/// A request waiting for a generator, counted until dropped.
pub(crate) struct Waiting(Arc<Limits>);

impl Drop for Waiting {
    fn drop(&mut self) {
        self.0.waiting.fetch_sub(1, Relaxed);
    }
}

/// One connection's answer bytes produced and not yet written to its socket. Bytes written
/// are counted off as the socket takes them (response heads too, which makes the count a
/// little lenient, never stuck); what is left when the connection ends is counted off then.
/// Answers below [`SMALL`] are not counted: a connection holds few of them at once (HTTP/2's
/// streams are bounded), and counting each would cost every `/id` a few shared atomics.
pub(crate) struct Flow {
    unsent: AtomicU64,
    limits: Arc<Limits>,
}

/// Why an answer of some bytes cannot be taken on now.
pub(crate) enum Full {
    /// This connection's answers are not being read: 429.
    Connection,
    /// The service's: 503.
    Service,
}

impl Flow {
    pub(crate) fn new(limits: Arc<Limits>) -> Arc<Self> {
        Arc::new(Flow {
            unsent: AtomicU64::new(0),
            limits,
        })
    }

    /// Takes on an answer of about `bytes`, or says which bound it would pass.
    pub(crate) fn reserve(&self, bytes: u64) -> Result<(), Full> {
        if bytes < SMALL {
            return Ok(());
        }
        let l = &self.limits;
        if self.unsent.load(Relaxed) + bytes > l.max_unsent_conn {
            return Err(Full::Connection);
        }
        if l.unsent.load(Relaxed) + bytes > l.max_unsent {
            return Err(Full::Service);
        }
        self.unsent.fetch_add(bytes, Relaxed);
        l.unsent.fetch_add(bytes, Relaxed);
        Ok(())
    }

    /// The answer reserved as `reserved` bytes is `actual` bytes (0 when none came).
    pub(crate) fn settle(&self, reserved: u64, actual: u64) {
        let (reserved, actual) = (counted(reserved), counted(actual));
        if actual == reserved {
            return;
        }
        if actual > reserved {
            self.unsent.fetch_add(actual - reserved, Relaxed);
            self.limits.unsent.fetch_add(actual - reserved, Relaxed);
        } else {
            self.count_off(reserved - actual);
        }
    }

    /// `n` bytes were written to the socket.
    pub(crate) fn wrote(&self, n: u64) {
        self.count_off(n);
    }

    fn count_off(&self, n: u64) {
        if n == 0 || self.unsent.load(Relaxed) == 0 {
            return; // the common case: small answers, never counted
        }
        let before = self
            .unsent
            .fetch_update(Relaxed, Relaxed, |u| Some(u.saturating_sub(n)))
            .unwrap_or(0);
        self.limits.unsent.fetch_sub(before.min(n), Relaxed);
    }
}

/// The bytes of an answer of `bytes` that count: none below [`SMALL`].
fn counted(bytes: u64) -> u64 {
    if bytes < SMALL {
        0
    } else {
        bytes
    }
}

impl Drop for Flow {
    fn drop(&mut self) {
        // The connection ended: what it did not write is freed with it.
        self.limits
            .unsent
            .fetch_sub(*self.unsent.get_mut(), Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connection_that_does_not_read_is_bounded_and_freed_when_it_ends() {
        let limits = Arc::new(Limits::new(1000, 10, 8, Duration::from_millis(100)));
        let conn_max = limits.max_unsent_conn;
        let a = Flow::new(limits.clone());
        assert!(a.reserve(conn_max).is_ok());
        assert!(matches!(a.reserve(SMALL), Err(Full::Connection)));
        // A small answer is not counted, even then.
        assert!(a.reserve(1).is_ok());
        a.wrote(conn_max / 2);
        assert!(a.reserve(conn_max / 2).is_ok());
        // Heads written beyond the bodies never make the count negative.
        a.wrote(u64::MAX / 2);
        assert_eq!(limits.unsent.load(Relaxed), 0);
        let flows: Vec<_> = (0..16).map(|_| Flow::new(limits.clone())).collect();
        for f in &flows {
            let _ = f.reserve(conn_max);
        }
        assert!(matches!(a.reserve(SMALL), Err(Full::Service)));
        drop(flows);
        assert_eq!(limits.unsent.load(Relaxed), 0);
        assert!(a.reserve(SMALL).is_ok());
    }

    #[test]
    fn requests_and_waiters_are_counted_until_dropped() {
        let limits = Arc::new(Limits::new(1000, 10, 2, Duration::from_millis(100)));
        let (a, b) = (limits.enter(), limits.enter());
        assert!(a.is_some() && b.is_some());
        assert!(limits.enter().is_none());
        drop(a);
        assert!(limits.enter().is_some());
        let waiters: Vec<_> = (0..MAX_WAITING).map(|_| limits.wait().unwrap()).collect();
        assert!(limits.wait().is_none());
        drop(waiters);
        assert_eq!(limits.waiting_now(), 0);
    }
}
