//! Remote leases: worker IDs and their state kept in Redis, PostgreSQL, MySQL or ZooKeeper (cargo
//! features `redis`, `postgres`, `mysql` and `zookeeper`), so generators on many hosts share one
//! namespace (docs/many-hosts.md; the
//! layer "Leases and servers" of docs/architecture.md).
//!
//! A server keeps, per (namespace, worker ID), a lease (an owner token with an expiry set by the
//! server's clock) and the worker's state, which has no expiry: it outlives the lease and travels
//! with the worker ID to its next holder. Every write of the state is conditional twice: on the
//! holder's token, and on the state's version being the one this holder last wrote or read. So a
//! holder that lost its lease cannot move the state, and a holder that lost and took back its
//! worker ID cannot overwrite what another holder stored in between.
//!
//! [`Conn`] is what a server must do; [`RemoteLease::acquire`] and [`RemoteStore`] build the
//! lease protocol on it, the same for every server. The [`keeper`] thread renews the lease and
//! shuts the generator's hot path before the lease can have expired.

// Without a server backend built in, nothing reaches this module but its types.
#![cfg_attr(
    not(any(
        feature = "redis",
        feature = "postgres",
        feature = "mysql",
        feature = "zookeeper"
    )),
    allow(dead_code, unused_variables)
)]

pub(crate) mod keeper;
#[cfg(feature = "mysql")]
pub(crate) mod mysql;
#[cfg(any(feature = "mysql", feature = "zookeeper"))]
pub(crate) mod net;
#[cfg(feature = "postgres")]
pub(crate) mod postgres;
#[cfg(feature = "redis")]
pub(crate) mod redis;
pub(crate) mod replication;
/// The real servers the integration tests start, for the tests of the connections here.
#[cfg(all(
    test,
    any(
        feature = "redis",
        feature = "postgres",
        feature = "mysql",
        feature = "zookeeper"
    )
))]
pub(crate) use rimeflake_testkit::servers;
mod store;
#[cfg(any(feature = "redis", feature = "postgres", feature = "mysql"))]
pub(crate) mod tls;
#[cfg(feature = "zookeeper")]
pub(crate) mod zookeeper;

pub(crate) use replication::{Proposal, Replicas, ServerView, Settings};
/// The version a save writes, for the lease simulation's tests (`testing/remote_sim/`).
#[cfg(test)]
pub(crate) use store::next_version;
pub(crate) use store::RemoteStore;

use crate::backend::Backend;
use crate::error::{Error, ErrorKind, Result};
use crate::layout::Layout;
use crate::lease::namespace::LayoutRecord;
use crate::lease::LeaseRequest;
use crate::state::{StateStore, WorkerState};
use std::sync::Arc;
use std::time::Duration;

/// A state as a server stores it: its text ([`encode_state`]) and its version, which every
/// write raises by one. Version 0 means "never stored".
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Versioned {
    pub(crate) version: u64,
    pub(crate) text: String,
}

/// The outcome of a conditional write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Saved {
    /// Stored, durably as far as the server's settings make it.
    Yes,
    /// The lease is not (or no longer) the caller's: nothing was written.
    NotHolder,
    /// The state's version is not the one the caller expected: another holder moved it.
    Moved,
}

/// A lease [`Conn::acquire_first`] took.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Taken {
    pub(crate) worker_id: u64,
    /// On `CLOCK_BOOTTIME`: when the call that took it was sent. The server set the lease's
    /// expiry after that, so the lease lasts at least its TTL from here.
    pub(crate) sent_boottime_ns: u64,
}

/// What [`Conn::mark_used`] found: what the namespace's record still tells of a worker ID
/// whose state a server may have lost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Usage {
    /// How long ago the namespace's record was made, by the server's clock, in ms. A record
    /// the server lost (with everything else) is made again, and is young again.
    pub(crate) age_ms: u64,
    /// Whether a holder marked this worker ID before: its state may then have been stored.
    pub(crate) used_before: bool,
    /// The largest reach (ms) a holder of this worker ID declared, this caller's included.
    pub(crate) reach_ms: u64,
}

impl Usage {
    /// How far ahead of the clock (ms) a start on a server must begin, by what the namespace's
    /// record says: no state for a worker ID used before (the server lost it): the whole reach; no
    /// state and a record younger than the reach (a new namespace, or one the server lost with
    /// everything else, whose other worker IDs' holders stored reservations before the record was
    /// made again): the reach less the record's age; a state found that may be a stale copy
    /// (`stale`: stored on another server, or before a restore was declared): the whole reach.
    /// `None`: an ordinary start, which pays nothing; with `every_takeover`, the whole reach
    /// whatever is found.
    ///
    /// The reach is enough above a stale copy: its holder issued no ID past its fence, which rose
    /// only by writes the server it wrote to stored under its lease, each at most a reach past
    /// its clock. Once this start holds the lease here, no write of that holder lands here; a
    /// server that lost writes to a failover (the lost primary) takes none after the failover,
    /// and an old primary cut off from its replicas takes none that needs their
    /// acknowledgements. So every ID it issued is below a reach past the moment the last write
    /// it could make was stored, which is before this start.
    pub(crate) fn floor_lead_ms(
        &self,
        found: bool,
        stale: bool,
        every_takeover: bool,
    ) -> Option<u64> {
        if !found && self.used_before {
            Some(self.reach_ms)
        } else if !found && self.age_ms < self.reach_ms {
            Some(self.reach_ms - self.age_ms)
        } else if (found && stale) || every_takeover {
            Some(self.reach_ms)
        } else {
            None
        }
    }
}

/// One worker ID of a namespace as a server has it, for `state show`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RemoteWorker {
    /// The worker ID.
    pub worker_id: u64,
    /// The holder's token (`host/pid/random`), while a lease is held.
    pub holder: Option<String>,
    /// How long the lease has left, by the server's clock.
    pub expires_in_ms: Option<i64>,
    /// The stored state, if any.
    pub state: Option<WorkerState>,
    /// Its version (how many writes it has had).
    pub version: u64,
}

/// What a server must do for the lease protocol. Every call returns within the connection's
/// timeout; a broken connection is reopened by the next call. Errors are
/// [`ErrorKind::Lease`] (the server cannot be reached or refused us) or
/// [`ErrorKind::Config`] (a wrong password, an unknown database): never a password.
pub(crate) trait Conn: Send {
    /// Stores the namespace's layout record if it has none; returns the record stored (ours, or
    /// the one that was there).
    fn settle_layout(&mut self, namespace: &str, record: &str) -> Result<String>;
    /// The namespace's layout record, if it has one (reads only).
    fn layout(&mut self, namespace: &str) -> Result<Option<String>>;
    /// Takes the lease of `worker_id` for `token` for `ttl_ms` (by the server's clock) if nobody
    /// holds it (an expired lease is nobody's). Taking one's own lease again also succeeds.
    fn acquire(
        &mut self,
        namespace: &str,
        worker_id: u64,
        token: &str,
        ttl_ms: u64,
    ) -> Result<bool>;
    /// Takes the lease of the first worker ID of `candidates`, in their order, that [`Conn::acquire`]
    /// would take; `None` when every one is held. Returns the worker ID and when (on
    /// `CLOCK_BOOTTIME`) the call that took it was sent. This default tries them one call at a
    /// time; a server that can pick a free one in one statement does.
    fn acquire_first(
        &mut self,
        namespace: &str,
        candidates: &[u64],
        token: &str,
        ttl_ms: u64,
    ) -> Result<Option<Taken>> {
        for &worker_id in candidates {
            let sent_boottime_ns = crate::clock::boottime_ns();
            if self.acquire(namespace, worker_id, token, ttl_ms)? {
                return Ok(Some(Taken {
                    worker_id,
                    sent_boottime_ns,
                }));
            }
        }
        Ok(None)
    }
    /// Extends the lease to `ttl_ms` from now if `token` holds it; `false` if it does not.
    fn renew(&mut self, namespace: &str, worker_id: u64, token: &str, ttl_ms: u64) -> Result<bool>;
    /// Ends the lease if `token` holds it; the state stays.
    fn release(&mut self, namespace: &str, worker_id: u64, token: &str) -> Result<()>;
    /// The stored state of `worker_id`.
    fn load(&mut self, namespace: &str, worker_id: u64) -> Result<Option<Versioned>>;
    /// Stores `next` if `token` holds the lease and the stored version is `expected` (0: none
    /// stored); `next.version` is `expected + 1`.
    fn save(
        &mut self,
        namespace: &str,
        worker_id: u64,
        token: &str,
        expected: u64,
        next: &Versioned,
    ) -> Result<Saved>;
    /// Stores `next` over version `expected` if nobody holds the lease (`state reset`).
    fn reset(
        &mut self,
        namespace: &str,
        worker_id: u64,
        expected: u64,
        next: &Versioned,
    ) -> Result<Saved>;
    /// The server's clock, in Unix ms.
    fn server_time_ms(&mut self) -> Result<u64>;
    /// In one atomic step, in the namespace's record (made now, by the server's clock, if it
    /// has none): marks `worker_id` as used with a reach of `reach_ms` (the farthest a holder's
    /// stored reservation may lead its clock; the largest declared is kept), and tells how old
    /// the record is and whether the worker ID was marked before. The record lives where the
    /// namespace's layout does, so whatever loses the record loses the marks with it.
    fn mark_used(&mut self, namespace: &str, worker_id: u64, reach_ms: u64) -> Result<Usage>;
    /// Every worker ID of the namespace with a lease or a state.
    fn workers(&mut self, namespace: &str) -> Result<Vec<RemoteWorker>>;
    /// The namespaces on the server (reads only), sorted, at most `limit` of them.
    fn namespaces(&mut self, limit: usize) -> Result<Listed>;
    /// Warnings about the server's settings (eviction, persistence), checked at acquire.
    fn check_settings(&mut self) -> Result<Vec<String>>;
    /// What the server says of itself: who it is, its lineage, its replicas online
    /// ([`ServerView`]). A replica (a standby) is refused: writes go to the primary.
    fn server(&mut self) -> Result<ServerView>;
    /// In one atomic step, in the namespace's settings (kept with its record, made now if it
    /// has none): keeps the `max_drift` stored (else stores `ours`'), raises the TTL to ours,
    /// settles the replica acknowledgements on the lineage of `ours.view` (see the
    /// [`replication`] module), and returns the settings stored. The namespace's layout record
    /// exists already ([`Conn::settle_layout`]).
    fn settle_settings(&mut self, namespace: &str, ours: &Proposal<'_>) -> Result<Settings>;
    /// Raises the namespace's restore epoch by one (its settings made if it has none), for
    /// `rimeflake state restored`; returns the new epoch.
    fn new_epoch(&mut self, namespace: &str) -> Result<u64>;
    /// Sets the replica acknowledgements the namespace requires, for `rimeflake state
    /// replicas`.
    fn set_replicas(&mut self, namespace: &str, replicas: u32) -> Result<()>;
    /// Every later lease write and state write of this connection waits for `replicas`
    /// acknowledgements, as they are then (Redis: `WAIT`; PostgreSQL: refused unless commits
    /// go through a synchronous standby); one not acknowledged in time fails.
    fn require(&mut self, replicas: Arc<Replicas>);
}

/// What [`Conn::namespaces`] found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Listed {
    /// Sorted, without duplicates.
    pub(crate) names: Vec<String>,
    /// `false` when the listing stopped before the end (past the limit, or past what one
    /// listing may read), so the server may hold more.
    pub(crate) complete: bool,
}

/// The default lease TTL of a remote backend (see [`Builder::lease_ttl`](crate::Builder::lease_ttl)).
pub const DEFAULT_LEASE_TTL: Duration = Duration::from_secs(10);
/// The shortest lease TTL: each server call may take a tenth of it.
pub(crate) const MIN_LEASE_TTL: Duration = Duration::from_millis(200);
/// The longest lease TTL: a crashed holder's worker ID stays taken this long.
pub(crate) const MAX_LEASE_TTL: Duration = Duration::from_secs(24 * 3600);

/// How long each server call may take, and how long a lease lasts.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Timing {
    pub(crate) ttl: Duration,
}

impl Timing {
    /// The longest one server call may take: a tenth of the TTL, at most 2 s.
    pub(crate) fn op_timeout(&self) -> Duration {
        (self.ttl / 10).clamp(Duration::from_millis(20), Duration::from_secs(2))
    }
    /// How often the keeper renews: four times per TTL.
    pub(crate) fn renew_every(&self) -> Duration {
        self.ttl / 4
    }
    /// How long after a renewal was *sent* the generator stops: the TTL less a quarter (which is
    /// more than two server calls), so it stops before the server can have let the lease go.
    pub(crate) fn valid_for(&self) -> Duration {
        self.ttl - self.ttl / 4
    }
}

/// Opens a connection to the server `backend` names.
///
/// # Errors
/// [`ErrorKind::Config`] for a URL that cannot be used; [`ErrorKind::Lease`] when the server
/// cannot be reached.
pub(crate) fn connect(backend: &Backend, timing: Timing) -> Result<Box<dyn Conn>> {
    match backend {
        #[cfg(feature = "redis")]
        Backend::Redis(url) => Ok(Box::new(redis::RedisConn::open(url, timing.op_timeout())?)),
        #[cfg(feature = "postgres")]
        Backend::Postgres(url) => Ok(Box::new(postgres::PgConn::open(url, timing.op_timeout())?)),
        #[cfg(feature = "mysql")]
        Backend::Mysql(url) => Ok(Box::new(mysql::MyConn::open(url, timing.op_timeout())?)),
        #[cfg(feature = "zookeeper")]
        Backend::ZooKeeper(url) => Ok(Box::new(zookeeper::ZkConn::open(
            url,
            timing.op_timeout(),
            timing.ttl,
        )?)),
        other => Err(Error::config(format!(
            "backend {other} keeps no remote leases"
        ))),
    }
}

/// The text of a state as servers store it: `clock_id;r0,r1,...;closed_at`, with `-` for a
/// clock-id never reserved and for no `closed_at`. Integers in decimal: servers compare and copy
/// it, and never compute with it (Lua's numbers would round above 2^53).
pub(crate) fn encode_state(state: &WorkerState) -> String {
    let opt = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
    let reserved: Vec<String> = state.reserved.iter().map(|r| opt(*r)).collect();
    format!(
        "{};{};{}",
        state.clock_id,
        reserved.join(","),
        opt(state.closed_at)
    )
}

/// What separates a stored state from the token of the holder that wrote it.
pub(crate) const WRITER: char = '#';

/// The state [`encode_state`] wrote (followed by `#` and its writer's token, which is ignored
/// here); `None` if `text` is not one.
pub(crate) fn decode_state(text: &str) -> Option<WorkerState> {
    let text = text.split_once(WRITER).map_or(text, |(state, _)| state);
    let opt = |t: &str| -> Option<Option<u64>> {
        if t == "-" {
            Some(None)
        } else {
            t.parse().ok().map(Some)
        }
    };
    let mut parts = text.split(';');
    let clock_id = parts.next()?.parse().ok()?;
    let reserved = parts
        .next()?
        .split(',')
        .map(opt)
        .collect::<Option<Vec<_>>>()?;
    let closed_at = opt(parts.next()?)?;
    if parts.next().is_some() || clock_id as usize >= reserved.len() {
        return None;
    }
    Some(WorkerState {
        clock_id,
        reserved,
        closed_at,
    })
}

/// A fresh owner token: `host/pid/random`, unique across hosts, processes and restarts.
pub(crate) fn new_token() -> String {
    let mut bytes = [0u8; 12];
    crate::random::os_random(&mut bytes);
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    // The host name as far as it is plain: a token must never hold the `#` that separates a
    // stored state from its writer's token, nor anything a message should not carry.
    let host: String = crate::lease::local::hostname()
        .unwrap_or_else(|| "unknown-host".into())
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
        .take(64)
        .collect();
    format!("{host}/{}/{hex}", std::process::id())
}

/// How [`RemoteLease::acquire`] takes a lease.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LeaseTerms {
    /// How long the lease lasts without renewal.
    pub(crate) ttl: Duration,
    /// Whether to check the server's durability settings, and warn about any that may lose
    /// state (off with `RIMEFLAKE_NO_DURABILITY_WARNING=1`).
    pub(crate) check_settings: bool,
    /// How far (ms) a reservation this holder stores may lead its clock: marked with the
    /// worker ID ([`Conn::mark_used`]).
    pub(crate) reach_ms: u64,
    /// The generator's `max_drift` (ms), which must be the namespace's.
    pub(crate) max_drift_ms: u64,
}

/// A worker ID leased from a server: the token that holds it and what the keeper needs.
pub(crate) struct RemoteLease {
    pub(crate) worker_id: u64,
    pub(crate) namespace: String,
    pub(crate) token: String,
    pub(crate) backend: Backend,
    pub(crate) timing: Timing,
    /// The server's clock minus this host's at acquire, in ms.
    pub(crate) skew_ms: i64,
    /// Warnings found at acquire (server settings, clock skew), for the generator to emit.
    pub(crate) warnings: Vec<String>,
    /// On `CLOCK_BOOTTIME` (which counts through suspend): when the acquiring call was sent.
    pub(crate) sent_boottime_ns: u64,
    /// What the namespace's record told of the worker ID when it was taken.
    pub(crate) usage: Usage,
    /// The state store: its connection also releases the lease.
    pub(crate) store: Arc<RemoteStore>,
    /// Stops the keeper thread.
    pub(crate) keeper: Arc<keeper::Shared>,
    /// The process that took the lease: no other (a forked child) renews or releases it.
    pid: u32,
}

impl std::fmt::Debug for RemoteLease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteLease")
            .field("worker_id", &self.worker_id)
            .field("namespace", &self.namespace)
            .field("backend", &self.backend.name())
            .finish_non_exhaustive()
    }
}

impl RemoteLease {
    /// Takes a worker ID of `request` in `namespace` on the server `backend` names, and loads its
    /// state. Worker IDs are tried from a random start, so hosts starting together seldom race
    /// for the same one. The server's durability settings are checked as `terms` say.
    ///
    /// # Errors
    /// [`ErrorKind::NoFreeWorker`] when every worker ID of the request is held; a config error
    /// for a namespace of another layout; lease errors when the server cannot be used.
    pub(crate) fn acquire(
        backend: &Backend,
        namespace: &str,
        layout: &Layout,
        request: &LeaseRequest,
        terms: LeaseTerms,
    ) -> Result<RemoteLease> {
        let LeaseTerms {
            ttl,
            check_settings,
            reach_ms,
            max_drift_ms,
        } = terms;
        let timing = Timing { ttl };
        let mut conn = connect(backend, timing)?;
        let ttl_ms = ttl.as_millis() as u64;
        let ours = LayoutRecord::of(layout);
        let theirs = conn.settle_layout(namespace, &ours.to_text())?;
        match LayoutRecord::parse(&theirs) {
            Some(t) if t.fingerprint == ours.fingerprint => {}
            Some(t) => {
                return Err(Error::config(format!(
                    "namespace {namespace} on {backend} was created with layout {} (fingerprint \
                     {:016x}); this generator uses {} (fingerprint {:016x}): use that layout, or \
                     another namespace",
                    t.description, t.fingerprint, ours.description, ours.fingerprint
                )))
            }
            None => {
                return Err(Error::new(
                    ErrorKind::State,
                    format!("namespace {namespace} on {backend}: its layout record is corrupt"),
                ))
            }
        }
        let (view, settings, replicas) =
            replication::settle(&mut *conn, backend, namespace, max_drift_ms)?;
        let mut warnings: Vec<String> = if check_settings {
            let quiet = crate::env::NO_DURABILITY_WARNING_ENV;
            conn.check_settings()?
                .into_iter()
                .map(|w| format!("{w} (on a development server, {quiet}=1 quiets this)"))
                .collect()
        } else {
            Vec::new()
        };
        let token = new_token();
        let ids: Vec<u64> = match request {
            LeaseRequest::Exact(id) => vec![*id],
            LeaseRequest::Any { range } => {
                let (lo, hi) = (*range.start(), *range.end());
                let n = hi - lo + 1;
                let start = random_u64() % n;
                (0..n).map(|i| lo + (start + i) % n).collect()
            }
        };
        let Some(Taken {
            worker_id,
            sent_boottime_ns,
        }) = conn.acquire_first(namespace, &ids, &token, ttl_ms)?
        else {
            return Err(match request {
                LeaseRequest::Exact(id) => Error::new(
                    ErrorKind::Lease,
                    format!(
                        "worker ID {id} of namespace {namespace} on {backend} is held by another \
                         process"
                    ),
                ),
                LeaseRequest::Any { range } => Error::new(
                    ErrorKind::NoFreeWorker,
                    format!(
                        "every worker ID from {} to {} of namespace {namespace} on {backend} is \
                         held",
                        range.start(),
                        range.end()
                    ),
                ),
            });
        };
        let host_ms = crate::clock::Clock::now_ms(&crate::clock::SystemClock);
        let skew_ms = match conn.server_time_ms() {
            Ok(server_ms) => server_ms as i64 - host_ms as i64,
            Err(e) => {
                // The worker ID is ours already: give it back rather than hold it for its TTL.
                let _ = conn.release(namespace, worker_id, &token);
                return Err(e);
            }
        };
        // Before any state is stored under this lease: a successor that finds no state then
        // knows whether one may have been lost.
        let usage = match conn.mark_used(namespace, worker_id, reach_ms) {
            Ok(usage) => usage,
            Err(e) => {
                let _ = conn.release(namespace, worker_id, &token);
                return Err(e);
            }
        };
        if skew_ms.unsigned_abs() > SKEW_WARN_MS {
            warnings.push(format!(
                "this host's clock is {} ms {} the clock of {backend}: IDs follow this host's \
                 clock; check its time synchronisation",
                skew_ms.unsigned_abs(),
                if skew_ms > 0 { "behind" } else { "ahead of" }
            ));
        }
        let keeper = Arc::new(keeper::Shared::new(
            replicas,
            keeper::Seen {
                identity: view.identity,
                lineage: view.lineage,
                epoch: settings.epoch,
            },
            max_drift_ms,
        ));
        let store = Arc::new(RemoteStore::new(
            conn,
            namespace,
            worker_id,
            &token,
            backend,
            Arc::clone(&keeper),
        ));
        Ok(RemoteLease {
            worker_id,
            namespace: namespace.to_string(),
            token,
            backend: backend.clone(),
            timing,
            skew_ms,
            warnings,
            sent_boottime_ns,
            usage,
            store,
            keeper,
            pid: crate::fork::pid(),
        })
    }

    /// What renews this lease before its keeper runs (while a start waits): each call renews
    /// it and returns when (on `CLOCK_BOOTTIME`) the renewal was sent; `None` when the lease is
    /// no longer this holder's; an error when the server did not answer.
    pub(crate) fn renewer(&self) -> impl FnMut() -> Result<Option<u64>> + Send + 'static {
        let store = Arc::clone(&self.store);
        let ttl_ms = self.timing.ttl.as_millis() as u64;
        move || {
            let sent = crate::clock::boottime_ns();
            let mut conn = store.conn.lock().unwrap_or_else(|p| p.into_inner());
            let held = conn.renew(&store.namespace, store.worker_id, &store.token, ttl_ms)?;
            Ok(held.then_some(sent))
        }
    }

    /// The store of the leased worker ID's state.
    pub(crate) fn state_store(&self) -> Arc<dyn StateStore> {
        Arc::clone(&self.store) as Arc<dyn StateStore>
    }
}

impl crate::fork::Lease for RemoteLease {
    fn release(self: Box<Self>) {
        drop(self)
    }

    /// Nothing goes through the parent's connection: it is leaked, not closed (closing would
    /// only drop the child's copy of the socket, but a client library may say goodbye first).
    fn forget_after_fork(self: Box<Self>) {
        std::mem::forget(self);
    }
}

impl Drop for RemoteLease {
    /// Stops the keeper, then ends the lease (the state stays on the server), in the process
    /// that took it only. A failure is ignored: the lease then expires after its TTL.
    fn drop(&mut self) {
        if self.pid != crate::fork::pid() {
            return;
        }
        self.keeper.stop();
        let mut conn = self.store.conn.lock().unwrap_or_else(|p| p.into_inner());
        let _ = conn.release(&self.namespace, self.worker_id, &self.token);
    }
}

/// A clock skew above this is reported at acquire.
const SKEW_WARN_MS: u64 = 1_000;

fn random_u64() -> u64 {
    let mut b = [0u8; 8];
    crate::random::os_random(&mut b);
    u64::from_le_bytes(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_round_trip_through_their_text() {
        let mut s = WorkerState::fresh(4);
        assert_eq!(decode_state(&encode_state(&s)), Some(s.clone()));
        s.raise(2, u64::MAX - 1);
        s.clock_id = 2;
        s.closed_at = Some(1 << 62);
        let text = encode_state(&s);
        assert_eq!(text, format!("2;-,-,{},-;{}", u64::MAX - 1, 1u64 << 62));
        assert_eq!(decode_state(&text), Some(s));
        assert_eq!(
            decode_state(&format!("{text}#host/1/ab")),
            decode_state(&text)
        );
        for bad in ["", "0", "0;-", "5;-,-;-", "0;x;-", "0;-;-;-", "0;1,,2;-"] {
            assert_eq!(decode_state(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn tokens_differ_and_name_the_host_and_pid() {
        let (a, b) = (new_token(), new_token());
        assert_ne!(a, b);
        assert!(a.contains(&format!("/{}/", std::process::id())), "{a}");
        assert!(!a.contains(WRITER), "{a}");
    }
}
