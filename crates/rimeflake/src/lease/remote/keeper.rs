//! The keeper: one thread per remote lease that renews it, off the hot path, and shuts the
//! generator before the lease can have expired.
//!
//! A renewal that succeeds makes the lease valid for [`Timing::valid_for`] from when it was
//! *sent*, on `CLOCK_BOOTTIME` (which counts through a suspend, as the server's TTL does). When
//! that runs out without another success (the server is down, paused, or unreachable), or the
//! server says the lease is no longer ours, the keeper tells the generator, which shuts its hot
//! path and returns lease errors. It keeps trying: once the server gives the same worker ID back
//! to the same token, the generator goes on. Its state writes are conditional on the state's
//! version too: if another process held the worker ID in between and wrote its state, they fail,
//! and the store tells the generator ([`Shared::state_moved`]) as the keeper does when another
//! process holds the worker ID: one that leases any worker ID starts again on another, one with
//! a fixed worker ID stays shut. A lease that came back on another server than the one it lapsed
//! on stores nothing more either ([`Shared::state_elsewhere`]); a fixed worker ID then starts
//! again on the same worker ID, as a process restart would.
//!
//! Its decisions are [`KeeperState`], a state machine of times and answers that tests drive on
//! a simulated clock and server (`sim`); the thread only reads the clock, makes the calls and
//! sleeps. Each call runs on a thread of its own, so the deadline holds even when a call takes
//! longer than the connection's timeout (a tenth of the TTL): a reconnect first resolves the
//! server's name, which the Redis client does with no timeout.

use super::{connect, Conn, Proposal, RemoteLease, Replicas, Timing};
use crate::backend::Backend;
use crate::clock::boottime_ns;
use crate::error::{Error, ErrorKind, Result};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::*};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

/// What the keeper tells the generator that holds its lease (it listens for the lease's news).
pub(crate) trait LeaseListener: Send + Sync {
    /// The lease is lost, or may be: stop issuing IDs, answer with `why`.
    fn lease_lost(&self, why: Error);
    /// The lease is held again: go on.
    fn lease_back(&self);
    /// While lost, the server said another process holds the worker ID: it will not come back.
    fn lease_taken(&self) {}
    /// The lease came back on another server than the one it lapsed on (told before
    /// [`LeaseListener::lease_taken`]): its state there proves nothing, but the worker ID may
    /// be taken again here by a start that pays the floor, as a process restart would.
    fn lease_elsewhere(&self) {}
    /// The lease counts as held until this time (`CLOCK_BOOTTIME`, ns): told at start and after
    /// each successful call, before [`LeaseListener::lease_back`]. It never moves back. The generator
    /// checks it where it issues IDs, so that none is issued past it even before the keeper
    /// thread runs again (after a pause, say) to say the lease is lost.
    fn lease_deadline(&self, _boottime_ns: u64) {}
    /// A renewal (not a try to take the lease back while lost) was answered: `ok` when the
    /// server renewed it. For [`Stats`](crate::Stats) only.
    fn renewed(&self, _ok: bool) {}
    /// The lease is held on a server that is not the one last seen (a promoted replica, a
    /// restarted or restored server): the state there may be an older copy of this holder's,
    /// or another's. Store the state again now: the store's version check tells which.
    fn server_changed(&self) {}
}

/// What the keeper shares with its lease and the lease's store.
#[derive(Default)]
pub(crate) struct Shared {
    /// Set when the lease is released or forgotten: the keeper stops, without a server call.
    stop: AtomicBool,
    thread: OnceLock<std::thread::Thread>,
    /// The generator, once the keeper has started: the store tells it too.
    holder: OnceLock<Weak<dyn LeaseListener>>,
    /// The replica acknowledgements every write of the lease waits for.
    pub(crate) replicas: Arc<Replicas>,
    /// The server as the lease last saw it: what every state write is tagged with.
    pub(crate) seen: Mutex<Seen>,
    /// The generator's `max_drift` (ms), for the namespace's settings when they are settled
    /// again.
    max_drift_ms: u64,
    /// How many times the keeper told the generator the lease is lost.
    losses: AtomicU64,
    /// `losses` when the last state write that was stored had been sent: below `losses`, the
    /// lease lapsed since, and no write has shown yet that nobody else wrote meanwhile.
    stored_after: AtomicU64,
    /// The server changed while the lease had lapsed (see [`Shared::saw_server`]): the state
    /// found here cannot show whether another process held the worker ID meanwhile.
    changed_while_lapsed: AtomicBool,
}

/// The server as a lease last saw it, and the namespace's restore epoch.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Seen {
    pub(crate) identity: String,
    pub(crate) lineage: String,
    pub(crate) epoch: u64,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("stop", &self.stop)
            .finish_non_exhaustive()
    }
}

impl Shared {
    pub(crate) fn new(replicas: Arc<Replicas>, seen: Seen, max_drift_ms: u64) -> Shared {
        Shared {
            replicas,
            seen: Mutex::new(seen),
            max_drift_ms,
            ..Shared::default()
        }
    }

    /// What the server was last seen as.
    pub(crate) fn seen(&self) -> Seen {
        self.seen.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The keeper tells the generator the lease is lost (called before it does).
    pub(crate) fn told_lost(&self) {
        self.losses.fetch_add(1, SeqCst);
    }

    /// The ticket of a state write sent now, for [`Shared::stored`].
    pub(crate) fn write_ticket(&self) -> u64 {
        self.losses.load(SeqCst)
    }

    /// A state write sent with `ticket` was stored: on its server, nobody wrote the state since
    /// this holder's last write there.
    pub(crate) fn stored(&self, ticket: u64) {
        self.stored_after.fetch_max(ticket, SeqCst);
    }

    /// The lease was lost since the last state write that was stored.
    fn lapsed(&self) -> bool {
        self.stored_after.load(SeqCst) < self.losses.load(SeqCst)
    }

    /// The server is seen as `identity` now; returns whether that is another than the one
    /// last seen. Another server while the lease has lapsed (lost, and no write stored since)
    /// is one the lease may come back on without the writes of whoever held the worker ID in
    /// between: they went to the server that was lost (a primary lost to a replica promoted
    /// before it had them, a server restarted without its last writes), and this holder's own
    /// older write found here says nothing of them. The state is then moved for good, as if
    /// another process had stored it ([`Shared::changed_while_lapsed`]).
    pub(crate) fn saw_server(&self, identity: &str) -> bool {
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        if seen.identity == identity {
            return false;
        }
        if self.lapsed() {
            self.changed_while_lapsed.store(true, SeqCst);
        }
        seen.identity = identity.to_string();
        true
    }

    /// The server changed while the lease had lapsed: no write of this lease's store may be
    /// stored again.
    pub(crate) fn changed_while_lapsed(&self) -> bool {
        self.changed_while_lapsed.load(SeqCst)
    }

    /// Another process wrote the worker ID's state (the store found it when a write was
    /// refused): the generator's picture of it is stale, as when the worker ID is held by
    /// another. It stops issuing now (`why`), and one that leases any worker ID starts again
    /// on another.
    pub(crate) fn state_moved(&self, why: Error) {
        if let Some(h) = self.holder.get().and_then(Weak::upgrade) {
            h.lease_lost(why);
            h.lease_taken();
        }
    }

    /// The server changed while the lease had lapsed ([`Shared::changed_while_lapsed`]): as
    /// [`Shared::state_moved`], but nobody is known to hold the worker ID here, so a generator
    /// with a fixed worker ID starts again on it (a fresh start, which pays the floor).
    pub(crate) fn state_elsewhere(&self, why: Error) {
        if let Some(h) = self.holder.get().and_then(Weak::upgrade) {
            h.lease_elsewhere();
            h.lease_lost(why);
            h.lease_taken();
        }
    }

    /// Stops the keeper (it exits at its next wake-up, which this brings forward).
    pub(crate) fn stop(&self) {
        self.stop.store(true, SeqCst);
        if let Some(t) = self.thread.get() {
            t.unpark();
        }
    }
}

/// A keeper not started yet: what it needs of its lease, taken before the lease moves on.
pub(crate) struct Keeper {
    backend: Backend,
    namespace: String,
    worker_id: u64,
    token: String,
    timing: Timing,
    shared: Arc<Shared>,
    holder: Weak<dyn LeaseListener>,
}

impl RemoteLease {
    /// The keeper of this lease, to start once the generator exists.
    pub(crate) fn keeper(&self) -> (Keeper, u64) {
        let k = Keeper {
            backend: self.backend.clone(),
            namespace: self.namespace.clone(),
            worker_id: self.worker_id,
            token: self.token.clone(),
            timing: self.timing,
            shared: Arc::clone(&self.keeper),
            holder: Weak::<Nobody>::new(),
        };
        (k, self.sent_boottime_ns)
    }
}

/// The deadline of a lease just taken, as its keeper counts it: what the generator starts with.
pub(crate) fn first_deadline((keeper, sent): &(Keeper, u64)) -> u64 {
    KeeperState::new(keeper.timing, *sent).valid_until()
}

/// The holder of a keeper not started yet.
struct Nobody;
impl LeaseListener for Nobody {
    fn lease_lost(&self, _: Error) {}
    fn lease_back(&self) {}
}

/// Starts `keeper` (with the send time of its lease's acquiring call) for the generator `holder`.
pub(crate) fn spawn((keeper, sent): (Keeper, u64), holder: Weak<dyn LeaseListener>) -> Result<()> {
    let _ = keeper.shared.holder.set(holder.clone());
    let k = Keeper { holder, ..keeper };
    std::thread::Builder::new()
        .name("rimeflake-lease".into())
        .spawn(move || k.run(sent))
        .map(|_| ())
        .map_err(|e| {
            Error::new(
                ErrorKind::Lease,
                format!("cannot start the lease keeper thread: {e}"),
            )
        })
}

/// What the keeper does next, as [`KeeperState::poll`] decides it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Next {
    /// Nothing to do until this time (on `CLOCK_BOOTTIME`, in ns; `u64::MAX`: until the call
    /// on its way is answered), or until that answer comes.
    Sleep(u64),
    /// Tell the generator; then ask again at once.
    Tell(News),
    /// Start a call to the server: take the worker ID back (`acquire`, while lost) or renew the
    /// lease. Its outcome goes to [`KeeperState::answered`]; ask again at once meanwhile, as the
    /// deadline does not wait for the answer.
    Call { acquire: bool },
}

/// What the keeper tells the generator that holds its lease (it listens for the lease's news).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum News {
    /// The lease is lost, or may be, for this reason: stop issuing IDs.
    Lost(String),
    /// The lease is held again: go on.
    Back,
}

/// The keeper's decisions, apart from its thread and its server, so that tests can drive them
/// on a simulated clock. Times are on `CLOCK_BOOTTIME`, in ns.
///
/// The lease counts as held until [`Timing::valid_for`] after the last successful call was
/// *sent*, whether or not a call is on its way then. A call is made every
/// [`Timing::renew_every`] after the last one was sent, once that one is answered (or failed):
/// a renewal while the lease is held, an acquire (same worker ID, same token) while it is lost.
#[derive(Clone, Debug)]
pub(crate) struct KeeperState {
    renew_every: u64,
    valid_for: u64,
    /// When the lease stops counting as held, unless a call succeeds first.
    valid_until: u64,
    /// When the last call was sent (the acquire that took the lease, at first).
    last_sent: u64,
    /// The generator was told the lease is lost, and not yet that it is back.
    lost: bool,
    /// A call is on its way (sent at `last_sent`): no other starts until it is answered.
    calling: bool,
    /// While lost, an acquire was refused: another process holds the worker ID.
    taken: bool,
}

impl KeeperState {
    /// The state right after the lease was taken by a call sent at `acquired_sent`.
    pub(crate) fn new(timing: Timing, acquired_sent: u64) -> KeeperState {
        let ns = |d: Duration| d.as_nanos() as u64;
        KeeperState {
            renew_every: ns(timing.renew_every()),
            valid_for: ns(timing.valid_for()),
            valid_until: acquired_sent + ns(timing.valid_for()),
            last_sent: acquired_sent,
            lost: false,
            calling: false,
            taken: false,
        }
    }

    /// Whether, while lost, the server refused to give the worker ID back: another process
    /// holds it.
    pub(crate) fn taken(&self) -> bool {
        self.taken
    }

    /// When the lease stops counting as held, unless a call succeeds first. Never moves back.
    pub(crate) fn valid_until(&self) -> u64 {
        self.valid_until
    }

    /// What to do at `now`. The deadline comes first: once it has passed without a success,
    /// the lease is lost, even while a call is on its way (a call may outlast its timeout: a
    /// reconnect resolves the server's name first). Then a call is due every `renew_every`
    /// after the last one was sent.
    pub(crate) fn poll(&mut self, now: u64) -> Next {
        if !self.lost && now >= self.valid_until {
            self.lost = true;
            return Next::Tell(News::Lost(format!(
                "the lease was not renewed in time (the server did not answer for {} ms)",
                (now - self.last_sent) / 1_000_000
            )));
        }
        if self.calling {
            return Next::Sleep(if self.lost {
                u64::MAX
            } else {
                self.valid_until
            });
        }
        let next = self.last_sent + self.renew_every;
        if now < next {
            // While held, wake for the deadline too, should it come before the next call.
            return Next::Sleep(if self.lost {
                next
            } else {
                next.min(self.valid_until)
            });
        }
        self.last_sent = now;
        self.calling = true;
        Next::Call { acquire: self.lost }
    }

    /// The outcome of the call [`poll`](Self::poll) asked for, answered at `now`: what to tell
    /// the generator, if anything. A success makes the lease valid from when the call was sent;
    /// a refusal while held means the lease is not ours; an error changes nothing (the deadline
    /// decides). A success answered after the validity it gives has run out (the process was
    /// paused, or the answer was slow) brings nothing back: the next call asks again.
    pub(crate) fn answered(&mut self, outcome: &Result<bool>, now: u64) -> Option<News> {
        self.calling = false;
        match outcome {
            Ok(true) => {
                self.valid_until = self.last_sent + self.valid_for;
                if !self.lost || now >= self.valid_until {
                    return None;
                }
                self.lost = false;
                self.taken = false;
                Some(News::Back)
            }
            Ok(false) if !self.lost => {
                self.lost = true;
                Some(News::Lost(
                    "the lease is no longer this process's (it expired, or its key or row was \
                     changed by someone else)"
                        .to_string(),
                ))
            }
            Ok(false) => {
                self.taken = true;
                None
            }
            Err(_) => None,
        }
    }
}

/// A call's outcome, with the connection it used (`None` when it must be opened again).
type Answer = Arc<Mutex<Option<(Option<Box<dyn Conn>>, Result<bool>)>>>;

impl Keeper {
    /// The thread: asks [`KeeperState`] what to do, does it, and sleeps in between. Each call
    /// runs on a thread of its own, so that the deadline holds however long a call takes.
    fn run(self, acquired_sent: u64) {
        let _ = self.shared.thread.set(std::thread::current());
        let keeper = Arc::new(self);
        let mut state = KeeperState::new(keeper.timing, acquired_sent);
        let mut conn: Option<Box<dyn Conn>> = None;
        let answer: Answer = Arc::default();
        let mut told_taken = false;
        let mut renewing = false;
        loop {
            if keeper.shared.stop.load(SeqCst) {
                return; // released: whatever a call on its way does, the release decides
            }
            let answered = answer.lock().unwrap_or_else(|p| p.into_inner()).take();
            let news = if let Some((used, outcome)) = answered {
                // After an error, reconnect at the next try; the deadline decides.
                conn = if outcome.is_ok() { used } else { None };
                if renewing && !keeper.tell(|h| h.renewed(matches!(outcome, Ok(true)))) {
                    return;
                }
                let news = state.answered(&outcome, boottime_ns());
                // The new deadline first: a generator told it is back must already have it.
                if matches!(outcome, Ok(true))
                    && !keeper.tell(|h| h.lease_deadline(state.valid_until()))
                {
                    return;
                }
                match news {
                    Some(news) => news,
                    // Told once; the keeper goes on trying, for a generator that cannot move.
                    None if state.taken() && !told_taken => {
                        told_taken = true;
                        if !keeper.tell(|h| h.lease_taken()) {
                            return;
                        }
                        continue;
                    }
                    None => continue,
                }
            } else {
                let now = boottime_ns();
                match state.poll(now) {
                    Next::Sleep(until) => {
                        std::thread::park_timeout(Duration::from_nanos(until.saturating_sub(now)));
                        continue;
                    }
                    Next::Tell(news) => news,
                    Next::Call { acquire } => {
                        renewing = !acquire;
                        Keeper::start_call(&keeper, conn.take(), acquire, &answer);
                        continue;
                    }
                }
            };
            // Back: a later refusal is news again.
            told_taken &= !matches!(news, News::Back);
            if matches!(news, News::Lost(_)) {
                keeper.shared.told_lost();
            }
            let told = keeper.tell(|h| match news {
                News::Lost(why) => h.lease_lost(keeper.error(why)),
                News::Back => h.lease_back(),
            });
            if !told {
                return;
            }
        }
    }

    /// Starts one call on a thread of its own, which leaves its outcome in `answer` and wakes
    /// the keeper.
    fn start_call(
        keeper: &Arc<Keeper>,
        conn: Option<Box<dyn Conn>>,
        acquire: bool,
        answer: &Answer,
    ) {
        let (k, slot, wake) = (
            Arc::clone(keeper),
            Arc::clone(answer),
            std::thread::current(),
        );
        let started = std::thread::Builder::new()
            .name("rimeflake-lease-call".into())
            .spawn(move || {
                let mut conn = conn;
                let outcome = k.call(&mut conn, acquire);
                *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some((conn, outcome));
                wake.unpark();
            });
        if let Err(e) = started {
            let e = Error::new(
                ErrorKind::Lease,
                format!("cannot start a lease keeper call: {e}"),
            );
            *answer.lock().unwrap_or_else(|p| p.into_inner()) = Some((None, Err(e)));
        }
    }

    /// One renewal (or, while lost, one try to take the worker ID back). On a new connection
    /// (which may reach another server: a failover, a virtual IP that moved) the server is
    /// looked at first, and after every success too.
    fn call(&self, conn: &mut Option<Box<dyn Conn>>, acquire: bool) -> Result<bool> {
        if conn.is_none() {
            let mut c = connect(&self.backend, self.timing)?;
            c.require(Arc::clone(&self.shared.replicas));
            self.look(&mut *c);
            *conn = Some(c);
        }
        let c = conn.as_mut().expect("connected above");
        let ttl_ms = self.timing.ttl.as_millis() as u64;
        let held = if acquire {
            let got = c.acquire(&self.namespace, self.worker_id, &self.token, ttl_ms)?;
            // The lease was released (`close`) while this call was on its way, and it may have
            // landed after the release: give it back, rather than hold it for a TTL.
            if got && self.shared.stop.load(SeqCst) {
                let _ = c.release(&self.namespace, self.worker_id, &self.token);
            }
            got
        } else {
            c.renew(&self.namespace, self.worker_id, &self.token, ttl_ms)?
        };
        if held {
            self.look(&mut **c);
        }
        Ok(held)
    }

    /// Looks at the server: on another lineage (a promoted replica), or with more replicas
    /// online than the lease's writes wait for, settles the namespace's settings again and
    /// waits for what they require from now on; on another server, tells the generator, which
    /// stores its state again. A look that fails changes nothing (the next one tries again).
    fn look(&self, c: &mut dyn Conn) {
        let Ok(view) = c.server() else { return };
        let seen = self.shared.seen();
        if view.lineage != seen.lineage || view.replicas > self.shared.replicas.get() {
            let ours = Proposal {
                max_drift_ms: self.shared.max_drift_ms,
                view: &view,
            };
            let Ok(settings) = c.settle_settings(&self.namespace, &ours) else {
                return;
            };
            self.shared.replicas.set(settings.replicas);
            let mut s = self.shared.seen.lock().unwrap_or_else(|p| p.into_inner());
            s.lineage = view.lineage.clone();
        }
        if self.shared.saw_server(&view.identity) {
            let _ = self.tell(|h| h.server_changed());
        }
    }

    /// Calls the generator, if it still exists; `false` when it does not (the keeper stops).
    fn tell(&self, f: impl FnOnce(&dyn LeaseListener)) -> bool {
        match self.holder.upgrade() {
            Some(h) => {
                f(&*h);
                true
            }
            None => false,
        }
    }

    fn error(&self, why: String) -> Error {
        Error::new(
            ErrorKind::Lease,
            format!(
                "worker ID {} of namespace {} on {}: {why}; no IDs are issued until it is held \
                 again",
                self.worker_id, self.namespace, self.backend
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_acquire_that_lands_after_the_release_gives_the_lease_back() {
        use crate::testing::remote_sim::{Flavor, SimServer};
        for flavor in [Flavor::Redis, Flavor::Postgres] {
            let server = SimServer::new(flavor, 1);
            let shared = Arc::<Shared>::default();
            let keeper = Keeper {
                backend: Backend::Memory, // not used: the call is given its connection
                namespace: "sim".into(),  // the simulated server's namespace
                worker_id: 7,
                token: "tok-a".into(),
                timing: Timing {
                    ttl: Duration::from_millis(1_000),
                },
                shared: Arc::clone(&shared),
                holder: Weak::<Nobody>::new(),
            };
            let mut conn: Option<Box<dyn Conn>> = Some(Box::new(server.conn("keeper", false)));
            // `close()` stopped the keeper and released while this acquire was on its way.
            shared.stop.store(true, SeqCst);
            assert!(keeper.call(&mut conn, true).unwrap());
            assert_eq!(
                server.lock().lease(7),
                None,
                "{flavor:?}: the lease stayed held by a released generator"
            );
        }
    }

    #[test]
    fn a_refused_acquire_while_lost_says_the_worker_id_was_taken() {
        let timing = Timing {
            ttl: Duration::from_millis(1_000),
        };
        let mut k = KeeperState::new(timing, 0);
        let ms = |m: u64| m * 1_000_000;
        assert_eq!(k.poll(ms(250)), Next::Call { acquire: false });
        // Refused while held: lost, but not yet known to be taken (it may have expired).
        assert!(matches!(
            k.answered(&Ok(false), ms(260)),
            Some(News::Lost(_))
        ));
        assert!(!k.taken());
        // An error while lost says nothing; a refused acquire does.
        assert_eq!(k.poll(ms(500)), Next::Call { acquire: true });
        assert_eq!(
            k.answered(&Err(Error::new(ErrorKind::Lease, "down")), ms(510)),
            None
        );
        assert!(!k.taken());
        assert_eq!(k.poll(ms(750)), Next::Call { acquire: true });
        assert_eq!(k.answered(&Ok(false), ms(760)), None);
        assert!(k.taken());
        // The other process let it go and it came back: no longer taken, until refused again.
        assert_eq!(k.poll(ms(1000)), Next::Call { acquire: true });
        assert_eq!(k.answered(&Ok(true), ms(1010)), Some(News::Back));
        assert!(!k.taken());
    }

    /// Another server seen while the lease is held, or after a write stored since its last
    /// loss, changes nothing for the store; seen while it has lapsed (lost, and no write stored
    /// since, the one in flight at the loss included), no write may be stored again.
    #[test]
    fn another_server_seen_while_the_lease_had_lapsed_moves_the_state_for_good() {
        let shared = Shared::default();
        assert!(shared.saw_server("a"));
        assert!(!shared.saw_server("a"));
        assert!(shared.saw_server("b"));
        assert!(!shared.changed_while_lapsed());
        let in_flight = shared.write_ticket();
        shared.told_lost();
        shared.stored(in_flight); // sent before the loss: proves nothing after it
        assert!(!shared.saw_server("b"));
        assert!(!shared.changed_while_lapsed());
        assert!(shared.saw_server("c"));
        assert!(shared.changed_while_lapsed());

        let shared = Shared::default();
        shared.told_lost();
        shared.stored(shared.write_ticket()); // back, and a write stored on "" since
        assert!(shared.saw_server("b"));
        assert!(!shared.changed_while_lapsed());
    }
}
