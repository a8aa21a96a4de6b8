//! The world of a run: its configuration, the processes (each a keeper, a store and a model of
//! the generator) and the events between them. Each event calls the checks (`checks.rs`) of
//! the properties it concerns; an event that breaks one ends the run with its message.

use super::*;

/// What one run simulates.
#[derive(Clone, Debug)]
pub(super) struct Config {
    pub(super) flavor: Flavor,
    pub(super) timing: Timing,
    /// How far ahead a generator reserves, in ms (time units).
    pub(super) ahead_ms: u64,
    /// How often the reservation thread looks, in ns.
    pub(super) refresh: u64,
    pub(super) procs: usize,
    /// Keeper calls, per mille: lost on the way; answer lost; slow.
    pub(super) k_fail: u64,
    pub(super) k_lost: u64,
    pub(super) k_slow: u64,
    /// Store calls, per mille: failed; answer lost; answered late to the generator (the I/O
    /// thread's save returns up to two TTLs after it landed: a slow call, a paused process).
    pub(super) s_fail: u64,
    pub(super) s_lost: u64,
    pub(super) s_late: u64,
    /// How long a keeper's reconnect takes when nothing reaches the server or name lookups
    /// hang: a timeout per address the server's name resolves to, and for Redis whatever the
    /// lookup takes (its client resolves names with no timeout; PostgreSQL's call bounds it).
    pub(super) reconnect_ns: u64,
    /// The longest a parked keeper may wake late, in ns.
    pub(super) jitter: u64,
    /// ZooKeeper: how long past its expiry a session's lease still stands, in ns.
    pub(super) expiry_lag: u64,
    /// Whether processes crash, close and start again by themselves.
    pub(super) churn: bool,
    pub(super) end: u64,
    /// Whether a start stays above what a lost state may have held (off only to show what it
    /// prevents: `RIMEFLAKE_LEASE_NO_FLOOR=1`).
    pub(super) floor: bool,
}

impl Config {
    pub(super) fn pick(rng: &mut Rng) -> Config {
        let ttl_ms = rng.pick(&[200, 1_000, 10_000, 30_000]);
        let timing = Timing {
            ttl: Duration::from_millis(ttl_ms),
        };
        let ttl = ttl_ms * MS;
        let flavor = rng.pick(&[Flavor::Redis, Flavor::Postgres, Flavor::ZooKeeper]);
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
                Flavor::Postgres | Flavor::ZooKeeper => timing.op_timeout().as_nanos() as u64,
            },
            jitter: rng.pick(&[MS / 10, ttl / 100, ttl / 20]),
            // Up to a tick of ZooKeeper's default 2 s past a 10-s session, and more.
            expiry_lag: match flavor {
                Flavor::ZooKeeper => rng.pick(&[0, ttl / 20, ttl / 5, ttl / 2]),
                _ => 0,
            },
            churn: true,
            end: T0 + 40 * ttl,
            floor: std::env::var_os("RIMEFLAKE_LEASE_NO_FLOOR").is_none(),
        }
    }

    /// No faults and no churn, for the tests that script what happens.
    pub(super) fn quiet(flavor: Flavor, ttl_ms: u64) -> Config {
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
            expiry_lag: 0,
            churn: false,
            end: u64::MAX,
            floor: true,
        }
    }

    pub(super) fn ttl(&self) -> u64 {
        self.timing.ttl.as_nanos() as u64
    }
    pub(super) fn op_timeout(&self) -> u64 {
        self.timing.op_timeout().as_nanos() as u64
    }
    pub(super) fn ttl_ms(&self) -> u64 {
        self.timing.ttl.as_millis() as u64
    }
}

/// How one keeper call goes, when a test decides it: when it lands (`None`: never), and how
/// long after landing it is answered (`None`: never; the client times out).
#[derive(Clone, Copy, Debug)]
pub(super) struct Fate {
    pub(super) land_after: Option<u64>,
    pub(super) answer_after: Option<u64>,
}

/// A keeper call on its way.
pub(super) struct Call {
    /// The answer arrives then, or the client gives up then.
    pub(super) answer_at: u64,
    /// Whether an answer arrives (else the client sees an error).
    pub(super) answered: bool,
    /// What the server answered once the call landed, and whether the replicas its write must
    /// wait for acknowledged it.
    pub(super) slot: Arc<Mutex<Option<(bool, bool)>>>,
}

/// A reservation stored on the server, on its way back to the generator.
pub(super) struct Publish {
    /// When the save returns.
    pub(super) at: u64,
    pub(super) reserved: u64,
    /// The run's `losses` when the save was sent: a loss since, and it opens nothing.
    pub(super) losses: u64,
}

/// A process while it holds (or believes it may hold) the worker ID.
pub(super) struct Run {
    pub(super) keeper: KeeperState,
    /// When the keeper thread wakes next (the answer of a call on its way may come sooner).
    pub(super) keeper_at: u64,
    pub(super) call: Option<Call>,
    /// The keeper's last call failed: its next one connects first.
    pub(super) reconnect: bool,
    pub(super) store: RemoteStore,
    /// The state as last stored (answered).
    pub(super) stored: WorkerState,
    /// The fence: IDs up to `reserved` may be issued while it is open.
    pub(super) open: bool,
    pub(super) reserved: u64,
    /// The keeper told the generator the lease is lost (and not yet that it is back).
    pub(super) lost: bool,
    /// The deadline the keeper last told the generator (at start and at each success).
    pub(super) deadline: u64,
    /// The time unit open to IDs (`high` of the hot path): a later one opens only if it ends
    /// before `deadline`.
    pub(super) open_unit: u64,
    /// How many times the keeper told it so.
    pub(super) losses: u64,
    /// A stored reservation whose save has not returned to the generator yet.
    pub(super) publish: Option<Publish>,
    /// The last reservation write failed.
    pub(super) failed: bool,
    pub(super) last_unit: u64,
    pub(super) next_issue: u64,
    pub(super) next_reserve: u64,
    pub(super) ends_at: u64,
    /// Whether it ends by a crash (else it closes).
    pub(super) crash: bool,
    /// The state's write count when this process started.
    pub(super) start_writes: u64,
    /// The lease was taken by force and the keeper has not said so yet.
    pub(super) stolen: bool,
    /// The server forgot its lease or state while it ran: a save refused as moved is then the
    /// state gone, not a write of its own unrecognised.
    pub(super) forgotten: bool,
    /// Back after a loss, with or without another writer in between; not settled yet.
    pub(super) retaken: Option<bool>,
    /// Keeper call fates a test asked for, in order; how late the keeper wakes for its next
    /// call, if a test says.
    pub(super) fates: Vec<Fate>,
    pub(super) wake_late: Option<u64>,
    /// What the lease shares with its store: the server as last seen, and the replicas its
    /// writes wait for.
    pub(super) shared: Arc<crate::lease::remote::keeper::Shared>,
    /// The keeper saw another server: the next look of the reservation thread stores the state
    /// again, moved or not.
    pub(super) resave: bool,
}

pub(super) struct Proc {
    pub(super) name: String,
    pub(super) life: u32,
    pub(super) token: String,
    pub(super) run: Option<Box<Run>>,
    /// When an idle process tries to start.
    pub(super) retry_at: u64,
    /// Starting again on its worker ID after a lease back on another server (`World::rejoin`),
    /// until a start runs.
    pub(super) rejoining: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Tally {
    pub(super) runs: u64,
    pub(super) ids: u64,
    pub(super) starts: u64,
    /// Starts after another token held the worker ID.
    pub(super) takeovers: u64,
    pub(super) steals: u64,
    pub(super) lost_deadline: u64,
    pub(super) lost_not_ours: u64,
    pub(super) backs: u64,
    pub(super) went_on: u64,
    pub(super) stayed_failed: u64,
    pub(super) own_writes_found: u64,
    pub(super) landed_late: u64,
    pub(super) refused_saves: u64,
    /// Times the server forgot.
    pub(super) forgets: u64,
    /// Starts killed while they waited for their floor.
    pub(super) killed_in_wait: u64,
    /// Replicas promoted with the old primary lost, and with it left up (split brain).
    pub(super) promotions: u64,
    pub(super) splits: u64,
    /// Starts that found a copy stored on another server, and began above its floor.
    pub(super) stale_starts: u64,
    /// Writes the replicas did not acknowledge in time.
    pub(super) unacknowledged: u64,
    /// Saves refused because the lease came back on another server than the one it lapsed on.
    pub(super) refused_elsewhere: u64,
    /// Of those, the processes that started again on the worker ID (a fixed worker ID restarts
    /// in place, as `generator/restart.rs` does) and ran.
    pub(super) rejoined: u64,
}

impl Tally {
    pub(super) fn add(&mut self, o: &Tally) {
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
        self.promotions += o.promotions;
        self.splits += o.splits;
        self.stale_starts += o.stale_starts;
        self.unacknowledged += o.unacknowledged;
        self.refused_elsewhere += o.refused_elsewhere;
        self.rejoined += o.rejoined;
    }
}

/// What happens next in a run.
#[derive(Clone, Copy, Debug)]
pub(super) enum Ev {
    Keeper(usize),
    Publish(usize),
    Issue(usize),
    Reserve(usize),
    End(usize),
    Start(usize),
    Steal(u64),
    Forget(u64),
    Promote(u64),
}

pub(super) struct World {
    pub(super) cfg: Config,
    pub(super) server: SimServer,
    pub(super) rng: Rng,
    pub(super) t: u64,
    pub(super) procs: Vec<Proc>,
    /// The checks, and what they remember of the run.
    pub(super) checks: Checks,
    /// Times of forced takeovers.
    pub(super) steals: Vec<u64>,
    /// Times the server forgets: everything (`true`, as `FLUSHALL`) or the worker's lease and
    /// state (its row deleted).
    pub(super) forgets: Vec<(u64, bool)>,
    /// `(from, until)`: name lookups hang, so a reconnect takes `reconnect_ns` and fails
    /// (open connections still work).
    pub(super) lookups_hang: Vec<(u64, u64)>,
    /// Times the replica is promoted: with the old primary lost (`false`), or left up for the
    /// processes running then (`true`, a split brain).
    pub(super) promotions: Vec<(u64, bool)>,
    /// How many IDs each token issued, and when it last did.
    pub(super) issued: BTreeMap<String, (u64, u64)>,
    pub(super) tally: Tally,
    /// What each keeper told its generator, and when.
    pub(super) told: Vec<(u64, String, News)>,
    pub(super) log: Vec<String>,
}

pub(super) type Step = std::result::Result<(), String>;

impl World {
    pub(super) fn new(cfg: Config, seed: u64) -> World {
        let server = SimServer::new(cfg.flavor, seed);
        {
            let mut s = server.lock();
            s.fail_pm = cfg.s_fail;
            s.expiry_lag = cfg.expiry_lag;
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
                rejoining: false,
            })
            .collect();
        World {
            cfg,
            server,
            rng: Rng::new(seed),
            t: T0,
            procs,
            checks: Checks::default(),
            steals: Vec::new(),
            forgets: Vec::new(),
            lookups_hang: Vec::new(),
            promotions: Vec::new(),
            issued: BTreeMap::new(),
            tally: Tally::default(),
            told: Vec::new(),
            log: Vec::new(),
        }
    }

    /// A run of `seed`: its configuration, outages, skew and steals all come from the seed.
    pub(super) fn random(seed: u64) -> World {
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
        // A replica: one whose acknowledgement writes wait for (Redis, a synchronous standby), or
        // an asynchronous standby; lagging by a little or by more than a write may wait, its
        // link cut now and then; promoted with the old primary lost, or (where writes wait for
        // it) left up for the processes running then.
        if rng.chance(400) {
            let acknowledges = rng.chance(700);
            let wait = w.cfg.op_timeout() / 2;
            let lag = rng.pick(&[MS / 10, wait / 2, 2 * wait, ttl]);
            let cuts = (0..rng.range(0, 2))
                .map(|_| {
                    let from = T0 + rng.range(0, 36 * ttl);
                    (from, from + rng.range(ttl / 10, 2 * ttl))
                })
                .collect();
            let mut s = w.server.lock();
            s.wait_ns = wait;
            s.replica = Some(Replica::new(acknowledges, lag, cuts));
            drop(s);
            if rng.chance(600) {
                let split = acknowledges && rng.chance(500);
                w.promotions
                    .push((T0 + rng.range(2 * ttl, 36 * ttl), split));
            }
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
             forgets {:?}, lookups hang {:?}, replica {:?}, promotions {:?}",
            w.cfg,
            w.steals,
            w.forgets,
            w.lookups_hang,
            w.server
                .lock()
                .replica
                .as_ref()
                .map(|r| (r.acknowledges, r.lag, r.cuts.clone())),
            w.promotions
        ));
        w
    }

    pub(super) fn log(&mut self, what: String) {
        self.log
            .push(format!("{:>12.3} ms  {what}", (self.t - T0) as f64 / 1e6));
    }

    pub(super) fn unit(&self) -> u64 {
        self.t / MS
    }

    /// How far a stored reservation may lead the clock in this model (ms): a quick restart
    /// resumes at most `ahead` past the clock (one unit above the reservation), and reserves
    /// `ahead` past that.
    pub(super) fn reach(&self) -> u64 {
        2 * self.cfg.ahead_ms + 1
    }

    pub(super) fn run(&mut self, i: usize) -> &mut Run {
        self.procs[i].run.as_mut().expect("a running process")
    }

    /// The next event, and when.
    pub(super) fn next_event(&self) -> Option<(u64, Ev)> {
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
        for &(at, _) in &self.promotions {
            consider(at, Ev::Promote(at));
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
    pub(super) fn run_until(&mut self, until: u64) -> Step {
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
                Ev::Promote(at) => {
                    let split = self.promotions.iter().any(|&(t, split)| t == at && split);
                    self.promotions.retain(|&(t, _)| t != at);
                    self.promote(split);
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
    pub(super) fn start(&mut self, i: usize, by_force: bool) -> std::result::Result<bool, String> {
        let ttl = self.cfg.ttl();
        let p = &mut self.procs[i];
        p.life += 1;
        p.token = format!("{}.{}", p.name, p.life);
        p.retry_at = self.t + self.rng.range(ttl / 4, ttl);
        let (name, token) = (p.name.clone(), p.token.clone());
        let mut conn = self.server.conn(&token, true);
        // The namespace's settings first, as `RemoteLease::acquire` does: the replicas every
        // write of this lease waits for.
        let backend = Backend::Redis("redis://sim".to_string());
        let settled =
            crate::lease::remote::replication::settle(&mut conn, &backend, NS, self.cfg.ahead_ms);
        let (view, settings, replicas) = match settled {
            Ok(s) => s,
            Err(e) => {
                self.log(format!("{name}: {token} cannot settle the namespace: {e}"));
                return Ok(false);
            }
        };
        let shared = Arc::new(crate::lease::remote::keeper::Shared::new(
            replicas,
            crate::lease::remote::keeper::Seen {
                identity: view.identity,
                lineage: view.lineage,
                epoch: settings.epoch,
            },
            self.cfg.ahead_ms,
        ));
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
        let store = store(conn, WORKER, &token, Arc::clone(&shared));
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
        // The floor of a start that may follow a lost state, or find a copy stored on another
        // server, as the generator's start applies it.
        let stale = found && store.loaded_stale();
        self.tally.stale_starts += u64::from(stale);
        let lead = usage
            .floor_lead_ms(found, stale, false)
            .filter(|_| self.cfg.floor);
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
        self.checks
            .start_above_every_stored_reservation(&token, first)?;
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
        self.tally.rejoined += u64::from(std::mem::take(&mut self.procs[i].rejoining));
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
            shared,
            resave: false,
        }));
        Ok(true)
    }

    /// The replica is promoted: the server is what it had, and the processes running go on
    /// against it (their connections follow the primary), or, in a split brain, against the
    /// old primary, left up. Either way each holder keeps issuing inside what it stored until
    /// its keeper or a write of its own notices.
    pub(super) fn promote(&mut self, split: bool) {
        let running: std::collections::BTreeSet<String> = self
            .procs
            .iter()
            .filter(|p| p.run.is_some())
            .map(|p| p.token.clone())
            .collect();
        self.server.lock().promote(split.then_some(running));
        for p in &mut self.procs {
            if let Some(run) = p.run.as_mut() {
                run.stolen = !run.lost;
                run.forgotten = true;
            }
        }
        self.tally.promotions += u64::from(!split);
        self.tally.splits += u64::from(split);
        self.log(format!(
            "the replica is promoted{}",
            if split {
                ", the old primary left up for the running processes"
            } else {
                ", the old primary lost"
            }
        ));
    }

    /// The server forgets everything, or the worker's lease and state. A holder keeps issuing
    /// inside what it stored until its keeper notices, as after a lease taken by force.
    pub(super) fn forget(&mut self, all: bool) {
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
    pub(super) fn saved(&mut self, token: &str, reserved: u64) -> Step {
        let s = self.server.lock();
        self.checks
            .save_answered_to_the_last_taker(&s, token, reserved)
    }

    /// A forced takeover by an idle process, if one is idle.
    pub(super) fn steal(&mut self) -> Step {
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
    pub(super) fn end(&mut self, i: usize) -> Step {
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
            self.checks.no_store_after_another_writer(
                &self.server.lock(),
                &token,
                run.start_writes,
                "its last state",
            )?;
            self.saved(&token, last.reserved_of(0).unwrap_or(0))?;
        }
        let mut conn = run.store.conn.lock().unwrap_or_else(|p| p.into_inner());
        let _ = conn.release(NS, WORKER, &token);
        Ok(())
    }

    /// Process `i`, whose lease came back on another server than the one it lapsed on (its
    /// store refuses every save), starts again on its worker ID at once, as a generator with a
    /// fixed worker ID does (`generator/restart.rs`): its lease released by its token (its
    /// keeper stopped first), then a fresh start with a new token, which finds the state stored
    /// on another server (or none) and pays the floor. A start that does not run yet (the lease
    /// held, the clock still far below the floor) is tried again later, as a later call does.
    pub(super) fn rejoin(&mut self, i: usize) -> Step {
        let p = &mut self.procs[i];
        let run = p.run.take().expect("running");
        let (name, token) = (p.name.clone(), p.token.clone());
        self.log(format!("{name}: {token} starts again on its worker ID"));
        let _ = run
            .store
            .conn
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .release(NS, WORKER, &token);
        drop(run);
        self.procs[i].rejoining = true;
        self.start(i, false).map(|_| ())
    }

    /// The keeper thread of process `i` acts: an answer arrives, or it wakes.
    pub(super) fn keeper(&mut self, i: usize) -> Step {
        let t = self.t;
        let cfg_jitter = self.cfg.jitter;
        let due = self.run(i).call.as_ref().is_some_and(|c| c.answer_at <= t);
        if let Some(call) = due.then(|| self.run(i).call.take()).flatten() {
            let landed = *call.slot.lock().unwrap_or_else(|p| p.into_inner());
            let outcome = match landed {
                Some((v, true)) if call.answered => Ok(v),
                Some((_, false)) if call.answered => {
                    self.tally.unacknowledged += 1;
                    Err(sim_error(
                        "keeper",
                        "not acknowledged by the replicas in time",
                    ))
                }
                None if call.answered => panic!("a keeper call was answered before it landed"),
                _ => Err(sim_error("keeper", "no answer in time")),
            };
            if matches!(outcome, Ok(true)) {
                self.look(i);
            }
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
    pub(super) fn send(&mut self, i: usize, acquire: bool) -> Call {
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
        let required = self.run(i).shared.replicas.get();
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
            let got = s.on_side(&token, |s| {
                let held = if acquire {
                    s.acquire(NS, WORKER, &token, ttl_ms)
                } else {
                    s.renew(NS, WORKER, &token, ttl_ms)
                };
                (held, s.acknowledged(required))
            });
            *answer.lock().unwrap_or_else(|p| p.into_inner()) = Some(got);
        });
        call
    }

    /// The keeper of process `i` looks at the server after a call that succeeded, as
    /// `Keeper::look` does: on another lineage, or with more replicas online than its writes
    /// wait for, it settles the namespace's settings again; on another server, its generator
    /// stores its state again at once.
    pub(super) fn look(&mut self, i: usize) {
        let (t, ahead) = (self.t, self.cfg.ahead_ms);
        let token = self.procs[i].token.clone();
        let view = self.server.lock().on_side(&token, |s| s.view());
        let run = self.run(i);
        let seen = run.shared.seen();
        if view.lineage != seen.lineage || view.replicas > run.shared.replicas.get() {
            let settings = self
                .server
                .lock()
                .on_side(&token, |s| s.settle(NS, ahead, &view));
            let run = self.run(i);
            run.shared.replicas.set(settings.replicas);
            run.shared
                .seen
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .lineage = view.lineage.clone();
        }
        let run = self.run(i);
        if run.shared.saw_server(&view.identity) {
            run.resave = true;
            run.next_reserve = run.next_reserve.min(t);
        }
    }

    /// The keeper tells the generator of process `i`.
    pub(super) fn tell(&mut self, i: usize, news: News) {
        let t = self.t;
        let p = &mut self.procs[i];
        let (name, token) = (p.name.clone(), p.token.clone());
        let run = p.run.as_mut().expect("running");
        match &news {
            News::Lost(why) => {
                run.shared.told_lost();
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
    pub(super) fn issue(&mut self, i: usize) -> Step {
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
        self.checks.nothing_issued_while_lost(&token, u, run.lost)?;
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
        let checks = &mut self.checks;
        checks.nothing_issued_past_the_deadline(&token, u, t, run.keeper.valid_until())?;
        {
            let mut s = self.server.lock();
            checks.lease_is_the_issuers(&mut s, &token, u, run.stolen)?;
            checks.no_issue_after_another_writer(&s, &token, run.start_writes, u, run.stolen)?;
        }
        checks.unit_issued_once(&token, u)?;
        run.last_unit = u;
        self.tally.ids += 1;
        let mine = self.issued.entry(token).or_default();
        *mine = (mine.0 + 1, t);
        Ok(())
    }

    /// The reservation thread of process `i`: moves the reservation ahead, as
    /// `extend_reservation` does (never while the lease is lost).
    pub(super) fn reserve(&mut self, i: usize) -> Step {
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
        if target <= run.reserved && run.open && !run.failed && !run.resave {
            return Ok(());
        }
        run.resave = false;
        let mut next = run.stored.clone();
        next.raise(0, target);
        match run.store.save(&next) {
            Ok(()) => {
                let reserved = next.reserved_of(0).expect("raised");
                self.checks.no_store_after_another_writer(
                    &self.server.lock(),
                    &token,
                    run.start_writes,
                    "a reservation",
                )?;
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
                let mut rejoin = false;
                if text.contains("another process stored its state") {
                    self.tally.refused_saves += 1;
                    if let Some(true) = run.retaken.take() {
                        self.tally.stayed_failed += 1;
                    }
                    self.checks.moved_only_over_another_write(
                        &self.server.lock(),
                        &token,
                        run.start_writes,
                        run.forgotten,
                        &text,
                    )?;
                } else if text.contains("the lease was lost") {
                    self.tally.refused_saves += 1;
                } else if text.contains("the lease came back on another server") {
                    self.tally.refused_elsewhere += 1;
                    rejoin = true;
                }
                self.log(format!("{name}: save failed: {text}"));
                if rejoin {
                    return self.rejoin(i);
                }
                Ok(())
            }
        }
    }

    /// The save of process `i` returns to its generator, which opens the fence to what it
    /// stored, as `extend_reservation` does: unless the lease was lost since the save was sent
    /// (even if it is back by now); then its next save, sent after, may.
    pub(super) fn publish(&mut self, i: usize) {
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

    pub(super) fn finish(&mut self) {
        let s = self.server.lock();
        self.tally.own_writes_found = s.own_moved;
        self.tally.landed_late = s.landed_late;
        drop(s);
        self.tally.runs = 1;
    }

    pub(super) fn report(&self, seed: u64, broken: &str) -> String {
        let tail = self.log.len().saturating_sub(60);
        format!(
            "seed {seed}: {broken}\n  replay: RIMEFLAKE_LEASE_SEED={seed} cargo test -p \
             rimeflake --features redis,postgres --lib testing::remote_sim -- --nocapture\n  \
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
    pub(super) fn scripted(flavor: Flavor, ttl_ms: u64) -> World {
        let w = World::new(Config::quiet(flavor, ttl_ms), 1);
        {
            let mut s = w.server.lock();
            let made = s.server_ns() - 3_600_000 * MS;
            s.marks.insert(NS.to_string(), (made, BTreeMap::new()));
        }
        w
    }

    /// `ttls` TTLs after the run began.
    pub(super) fn at(&self, ttls: f64) -> u64 {
        T0 + (ttls * self.cfg.ttl() as f64) as u64
    }

    /// Runs to `ttls` TTLs after the run began; fails the test with the log if an invariant
    /// broke.
    pub(super) fn go(&mut self, ttls: f64) {
        let until = self.at(ttls);
        if let Err(broken) = self.run_until(until) {
            panic!("{broken}\n{}", self.log.join("\n"));
        }
    }

    /// What the keeper of `token` told its generator, and when (in TTLs since the start).
    pub(super) fn told_to(&self, token: &str) -> Vec<(f64, News)> {
        let ttl = self.cfg.ttl() as f64;
        self.told
            .iter()
            .filter(|(_, t, _)| t == token)
            .map(|(at, _, news)| ((at - T0) as f64 / ttl, news.clone()))
            .collect()
    }

    /// How many IDs `token` issued, and when it last did (in TTLs since the start).
    pub(super) fn issued_by(&self, token: &str) -> (u64, f64) {
        let (n, last) = self.issued.get(token).copied().unwrap_or((0, T0));
        (n, (last - T0) as f64 / self.cfg.ttl() as f64)
    }
}
