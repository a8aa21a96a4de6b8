//! A simulated lease server, and deterministic tests of the lease protocol on it.
//!
//! [`SimServer`] keeps leases (each with an expiry by the server's own clock), versioned states
//! and layout records in memory, on a manual clock, and implements [`Conn`] like the real
//! servers: as Redis ([`Flavor::Redis`]: an expired lease is gone) or as PostgreSQL
//! ([`Flavor::Postgres`]: an expired lease keeps its owner until someone takes it).
//!
//! A run ([`World`]) simulates a few processes that all want the same worker ID. Each has the
//! keeper's state machine ([`KeeperState`]), a real [`RemoteStore`], and a model of the
//! generator: it issues IDs only while the keeper says the lease is held, and only up to the
//! reservation it last stored (as the fence does), and only from a time unit that ends before
//! the deadline its keeper last told it (as the hot path opens units); it reserves ahead as the
//! reservation thread does; it crashes or closes, and starts again with a new token. A seed decides everything,
//! faults included:
//!
//! - calls that fail (lost on the way, connection reset);
//! - calls whose answer is lost although they land, at once or later ("lost answers");
//! - slow calls, answered after the client's timeout;
//! - outages: a paused server (calls land when it resumes), one refusing connections, one
//!   nothing reaches;
//! - reconnects that outlast the call's timeout: a timeout per address the server's name
//!   resolves to, or as long as a name lookup hangs (the Redis client resolves names with no
//!   timeout);
//! - a server clock with another offset and rate than the client's;
//! - a lease taken by force by another process (and, naturally, leases taken after expiry);
//! - a keeper thread that wakes late;
//! - a server that forgets: everything (as `FLUSHALL`, or Redis restarted without its data), or
//!   one worker's lease and state (its row deleted). A start follows the generator's floor
//!   (`Usage::floor_lead_ms`) from the marks the namespace's record keeps; a start that waits
//!   for its floor may be killed there, having stored nothing and leaving its lease to expire.
//!
//! Checked at every step:
//!
//! - (a) an ID is issued only while the server's lease is the issuer's and has not expired by
//!   the server's clock (unless the lease was taken by force, or the server forgot it, and the
//!   issuer has not noticed);
//! - (b) no time unit is issued by two processes, even after the server forgot; a process
//!   starts above every reservation any other stored, lost or not; a save is answered only
//!   while no other process took the worker ID since the saver last took it;
//! - (c) a process that re-takes its worker ID with another writer in between never stores nor
//!   issues again; one with nobody in between goes on;
//! - (d) a save refused as "moved" is never one whose newer version is the process's own
//!   write (a lost answer is recognised as ours);
//! - (e) nothing is issued while the keeper says the lease is lost: a reservation thread's
//!   save that returns late (after a loss, even with the lease back by then) opens nothing.
//! - (f) nothing is issued at or past the keeper's deadline (three quarters of a TTL after the
//!   last successful call was sent), even when the keeper thread wakes late and has not said
//!   the lease is lost yet.
//!
//! The model's simplifications: a store call lands at one instant, though its answer may reach
//! the generator much later (the keeper's calls take time: they land, and are answered or time
//! out, later); every process reads one clock; an ID is its time unit (ms).
//!
//! `RIMEFLAKE_LEASE_SEEDS=N` runs N seeds (default 200) from `RIMEFLAKE_LEASE_FIRST_SEED`
//! (default 0); `RIMEFLAKE_LEASE_SEED=N` replays one seed and prints its log.

use super::keeper::{KeeperState, News, Next};
use super::{Conn, RemoteStore, RemoteWorker, Saved, Timing, Versioned, WRITER};
use crate::backend::Backend;
use crate::error::{Error, ErrorKind, Result};
use crate::state::{StateStore, WorkerState};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

const MS: u64 = 1_000_000;
/// The client's `CLOCK_BOOTTIME` when a run starts, in ns.
const T0: u64 = 1_000_000 * MS;
/// The server's clock (Unix ns) at `T0`, before its skew.
const SERVER_T0: u64 = 1_767_225_600_000 * MS;
const NS: &str = "sim";
const WORKER: u64 = 7;

/// The test kit's seeded generator, so that a run replays exactly from its seed, with the
/// draws this simulation makes (their order and arithmetic are part of what a seed replays).
#[derive(Clone, Debug)]
struct Rng(rimeflake_testkit::support::Rng);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(rimeflake_testkit::support::Rng(seed))
    }
    fn next(&mut self) -> u64 {
        self.0.next()
    }
    /// From `lo` to `hi`, both included.
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        lo + self.next() % (hi - lo + 1)
    }
    fn chance(&mut self, per_mille: u64) -> bool {
        self.next() % 1000 < per_mille
    }
    fn pick<T: Copy>(&mut self, from: &[T]) -> T {
        from[self.next() as usize % from.len()]
    }
}

// ---- the server ---------------------------------------------------------------------------------

/// How the simulated server treats a lease that expired and that nobody took since.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flavor {
    /// As Redis: the key is gone, so its holder can neither renew it nor save.
    Redis,
    /// As PostgreSQL: the row still names its owner, who may renew it and save.
    Postgres,
}

/// A time when the server cannot be used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outage {
    /// The server is stopped (SIGSTOP): connections are accepted, nothing is answered, and what
    /// was sent meanwhile runs when it resumes.
    Pause,
    /// Connections are refused at once, and what was on its way is lost.
    Refuse,
    /// Nothing reaches the server: every call times out, and nothing lands.
    Blackhole,
}

/// A fault a test sets for the next call of one connection.
pub(crate) enum Scripted {
    /// The call goes through as usual (to script a later one).
    Pass,
    /// The call is lost on its way: nothing lands.
    Fail,
    /// The call lands `after` ns from now (0: at once), but its answer is lost.
    LostAnswer { after: u64 },
    /// Runs first (another client's doing, say); then the call goes on as usual.
    Before(Box<dyn FnOnce(&mut Server) + Send>),
}

struct Lease {
    owner: String,
    /// By the server's clock, in ns.
    expires: u64,
}

#[derive(Default)]
struct Worker {
    lease: Option<Lease>,
    state: Option<Versioned>,
    /// Every token that took the lease, each time it went to another token.
    owners: Vec<String>,
    /// How many writes the state had.
    writes: u64,
    /// Each time the writer changed: the write's number and its writer.
    writers: Vec<(u64, String)>,
}

/// A call on its way to the server.
struct Late {
    at: u64,
    seq: u64,
    /// Its client stopped waiting for it (its answer is lost).
    orphan: bool,
    op: Box<dyn FnOnce(&mut Server) + Send>,
}

/// The simulated server's data and clock; tests reach it through [`SimServer::lock`].
pub(crate) struct Server {
    /// The client's clock (`CLOCK_BOOTTIME`, ns): the simulation's time.
    now: u64,
    flavor: Flavor,
    /// How far the server's clock is ahead of the client's, and how much faster it runs.
    skew_ns: i64,
    rate_ppm: i64,
    layouts: BTreeMap<String, String>,
    workers: BTreeMap<(String, u64), Worker>,
    /// Each namespace's marks: when they were made (server ns), and each worker ID's reach.
    marks: BTreeMap<String, (u64, BTreeMap<u64, u64>)>,
    /// `(from, until, what)`: from included, until excluded.
    outages: Vec<(u64, u64, Outage)>,
    /// `(token prefix, from, until)`: nothing of these clients reaches the server then.
    partitions: Vec<(String, u64, u64)>,
    late: Vec<Late>,
    seq: u64,
    rng: Rng,
    /// Faults of every call of a faulty connection, per mille; lost answers land at most
    /// `late_max` ns later.
    fail_pm: u64,
    lost_pm: u64,
    late_max: u64,
    scripted: Vec<(String, Scripted)>,
    /// Saves refused as moved over a version the caller wrote itself (a lost answer).
    own_moved: u64,
    /// Calls that landed although their client saw no answer.
    landed_late: u64,
}

/// An in-memory lease server on a manual clock; clones share it.
#[derive(Clone)]
pub(crate) struct SimServer(Arc<Mutex<Server>>);

impl SimServer {
    pub(crate) fn new(flavor: Flavor, seed: u64) -> SimServer {
        SimServer(Arc::new(Mutex::new(Server {
            now: T0,
            flavor,
            skew_ns: 0,
            rate_ppm: 0,
            layouts: BTreeMap::new(),
            workers: BTreeMap::new(),
            marks: BTreeMap::new(),
            outages: Vec::new(),
            partitions: Vec::new(),
            late: Vec::new(),
            seq: 0,
            rng: Rng::new(seed ^ 0x05e4_e7e4),
            fail_pm: 0,
            lost_pm: 0,
            late_max: 0,
            scripted: Vec::new(),
            own_moved: 0,
            landed_late: 0,
        })))
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, Server> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A connection; `faulty` ones get the server's random faults.
    pub(crate) fn conn(&self, name: &str, faulty: bool) -> SimConn {
        SimConn {
            server: self.clone(),
            name: name.to_string(),
            faulty,
        }
    }
}

impl Server {
    /// Moves the clock to `t`, landing first, in order, the calls due by then.
    pub(crate) fn set_time(&mut self, t: u64) {
        while let Some(i) = (0..self.late.len())
            .filter(|&i| self.late[i].at <= t)
            .min_by_key(|&i| (self.late[i].at, self.late[i].seq))
        {
            let late = self.late.swap_remove(i);
            self.now = self.now.max(late.at);
            match self.outage_at(late.at) {
                Some((until, Outage::Pause)) => self.late.push(Late { at: until, ..late }),
                Some(_) => {} // lost with the server
                None => {
                    self.landed_late += u64::from(late.orphan);
                    (late.op)(self);
                }
            }
        }
        self.now = self.now.max(t);
    }

    /// Runs `op`, a call already sent, at `at` (at once if that is now); `orphan` when its
    /// client will not see the answer.
    fn land_at(&mut self, at: u64, orphan: bool, op: impl FnOnce(&mut Server) + Send + 'static) {
        if at <= self.now && self.outage_at(at).is_none() {
            self.landed_late += u64::from(orphan);
            op(self);
            return;
        }
        self.seq += 1;
        let seq = self.seq;
        self.late.push(Late {
            at,
            seq,
            orphan,
            op: Box::new(op),
        });
    }

    /// When a call arriving at `at` runs: later if the server is paused then; never if it is
    /// down.
    fn lands(&self, at: u64) -> Option<u64> {
        match self.outage_at(at) {
            None => Some(at),
            Some((until, Outage::Pause)) => self.lands(until),
            Some(_) => None,
        }
    }

    pub(crate) fn add_outage(&mut self, from: u64, until: u64, what: Outage) {
        self.outages.push((from, until, what));
    }

    fn outage_at(&self, t: u64) -> Option<(u64, Outage)> {
        self.outages
            .iter()
            .find(|(from, until, _)| (*from..*until).contains(&t))
            .map(|&(_, until, what)| (until, what))
    }

    /// Cuts the clients whose name begins with `prefix` off the server from `from` to `until`.
    pub(crate) fn add_partition(&mut self, prefix: &str, from: u64, until: u64) {
        self.partitions.push((prefix.to_string(), from, until));
    }

    /// The outage client `name` meets at `t`: the server's, or its own partition.
    fn outage_for(&self, name: &str, t: u64) -> Option<(u64, Outage)> {
        let cut = self.partitions.iter().find(|(prefix, from, until)| {
            name.starts_with(prefix.as_str()) && (*from..*until).contains(&t)
        });
        match cut {
            Some(&(_, _, until)) => Some((until, Outage::Blackhole)),
            None => self.outage_at(t),
        }
    }

    /// The server's clock, in Unix ns.
    fn server_ns(&self) -> u64 {
        let d = (self.now - T0) as i128;
        (SERVER_T0 as i128 + self.skew_ns as i128 + d + d * self.rate_ppm as i128 / 1_000_000)
            as u64
    }

    /// [`Conn::mark_used`], on the server.
    fn mark_used(&mut self, namespace: &str, worker_id: u64, reach_ms: u64) -> super::Usage {
        let now = self.server_ns();
        let (created, used) = self
            .marks
            .entry(namespace.to_string())
            .or_insert_with(|| (now, BTreeMap::new()));
        let before = used.get(&worker_id).copied().unwrap_or(0);
        used.insert(worker_id, before.max(reach_ms));
        super::Usage {
            age_ms: now.saturating_sub(*created) / MS,
            used_before: before > 0,
            reach_ms: before.max(reach_ms),
        }
    }

    /// The server forgets everything (`FLUSHALL`, or a restart without persistence). The
    /// checker's history of each worker ID stays.
    pub(crate) fn forget_all(&mut self) {
        self.layouts.clear();
        self.marks.clear();
        for w in self.workers.values_mut() {
            w.lease = None;
            w.state = None;
        }
    }

    /// The server forgets one worker ID's lease and state (its row deleted); the namespace's
    /// marks stay.
    pub(crate) fn forget_worker(&mut self, namespace: &str, worker_id: u64) {
        let w = self.worker(namespace, worker_id);
        w.lease = None;
        w.state = None;
    }

    fn worker(&mut self, namespace: &str, worker_id: u64) -> &mut Worker {
        self.workers
            .entry((namespace.to_string(), worker_id))
            .or_default()
    }

    /// Whether `token` holds the lease, as the flavour sees an expired one.
    fn holds(&self, w: &Worker, token: &str) -> bool {
        w.lease.as_ref().is_some_and(|l| {
            l.owner == token && (self.flavor == Flavor::Postgres || self.server_ns() < l.expires)
        })
    }

    /// The lease's owner, and whether it is live by the server's clock.
    pub(crate) fn lease(&self, worker_id: u64) -> Option<(String, bool)> {
        let w = self.workers.get(&(NS.to_string(), worker_id))?;
        w.lease
            .as_ref()
            .map(|l| (l.owner.clone(), self.server_ns() < l.expires))
    }

    /// The writer of the stored state.
    pub(crate) fn writer(&self, worker_id: u64) -> Option<String> {
        let w = self.workers.get(&(NS.to_string(), worker_id))?;
        let text = &w.state.as_ref()?.text;
        text.rsplit_once(WRITER).map(|(_, t)| t.to_string())
    }

    /// How many writes the state of `worker_id` had.
    fn writes(&self, worker_id: u64) -> u64 {
        self.workers
            .get(&(NS.to_string(), worker_id))
            .map_or(0, |w| w.writes)
    }

    /// Whether a token other than `token` wrote the state after write number `since`.
    fn written_by_another(&self, worker_id: u64, since: u64, token: &str) -> bool {
        self.workers
            .get(&(NS.to_string(), worker_id))
            .is_some_and(|w| w.writers.iter().any(|(n, t)| *n > since && t != token))
    }

    /// The token that last took the lease from another.
    fn last_owner(&self, worker_id: u64) -> Option<String> {
        let w = self.workers.get(&(NS.to_string(), worker_id))?;
        w.owners.last().cloned()
    }

    /// Another process takes the lease whoever holds it (an operator, or a bug elsewhere).
    pub(crate) fn steal(&mut self, worker_id: u64, token: &str, ttl_ms: u64) {
        let expires = self.server_ns() + ttl_ms * MS;
        let w = self.worker(NS, worker_id);
        w.lease = Some(Lease {
            owner: token.to_string(),
            expires,
        });
        w.owners.push(token.to_string());
    }

    fn acquire(&mut self, namespace: &str, worker_id: u64, token: &str, ttl_ms: u64) -> bool {
        let now = self.server_ns();
        let w = self.worker(namespace, worker_id);
        let free = w
            .lease
            .as_ref()
            .is_none_or(|l| l.owner == token || now >= l.expires);
        if !free {
            return false;
        }
        if w.owners.last().is_none_or(|o| o != token) {
            w.owners.push(token.to_string());
        }
        w.lease = Some(Lease {
            owner: token.to_string(),
            expires: now + ttl_ms * MS,
        });
        true
    }

    fn renew(&mut self, namespace: &str, worker_id: u64, token: &str, ttl_ms: u64) -> bool {
        let expires = self.server_ns() + ttl_ms * MS;
        let key = (namespace.to_string(), worker_id);
        let holds = self.workers.get(&key).is_some_and(|w| self.holds(w, token));
        if holds {
            if let Some(l) = self.worker(namespace, worker_id).lease.as_mut() {
                l.expires = expires;
            }
        }
        holds
    }

    fn release(&mut self, namespace: &str, worker_id: u64, token: &str) {
        let key = (namespace.to_string(), worker_id);
        if self.workers.get(&key).is_some_and(|w| self.holds(w, token)) {
            self.worker(namespace, worker_id).lease = None;
        }
    }

    fn save(
        &mut self,
        namespace: &str,
        worker_id: u64,
        token: &str,
        expected: u64,
        next: &Versioned,
    ) -> Saved {
        let key = (namespace.to_string(), worker_id);
        if !self.workers.get(&key).is_some_and(|w| self.holds(w, token)) {
            return Saved::NotHolder;
        }
        let w = self.worker(namespace, worker_id);
        let stored = w.state.as_ref().map_or(0, |v| v.version);
        if stored != expected {
            let ours = w
                .state
                .as_ref()
                .is_some_and(|v| v.text.rsplit_once(WRITER).is_some_and(|(_, t)| t == token));
            self.own_moved += u64::from(ours);
            return Saved::Moved;
        }
        w.state = Some(next.clone());
        w.writes += 1;
        if w.writers.last().is_none_or(|(_, t)| t != token) {
            let n = w.writes;
            w.writers.push((n, token.to_string()));
        }
        Saved::Yes
    }

    fn reset(&mut self, namespace: &str, worker_id: u64, expected: u64, next: &Versioned) -> Saved {
        let now = self.server_ns();
        let w = self.worker(namespace, worker_id);
        if w.lease.as_ref().is_some_and(|l| now < l.expires) {
            return Saved::NotHolder;
        }
        if w.state.as_ref().map_or(0, |v| v.version) != expected {
            return Saved::Moved;
        }
        w.state = Some(next.clone());
        w.writes += 1;
        Saved::Yes
    }

    /// A random fault for a call of a faulty connection.
    fn draw_fault(&mut self) -> Option<Scripted> {
        if self.rng.chance(self.fail_pm) {
            return Some(Scripted::Fail);
        }
        if self.rng.chance(self.lost_pm) {
            let after = if self.rng.chance(500) {
                0
            } else {
                self.rng.range(1, self.late_max)
            };
            return Some(Scripted::LostAnswer { after });
        }
        None
    }
}

fn sim_error(doing: &str, why: &str) -> Error {
    Error::new(
        ErrorKind::Lease,
        format!("simulated server: {doing}: {why}"),
    )
}

/// A connection to a [`SimServer`]. A call happens at the server's current time.
pub(crate) struct SimConn {
    server: SimServer,
    name: String,
    faulty: bool,
}

impl SimConn {
    fn call<T: 'static>(
        &mut self,
        doing: &str,
        op: impl FnOnce(&mut Server) -> T + Send + 'static,
    ) -> Result<T> {
        let mut s = self.server.lock();
        let scripted = s
            .scripted
            .iter()
            .position(|(n, _)| *n == self.name)
            .map(|i| s.scripted.remove(i).1);
        let scripted = match scripted {
            Some(Scripted::Before(f)) => {
                f(&mut s);
                None
            }
            other => other,
        };
        let now = s.now;
        match s.outage_for(&self.name, now) {
            Some((until, Outage::Pause)) => {
                if s.rng.chance(500) {
                    s.land_at(until, true, move |s| drop(op(s)));
                }
                return Err(sim_error(doing, "no answer in time (the server is paused)"));
            }
            Some((_, Outage::Refuse)) => return Err(sim_error(doing, "connection refused")),
            Some((_, Outage::Blackhole)) => {
                return Err(sim_error(doing, "no answer in time (nothing gets through)"))
            }
            None => {}
        }
        let fault = match scripted {
            Some(f) => Some(f),
            None if self.faulty => s.draw_fault(),
            None => None,
        };
        match fault {
            Some(Scripted::Fail) => Err(sim_error(doing, "the connection was reset")),
            Some(Scripted::LostAnswer { after }) => {
                s.land_at(now + after, true, move |s| drop(op(s)));
                Err(sim_error(
                    doing,
                    "no answer in time (the call may still land)",
                ))
            }
            _ => Ok(op(&mut s)),
        }
    }
}

impl Conn for SimConn {
    fn settle_layout(&mut self, namespace: &str, record: &str) -> Result<String> {
        let (ns, record) = (namespace.to_string(), record.to_string());
        self.call("settle the layout", move |s| {
            s.layouts.entry(ns).or_insert(record).clone()
        })
    }

    fn layout(&mut self, namespace: &str) -> Result<Option<String>> {
        let ns = namespace.to_string();
        self.call("read the layout", move |s| s.layouts.get(&ns).cloned())
    }

    fn acquire(
        &mut self,
        namespace: &str,
        worker_id: u64,
        token: &str,
        ttl_ms: u64,
    ) -> Result<bool> {
        let (ns, token) = (namespace.to_string(), token.to_string());
        self.call("acquire", move |s| {
            s.acquire(&ns, worker_id, &token, ttl_ms)
        })
    }

    fn renew(&mut self, namespace: &str, worker_id: u64, token: &str, ttl_ms: u64) -> Result<bool> {
        let (ns, token) = (namespace.to_string(), token.to_string());
        self.call("renew", move |s| s.renew(&ns, worker_id, &token, ttl_ms))
    }

    fn release(&mut self, namespace: &str, worker_id: u64, token: &str) -> Result<()> {
        let (ns, token) = (namespace.to_string(), token.to_string());
        self.call("release", move |s| s.release(&ns, worker_id, &token))
    }

    fn load(&mut self, namespace: &str, worker_id: u64) -> Result<Option<Versioned>> {
        let ns = namespace.to_string();
        self.call("load", move |s| s.worker(&ns, worker_id).state.clone())
    }

    fn save(
        &mut self,
        namespace: &str,
        worker_id: u64,
        token: &str,
        expected: u64,
        next: &Versioned,
    ) -> Result<Saved> {
        let (ns, token, next) = (namespace.to_string(), token.to_string(), next.clone());
        self.call("save", move |s| {
            s.save(&ns, worker_id, &token, expected, &next)
        })
    }

    fn reset(
        &mut self,
        namespace: &str,
        worker_id: u64,
        expected: u64,
        next: &Versioned,
    ) -> Result<Saved> {
        let (ns, next) = (namespace.to_string(), next.clone());
        self.call("reset", move |s| s.reset(&ns, worker_id, expected, &next))
    }

    fn server_time_ms(&mut self) -> Result<u64> {
        self.call("read the clock", |s| s.server_ns() / MS)
    }

    fn mark_used(
        &mut self,
        namespace: &str,
        worker_id: u64,
        reach_ms: u64,
    ) -> Result<super::Usage> {
        let ns = namespace.to_string();
        self.call("mark the worker ID used", move |s| {
            s.mark_used(&ns, worker_id, reach_ms)
        })
    }

    fn workers(&mut self, namespace: &str) -> Result<Vec<RemoteWorker>> {
        let ns = namespace.to_string();
        self.call("list the workers", move |s| {
            let now = s.server_ns();
            s.workers
                .iter()
                .filter(|((n, _), _)| *n == ns)
                .map(|((_, id), w)| {
                    let live = w.lease.as_ref().filter(|l| now < l.expires);
                    RemoteWorker {
                        worker_id: *id,
                        holder: live.map(|l| l.owner.clone()),
                        expires_in_ms: live.map(|l| ((l.expires - now) / MS) as i64),
                        state: w.state.as_ref().and_then(|v| super::decode_state(&v.text)),
                        version: w.state.as_ref().map_or(0, |v| v.version),
                    }
                })
                .collect()
        })
    }

    fn check_settings(&mut self) -> Result<Vec<String>> {
        self.call("check the settings", |_| Vec::new())
    }

    fn namespaces(&mut self, limit: usize) -> Result<super::Listed> {
        self.call("list the namespaces", move |s| {
            let all: std::collections::BTreeSet<String> = s
                .layouts
                .keys()
                .chain(s.workers.keys().map(|(ns, _)| ns))
                .cloned()
                .collect();
            super::Listed {
                complete: all.len() <= limit,
                names: all.into_iter().take(limit).collect(),
            }
        })
    }
}

/// A store of `worker_id`'s state for the lease `token` holds, over `conn`.
fn store(conn: SimConn, worker_id: u64, token: &str) -> RemoteStore {
    RemoteStore {
        conn: Mutex::new(Box::new(conn)),
        namespace: NS.to_string(),
        worker_id,
        token: token.to_string(),
        backend: Backend::Redis("redis://sim".to_string()),
        version: Mutex::new(0),
        pid: crate::fork::pid(),
        // No generator behind it: the world tallies what one would do.
        keeper: Default::default(),
        moved: Default::default(),
    }
}

// ---- the world: processes, keepers, generators ------------------------------------------------

/// What one run simulates.
#[derive(Clone, Debug)]
struct Config {
    flavor: Flavor,
    timing: Timing,
    /// How far ahead a generator reserves, in ms (time units).
    ahead_ms: u64,
    /// How often the reservation thread looks, in ns.
    refresh: u64,
    procs: usize,
    /// Keeper calls, per mille: lost on the way; answer lost; slow.
    k_fail: u64,
    k_lost: u64,
    k_slow: u64,
    /// Store calls, per mille: failed; answer lost; answered late to the generator (the I/O
    /// thread's save returns up to two TTLs after it landed: a slow call, a paused process).
    s_fail: u64,
    s_lost: u64,
    s_late: u64,
    /// How long a keeper's reconnect takes when nothing reaches the server or name lookups
    /// hang: a timeout per address the server's name resolves to, and for Redis whatever the
    /// lookup takes (its client resolves names with no timeout; PostgreSQL's call bounds it).
    reconnect_ns: u64,
    /// The longest a parked keeper may wake late, in ns.
    jitter: u64,
    /// Whether processes crash, close and start again by themselves.
    churn: bool,
    end: u64,
    /// Whether a start stays above what a lost state may have held (off only to show what it
    /// prevents: `RIMEFLAKE_LEASE_NO_FLOOR=1`).
    floor: bool,
}

impl Config {
    fn pick(rng: &mut Rng) -> Config {
        let ttl_ms = rng.pick(&[200, 1_000, 10_000, 30_000]);
        let timing = Timing {
            ttl: Duration::from_millis(ttl_ms),
        };
        let ttl = ttl_ms * MS;
        let flavor = rng.pick(&[Flavor::Redis, Flavor::Postgres]);
        Config {
            flavor,
            timing,
            ahead_ms: rng.pick(&[ttl_ms / 10, 1_000, ttl_ms * 3]).max(2),
            refresh: rng.pick(&[ttl / 8, 500 * MS]).min(ttl / 4),
            procs: rng.pick(&[2, 3]),
            k_fail: rng.pick(&[0, 20, 150]),
            k_lost: rng.pick(&[0, 20, 150]),
            k_slow: rng.pick(&[0, 50, 300]),
            s_fail: rng.pick(&[0, 20, 150]),
            s_lost: rng.pick(&[0, 20, 150]),
            s_late: rng.pick(&[0, 20, 150]),
            reconnect_ns: match flavor {
                Flavor::Redis => {
                    let op = timing.op_timeout().as_nanos() as u64;
                    rng.pick(&[op, 2 * op, 4 * op, 10_000 * MS])
                }
                Flavor::Postgres => timing.op_timeout().as_nanos() as u64,
            },
            jitter: rng.pick(&[MS / 10, ttl / 100, ttl / 20]),
            churn: true,
            end: T0 + 40 * ttl,
            floor: std::env::var_os("RIMEFLAKE_LEASE_NO_FLOOR").is_none(),
        }
    }

    /// No faults and no churn, for the tests that script what happens.
    fn quiet(flavor: Flavor, ttl_ms: u64) -> Config {
        Config {
            flavor,
            timing: Timing {
                ttl: Duration::from_millis(ttl_ms),
            },
            ahead_ms: ttl_ms / 10,
            refresh: ttl_ms * MS / 8,
            procs: 2,
            k_fail: 0,
            k_lost: 0,
            k_slow: 0,
            s_fail: 0,
            s_lost: 0,
            s_late: 0,
            reconnect_ns: Timing {
                ttl: Duration::from_millis(ttl_ms),
            }
            .op_timeout()
            .as_nanos() as u64,
            jitter: 0,
            churn: false,
            end: u64::MAX,
            floor: true,
        }
    }

    fn ttl(&self) -> u64 {
        self.timing.ttl.as_nanos() as u64
    }
    fn op_timeout(&self) -> u64 {
        self.timing.op_timeout().as_nanos() as u64
    }
    fn ttl_ms(&self) -> u64 {
        self.timing.ttl.as_millis() as u64
    }
}

/// How one keeper call goes, when a test decides it: when it lands (`None`: never), and how
/// long after landing it is answered (`None`: never; the client times out).
#[derive(Clone, Copy, Debug)]
struct Fate {
    land_after: Option<u64>,
    answer_after: Option<u64>,
}

/// A keeper call on its way.
struct Call {
    /// The answer arrives then, or the client gives up then.
    answer_at: u64,
    /// Whether an answer arrives (else the client sees an error).
    answered: bool,
    /// What the server answered, once the call landed.
    slot: Arc<Mutex<Option<bool>>>,
}

/// A reservation stored on the server, on its way back to the generator.
struct Publish {
    /// When the save returns.
    at: u64,
    reserved: u64,
    /// The run's `losses` when the save was sent: a loss since, and it opens nothing.
    losses: u64,
}

/// A process while it holds (or believes it may hold) the worker ID.
struct Run {
    keeper: KeeperState,
    /// When the keeper thread wakes next (the answer of a call on its way may come sooner).
    keeper_at: u64,
    call: Option<Call>,
    /// The keeper's last call failed: its next one connects first.
    reconnect: bool,
    store: RemoteStore,
    /// The state as last stored (answered).
    stored: WorkerState,
    /// The fence: IDs up to `reserved` may be issued while it is open.
    open: bool,
    reserved: u64,
    /// The keeper told the generator the lease is lost (and not yet that it is back).
    lost: bool,
    /// The deadline the keeper last told the generator (at start and at each success).
    deadline: u64,
    /// The time unit open to IDs (`high` of the hot path): a later one opens only if it ends
    /// before `deadline`.
    open_unit: u64,
    /// How many times the keeper told it so.
    losses: u64,
    /// A stored reservation whose save has not returned to the generator yet.
    publish: Option<Publish>,
    /// The last reservation write failed.
    failed: bool,
    last_unit: u64,
    next_issue: u64,
    next_reserve: u64,
    ends_at: u64,
    /// Whether it ends by a crash (else it closes).
    crash: bool,
    /// The state's write count when this process started.
    start_writes: u64,
    /// The lease was taken by force and the keeper has not said so yet.
    stolen: bool,
    /// The server forgot its lease or state while it ran: a save refused as moved is then the
    /// state gone, not a write of its own unrecognised.
    forgotten: bool,
    /// Back after a loss, with or without another writer in between; not settled yet.
    retaken: Option<bool>,
    /// Keeper call fates a test asked for, in order; how late the keeper wakes for its next
    /// call, if a test says.
    fates: Vec<Fate>,
    wake_late: Option<u64>,
}

struct Proc {
    name: String,
    life: u32,
    token: String,
    run: Option<Box<Run>>,
    /// When an idle process tries to start.
    retry_at: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Tally {
    runs: u64,
    ids: u64,
    starts: u64,
    /// Starts after another token held the worker ID.
    takeovers: u64,
    steals: u64,
    lost_deadline: u64,
    lost_not_ours: u64,
    backs: u64,
    went_on: u64,
    stayed_failed: u64,
    own_writes_found: u64,
    landed_late: u64,
    refused_saves: u64,
    /// Times the server forgot.
    forgets: u64,
    /// Starts killed while they waited for their floor.
    killed_in_wait: u64,
}

impl Tally {
    fn add(&mut self, o: &Tally) {
        self.runs += o.runs;
        self.ids += o.ids;
        self.starts += o.starts;
        self.takeovers += o.takeovers;
        self.steals += o.steals;
        self.lost_deadline += o.lost_deadline;
        self.lost_not_ours += o.lost_not_ours;
        self.backs += o.backs;
        self.went_on += o.went_on;
        self.stayed_failed += o.stayed_failed;
        self.own_writes_found += o.own_writes_found;
        self.landed_late += o.landed_late;
        self.refused_saves += o.refused_saves;
        self.forgets += o.forgets;
        self.killed_in_wait += o.killed_in_wait;
    }
}

/// What happens next in a run.
#[derive(Clone, Copy, Debug)]
enum Ev {
    Keeper(usize),
    Publish(usize),
    Issue(usize),
    Reserve(usize),
    End(usize),
    Start(usize),
    Steal(u64),
    Forget(u64),
}

struct World {
    cfg: Config,
    server: SimServer,
    rng: Rng,
    t: u64,
    procs: Vec<Proc>,
    /// Who issued each time unit.
    units: HashMap<u64, String>,
    /// The reservation each token last stored (answered).
    durable: BTreeMap<String, u64>,
    /// Times of forced takeovers.
    steals: Vec<u64>,
    /// Times the server forgets: everything (`true`, as `FLUSHALL`) or the worker's lease and
    /// state (its row deleted).
    forgets: Vec<(u64, bool)>,
    /// `(from, until)`: name lookups hang, so a reconnect takes `reconnect_ns` and fails
    /// (open connections still work).
    lookups_hang: Vec<(u64, u64)>,
    /// How many IDs each token issued, and when it last did.
    issued: BTreeMap<String, (u64, u64)>,
    tally: Tally,
    /// What each keeper told its generator, and when.
    told: Vec<(u64, String, News)>,
    log: Vec<String>,
}

type Step = std::result::Result<(), String>;

impl World {
    fn new(cfg: Config, seed: u64) -> World {
        let server = SimServer::new(cfg.flavor, seed);
        {
            let mut s = server.lock();
            s.fail_pm = cfg.s_fail;
            s.lost_pm = cfg.s_lost;
            s.late_max = cfg.op_timeout() * 3;
        }
        let procs = (0..cfg.procs)
            .map(|i| Proc {
                name: format!("p{i}"),
                life: 0,
                token: String::new(),
                run: None,
                retry_at: u64::MAX,
            })
            .collect();
        World {
            cfg,
            server,
            rng: Rng::new(seed),
            t: T0,
            procs,
            units: HashMap::new(),
            durable: BTreeMap::new(),
            steals: Vec::new(),
            forgets: Vec::new(),
            lookups_hang: Vec::new(),
            issued: BTreeMap::new(),
            tally: Tally::default(),
            told: Vec::new(),
            log: Vec::new(),
        }
    }

    /// A run of `seed`: its configuration, outages, skew and steals all come from the seed.
    fn random(seed: u64) -> World {
        let mut rng = Rng::new(seed);
        let cfg = Config::pick(&mut rng);
        let mut w = World::new(cfg, seed);
        let ttl = w.cfg.ttl();
        {
            let mut s = w.server.lock();
            s.skew_ns = rng.range(0, 2 * 3_600_000) as i64 * MS as i64 - 3_600_000 * MS as i64;
            s.rate_ppm = rng.range(0, 10_000) as i64 - 5_000;
            for _ in 0..rng.range(0, 4) {
                let from = T0 + rng.range(0, 36 * ttl);
                let len = rng.pick(&[ttl / 10, ttl / 2, ttl, 2 * ttl, 4 * ttl]);
                let what = rng.pick(&[Outage::Pause, Outage::Refuse, Outage::Blackhole]);
                s.add_outage(from, from + rng.range(len / 2, len), what);
            }
        }
        if rng.chance(300) {
            w.steals.push(T0 + rng.range(ttl, 36 * ttl));
        }
        if rng.chance(300) {
            let all = rng.chance(500);
            w.forgets.push((T0 + rng.range(ttl, 36 * ttl), all));
        }
        if rng.chance(300) {
            let from = T0 + rng.range(0, 36 * ttl);
            w.lookups_hang
                .push((from, from + rng.range(ttl / 2, 3 * ttl)));
        }
        w.procs[0].retry_at = T0;
        for p in &mut w.procs[1..] {
            p.retry_at = T0 + rng.range(0, 2 * ttl);
        }
        let (skew, rate, outages) = {
            let s = w.server.lock();
            (s.skew_ns / MS as i64, s.rate_ppm, s.outages.clone())
        };
        w.log(format!(
            "seed {seed}: {:?}, skew {skew} ms, rate {rate} ppm, outages {outages:?}, steals {:?}, \
             forgets {:?}, lookups hang {:?}",
            w.cfg, w.steals, w.forgets, w.lookups_hang
        ));
        w
    }

    fn log(&mut self, what: String) {
        self.log
            .push(format!("{:>12.3} ms  {what}", (self.t - T0) as f64 / 1e6));
    }

    fn unit(&self) -> u64 {
        self.t / MS
    }

    /// How far a stored reservation may lead the clock in this model (ms): a quick restart
    /// resumes at most `ahead` past the clock (one unit above the reservation), and reserves
    /// `ahead` past that.
    fn reach(&self) -> u64 {
        2 * self.cfg.ahead_ms + 1
    }

    fn run(&mut self, i: usize) -> &mut Run {
        self.procs[i].run.as_mut().expect("a running process")
    }

    /// The next event, and when.
    fn next_event(&self) -> Option<(u64, Ev)> {
        let mut best: Option<(u64, Ev)> = None;
        let mut consider = |at: u64, ev: Ev| {
            if best.is_none_or(|(b, _)| at < b) {
                best = Some((at, ev));
            }
        };
        for &at in &self.steals {
            consider(at, Ev::Steal(at));
        }
        for &(at, _) in &self.forgets {
            consider(at, Ev::Forget(at));
        }
        for (i, p) in self.procs.iter().enumerate() {
            match &p.run {
                Some(r) => {
                    let answer = r.call.as_ref().map_or(u64::MAX, |c| c.answer_at);
                    consider(r.keeper_at.min(answer), Ev::Keeper(i));
                    consider(r.next_issue, Ev::Issue(i));
                    consider(r.next_reserve, Ev::Reserve(i));
                    consider(
                        r.publish.as_ref().map_or(u64::MAX, |p| p.at),
                        Ev::Publish(i),
                    );
                    consider(r.ends_at, Ev::End(i));
                }
                None => consider(p.retry_at, Ev::Start(i)),
            }
        }
        best.filter(|(at, _)| *at != u64::MAX)
    }

    /// Runs events up to `until`; an invariant broken is an error with what happened.
    fn run_until(&mut self, until: u64) -> Step {
        while let Some((at, ev)) = self.next_event() {
            if at > until {
                break;
            }
            self.t = at;
            self.server.lock().set_time(at);
            match ev {
                Ev::Keeper(i) => self.keeper(i)?,
                Ev::Issue(i) => self.issue(i)?,
                Ev::Reserve(i) => self.reserve(i)?,
                Ev::Publish(i) => self.publish(i),
                Ev::End(i) => self.end(i)?,
                Ev::Start(i) => {
                    self.start(i, false)?;
                }
                Ev::Steal(at) => {
                    self.steals.retain(|&s| s != at);
                    self.steal()?;
                }
                Ev::Forget(at) => {
                    let all = self.forgets.iter().any(|&(t, all)| t == at && all);
                    self.forgets.retain(|&(t, _)| t != at);
                    self.forget(all);
                }
            }
        }
        self.t = self.t.max(until);
        self.server.lock().set_time(self.t);
        Ok(())
    }

    /// Starts process `i` as a generator starts: takes the lease (or, `by_force`, takes it from
    /// whoever holds it), loads the state, starts above it and stores a reservation before the
    /// first ID. Returns whether it runs.
    fn start(&mut self, i: usize, by_force: bool) -> std::result::Result<bool, String> {
        let ttl = self.cfg.ttl();
        let p = &mut self.procs[i];
        p.life += 1;
        p.token = format!("{}.{}", p.name, p.life);
        p.retry_at = self.t + self.rng.range(ttl / 4, ttl);
        let (name, token) = (p.name.clone(), p.token.clone());
        let mut conn = self.server.conn(&token, true);
        let sent = self.t;
        let taken = if by_force {
            self.server.lock().steal(WORKER, &token, self.cfg.ttl_ms());
            true
        } else {
            matches!(
                conn.acquire(NS, WORKER, &token, self.cfg.ttl_ms()),
                Ok(true)
            )
        };
        if !taken {
            return Ok(false);
        }
        // Marked before any state is stored, as `RemoteLease::acquire` does.
        let reach = self.reach();
        let usage = match conn.mark_used(NS, WORKER, reach) {
            Ok(u) => u,
            Err(e) => {
                self.log(format!("{name}: {token} cannot mark its worker ID: {e}"));
                let _ = conn.release(NS, WORKER, &token);
                return Ok(false);
            }
        };
        let store = store(conn, WORKER, &token);
        let fail = |w: &mut World, store: RemoteStore, e: Error| {
            w.log(format!("{name}: {token} cannot start: {e}"));
            let _ = store
                .conn
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .release(NS, WORKER, &token);
            Ok(false)
        };
        let loaded = match store.load() {
            Ok(s) => s,
            Err(e) => return fail(self, store, e),
        };
        let found = loaded.is_some();
        let mut state = loaded.unwrap_or_else(|| WorkerState::fresh(1));
        let now = self.unit();
        // The floor of a start that may follow a lost state, as the generator's start applies it.
        let lead = usage.floor_lead_ms(found, false).filter(|_| self.cfg.floor);
        if let Some(lead) = lead {
            state.raise(0, now + lead);
            self.log(format!(
                "{name}: {token} found no state ({usage:?}): floor {}",
                now + lead
            ));
        }
        // A reservation more than `ahead` past the clock: the generator waits for the clock
        // (holding the lease, the floor not yet stored); here the floor is stored, the lease
        // given back and the start tried again later, which then finds it.
        let first = match state.reserved_of(0) {
            // Killed (SIGKILL) while it waits for its floor: the generator keeps the floor in
            // memory only, so nothing is stored, and the lease is left to expire.
            Some(r) if r > now + self.cfg.ahead_ms && lead.is_some() && self.rng.chance(300) => {
                self.log(format!(
                    "{name}: {token} is killed while it waits for the clock to near {r}"
                ));
                self.tally.killed_in_wait += 1;
                return Ok(false);
            }
            Some(r) if r > now + self.cfg.ahead_ms => {
                if lead.is_some() {
                    if let Err(e) = store.save(&state) {
                        return fail(self, store, e);
                    }
                    self.saved(&token, now + lead.unwrap_or(0))?;
                }
                self.log(format!("{name}: {token} waits for the clock to near {r}"));
                let _ = store
                    .conn
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .release(NS, WORKER, &token);
                return Ok(false);
            }
            Some(r) if r >= now => r + 1,
            _ => now,
        };
        state.clock_id = 0;
        state.closed_at = None;
        state.raise(0, first + self.cfg.ahead_ms);
        if let Err(e) = store.save(&state) {
            return fail(self, store, e);
        }
        // (b) A process starts above every reservation any other stored.
        if let Some((other, r)) = self
            .durable
            .iter()
            .find(|(t, r)| **t != token && **r >= first)
        {
            return Err(format!(
                "(b) {token} starts at {first}, not above {other}'s stored reservation {r}"
            ));
        }
        let reserved = state.reserved_of(0).expect("reserved above");
        self.saved(&token, reserved)?;
        let (takeover, writes) = {
            let s = self.server.lock();
            let before = s
                .workers
                .get(&(NS.to_string(), WORKER))
                .map_or(0, |w| w.owners.len());
            (before > 1, s.writes(WORKER))
        };
        self.tally.starts += 1;
        self.tally.takeovers += u64::from(takeover);
        self.log(format!(
            "{name}: {token} starts at unit {first}, reserved to {reserved}{}",
            if by_force {
                " (took the lease by force)"
            } else {
                ""
            }
        ));
        let cfg = &self.cfg;
        let ends_at = if cfg.churn {
            self.t + self.rng.range(2 * ttl, 30 * ttl)
        } else {
            u64::MAX
        };
        self.procs[i].run = Some(Box::new(Run {
            keeper: KeeperState::new(cfg.timing, sent),
            deadline: KeeperState::new(cfg.timing, sent).valid_until(),
            open_unit: self.unit().saturating_sub(1),
            keeper_at: self.t,
            call: None,
            reconnect: true, // the keeper opens its own connection at its first call
            store,
            stored: state,
            open: true,
            reserved,
            lost: false,
            losses: 0,
            publish: None,
            failed: false,
            last_unit: first,
            next_issue: self.t,
            next_reserve: self.t + cfg.refresh,
            ends_at,
            crash: self.rng.chance(500),
            start_writes: writes,
            stolen: false,
            forgotten: false,
            retaken: None,
            fates: Vec::new(),
            wake_late: None,
        }));
        Ok(true)
    }

    /// The server forgets everything, or the worker's lease and state. A holder keeps issuing
    /// inside what it stored until its keeper notices, as after a lease taken by force.
    fn forget(&mut self, all: bool) {
        {
            let mut s = self.server.lock();
            if all {
                s.forget_all();
            } else {
                s.forget_worker(NS, WORKER);
            }
        }
        for p in &mut self.procs {
            if let Some(run) = p.run.as_mut() {
                run.stolen = !run.lost;
                run.forgotten = true;
            }
        }
        self.tally.forgets += 1;
        self.log(format!(
            "the server forgets {}",
            if all { "everything" } else { "the worker" }
        ));
    }

    /// A reservation `reserved` was stored for `token`, and answered.
    fn saved(&mut self, token: &str, reserved: u64) -> Step {
        // (b) ...while no other process took the worker ID since this one last took it.
        let last = self.server.lock().last_owner(WORKER);
        if last.as_deref() != Some(token) {
            return Err(format!(
                "(b) a save by {token} was answered after {last:?} took the worker ID"
            ));
        }
        self.durable.insert(token.to_string(), reserved);
        Ok(())
    }

    /// A forced takeover by an idle process, if one is idle.
    fn steal(&mut self) -> Step {
        let Some(thief) = self.procs.iter().position(|p| p.run.is_none()) else {
            return Ok(());
        };
        let owner = self.server.lock().lease(WORKER).map(|(o, _)| o);
        if let Some(victim) = self
            .procs
            .iter_mut()
            .find(|p| p.run.is_some() && Some(&p.token) == owner.as_ref())
        {
            let run = victim.run.as_mut().expect("running");
            run.stolen = !run.lost; // until its keeper notices
        }
        self.tally.steals += 1;
        self.start(thief, true)?;
        Ok(())
    }

    /// Process `i` crashes (the lease expires by itself) or closes (a last save, then the
    /// lease is released), and starts again later with a new token.
    fn end(&mut self, i: usize) -> Step {
        let ttl = self.cfg.ttl();
        let retry_at = self.t + self.rng.range(ttl / 2, 3 * ttl);
        let p = &mut self.procs[i];
        let run = p.run.take().expect("running");
        p.retry_at = if self.cfg.churn { retry_at } else { u64::MAX };
        let (name, token) = (p.name.clone(), p.token.clone());
        self.tally.stayed_failed += u64::from(run.retaken == Some(true));
        self.log(format!(
            "{name}: {token} {}",
            if run.crash { "crashes" } else { "closes" }
        ));
        if run.crash {
            return Ok(());
        }
        let mut last = run.stored.clone();
        last.closed_at = Some(last.reserved_of(0).unwrap_or(0));
        if run.store.save(&last).is_ok() {
            let another = (self.server.lock()).written_by_another(WORKER, run.start_writes, &token);
            if another {
                return Err(format!(
                    "(c) {token} stored its last state after another process stored its state"
                ));
            }
            self.saved(&token, last.reserved_of(0).unwrap_or(0))?;
        }
        let mut conn = run.store.conn.lock().unwrap_or_else(|p| p.into_inner());
        let _ = conn.release(NS, WORKER, &token);
        Ok(())
    }

    /// The keeper thread of process `i` acts: an answer arrives, or it wakes.
    fn keeper(&mut self, i: usize) -> Step {
        let t = self.t;
        let cfg_jitter = self.cfg.jitter;
        let due = self.run(i).call.as_ref().is_some_and(|c| c.answer_at <= t);
        if let Some(call) = due.then(|| self.run(i).call.take()).flatten() {
            let landed = *call.slot.lock().unwrap_or_else(|p| p.into_inner());
            let outcome = match landed {
                Some(v) if call.answered => Ok(v),
                None if call.answered => panic!("a keeper call was answered before it landed"),
                _ => Err(sim_error("keeper", "no answer in time")),
            };
            let run = self.run(i);
            run.reconnect = outcome.is_err();
            run.keeper_at = t;
            let news = run.keeper.answered(&outcome, t);
            if matches!(outcome, Ok(true)) {
                // Told before any news, as the keeper thread does.
                run.deadline = run.deadline.max(run.keeper.valid_until());
            }
            let name = self.procs[i].name.clone();
            self.log(format!("{name}: keeper call answered: {outcome:?}"));
            if let Some(news) = news {
                self.tell(i, news);
            }
            return Ok(());
        }
        let next = self.run(i).keeper.poll(t);
        match next {
            Next::Sleep(until) => {
                let idle = self.run(i).call.is_none();
                let late = match self.run(i).wake_late.take_if(|_| idle) {
                    Some(late) => late,
                    None if self.rng.chance(50) => self.rng.range(0, cfg_jitter),
                    None => self.rng.range(0, 50_000),
                };
                self.run(i).keeper_at = until.saturating_add(late);
            }
            Next::Tell(news) => {
                self.run(i).keeper_at = t;
                self.tell(i, news);
            }
            Next::Call { acquire } => {
                let call = self.send(i, acquire);
                let name = self.procs[i].name.clone();
                self.log(format!(
                    "{name}: keeper {} (answer at {:.3} ms: {})",
                    if acquire { "acquires" } else { "renews" },
                    (call.answer_at - T0) as f64 / 1e6,
                    if call.answered { "answered" } else { "error" }
                ));
                let run = self.run(i);
                run.call = Some(call);
                run.keeper_at = t; // the thread goes on at once: the deadline does not wait
            }
        }
        Ok(())
    }

    /// Sends a keeper call of process `i`: decides when it lands and when it is answered.
    fn send(&mut self, i: usize, acquire: bool) -> Call {
        let t = self.t;
        let timeout = self.cfg.op_timeout();
        let small = |rng: &mut Rng| rng.range(20_000, (2 * MS).min(timeout / 20));
        let slot = Arc::new(Mutex::new(None));
        let failed = |at: u64| Call {
            answer_at: at,
            answered: false,
            slot: Arc::new(Mutex::new(None)),
        };
        let token = self.procs[i].token.clone();
        let outage = self.server.lock().outage_for(&token, t);
        // Reconnecting first, after an error (or at the first call).
        let mut start = t;
        let reconnect = self.run(i).reconnect;
        let hangs = self
            .lookups_hang
            .iter()
            .any(|(from, until)| (*from..*until).contains(&t));
        match outage {
            _ if reconnect && hangs => return failed(t + self.cfg.reconnect_ns),
            Some((_, Outage::Refuse)) => return failed(t + small(&mut self.rng)),
            Some((_, Outage::Blackhole)) if reconnect => return failed(t + self.cfg.reconnect_ns),
            Some((_, Outage::Blackhole)) => return failed(t + timeout),
            Some((until, Outage::Pause)) if reconnect => {
                // The kernel accepts the connection; the setup waits for the server.
                if until > t + timeout {
                    return failed(t + timeout);
                }
                start = until;
            }
            _ if reconnect => start = t + small(&mut self.rng),
            _ => {}
        }
        let scripted = {
            let fates = &mut self.run(i).fates;
            (!fates.is_empty()).then(|| fates.remove(0))
        };
        let fate = scripted.unwrap_or_else(|| {
            let r = self.rng.range(0, 999);
            let (f, l, s) = (self.cfg.k_fail, self.cfg.k_lost, self.cfg.k_slow);
            let rng = &mut self.rng;
            if r < f {
                Fate {
                    land_after: None,
                    answer_after: None,
                }
            } else if r < f + l {
                Fate {
                    land_after: Some(small(rng)),
                    answer_after: None,
                }
            } else if r < f + l + s {
                Fate {
                    land_after: Some(rng.range(0, timeout * 3 / 2)),
                    answer_after: Some(rng.range(0, timeout)),
                }
            } else {
                Fate {
                    land_after: Some(small(rng)),
                    answer_after: Some(small(rng)),
                }
            }
        });
        let Some(land) = fate.land_after.map(|d| start + d) else {
            let soonest = small(&mut self.rng);
            let at = t + self.rng.range(soonest, timeout);
            return failed(at);
        };
        let ttl_ms = self.cfg.ttl_ms();
        let answer = Arc::clone(&slot);
        let mut s = self.server.lock();
        let call = match (s.lands(land), fate.answer_after) {
            (Some(landed), Some(d)) if landed + d <= t + timeout => Call {
                answer_at: landed + d,
                answered: true,
                slot,
            },
            _ => Call {
                answer_at: t + timeout,
                answered: false,
                slot,
            },
        };
        s.land_at(land, !call.answered, move |s| {
            let held = if acquire {
                s.acquire(NS, WORKER, &token, ttl_ms)
            } else {
                s.renew(NS, WORKER, &token, ttl_ms)
            };
            *answer.lock().unwrap_or_else(|p| p.into_inner()) = Some(held);
        });
        call
    }

    /// The keeper tells the generator of process `i`.
    fn tell(&mut self, i: usize, news: News) {
        let t = self.t;
        let p = &mut self.procs[i];
        let (name, token) = (p.name.clone(), p.token.clone());
        let run = p.run.as_mut().expect("running");
        match &news {
            News::Lost(why) => {
                run.lost = true;
                run.losses += 1;
                run.open = false;
                run.stolen = false;
                if why.starts_with("the lease was not renewed") {
                    self.tally.lost_deadline += 1;
                } else {
                    self.tally.lost_not_ours += 1;
                }
            }
            News::Back => {
                run.lost = false;
                run.stolen = false;
                run.next_reserve = t; // nudged: store a reservation, then open the fence
                let another =
                    self.server
                        .lock()
                        .written_by_another(WORKER, run.start_writes, &token);
                run.retaken = Some(another);
                self.tally.backs += 1;
            }
        }
        self.log(format!("{name}: keeper tells {news:?}"));
        self.told.push((t, token, news));
    }

    /// The generator of process `i` issues an ID now, if its fence lets it.
    fn issue(&mut self, i: usize) -> Step {
        let ttl = self.cfg.ttl();
        let gap = self.rng.range(ttl / 80, ttl / 20);
        let t = self.t;
        let unit = self.unit();
        let p = &mut self.procs[i];
        let token = p.token.clone();
        let run = p.run.as_mut().expect("running");
        run.next_issue = t + gap;
        let u = unit.max(run.last_unit);
        if !run.open {
            return Ok(());
        }
        // (e) Nothing is issued while the keeper says the lease is lost.
        if run.lost {
            return Err(format!(
                "(e) {token} issues at unit {u} while its lease is lost"
            ));
        }
        if u > run.reserved {
            run.next_reserve = run.next_reserve.min(t); // the caller waits for the reserver
            return Ok(());
        }
        // A reading in another unit than the open one opens it only if it ends before the
        // deadline; else the call fails with a lease error.
        if unit != run.open_unit {
            if (unit + 1) * MS > run.deadline {
                return Ok(());
            }
            run.open_unit = run.open_unit.max(unit);
        }
        // (f) Nothing is issued past the keeper's deadline, told or not.
        let valid_until = run.keeper.valid_until();
        if t >= valid_until {
            return Err(format!(
                "(f) {token} issues at unit {u}, {:.3} ms past its lease deadline",
                (t - valid_until) as f64 / 1e6
            ));
        }
        let stolen = run.stolen;
        let (lease, another) = {
            let s = self.server.lock();
            let another = s.written_by_another(WORKER, run.start_writes, &token);
            (s.lease(WORKER), another)
        };
        if !stolen {
            // (a) The lease is the issuer's and live by the server's clock.
            match &lease {
                Some((owner, true)) if *owner == token => {}
                _ => {
                    return Err(format!(
                        "(a) {token} issues at unit {u} while the server's lease is {lease:?}"
                    ))
                }
            }
            // (c) Nothing is issued after another writer stored its state.
            if another {
                return Err(format!(
                    "(c) {token} issues at unit {u} after another process stored its state"
                ));
            }
        }
        // (b) No time unit is issued by two processes.
        match self.units.get(&u) {
            Some(other) if *other != token => {
                return Err(format!("(b) unit {u} issued by {other} and by {token}"))
            }
            Some(_) => {}
            None => {
                self.units.insert(u, token.clone());
            }
        }
        run.last_unit = u;
        self.tally.ids += 1;
        let mine = self.issued.entry(token).or_default();
        *mine = (mine.0 + 1, t);
        Ok(())
    }

    /// The reservation thread of process `i`: moves the reservation ahead, as
    /// `extend_reservation` does (never while the lease is lost).
    fn reserve(&mut self, i: usize) -> Step {
        let unit = self.unit();
        let (ahead, refresh) = (self.cfg.ahead_ms, self.cfg.refresh);
        let t = self.t;
        let p = &mut self.procs[i];
        let (name, token) = (p.name.clone(), p.token.clone());
        let run = p.run.as_mut().expect("running");
        run.next_reserve = t + refresh;
        // One save at a time, as the I/O thread makes them.
        if run.lost || run.publish.is_some() {
            return Ok(());
        }
        let target = unit.max(run.last_unit) + ahead;
        if target <= run.reserved && run.open && !run.failed {
            return Ok(());
        }
        let mut next = run.stored.clone();
        next.raise(0, target);
        match run.store.save(&next) {
            Ok(()) => {
                let reserved = next.reserved_of(0).expect("raised");
                let another =
                    self.server
                        .lock()
                        .written_by_another(WORKER, run.start_writes, &token);
                // (c) A process with another writer in between never stores again.
                if another {
                    return Err(format!(
                        "(c) {token} stored a reservation after another process stored its state"
                    ));
                }
                run.stored = next;
                run.failed = false;
                if run.retaken.take() == Some(false) {
                    self.tally.went_on += 1;
                }
                let late = self.rng.chance(self.cfg.s_late);
                let at = if late {
                    t + self.rng.range(1, 2 * self.cfg.ttl())
                } else {
                    t
                };
                let run = self.run(i);
                run.publish = Some(Publish {
                    at,
                    reserved,
                    losses: run.losses,
                });
                if !late {
                    self.publish(i);
                }
                self.saved(&token, reserved)
            }
            Err(e) => {
                run.failed = true;
                let text = e.to_string();
                if text.contains("another process stored its state") {
                    self.tally.refused_saves += 1;
                    if let Some(true) = run.retaken.take() {
                        self.tally.stayed_failed += 1;
                    }
                    // (d) A newer version of our own is recognised, never called "moved".
                    let s = self.server.lock();
                    let another = s.written_by_another(WORKER, run.start_writes, &token);
                    if !run.forgotten && (s.writer(WORKER).as_deref() == Some(&token) || !another) {
                        return Err(format!(
                            "(d) {token}'s save was refused as moved over its own write: {text}"
                        ));
                    }
                } else if text.contains("the lease was lost") {
                    self.tally.refused_saves += 1;
                }
                self.log(format!("{name}: save failed: {text}"));
                Ok(())
            }
        }
    }

    /// The save of process `i` returns to its generator, which opens the fence to what it
    /// stored, as `extend_reservation` does: unless the lease was lost since the save was sent
    /// (even if it is back by now); then its next save, sent after, may.
    fn publish(&mut self, i: usize) {
        let t = self.t;
        let name = self.procs[i].name.clone();
        let run = self.run(i);
        let Some(p) = run.publish.take() else {
            return;
        };
        if run.lost || run.losses != p.losses {
            run.next_reserve = run.next_reserve.min(t);
            self.log(format!(
                "{name}: a save returned after a loss: the fence stays shut"
            ));
            return;
        }
        run.reserved = run.reserved.max(p.reserved);
        run.open = true;
    }

    fn finish(&mut self) {
        let s = self.server.lock();
        self.tally.own_writes_found = s.own_moved;
        self.tally.landed_late = s.landed_late;
        drop(s);
        self.tally.runs = 1;
    }

    fn report(&self, seed: u64, broken: &str) -> String {
        let tail = self.log.len().saturating_sub(60);
        format!(
            "seed {seed}: {broken}\n  replay: RIMEFLAKE_LEASE_SEED={seed} cargo test -p \
             rimeflake --features redis,postgres --lib lease::remote::sim -- --nocapture\n  \
             {}\n  ...\n{}",
            self.log[0],
            self.log[tail.max(1)..].join("\n")
        )
    }
}

/// Helpers of the tests that script a run.
impl World {
    /// A run with no faults and no churn, which a test scripts.
    /// Its namespace was made an hour before, so its first start is an ordinary one.
    fn scripted(flavor: Flavor, ttl_ms: u64) -> World {
        let w = World::new(Config::quiet(flavor, ttl_ms), 1);
        {
            let mut s = w.server.lock();
            let made = s.server_ns() - 3_600_000 * MS;
            s.marks.insert(NS.to_string(), (made, BTreeMap::new()));
        }
        w
    }

    /// `ttls` TTLs after the run began.
    fn at(&self, ttls: f64) -> u64 {
        T0 + (ttls * self.cfg.ttl() as f64) as u64
    }

    /// Runs to `ttls` TTLs after the run began; fails the test with the log if an invariant
    /// broke.
    fn go(&mut self, ttls: f64) {
        let until = self.at(ttls);
        if let Err(broken) = self.run_until(until) {
            panic!("{broken}\n{}", self.log.join("\n"));
        }
    }

    /// What the keeper of `token` told its generator, and when (in TTLs since the start).
    fn told_to(&self, token: &str) -> Vec<(f64, News)> {
        let ttl = self.cfg.ttl() as f64;
        self.told
            .iter()
            .filter(|(_, t, _)| t == token)
            .map(|(at, _, news)| ((at - T0) as f64 / ttl, news.clone()))
            .collect()
    }

    /// How many IDs `token` issued, and when it last did (in TTLs since the start).
    fn issued_by(&self, token: &str) -> (u64, f64) {
        let (n, last) = self.issued.get(token).copied().unwrap_or((0, T0));
        (n, (last - T0) as f64 / self.cfg.ttl() as f64)
    }
}

fn run_seed(seed: u64) -> std::result::Result<(Tally, Vec<String>), String> {
    let mut w = World::random(seed);
    let end = w.cfg.end;
    match w.run_until(end) {
        Ok(()) => {
            w.finish();
            Ok((w.tally, w.log))
        }
        Err(broken) => Err(w.report(seed, &broken)),
    }
}

#[cfg(test)]
mod tests;
