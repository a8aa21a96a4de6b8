//! The simulated server: leases, versioned states and the namespace's marks in memory, on the
//! server's own clock, with the faults a seed schedules; [`SimConn`] is its [`Conn`].

use super::*;

/// How the simulated server treats a lease that expired and that nobody took since.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flavor {
    /// As Redis: the key is gone, so its holder can neither renew it nor save.
    Redis,
    /// As PostgreSQL and MySQL (their rows are alike): the row still names its owner, who may
    /// renew it and save.
    Postgres,
    /// As ZooKeeper: the lease is the holder's session, which the ensemble ends some time past
    /// its timeout ([`Server::expiry_lag`]: the expiry rounded up to its tick, then the session's
    /// close going through its log). Until then the holder's renewals bring it back (they move
    /// its node to their session) and nobody else can take it; after, it is gone, as in Redis.
    ZooKeeper,
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

/// A namespace's settings on the simulated server.
#[derive(Clone, Debug, Default)]
pub(super) struct NsSettings {
    pub(super) max_drift_ms: Option<u64>,
    pub(super) replicas: u32,
    pub(super) lineage: Option<String>,
    pub(super) epoch: u64,
}

#[derive(Clone, Debug)]
pub(super) struct Lease {
    pub(super) owner: String,
    /// By the server's clock, in ns.
    pub(super) expires: u64,
}

#[derive(Default)]
pub(super) struct Worker {
    pub(super) lease: Option<Lease>,
    pub(super) state: Option<Versioned>,
    /// Every token that took the lease, each time it went to another token.
    pub(super) owners: Vec<String>,
    /// How many writes the state had.
    pub(super) writes: u64,
    /// Each time the writer changed: the write's number and its writer.
    pub(super) writers: Vec<(u64, String)>,
}

/// A call on its way to the server.
pub(super) struct Late {
    pub(super) at: u64,
    pub(super) seq: u64,
    /// Its client stopped waiting for it (its answer is lost).
    pub(super) orphan: bool,
    pub(super) op: Box<dyn FnOnce(&mut Server) + Send>,
}

/// The simulated server's data and clock; tests reach it through [`SimServer::lock`].
pub(crate) struct Server {
    /// The client's clock (`CLOCK_BOOTTIME`, ns): the simulation's time.
    pub(super) now: u64,
    pub(super) flavor: Flavor,
    /// ZooKeeper: how long past its expiry a session's lease still stands, in ns.
    pub(super) expiry_lag: u64,
    /// How far the server's clock is ahead of the client's, and how much faster it runs.
    pub(super) skew_ns: i64,
    pub(super) rate_ppm: i64,
    pub(super) layouts: BTreeMap<String, String>,
    pub(super) workers: BTreeMap<(String, u64), Worker>,
    /// Each namespace's marks: when they were made (server ns), and each worker ID's reach.
    pub(super) marks: BTreeMap<String, (u64, BTreeMap<u64, u64>)>,
    /// Each namespace's settings.
    pub(super) settings: BTreeMap<String, NsSettings>,
    /// Who the server is: raised by a promotion (or a restore); its lineage goes with it.
    pub(super) generation: u64,
    /// Its replica, if it has one (see `replica.rs`).
    pub(crate) replica: Option<Replica>,
    /// After a split brain: the old primary, for the clients that still reach it.
    pub(crate) old_side: Option<OldSide>,
    /// Set while a call runs on the old side.
    pub(super) on_old_side: bool,
    /// How long a write waits for its replica's acknowledgement (half a client's timeout).
    pub(crate) wait_ns: u64,
    /// `(from, until, what)`: from included, until excluded.
    pub(super) outages: Vec<(u64, u64, Outage)>,
    /// `(token prefix, from, until)`: nothing of these clients reaches the server then.
    pub(super) partitions: Vec<(String, u64, u64)>,
    pub(super) late: Vec<Late>,
    pub(super) seq: u64,
    pub(super) rng: Rng,
    /// Faults of every call of a faulty connection, per mille; lost answers land at most
    /// `late_max` ns later.
    pub(super) fail_pm: u64,
    pub(super) lost_pm: u64,
    pub(super) late_max: u64,
    pub(super) scripted: Vec<(String, Scripted)>,
    /// Saves refused as moved over a version the caller wrote itself (a lost answer).
    pub(super) own_moved: u64,
    /// Calls that landed although their client saw no answer.
    pub(super) landed_late: u64,
}

/// An in-memory lease server on a manual clock; clones share it.
#[derive(Clone)]
pub(crate) struct SimServer(pub(super) Arc<Mutex<Server>>);

impl SimServer {
    pub(crate) fn new(flavor: Flavor, seed: u64) -> SimServer {
        SimServer(Arc::new(Mutex::new(Server {
            now: T0,
            flavor,
            expiry_lag: 0,
            skew_ns: 0,
            rate_ppm: 0,
            layouts: BTreeMap::new(),
            workers: BTreeMap::new(),
            marks: BTreeMap::new(),
            settings: BTreeMap::new(),
            generation: 0,
            replica: None,
            old_side: None,
            on_old_side: false,
            wait_ns: 0,
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
            replicas: Default::default(),
        }
    }
}

impl Server {
    /// Moves the clock to `t`, landing first, in order, the calls due by then.
    pub(crate) fn set_time(&mut self, t: u64) {
        self.replicate();
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
    pub(super) fn land_at(
        &mut self,
        at: u64,
        orphan: bool,
        op: impl FnOnce(&mut Server) + Send + 'static,
    ) {
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
    pub(super) fn lands(&self, at: u64) -> Option<u64> {
        match self.outage_at(at) {
            None => Some(at),
            Some((until, Outage::Pause)) => self.lands(until),
            Some(_) => None,
        }
    }

    pub(crate) fn add_outage(&mut self, from: u64, until: u64, what: Outage) {
        self.outages.push((from, until, what));
    }

    pub(super) fn outage_at(&self, t: u64) -> Option<(u64, Outage)> {
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
    pub(super) fn outage_for(&self, name: &str, t: u64) -> Option<(u64, Outage)> {
        let cut = self.partitions.iter().find(|(prefix, from, until)| {
            name.starts_with(prefix.as_str()) && (*from..*until).contains(&t)
        });
        match cut {
            Some(&(_, _, until)) => Some((until, Outage::Blackhole)),
            None => self.outage_at(t),
        }
    }

    /// The server's clock, in Unix ns.
    pub(super) fn server_ns(&self) -> u64 {
        let d = (self.now - T0) as i128;
        (SERVER_T0 as i128 + self.skew_ns as i128 + d + d * self.rate_ppm as i128 / 1_000_000)
            as u64
    }

    /// [`Conn::mark_used`], on the server.
    pub(super) fn mark_used(
        &mut self,
        namespace: &str,
        worker_id: u64,
        reach_ms: u64,
    ) -> crate::lease::remote::Usage {
        let now = self.server_ns();
        let (created, used) = self
            .marks
            .entry(namespace.to_string())
            .or_insert_with(|| (now, BTreeMap::new()));
        let before = used.get(&worker_id).copied().unwrap_or(0);
        used.insert(worker_id, before.max(reach_ms));
        crate::lease::remote::Usage {
            age_ms: now.saturating_sub(*created) / MS,
            used_before: before > 0,
            reach_ms: before.max(reach_ms),
        }
    }

    /// What the server says of itself: its generation makes its identity and lineage.
    pub(super) fn view(&self) -> crate::lease::remote::ServerView {
        let name = |g: u64| format!("sim:{g}");
        crate::lease::remote::ServerView {
            identity: name(self.generation),
            lineage: name(self.generation),
            parent: self.generation.checked_sub(1).map(name),
            replicas: self.replicas_online(),
        }
    }

    /// [`Conn::settle_settings`], on the server.
    pub(super) fn settle(
        &mut self,
        namespace: &str,
        max_drift_ms: u64,
        view: &crate::lease::remote::ServerView,
    ) -> crate::lease::remote::Settings {
        let s = self.settings.entry(namespace.to_string()).or_default();
        let drift = *s.max_drift_ms.get_or_insert(max_drift_ms);
        if s.lineage.is_some()
            && s.lineage.as_ref() != Some(&view.lineage)
            && s.lineage == view.parent
        {
            s.replicas = s.replicas.saturating_sub(1);
        }
        s.replicas = s.replicas.max(view.replicas);
        s.lineage = Some(view.lineage.clone());
        crate::lease::remote::Settings {
            max_drift_ms: drift,
            replicas: s.replicas,
            epoch: s.epoch,
        }
    }

    /// The server forgets everything (`FLUSHALL`, or a restart without persistence). The
    /// checker's history of each worker ID stays.
    pub(crate) fn forget_all(&mut self) {
        self.layouts.clear();
        self.marks.clear();
        self.settings.clear();
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

    pub(super) fn worker(&mut self, namespace: &str, worker_id: u64) -> &mut Worker {
        self.workers
            .entry((namespace.to_string(), worker_id))
            .or_default()
    }

    /// When a lease stops holding by the server's clock: at its expiry, or a session's lag past
    /// it (ZooKeeper).
    fn ends(&self, l: &Lease) -> u64 {
        match self.flavor {
            Flavor::ZooKeeper => l.expires + self.expiry_lag,
            _ => l.expires,
        }
    }

    /// Whether `token` holds the lease, as the flavour sees an expired one.
    pub(super) fn holds(&self, w: &Worker, token: &str) -> bool {
        w.lease.as_ref().is_some_and(|l| {
            l.owner == token && (self.flavor == Flavor::Postgres || self.server_ns() < self.ends(l))
        })
    }

    /// The lease's owner, and whether it is live by the server's clock.
    pub(crate) fn lease(&self, worker_id: u64) -> Option<(String, bool)> {
        let w = self.workers.get(&(NS.to_string(), worker_id))?;
        w.lease
            .as_ref()
            .map(|l| (l.owner.clone(), self.server_ns() < self.ends(l)))
    }

    /// The writer of the stored state.
    pub(crate) fn writer(&self, worker_id: u64) -> Option<String> {
        let w = self.workers.get(&(NS.to_string(), worker_id))?;
        let text = &w.state.as_ref()?.text;
        text.rsplit_once(WRITER).map(|(_, t)| t.to_string())
    }

    /// How many writes the state of `worker_id` had.
    pub(super) fn writes(&self, worker_id: u64) -> u64 {
        self.workers
            .get(&(NS.to_string(), worker_id))
            .map_or(0, |w| w.writes)
    }

    /// Whether a token other than `token` wrote the state after write number `since`.
    pub(super) fn written_by_another(&self, worker_id: u64, since: u64, token: &str) -> bool {
        self.workers
            .get(&(NS.to_string(), worker_id))
            .is_some_and(|w| w.writers.iter().any(|(n, t)| *n > since && t != token))
    }

    /// The token that last took the lease from another.
    pub(super) fn last_owner(&self, worker_id: u64) -> Option<String> {
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

    pub(super) fn acquire(
        &mut self,
        namespace: &str,
        worker_id: u64,
        token: &str,
        ttl_ms: u64,
    ) -> bool {
        let now = self.server_ns();
        let old_side = self.on_old_side;
        let key = (namespace.to_string(), worker_id);
        let free = self
            .workers
            .get(&key)
            .and_then(|w| w.lease.as_ref())
            .is_none_or(|l| l.owner == token || now >= self.ends(l));
        if !free {
            return false;
        }
        let w = self.worker(namespace, worker_id);
        // The checker's history is the promoted server's: the old one of a split brain takes
        // no write its replicas must acknowledge.
        if !old_side && w.owners.last().is_none_or(|o| o != token) {
            w.owners.push(token.to_string());
        }
        w.lease = Some(Lease {
            owner: token.to_string(),
            expires: now + ttl_ms * MS,
        });
        true
    }

    pub(super) fn renew(
        &mut self,
        namespace: &str,
        worker_id: u64,
        token: &str,
        ttl_ms: u64,
    ) -> bool {
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

    pub(super) fn release(&mut self, namespace: &str, worker_id: u64, token: &str) {
        let key = (namespace.to_string(), worker_id);
        if self.workers.get(&key).is_some_and(|w| self.holds(w, token)) {
            self.worker(namespace, worker_id).lease = None;
        }
    }

    pub(super) fn save(
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
        let old_side = self.on_old_side;
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
        if !old_side {
            w.writes += 1;
            if w.writers.last().is_none_or(|(_, t)| t != token) {
                let n = w.writes;
                w.writers.push((n, token.to_string()));
            }
        }
        Saved::Yes
    }

    pub(super) fn reset(
        &mut self,
        namespace: &str,
        worker_id: u64,
        expected: u64,
        next: &Versioned,
    ) -> Saved {
        let now = self.server_ns();
        let key = (namespace.to_string(), worker_id);
        let live = self
            .workers
            .get(&key)
            .and_then(|w| w.lease.as_ref())
            .is_some_and(|l| now < self.ends(l));
        if live {
            return Saved::NotHolder;
        }
        let w = self.worker(namespace, worker_id);
        if w.state.as_ref().map_or(0, |v| v.version) != expected {
            return Saved::Moved;
        }
        w.state = Some(next.clone());
        w.writes += 1;
        Saved::Yes
    }

    /// A random fault for a call of a faulty connection.
    pub(super) fn draw_fault(&mut self) -> Option<Scripted> {
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

pub(super) fn sim_error(doing: &str, why: &str) -> Error {
    Error::new(
        ErrorKind::Lease,
        format!("simulated server: {doing}: {why}"),
    )
}

/// A connection to a [`SimServer`]. A call happens at the server's current time, on the side
/// of the server its client reaches.
pub(crate) struct SimConn {
    pub(super) server: SimServer,
    pub(super) name: String,
    pub(super) faulty: bool,
    /// The replica acknowledgements its writes wait for.
    pub(super) replicas: std::sync::Arc<crate::lease::remote::Replicas>,
}

impl SimConn {
    /// A write: it lands as a call does, and fails if the replicas it must wait for do not
    /// acknowledge it in time (it stays landed, as on a real server).
    pub(super) fn write<T: 'static>(
        &mut self,
        doing: &str,
        op: impl FnOnce(&mut Server) -> T + Send + 'static,
    ) -> Result<T> {
        let required = self.replicas.get();
        let (out, acked) = self.call(doing, move |s| {
            let out = op(s);
            (out, s.acknowledged(required))
        })?;
        if acked {
            Ok(out)
        } else {
            Err(sim_error(doing, "not acknowledged by the replicas in time"))
        }
    }

    pub(super) fn call<T: 'static>(
        &mut self,
        doing: &str,
        op: impl FnOnce(&mut Server) -> T + Send + 'static,
    ) -> Result<T> {
        let name = self.name.clone();
        let op = move |s: &mut Server| s.on_side(&name, op);
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
        self.write("acquire", move |s| {
            s.acquire(&ns, worker_id, &token, ttl_ms)
        })
    }

    fn renew(&mut self, namespace: &str, worker_id: u64, token: &str, ttl_ms: u64) -> Result<bool> {
        let (ns, token) = (namespace.to_string(), token.to_string());
        self.write("renew", move |s| s.renew(&ns, worker_id, &token, ttl_ms))
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
        self.write("save", move |s| {
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
        self.write("reset", move |s| s.reset(&ns, worker_id, expected, &next))
    }

    fn server_time_ms(&mut self) -> Result<u64> {
        self.call("read the clock", |s| s.server_ns() / MS)
    }

    fn mark_used(
        &mut self,
        namespace: &str,
        worker_id: u64,
        reach_ms: u64,
    ) -> Result<crate::lease::remote::Usage> {
        let ns = namespace.to_string();
        self.write("mark the worker ID used", move |s| {
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
                        state: w
                            .state
                            .as_ref()
                            .and_then(|v| crate::lease::remote::decode_state(&v.text)),
                        version: w.state.as_ref().map_or(0, |v| v.version),
                    }
                })
                .collect()
        })
    }

    fn check_settings(&mut self) -> Result<Vec<String>> {
        self.call("check the settings", |_| Vec::new())
    }

    fn server(&mut self) -> Result<crate::lease::remote::ServerView> {
        self.call("look at the server", |s| s.view())
    }

    fn settle_settings(
        &mut self,
        namespace: &str,
        ours: &crate::lease::remote::Proposal<'_>,
    ) -> Result<crate::lease::remote::Settings> {
        let (ns, drift, view) = (namespace.to_string(), ours.max_drift_ms, ours.view.clone());
        self.call("settle the settings", move |s| s.settle(&ns, drift, &view))
    }

    fn new_epoch(&mut self, namespace: &str) -> Result<u64> {
        let ns = namespace.to_string();
        self.call("raise the restore epoch", move |s| {
            let e = &mut s.settings.entry(ns).or_default().epoch;
            *e += 1;
            *e
        })
    }

    fn set_replicas(&mut self, namespace: &str, replicas: u32) -> Result<()> {
        let ns = namespace.to_string();
        self.call("set the replicas", move |s| {
            s.settings.entry(ns).or_default().replicas = replicas;
        })
    }

    fn require(&mut self, replicas: std::sync::Arc<crate::lease::remote::Replicas>) {
        self.replicas = replicas;
    }

    fn namespaces(&mut self, limit: usize) -> Result<crate::lease::remote::Listed> {
        self.call("list the namespaces", move |s| {
            let all: std::collections::BTreeSet<String> = s
                .layouts
                .keys()
                .chain(s.workers.keys().map(|(ns, _)| ns))
                .cloned()
                .collect();
            crate::lease::remote::Listed {
                complete: all.len() <= limit,
                names: all.into_iter().take(limit).collect(),
            }
        })
    }
}

/// A store of `worker_id`'s state for the lease `token` holds, over `conn`, sharing `keeper`
/// with the lease (the server as it was seen, the replicas its writes wait for).
pub(super) fn store(
    conn: SimConn,
    worker_id: u64,
    token: &str,
    keeper: Arc<crate::lease::remote::keeper::Shared>,
) -> RemoteStore {
    // No generator behind it: the world tallies what one would do.
    RemoteStore::new(
        Box::new(conn),
        NS,
        worker_id,
        token,
        &Backend::Redis("redis://sim".to_string()),
        keeper,
    )
}
