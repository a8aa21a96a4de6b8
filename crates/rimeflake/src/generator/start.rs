//! Starting a generator: taking the worker ID, loading its state, and the start-up rules
//! (docs/guarantees.md, "What survives what"), which make the first ID safe before it is issued.

use super::builder::Builder;
use super::floor::{Floor, Renewer};
use super::io_thread::{self, Io};
use super::skew::Skew;
use super::slow::free_clock_id;
use super::stats::Counters;
use super::{reach_units, CounterShape, Hot, Inner, RollbackPolicy, NO_DEADLINE};
use crate::backend::Storage;
use crate::clock::Clock;
use crate::contract::{Frontend, Setting};
use crate::error::{Error, ErrorKind, Result};
use crate::fork::{self, Lease, WipeOnFork};
use crate::layout::{mask, FieldOrder, Layout};
use crate::lease::remote::{keeper, LeaseTerms, RemoteLease};
use crate::lease::source::WORKER_ID_ENV;
use crate::lease::{self, LocalLease, WorkerSource};
use crate::state::{StateStore, WorkerState};
use crate::sync::{AtomicU64, CachePadded, Mutex};
use crate::warning::{Warning, WarningSink};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// What a generator keeps beside its hot words: its state, and the I/O thread that stores it.
/// No lock here is ever held across store I/O, and none is taken by the hot path.
pub(crate) struct Durable {
    /// `None` for an in-memory generator, whose state then lives only in `state`.
    pub(crate) store: Option<Arc<dyn StateStore>>,
    /// The state as last stored. Locked only to copy or replace it.
    state: std::sync::Mutex<WorkerState>,
    /// The last write's failure, until a write succeeds again.
    failure: std::sync::Mutex<Option<Error>>,
    /// The time a waiting call needs reserved (a batch may need more than the window); 0: none.
    pub(crate) need: std::sync::atomic::AtomicU64,
    /// The lease when no I/O thread owns it (with `refresh_every(ZERO)`): `close` frees it.
    pub(crate) lease: std::sync::Mutex<Option<fork::HeldLease>>,
    /// The I/O thread; absent in memory and with `refresh_every(ZERO)`, where the call that
    /// needs a write makes it itself.
    pub(crate) io: OnceLock<Io>,
    /// Set by a remote lease's keeper while the lease is lost (or may be): no ID is issued.
    pub(crate) lease_lost: std::sync::atomic::AtomicBool,
    /// How many times the lease was lost: a write that saw another count when it was sent
    /// never opens the fence, even if the lease is back by the time it is answered.
    pub(crate) lease_losses: std::sync::atomic::AtomicU64,
    /// The server's clock minus this host's at acquire, in ms (0 without a server).
    pub(crate) server_skew_ms: i64,
    /// Why, while `lease_lost` is set.
    pub(super) lease_error: std::sync::Mutex<Option<Error>>,
    /// Set by the keeper when, while lost, another process took the worker ID: a generator that
    /// leases any worker ID then starts again with another (`Generator::issue`).
    pub(crate) lease_taken: std::sync::atomic::AtomicBool,
    /// Set (for good) when the lease came back on another server than the one it lapsed on:
    /// nothing is stored under it again, and a generator with a fixed worker ID starts again on
    /// the same one (`Generator::issue`).
    pub(crate) lease_elsewhere: std::sync::atomic::AtomicBool,
    /// How far ahead of the counter the reservation is kept, in time units.
    pub(crate) ahead_units: u64,
    pub(crate) refresh: Duration,
    /// The next look of the I/O thread stores the state even where the reservation needs no
    /// move: the lease's server changed, and its copy of the state may be stale.
    pub(crate) resave: std::sync::atomic::AtomicBool,
}

impl Durable {
    /// A copy of the state as last stored.
    pub(crate) fn snapshot(&self) -> WorkerState {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// `state` is stored: it is the state from now on, and no failure stands.
    pub(crate) fn stored(&self, state: WorkerState) {
        *self.state.lock().unwrap_or_else(|p| p.into_inner()) = state;
        *self.failure.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    /// Changes the state without storing it (in memory, the reservations are what was issued).
    pub(crate) fn update(&self, f: impl FnOnce(&mut WorkerState)) {
        f(&mut self.state.lock().unwrap_or_else(|p| p.into_inner()));
    }

    pub(crate) fn failed(&self, e: Error) {
        *self.failure.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
    }

    pub(crate) fn failure(&self) -> Option<Error> {
        self.failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The lease error while a remote lease is lost, else `None`.
    pub(crate) fn lease_error(&self) -> Option<Error> {
        if !self.lease_lost.load(std::sync::atomic::Ordering::SeqCst) {
            return None;
        }
        self.lease_error
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .or_else(|| Some(Error::new(ErrorKind::Lease, "the worker lease is lost")))
    }

    /// Where the state lives, for messages.
    pub(crate) fn describe(&self) -> String {
        self.store.as_ref().map_or(String::new(), |s| s.describe())
    }
}

impl<C: Clock> Inner<C> {
    pub(super) fn start(
        r: &Builder<C>,
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<Arc<Self>> {
        let layout = r.layout.clone();
        let clock_ids = layout.max_clock_id() as usize + 1;
        let ahead_units = (r.reserve_ahead.as_millis() as u64)
            .div_ceil(layout.unit_ms())
            .max(1);
        let reach_ms = reach_units(
            (r.max_drift.as_millis() as u64) / layout.unit_ms(),
            ahead_units,
        )
        .saturating_mul(layout.unit_ms());
        let mut keeper = None;
        let mut server_skew_ms = 0;
        // On a server lease: what the namespace's record told of the worker ID, and where; and
        // what renews the lease, with how often, while a start waits before the keeper runs.
        let mut usage = None;
        let mut remote_store = None;
        let mut skew = Skew::default();
        let mut renewer: Option<Renewer> = None;
        let (worker_id, store, lease): (_, _, Option<Box<dyn Lease>>) = match &r.storage {
            Storage::Memory => {
                let worker_id = r.spelling().setting(Setting::WorkerId);
                let needs = |why: &str| {
                    Error::config(format!(
                        "{worker_id}: an in-memory generator needs a fixed worker ID{why}: give \
                         {worker_id}, or set {WORKER_ID_ENV}"
                    ))
                };
                match &r.worker {
                    Some(source) => {
                        match source.resolve_as(layout.max_worker_id(), r.spelling())? {
                            lease::LeaseRequest::Exact(id) => (id, None, None),
                            lease::LeaseRequest::Any { .. } => {
                                return Err(needs(" (leases live in the state directory)"))
                            }
                        }
                    }
                    None => return Err(needs("")),
                }
            }
            Storage::Local(dir) => {
                let request = lease_request(r.worker.as_ref(), &layout, r.spelling())?;
                let options = lease::LeaseOptions {
                    allow_network_fs: r.allow_network_fs,
                };
                let lease =
                    LocalLease::acquire_with(dir, &r.namespace, &layout, request, &options)?;
                let store: Arc<dyn StateStore> = Arc::new(lease.state_store(clock_ids)?);
                (lease.worker_id(), Some(store), Some(Box::new(lease)))
            }
            Storage::Remote(backend) => {
                let request = lease_request(r.worker.as_ref(), &layout, r.spelling())?;
                let terms = LeaseTerms {
                    ttl: r.lease_ttl,
                    check_settings: !r.quiet_durability,
                    reach_ms,
                    max_drift_ms: r.max_drift.as_millis() as u64,
                };
                let lease =
                    lease_off_thread(backend, &r.namespace, &layout, &request, terms, interrupted)?;
                for w in &lease.warnings {
                    WarningSink::emit(r.warnings.as_ref(), Warning::new(Warning::BACKEND, w));
                }
                keeper = Some(lease.keeper());
                server_skew_ms = lease.skew_ms;
                usage = Some((lease.usage, backend.to_string()));
                remote_store = Some(std::sync::Arc::clone(&lease.store));
                skew = Skew {
                    server_ms: Some(lease.skew_ms),
                    server: backend.to_string(),
                    last_holder: None,
                };
                renewer = Some((
                    Box::new(lease.renewer()),
                    lease.timing.renew_every().as_nanos() as u64,
                    lease.timing.valid_for().as_nanos() as u64,
                ));
                (
                    lease.worker_id,
                    Some(lease.state_store()),
                    Some(Box::new(lease)),
                )
            }
            Storage::Caller(store) => {
                match r
                    .worker
                    .as_ref()
                    .map(|w| w.resolve_as(layout.max_worker_id(), r.spelling()))
                {
                    Some(Ok(lease::LeaseRequest::Exact(id))) => (id, Some(Arc::clone(store)), None),
                    Some(Err(e)) => return Err(e),
                    _ => {
                        return Err(Error::config(format!(
                            "{}: a generator with its own state store needs a fixed worker ID",
                            r.spelling().setting(Setting::WorkerId)
                        )))
                    }
                }
            }
        };
        let shape = counter_shape(&layout, worker_id, r.max_drift, r.spread_key());
        let policy = r.policy.unwrap_or(RollbackPolicy::Wait);
        let max_wait_ns = r.max_wait.as_nanos().min(u64::MAX as u128) as u64;

        let loaded = match &store {
            Some(s) => s.load()?,
            None => None,
        };
        let found = loaded.is_some();
        skew.last_holder = remote_store.as_ref().and_then(|s| s.loaded_writer_host());
        let mut state = loaded.unwrap_or_else(|| WorkerState::fresh(clock_ids));
        if state.reserved.len() != clock_ids {
            return Err(Error::new(
                ErrorKind::State,
                format!(
                    "{} holds {} clock-ids but layout {} has {clock_ids}: it belongs to another layout",
                    store.as_ref().map_or(String::new(), |s| s.describe()),
                    state.reserved.len(),
                    layout.name()
                ),
            ));
        }
        if let Some(id) = r.start_above {
            state.raise_above_id(&layout, id, r.clock.now_ms())?;
        }
        if let Some((usage, backend)) = &usage {
            let stale = found && remote_store.as_ref().is_some_and(|s| s.loaded_stale());
            let lead_ms = usage.floor_lead_ms(found, stale, r.wait_at_takeover);
            if stale {
                WarningSink::emit(
                    r.warnings.as_ref(),
                    Warning::new(
                        Warning::BACKEND,
                        format!(
                            "worker ID {worker_id} of namespace {} on {backend}: its state was \
                             stored on another server than this one (a replica promoted since, \
                             a restart, a restore) or before `rimeflake state restored` was \
                             run, and may be a stale copy; IDs start {} ms ahead of the clock, \
                             above anything its last holder may have issued",
                            r.namespace,
                            lead_ms.unwrap_or(0)
                        ),
                    ),
                );
            }
            if !found && usage.used_before {
                WarningSink::emit(
                    r.warnings.as_ref(),
                    Warning::new(
                        Warning::BACKEND,
                        format!(
                            "worker ID {worker_id} of namespace {} on {backend} was used before, \
                             but the server has no state for it: the server lost it (FLUSHALL, \
                             a restart without persistence, an eviction, the row deleted, a \
                             restore from before its first use); IDs start {lead_ms} ms ahead \
                             of the clock, above anything its last holder may have issued",
                            r.namespace,
                            lead_ms = lead_ms.unwrap_or(0)
                        ),
                    ),
                );
            }
            if let Some(lead_ms) = lead_ms {
                let floor = Floor {
                    layout: &layout,
                    clock: &r.clock,
                    shape: &shape,
                    skew: &skew,
                    warnings: r.warnings.as_ref(),
                };
                // Where the worker's own state may be lost or stale, its last holder may have
                // used any clock-id; a namespace record younger than the reach alone (a new
                // namespace, or one lost with everything else) raises only the clock-id this
                // start runs on, so hosts behind it may still take other clock-ids.
                let all = found || usage.used_before;
                let ours = floor.raise(&mut state, lead_ms, server_skew_ms, all)?;
                // A floor of a larger reach than this holder's, or above a clock behind the
                // server's: first near enough for the start rules to resume above it, as after
                // a quick restart. What this host's clock is behind the server's is waited for
                // as after a rollback, within `max_wait`.
                let at = state.reserved_of(state.clock_id).unwrap_or(ours);
                let sent = keeper.as_ref().map_or(0, |(_, at)| *at);
                let within = shape.drift_units + ahead_units;
                let (sent, _) = floor.wait(
                    (at, ours),
                    within,
                    renewer.as_mut(),
                    sent,
                    max_wait_ns,
                    interrupted,
                )?;
                if let Some((_, at)) = keeper.as_mut() {
                    *at = sent;
                }
            }
        }
        let stats = Counters::default();
        let start = StartRules {
            layout: &layout,
            clock: &r.clock,
            shape: &shape,
            ahead_units,
            policy,
            strict: r.strict_monotonic,
            max_wait_ns,
            skew: &skew,
        };
        let (cid, counter, mut now) = start.starting_point(&state, &stats, interrupted)?;
        // A start at the beginning of a unit takes that unit's offset, as the hot path does.
        let counter = shape.spread_start(counter, layout.counter(cid, now, 0), now);
        if let Some((renew, _)) = renewer.as_mut().zip(keeper.as_ref()) {
            // On a server, a start that resumes more than `max_drift` ahead of the clock (above
            // a floor, or a reservation a holder stored just before) waits for the clock here,
            // renewing its lease, so the first ID is issued at once rather than making the
            // first call wait (and fail after a short `max_wait`).
            let first = (counter + 1) >> shape.seq_bits & layout.max_time();
            if first > now + shape.drift_units {
                let wait = Floor {
                    layout: &layout,
                    clock: &r.clock,
                    shape: &shape,
                    skew: &skew,
                    warnings: r.warnings.as_ref(),
                };
                let sent = keeper.as_ref().map_or(0, |(_, at)| *at);
                let (sent, later) = wait.wait(
                    (first, first),
                    shape.drift_units,
                    Some(renew),
                    sent,
                    max_wait_ns,
                    interrupted,
                )?;
                now = later;
                if let Some((_, at)) = keeper.as_mut() {
                    *at = sent;
                }
            }
        }
        let reserved_until = match store {
            Some(_) => {
                // Never more than a holder's reach past the clock (IDs wait for the clock past
                // `max_drift` anyway), and never below where the counter resumes.
                let resumed = counter >> shape.seq_bits & layout.max_time();
                (now.max(resumed) + ahead_units)
                    .min((now + reach_units(shape.drift_units, ahead_units)).max(resumed))
                    .min(layout.max_time())
            }
            None => layout.max_time(),
        };
        stats
            .epoch_start
            .store(counter, crate::sync::Ordering::Relaxed);
        state.clock_id = cid;
        state.closed_at = None; // a generator runs: a crash from here on leaves no "last ID"
        let mut fence_time = reserved_until;
        if let Some(s) = &store {
            state.raise(cid, reserved_until);
            fence_time = state.reserved_of(cid).unwrap_or(reserved_until);
            stats.timed_write(|| s.save(&state))?; // durable before the first ID
        }
        let hot = WipeOnFork::new(Hot {
            counter: CachePadded(AtomicU64::new(counter)),
            // On a server lease, a unit below the reading: the first reading then opens its unit
            // against the deadline, however long the start took since the lease was taken.
            high: CachePadded(AtomicU64::new(
                (cid << layout.time_bits())
                    | if keeper.is_some() {
                        now.saturating_sub(1)
                    } else {
                        now
                    },
            )),
            fence: AtomicU64::new(layout.counter(cid, fence_time, layout.max_sequence())),
            deadline: AtomicU64::new(keeper.as_ref().map_or(NO_DEADLINE, keeper::first_deadline)),
        });
        let fork_slot = fork::register(&hot.fence);
        let lease = lease.map(|l| fork_slot.hold_lease(l));
        let durable = store.is_some();
        let inner = Arc::new(Inner {
            hot,
            rollback_high: AtomicU64::new(u64::MAX),
            rollback_low: AtomicU64::new(u64::MAX),
            shape,
            clock: r.clock.clone(),
            stats,
            slow: Mutex::new(super::slow::Slow::default()),
            durable: Durable {
                store,
                state: std::sync::Mutex::new(state),
                failure: std::sync::Mutex::new(None),
                need: std::sync::atomic::AtomicU64::new(0),
                lease: std::sync::Mutex::new(None),
                io: OnceLock::new(),
                lease_lost: std::sync::atomic::AtomicBool::new(false),
                lease_losses: std::sync::atomic::AtomicU64::new(0),
                lease_error: std::sync::Mutex::new(None),
                server_skew_ms,
                lease_taken: std::sync::atomic::AtomicBool::new(false),
                lease_elsewhere: std::sync::atomic::AtomicBool::new(false),
                ahead_units,
                refresh: r.refresh_every,
                resave: std::sync::atomic::AtomicBool::new(false),
            },
            layout,
            worker_id,
            policy,
            strict_monotonic: r.strict_monotonic,
            max_wait_ns,
            pid: fork::pid(),
            fork_slot,
        });
        if let Some(k) = keeper {
            let holder: std::sync::Weak<dyn keeper::LeaseListener> = Arc::downgrade(&inner) as _;
            keeper::spawn(k, holder)?;
        }
        if durable && !inner.durable.refresh.is_zero() {
            io_thread::spawn(&inner, lease)?;
        } else {
            *inner
                .durable
                .lease
                .lock()
                .unwrap_or_else(|p| p.into_inner()) = lease;
        }
        Ok(inner)
    }
}

fn counter_shape(
    layout: &Layout,
    worker_id: u64,
    max_drift: Duration,
    spread_key: Option<u64>,
) -> CounterShape {
    let seq_bits = layout.sequence_bits() as u32;
    let unit_ms = layout.unit_ms();
    let drift_units = (max_drift.as_millis() as u64) / unit_ms;
    let low_bits = match layout.order() {
        FieldOrder::SequenceBelowWorker => layout.sequence_bits(),
        FieldOrder::SequenceAboveWorker => 0,
    };
    CounterShape {
        seq_bits,
        time_bits: layout.time_bits() as u32,
        cid_mask: mask(layout.clock_id_bits()) << (layout.time_bits() as u32 + seq_bits),
        // Units count from the start of the epoch's unit (Unix-aligned, as the peers count).
        epoch_ms: layout.unit_start_of_epoch_ms(),
        unit_ms,
        max_span_ms: (layout.max_time() + 1).saturating_mul(unit_ms) - 1,
        drift_units,
        drift_span: (drift_units << seq_bits) | mask(seq_bits as u8),
        low_mask: mask(low_bits),
        worker_bits: layout.worker_bits() as u32,
        worker_part: worker_id << low_bits,
        spread: spread_key.is_some(),
        spread_key: spread_key.unwrap_or(0),
    }
}

struct StartRules<'a, C> {
    layout: &'a Layout,
    clock: &'a C,
    shape: &'a CounterShape,
    ahead_units: u64,
    policy: RollbackPolicy,
    strict: bool,
    max_wait_ns: u64,
    /// The clocks around the start, for the error when none is free for this host's.
    skew: &'a Skew,
}

impl<C: Clock> StartRules<'_, C> {
    /// Where to start counting: `(clock_id, counter, now)`. Waits, in bounded slices, only when
    /// the clock is far behind the stored reservation and no clock-id is free for it.
    fn starting_point(
        &self,
        state: &WorkerState,
        stats: &Counters,
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<(u64, u64, u64)> {
        let started = self.clock.monotonic_ns();
        loop {
            let now = self.layout.time_of(self.clock.now_ms())?;
            let cid = state.clock_id;
            // How far IDs of this clock-id may have gone, and the counter to continue from: the
            // last ID itself after a clean close, else the whole reservation.
            let cid_shift = self.layout.time_bits() as u32 + self.shape.seq_bits;
            let (issued_to, resume) = match state.closed_at.filter(|&c| c >> cid_shift == cid) {
                Some(last) => (
                    Some(last >> self.shape.seq_bits & self.layout.max_time()),
                    last,
                ),
                None => {
                    let r = state.reserved_of(cid);
                    let resume =
                        self.layout
                            .counter(cid, r.unwrap_or(0), self.layout.max_sequence());
                    (r, resume)
                }
            };
            match issued_to {
                // Nothing issued under this clock-id can be at or after `now`: keep it.
                None => return Ok((cid, self.layout.counter_before(cid, now), now)),
                Some(r) if now > r => return Ok((cid, self.layout.counter_before(cid, now), now)),
                // A quick restart (after a burst, say): continue above the last ID (or the
                // reservation) rather than spend a clock-id.
                Some(r) if r - now <= self.shape.drift_units + self.ahead_units => {
                    return Ok((cid, resume, now));
                }
                Some(r) => {
                    // The clock is far behind what this worker ID reserved: a rollback across
                    // the restart, or a worker ID that moved from a host whose clock was ahead.
                    if self.policy == RollbackPolicy::BumpClock {
                        if let Some(next) = free_clock_id(state, self.layout, cid, now, self.strict)
                        {
                            Counters::add(&stats.bumps, 1);
                            if next < cid {
                                Counters::add(&stats.reuses, 1);
                            }
                            return Ok((next, self.layout.counter_before(next, now), now));
                        }
                    }
                    let behind_ms = (r - now) * self.layout.unit_ms();
                    let elapsed = self.clock.monotonic_ns().saturating_sub(started);
                    if self.policy == RollbackPolicy::Error || elapsed >= self.max_wait_ns {
                        return Err(Error::new(
                            ErrorKind::ClockRollback,
                            format!(
                                "at start-up the clock is {behind_ms} ms behind the reservation of \
                                 clock-id {cid} (more than max_drift plus the reservation window), \
                                 {}{}",
                                match self.policy {
                                    RollbackPolicy::Error => "and the rollback policy is Error".to_string(),
                                    _ => format!("no clock-id is free for it, and max_wait ({} ms) ran out", self.max_wait_ns / 1_000_000),
                                },
                                self.skew.hint(behind_ms)
                            ),
                        ));
                    }
                    if interrupted() {
                        return Err(Error::new(
                            ErrorKind::Interrupted,
                            "interrupted while waiting at start-up for the clock to reach the \
                             stored reservation",
                        ));
                    }
                    let slice = (self.layout.unit_ms() * 1_000_000).min(self.max_wait_ns - elapsed);
                    self.clock.sleep(Duration::from_nanos(slice));
                }
            }
        }
    }
}

/// [`RemoteLease::acquire`] on a thread of its own (see [`off_thread`]).
fn lease_off_thread(
    backend: &crate::backend::Backend,
    namespace: &str,
    layout: &Layout,
    request: &lease::LeaseRequest,
    terms: LeaseTerms,
    interrupted: &mut dyn FnMut() -> bool,
) -> Result<RemoteLease> {
    let (backend, namespace, layout, request) = (
        backend.clone(),
        namespace.to_string(),
        layout.clone(),
        request.clone(),
    );
    off_thread(interrupted, move || {
        RemoteLease::acquire(&backend, &namespace, &layout, &request, terms)
    })
}

/// Runs `f` (server calls, each bounded by its timeout) on a thread of its own while this one
/// waits in slices of 50 ms, asking `interrupted` between them, so a signal gets through (Ctrl-C
/// in Python) however many calls `f` makes. Interrupted, it returns at once and leaves `f` to
/// finish there; what `f` made is dropped there (a lease is released).
fn off_thread<T: Send + 'static>(
    interrupted: &mut dyn FnMut() -> bool,
    f: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    std::thread::Builder::new()
        .name("rimeflake-start".into())
        .spawn(move || {
            let _ = tx.send(f());
        })
        .map_err(|e| {
            Error::new(
                ErrorKind::Lease,
                format!("cannot start a thread to reach the server: {e}"),
            )
        })?;
    loop {
        match rx.recv_timeout(std::time::Duration::from_millis(50)) {
            Ok(out) => return out,
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                // `f` panicked: a bug of ours, told as one.
                return Err(Error::new(
                    ErrorKind::Lease,
                    "the thread reaching the server stopped without an answer",
                ));
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                if interrupted() {
                    return Err(Error::new(
                        ErrorKind::Interrupted,
                        "interrupted while reaching the server at start-up",
                    ));
                }
            }
        }
    }
}

/// What a storage that leases worker IDs (a state directory, a server) is asked for: the
/// worker source given, else any free worker ID of the layout.
fn lease_request(
    given: Option<&WorkerSource>,
    layout: &Layout,
    spelling: Frontend,
) -> Result<lease::LeaseRequest> {
    given
        .cloned()
        .unwrap_or(WorkerSource::LocalLease { range: None })
        .resolve_as(layout.max_worker_id(), spelling)
}
