//! The keeper thread of each simulated process: it wakes (late, now and then), sends its calls
//! (`send` decides, from the seed's faults or a test's [`Fate`], when each lands and whether an
//! answer arrives before the client's timeout), looks at the server after a success, and tells
//! its generator the lease is lost or back.

use super::*;

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

impl World {
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
}
