//! What a run simulates and what it counts: its configuration ([`Config`]: drawn from the seed,
//! or quiet for the tests that script a run), the scenario a seed picks besides (`World::random`:
//! the server's skew and outages, steals, forgets, name lookups that hang, a replica and its
//! promotions, when each process first starts), and the tally of what happened ([`Tally`]).

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

impl World {
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
}
