//! Issuing IDs for a request: the generator's non-waiting call on the runtime's thread, and
//! only when it would wait, the waiting call on the blocking pool, bounded by the wait
//! deadline. A request that the generator cannot serve within the deadline (its layout's rate
//! is taken by the requests already waiting, or too many wait) is refused at once with a 503
//! and `Retry-After`, rather than parked.

use crate::admission::Limits;
use crate::answer::{Refusal, Refused};
use rimeflake::clock::monotonic_ns;
use rimeflake::{Error, ErrorKind, Generator};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

/// A generator as the service issues from it: its namespace, and the IDs requests wait for.
pub(crate) struct Issuer {
    pub(crate) generator: Arc<Generator>,
    pub(crate) namespace: String,
    /// IDs a time unit of its layout, and the unit in ms: its greatest rate.
    per_unit: u64,
    unit_ms: u64,
    /// The IDs asked for by the requests waiting for it now.
    waiting_ids: AtomicU64,
}

impl Issuer {
    pub(crate) fn new(generator: Generator, namespace: String) -> Arc<Issuer> {
        let layout = generator.layout();
        Arc::new(Issuer {
            per_unit: layout.max_sequence() + 1,
            unit_ms: layout.unit_ms(),
            generator: Arc::new(generator),
            namespace,
            waiting_ids: AtomicU64::new(0),
        })
    }

    /// The ms the layout needs to issue `ids` at its greatest rate.
    fn ms_for(&self, ids: u64) -> u64 {
        ids.saturating_mul(self.unit_ms) / self.per_unit
    }
}

/// One ID.
pub(crate) async fn one(limits: &Arc<Limits>, issuer: &Arc<Issuer>) -> Result<u64, Refusal> {
    if let Some(id) = issuer.generator.try_next_id() {
        return Ok(id);
    }
    // Not the hot path: the whole call, told not to wait, says why (an error to answer with),
    // or that it would wait.
    match issuer.generator.next_id_with(&mut || true) {
        Ok(id) => Ok(id),
        Err(e) if e.kind() == ErrorKind::Interrupted => {
            let ids = waiting(limits, issuer, 1, |g, stop| {
                g.next_id_with(stop).map(|id| vec![id])
            })
            .await?;
            Ok(ids[0])
        }
        Err(e) => Err(e.into()),
    }
}

/// `n` increasing IDs from one batch step.
pub(crate) async fn many(
    limits: &Arc<Limits>,
    issuer: &Arc<Issuer>,
    n: usize,
) -> Result<Vec<u64>, Refusal> {
    if n == 1 {
        return Ok(vec![one(limits, issuer).await?]);
    }
    let mut ids = vec![0u64; n];
    // A hook that says "interrupted" at once makes the call fail instead of waiting; the IDs it
    // took before that are skipped, never issued twice.
    match issuer.generator.fill_with(&mut ids, &mut || true) {
        Ok(()) => Ok(ids),
        Err(e) if e.kind() == ErrorKind::Interrupted => {
            waiting(limits, issuer, n as u64, move |g, stop| {
                g.fill_with(&mut ids, stop).map(|()| ids)
            })
            .await
        }
        Err(e) => Err(e.into()),
    }
}

/// `call` on the blocking pool, told to stop at the deadline; refused at once when the IDs
/// already waiting for this generator would take it past the deadline, or too many wait.
async fn waiting(
    limits: &Arc<Limits>,
    issuer: &Arc<Issuer>,
    n: u64,
    call: impl FnOnce(&Generator, &mut dyn FnMut() -> bool) -> rimeflake::Result<Vec<u64>>
        + Send
        + 'static,
) -> Result<Vec<u64>, Refusal> {
    let deadline_ms = limits.deadline.as_millis() as u64;
    let ahead = issuer.waiting_ids.load(Relaxed) + n;
    let wait_ms = issuer.ms_for(ahead);
    if wait_ms > deadline_ms {
        return Err(Refusal::busy(
            Refused::Deadline,
            format!(
                "busy: namespace {:?} issues at most {} IDs a ms, and the requests waiting for it \
                 ask for {ahead} IDs with this one, {wait_ms} ms of them: more than the wait \
                 deadline ({deadline_ms} ms, --wait-deadline)",
                issuer.namespace,
                (issuer.per_unit / issuer.unit_ms).max(1)
            ),
            wait_ms,
        ));
    }
    let Some(waiter) = limits.wait() else {
        return Err(Refusal::busy(
            Refused::Waiting,
            format!(
                "busy: {} requests already wait for a generator (the clock, a reservation)",
                crate::admission::MAX_WAITING
            ),
            deadline_ms,
        ));
    };
    issuer.waiting_ids.fetch_add(n, Relaxed);
    let g = issuer.generator.clone();
    let end = monotonic_ns().saturating_add(deadline_ms.saturating_mul(1_000_000));
    let done = tokio::task::spawn_blocking(move || {
        let _waiter = waiter;
        call(&g, &mut || monotonic_ns() >= end)
    })
    .await;
    issuer.waiting_ids.fetch_sub(n, Relaxed);
    match done {
        Ok(Ok(ids)) => Ok(ids),
        Ok(Err(e)) if e.kind() == ErrorKind::Interrupted => Err(Refusal::busy(
            Refused::Deadline,
            format!(
                "busy: namespace {:?} could not issue within the wait deadline ({deadline_ms} ms, \
                 --wait-deadline): its generator waits (for the clock, or a reservation)",
                issuer.namespace
            ),
            deadline_ms,
        )),
        Ok(Err(e)) => Err(e.into()),
        Err(_) => Err(Error::new(
            ErrorKind::State,
            "internal error: a generator call did not finish",
        )
        .into()),
    }
}

/// `call` on the blocking pool (a generator's start, a readiness re-check).
pub(crate) async fn blocking<T: Send + 'static>(
    call: impl FnOnce() -> rimeflake::Result<T> + Send + 'static,
) -> rimeflake::Result<T> {
    match tokio::task::spawn_blocking(call).await {
        Ok(r) => r,
        Err(_) => Err(Error::new(
            ErrorKind::State,
            "internal error: a generator call did not finish",
        )),
    }
}
