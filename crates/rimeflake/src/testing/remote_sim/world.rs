//! The world of a run: the server, the processes and the faults a seed scheduled, and the loop
//! that runs their events in time order. The events that befall the whole world are here (a
//! forced takeover, a server that forgets, a replica promoted), with a run's end and its report
//! and the helpers of the tests that script a run; the processes' own events are in
//! `process.rs` (the generator and its store) and `keeper_thread.rs` (the keeper), what a run
//! simulates and counts in `scenario.rs`. An event that breaks a check ends the run with its
//! message.

use super::*;

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

    pub(super) fn log(&mut self, what: String) {
        self.log
            .push(format!("{:>12.3} ms  {what}", (self.t - T0) as f64 / 1e6));
    }

    pub(super) fn unit(&self) -> u64 {
        self.t / MS
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
