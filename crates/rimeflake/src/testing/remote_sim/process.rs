//! The simulated processes: each a [`Proc`], and while it holds (or believes it may hold) the
//! worker ID a [`Run`], with a real [`RemoteStore`] and a model of the generator. Their events:
//! a start (the lease, the namespace's settings, the floor, the first reservation), an end (a
//! crash or a close), a start again in place (`rejoin`), an ID issued behind the fence, the
//! reservation thread's saves and their return to the generator. They call the checks
//! (`checks.rs`) of the properties each step concerns. The keeper thread's events are in
//! `keeper_thread.rs`.

use super::*;

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

impl World {
    /// How far a stored reservation may lead the clock in this model (ms): a quick restart
    /// resumes at most `ahead` past the clock (one unit above the reservation), and reserves
    /// `ahead` past that.
    pub(super) fn reach(&self) -> u64 {
        2 * self.cfg.ahead_ms + 1
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

    /// A reservation `reserved` was stored for `token`, and answered.
    pub(super) fn saved(&mut self, token: &str, reserved: u64) -> Step {
        let s = self.server.lock();
        self.checks
            .save_answered_to_the_last_taker(&s, token, reserved)
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
}
