//! [`Builder`] and [`RollbackPolicy`]: how a [`Generator`] is configured.

use super::Generator;
use crate::backend::{Backend, Storage};
use crate::clock::{Clock, SystemClock};
use crate::contract::{Frontend, Setting};
use crate::error::{Error, Result};
use crate::layout::{FieldOrder, Layout};
use crate::lease::WorkerSource;
use crate::settings::{self, Given};
use crate::state::StateStore;
use crate::warning::{Warning, WarningSink};

use crate::lease::remote::DEFAULT_LEASE_TTL;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// What a generator does when the clock goes back by more than `max_drift`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RollbackPolicy {
    /// Switch to another clock-id and restart the time at the clock's reading. IDs stay unique
    /// (and increasing, unless a clock-id is reused). Needs clock-id bits; when no clock-id is
    /// free for the reading, falls back to [`RollbackPolicy::Wait`]. The default when the
    /// layout has clock-id bits.
    BumpClock,
    /// Wait for the clock to catch up, at most `max_wait`, then fail with
    /// [`ErrorKind::ClockRollback`](crate::ErrorKind::ClockRollback). The default for layouts
    /// without clock-id bits.
    Wait,
    /// Fail at once with [`ErrorKind::ClockRollback`](crate::ErrorKind::ClockRollback).
    Error,
}

impl RollbackPolicy {
    /// The policy for a name: `bump`, `wait` or `error` (the names the bindings use). A
    /// binding calls [`Frontend::rollback_policy`] instead, whose error is in its own words.
    ///
    /// # Errors
    /// [`ErrorKind::Config`](crate::ErrorKind::Config) for any other name.
    pub fn from_name(name: &str) -> Result<Self> {
        // The C API's spelling is the one this function has always used.
        Frontend::C.rollback_policy(name)
    }
}

/// Configures a [`Generator`]; start with [`Generator::builder`].
///
/// What is not set here is resolved once, by [`Builder::build`], from the environment
/// (`RIMEFLAKE_LAYOUT`, `RIMEFLAKE_BACKEND`, `RIMEFLAKE_WORKER_ID`, `RIMEFLAKE_STATE_DIR`) and
/// then the defaults, in the order the repository's docs/configuration.md gives.
///
/// # Example
/// ```
/// use rimeflake::{Generator, Layout, RollbackPolicy};
/// use std::time::Duration;
///
/// let generator = Generator::builder()
///     .layout(Layout::twitter())
///     .worker_id(1)
///     .in_memory()
///     .rollback_policy(RollbackPolicy::Wait)
///     .max_wait(Duration::from_millis(100))
///     .build()?;
/// let (a, b) = (generator.next_id()?, generator.next_id()?);
/// assert!(a < b);
/// # Ok::<(), rimeflake::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Builder<C: Clock = SystemClock> {
    /// What the caller set; `build` resolves it into the four fields below.
    given: Given,
    pub(crate) warnings: Option<WarningSink>,
    pub(crate) layout: Layout,
    pub(crate) worker: Option<WorkerSource>,
    pub(crate) storage: Storage,
    pub(crate) namespace: String,
    pub(crate) clock: C,
    pub(crate) max_drift: Duration,
    pub(crate) max_wait: Duration,
    pub(crate) policy: Option<RollbackPolicy>,
    pub(crate) strict_monotonic: bool,
    pub(crate) random_sequence_start: bool,
    /// The key of the sequence offsets, fixed by a test (`Builder::test_spread_key`); `None`:
    /// drawn from the operating system at each start.
    spread_key: Option<u64>,
    pub(crate) reserve_ahead: Duration,
    pub(crate) refresh_every: Duration,
    pub(crate) allow_network_fs: bool,
    /// Set from the resolved settings at `build`.
    pub(crate) lease_ttl: Duration,
    /// Set from the resolved settings at `build`: no warnings about a server's durability.
    pub(crate) quiet_durability: bool,
    /// Set from the resolved settings at `build`: see [`Builder::wait_at_takeover`].
    pub(crate) wait_at_takeover: bool,
    /// See [`Builder::start_above`].
    pub(crate) start_above: Option<u64>,
}

/// The default `max_drift`: rollbacks up to this are absorbed by counting on (a leap second
/// fits). The front ends' table has it ([`Setting::MaxDrift`]).
pub const DEFAULT_MAX_DRIFT: Duration =
    Duration::from_millis(Setting::MaxDrift.info().default.millis());
/// The default `max_wait`: the longest any call waits before it fails ([`Setting::MaxWait`]).
pub const DEFAULT_MAX_WAIT: Duration =
    Duration::from_millis(Setting::MaxWait.info().default.millis());
/// The largest `max_drift` a generator may have: five minutes, the top of the table's range
/// ([`Setting::MaxDrift`]). A holder's stored reservation may lead its clock by `max_drift`
/// (plus `reserve_ahead`), which a successor of its worker ID must wait out where the state was
/// lost or may be stale; a larger rollback takes another clock-id.
pub(crate) const MAX_MAX_DRIFT: Duration =
    Duration::from_millis(match Setting::MaxDrift.info().range {
        Some((_, most)) => most,
        None => u64::MAX,
    });

impl Builder<SystemClock> {
    pub(crate) fn new() -> Self {
        Builder {
            given: Given::default(),
            warnings: None,
            layout: Layout::default(),
            worker: None,
            storage: Storage::Memory,
            namespace: String::new(),
            clock: SystemClock,
            max_drift: DEFAULT_MAX_DRIFT,
            max_wait: DEFAULT_MAX_WAIT,
            policy: None,
            strict_monotonic: false,
            random_sequence_start: false,
            spread_key: None,
            reserve_ahead: Duration::from_secs(1),
            refresh_every: Duration::from_millis(500),
            allow_network_fs: false,
            lease_ttl: DEFAULT_LEASE_TTL,
            quiet_durability: false,
            wait_at_takeover: false,
            start_above: None,
        }
    }
}

impl<C: Clock> Builder<C> {
    /// The bit layout (default: `$RIMEFLAKE_LAYOUT`, a preset or a layout spec, else
    /// [`Layout::default`]).
    pub fn layout(mut self, layout: Layout) -> Self {
        self.given.layout = Some(layout);
        self
    }

    /// A fixed worker ID (same as `.worker(WorkerSource::Fixed(id))`). Without one, the
    /// generator takes `$RIMEFLAKE_WORKER_ID`, else leases a free worker ID: the lowest of the
    /// state directory, or one from a random start on a server backend.
    /// `RIMEFLAKE_WORKER_ID=ordinal` takes a Kubernetes StatefulSet pod's ordinal:
    /// `$RIMEFLAKE_POD_INDEX` (the `apps.kubernetes.io/pod-index` label, given through the
    /// downward API), else the trailing `-<n>` of `$HOSTNAME` (`web-3` is 3).
    pub fn worker_id(mut self, worker_id: u64) -> Self {
        self.given.worker = Some(WorkerSource::Fixed(worker_id));
        self
    }

    /// Where the worker ID comes from.
    pub fn worker(mut self, source: WorkerSource) -> Self {
        self.given.worker = Some(source);
        self
    }

    /// Where worker leases and state live (default: `$RIMEFLAKE_BACKEND`, else
    /// [`Backend::Local`], the state directory). [`Backend::Memory`] is [`Builder::in_memory`].
    pub fn backend(mut self, backend: Backend) -> Self {
        self.given.backend = Some(backend);
        self
    }

    /// Receives the generator's warnings (such as [`Warning::CONTAINER`]), from `build` on.
    /// The core prints nothing: without a callback, warnings are dropped.
    ///
    /// # Example
    /// ```
    /// let generator = rimeflake::Generator::builder()
    ///     .worker_id(1)
    ///     .in_memory()
    ///     .on_warning(|w| eprintln!("rimeflake: warning: {}", w.message()))
    ///     .build()?;
    /// # Ok::<(), rimeflake::Error>(())
    /// ```
    pub fn on_warning(mut self, callback: impl Fn(&Warning) + Send + Sync + 'static) -> Self {
        self.warnings = Some(WarningSink(Arc::new(callback)));
        self
    }

    /// The front end this builder serves (default [`Frontend::Rust`]): configuration errors
    /// name settings as it spells them (`--worker`, `workerId`, `worker_id`). Each binding sets
    /// its own.
    ///
    /// # Example
    /// ```
    /// use rimeflake::frontend::Frontend;
    ///
    /// let e = rimeflake::Generator::builder().frontend(Frontend::Node).in_memory().build().unwrap_err();
    /// assert!(e.message().starts_with("workerId: "), "{e}");
    /// ```
    pub fn frontend(mut self, frontend: Frontend) -> Self {
        self.given.frontend = frontend;
        self
    }

    /// The clock (default: [`SystemClock`]); tests pass a [`ManualClock`](crate::ManualClock).
    pub fn clock<C2: Clock>(self, clock: C2) -> Builder<C2> {
        Builder {
            given: self.given,
            warnings: self.warnings,
            layout: self.layout,
            worker: self.worker,
            storage: self.storage,
            namespace: self.namespace,
            clock,
            max_drift: self.max_drift,
            max_wait: self.max_wait,
            policy: self.policy,
            strict_monotonic: self.strict_monotonic,
            random_sequence_start: self.random_sequence_start,
            spread_key: self.spread_key,
            reserve_ahead: self.reserve_ahead,
            refresh_every: self.refresh_every,
            allow_network_fs: self.allow_network_fs,
            lease_ttl: self.lease_ttl,
            quiet_durability: self.quiet_durability,
            wait_at_takeover: self.wait_at_takeover,
            start_above: self.start_above,
        }
    }

    /// Rollbacks up to this are absorbed by counting on from the last ID, and IDs may run this
    /// far ahead of the clock when a time unit's sequence runs out (default 2 s, at most five
    /// minutes). On a server backend it is the namespace's: the first generator of a namespace
    /// stores it, and one with another value is refused.
    pub fn max_drift(mut self, max_drift: Duration) -> Self {
        self.max_drift = max_drift;
        self
    }

    /// The longest any call waits (for the clock, or for a reservation) before it fails
    /// (default 5 s).
    pub fn max_wait(mut self, max_wait: Duration) -> Self {
        self.max_wait = max_wait;
        self
    }

    /// What to do when the clock goes back by more than `max_drift`.
    pub fn rollback_policy(mut self, policy: RollbackPolicy) -> Self {
        self.policy = Some(policy);
        self
    }

    /// Forbids reusing an older clock-id, so IDs of this generator always increase (at the cost
    /// of waiting when no higher clock-id is free).
    pub fn strict_monotonic(mut self, strict: bool) -> Self {
        self.strict_monotonic = strict;
        self
    }

    /// Starts each time unit's sequence at a random offset rather than 0 (default off), so that
    /// `id % N` spreads evenly over `N` shards, for any `N` up to 2^sequence_bits, at any rate:
    /// at low rates the sequence is otherwise 0 in nearly every ID, and `id % N` lands on few
    /// shards. IDs still strictly increase, and the offset never makes a call wait or fail that
    /// would not have at 0. What it costs, exactly: only a unit entered after an idle spell
    /// takes an offset `o` (uniform in `[0, 2^sequence_bits)`), and holds `2^sequence_bits - o`
    /// IDs of its own; a burst that fills it borrows the next unit, as a full unit always does,
    /// so a burst reaches `max_drift` at most `2^sequence_bits - 1` IDs sooner, and with
    /// `max_drift` 0 (no borrowing) the first unit of a burst holds `2^sequence_bits - o`. Units
    /// entered while busy take none, so the sustained rate is unchanged.
    ///
    /// A layout that puts the sequence above the worker (`sonyflake`) is refused: its low bits
    /// are the worker ID's, so `id % N` is the worker's whatever the sequence does.
    ///
    /// # Example
    /// ```
    /// let generator = rimeflake::Generator::builder()
    ///     .worker_id(1)
    ///     .in_memory()
    ///     .random_sequence_start(true)
    ///     .build()?;
    /// let (a, b) = (generator.next_id()?, generator.next_id()?);
    /// assert!(a < b);
    /// # Ok::<(), rimeflake::Error>(())
    /// ```
    pub fn random_sequence_start(mut self, on: bool) -> Self {
        self.random_sequence_start = on;
        self
    }

    /// Fixes the key the sequence offsets are drawn from, so that a test of their distribution
    /// runs the same every time.
    #[cfg(test)]
    pub(crate) fn test_spread_key(mut self, key: u64) -> Self {
        self.spread_key = Some(key);
        self
    }

    /// The key of a new generator's sequence offsets, `None` without `random_sequence_start`:
    /// drawn from the operating system at each start (a forked child's generator draws its own).
    pub(crate) fn spread_key(&self) -> Option<u64> {
        self.random_sequence_start.then(|| {
            self.spread_key.unwrap_or_else(|| {
                let mut key = [0u8; 8];
                crate::random::os_random(&mut key);
                u64::from_le_bytes(key)
            })
        })
    }

    /// Keeps no state at all: **not restart-safe**. A restarted process may repeat IDs if the
    /// clock was set back meanwhile; `close` waits until the clock has passed the last ID so an
    /// immediate rerun cannot. The same as `.backend(Backend::Memory)`.
    pub fn in_memory(self) -> Self {
        self.backend(Backend::Memory)
    }

    /// The state directory (default: `$RIMEFLAKE_STATE_DIR`, else `$XDG_STATE_HOME/rimeflake`
    /// or `~/.local/state/rimeflake`). An empty path is refused by `build`.
    pub fn state_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.given.state_dir = Some(dir.into());
        self
    }

    /// Keeps the state in `store` instead of the state directory. The worker ID must be fixed,
    /// and the caller must make sure no other generator uses it (the state directory's lease
    /// does that by itself). Simulations use it with a fault-injecting store.
    pub fn state_store(mut self, store: Arc<dyn StateStore>) -> Self {
        self.given.store = Some(store);
        self
    }

    /// Allows a state directory on a network or FUSE file system, where `flock` may not keep
    /// other hosts out (refused by default; `RIMEFLAKE_ALLOW_NETWORK_FS=1` allows it too).
    pub fn allow_network_fs(mut self, allow: bool) -> Self {
        self.allow_network_fs = allow;
        self
    }

    /// How long a lease on a remote backend (Redis, PostgreSQL) lasts without renewal (default:
    /// `$RIMEFLAKE_LEASE_TTL_MS`, else 10 s; from 200 ms to a day). It is renewed four times per TTL; the generator stops issuing IDs
    /// three quarters of a TTL after the last successful renewal was sent, and each server call
    /// may take a tenth of it (at most 2 s). A shorter TTL frees a crashed host's worker ID
    /// sooner; a longer one rides out longer server hiccups.
    pub fn lease_ttl(mut self, ttl: Duration) -> Self {
        self.given.lease_ttl = Some(ttl);
        self
    }

    /// On a server backend, whether every start stays above what a lost holder of the worker
    /// ID may have issued, even when the server has its state (default:
    /// `$RIMEFLAKE_WAIT_AT_TAKEOVER`, else off). Each clock-id's reservation is raised to the
    /// clock plus how far a holder's reservation may lead it (`max_drift` plus `reserve_ahead`),
    /// and the start waits until that is within `max_drift` of the clock: `reserve_ahead` (1 s
    /// by default) at every start.
    ///
    /// Without it, a start pays this only where the server shows the state may have been lost
    /// (no state for a worker ID used before, or a namespace record younger than that lead).
    /// A state restored from an older backup looks like the truth to the server: turn this on
    /// where servers are restored from backups.
    pub fn wait_at_takeover(mut self, on: bool) -> Self {
        self.given.wait_at_takeover = Some(on);
        self
    }

    /// The namespace: worker IDs and state are separate per namespace, and a namespace keeps
    /// one layout. Default: [`Layout::default_namespace`] of the layout (`default` for the
    /// `default` layout, `twitter` for `twitter`, ...), so generators of different layouts on
    /// one state directory never refuse each other.
    pub fn namespace(mut self, namespace: impl Into<String>) -> Self {
        self.given.namespace = Some(namespace.into());
        self
    }

    /// Every ID this generator issues is above `id`, an ID of its layout: the largest one
    /// another generator stored (a service it replaces, such as Meituan Leaf on the `twitter`
    /// layout), so IDs never go backwards across the switch. At start the worker ID's state is
    /// raised as `state reset --above-id` bounds a lost one: `id`'s clock-id reserved to its
    /// time, lower clock-ids for good. An `id` ahead of the clock is waited for as a reservation
    /// ahead of it is (within `max_drift` at once, else up to `max_wait`, or on a free higher
    /// clock-id). Once the clock has passed `id`, giving it again changes nothing.
    ///
    /// `build` fails with [`ErrorKind::InvalidId`](crate::ErrorKind::InvalidId) when `id` does
    /// not decode in the layout, and [`ErrorKind::Config`](crate::ErrorKind::Config) when no ID
    /// of the layout lies above it.
    ///
    /// # Example
    /// ```
    /// let leaf_id = 2_125_930_713_407_557_632; // made with `twitter` on 2026-11-26
    /// let generator = rimeflake::Generator::builder()
    ///     .layout(rimeflake::Layout::twitter())
    ///     .worker_id(7)
    ///     .in_memory()
    ///     .start_above(leaf_id)
    ///     .build()?;
    /// assert!(generator.next_id()? > leaf_id);
    /// # Ok::<(), rimeflake::Error>(())
    /// ```
    pub fn start_above(mut self, id: u64) -> Self {
        self.start_above = Some(id);
        self
    }

    /// How far ahead of the clock the durable reservation is kept (default 1 s).
    pub fn reserve_ahead(mut self, ahead: Duration) -> Self {
        self.reserve_ahead = ahead;
        self
    }

    /// How often the reservation is moved ahead (default every 500 ms). `Duration::ZERO` runs
    /// no thread: the reservation is then moved by the call that reaches it, which waits for
    /// the write (deterministic, for simulations; such a call is bounded only by the store).
    pub fn refresh_every(mut self, every: Duration) -> Self {
        self.refresh_every = every;
        self
    }

    /// Resolves what was not set (from the environment, then the defaults), validates the
    /// configuration, takes the worker ID and starts the generator.
    ///
    /// # Errors
    /// [`ErrorKind::Config`](crate::ErrorKind::Config) for an invalid option (a worker ID out of
    /// range, `BumpClock` on a layout without clock-id bits, an empty state directory, a bad
    /// environment variable, which the message names, ...), for a layout whose epoch lies in
    /// the future or whose time field has run out; and the errors of taking a worker ID and
    /// loading its state.
    pub fn build(self) -> Result<Generator<C>> {
        self.build_with(&mut || false)
    }

    /// [`Builder::build`], calling `interrupted` between the slices of any start-up wait (the
    /// clock far behind the stored reservation): when it returns `true`, building fails with
    /// [`ErrorKind::Interrupted`](crate::ErrorKind::Interrupted). Bindings use it to honour
    /// signals (Ctrl-C) during start-up, as with [`Generator::next_id_with`].
    ///
    /// # Errors
    /// As [`Builder::build`], and `Interrupted`.
    pub fn build_with(self, interrupted: &mut dyn FnMut() -> bool) -> Result<Generator<C>> {
        let resolved = settings::resolve(
            &self.given,
            &settings::process_env,
            &crate::lease::dirs::in_container,
        )?;
        for w in resolved.warnings {
            WarningSink::emit(self.warnings.as_ref(), w);
        }
        Builder {
            layout: resolved.layout,
            worker: resolved.worker,
            storage: resolved.storage,
            namespace: resolved.namespace,
            lease_ttl: resolved.lease_ttl,
            quiet_durability: resolved.quiet_durability,
            wait_at_takeover: resolved.wait_at_takeover,
            ..self
        }
        .start(interrupted)
    }

    fn start(self, interrupted: &mut dyn FnMut() -> bool) -> Result<Generator<C>> {
        let policy = match self.policy {
            Some(RollbackPolicy::BumpClock) if self.layout.clock_id_bits() == 0 => {
                let f = self.given.frontend;
                return Err(Error::config(format!(
                    "{}: {} needs clock-id bits, and layout {} has none; use {} or {}",
                    f.setting(Setting::OnRollback),
                    f.policy(RollbackPolicy::BumpClock),
                    self.layout.name(),
                    f.policy(RollbackPolicy::Wait),
                    f.policy(RollbackPolicy::Error),
                )));
            }
            Some(p) => p,
            None if self.layout.clock_id_bits() > 0 => RollbackPolicy::BumpClock,
            None => RollbackPolicy::Wait,
        };
        if self.max_drift > MAX_MAX_DRIFT {
            return Err(Error::config(format!(
                "{}: {} ms is more than a generator may have: at most {} ms (five minutes), \
                 since a successor of its worker ID would have to wait it out; a larger \
                 rollback moves to another clock-id",
                self.given.frontend.setting(Setting::MaxDrift),
                self.max_drift.as_millis(),
                MAX_MAX_DRIFT.as_millis()
            )));
        }
        if self.random_sequence_start && self.layout.order() == FieldOrder::SequenceAboveWorker {
            return Err(Error::config(format!(
                "{}: layout {} puts the worker ID below the sequence, so id % N is the worker's \
                 (for any N up to {}) whatever the sequence does: spread shards by worker ID \
                 there, or use a layout with the sequence below the worker",
                self.given.frontend.setting(Setting::RandomSequenceStart),
                self.layout.name(),
                self.layout.max_worker_id() + 1,
            )));
        }
        self.layout.check_epoch(self.clock.now_ms())?;
        Generator::start(
            Builder {
                policy: Some(policy),
                ..self
            },
            interrupted,
        )
    }

    /// Whose words configuration errors use.
    pub(crate) fn spelling(&self) -> Frontend {
        self.given.frontend
    }

    /// Whether the worker ID is leased (any free one will do), so a forked child may take
    /// another.
    pub(crate) fn takes_any_worker(&self) -> bool {
        matches!(self.storage, Storage::Local(_) | Storage::Remote(_))
            && matches!(self.worker, None | Some(WorkerSource::LocalLease { .. }))
    }
}

/// How each front end writes a rollback policy, beside the policy.
impl Frontend {
    /// How this front end writes `policy`: `RollbackPolicy::Wait` in Rust, `'wait'` in Python
    /// and Node, `"wait"` in C.
    ///
    /// # Example
    /// ```
    /// use rimeflake::frontend::Frontend;
    /// use rimeflake::RollbackPolicy;
    ///
    /// assert_eq!(Frontend::Python.policy(RollbackPolicy::BumpClock), "'bump'");
    /// assert_eq!(Frontend::Rust.policy(RollbackPolicy::Wait), "RollbackPolicy::Wait");
    /// ```
    pub const fn policy(self, policy: RollbackPolicy) -> &'static str {
        use RollbackPolicy as P;
        match (self, policy) {
            (Frontend::Rust, P::BumpClock) => "RollbackPolicy::BumpClock",
            (Frontend::Rust, P::Wait) => "RollbackPolicy::Wait",
            (Frontend::Rust, P::Error) => "RollbackPolicy::Error",
            (Frontend::C | Frontend::Cli, P::BumpClock) => "\"bump\"",
            (Frontend::C | Frontend::Cli, P::Wait) => "\"wait\"",
            (Frontend::C | Frontend::Cli, P::Error) => "\"error\"",
            (_, P::BumpClock) => "'bump'",
            (_, P::Wait) => "'wait'",
            (_, P::Error) => "'error'",
        }
    }

    /// The rollback policy `name` (`bump`, `wait` or `error`), with an error in this front
    /// end's words for any other name.
    ///
    /// # Errors
    /// [`ErrorKind::Config`](crate::ErrorKind::Config) for an unknown name.
    ///
    /// # Example
    /// ```
    /// use rimeflake::frontend::Frontend;
    ///
    /// let e = Frontend::Node.rollback_policy("bumpp").unwrap_err();
    /// assert_eq!(e.message(), "onRollback: unknown policy \"bumpp\"; use 'bump', 'wait' or 'error'");
    /// ```
    pub fn rollback_policy(self, name: &str) -> Result<RollbackPolicy> {
        match name {
            "bump" | "bump_clock" => Ok(RollbackPolicy::BumpClock),
            "wait" => Ok(RollbackPolicy::Wait),
            "error" => Ok(RollbackPolicy::Error),
            other => Err(Error::config(format!(
                "{}: unknown policy {other:?}; use {}, {} or {}",
                self.setting(Setting::OnRollback),
                self.names_of_policies()[0],
                self.names_of_policies()[1],
                self.names_of_policies()[2],
            ))),
        }
    }

    /// The names `rollback_policy` takes, as this front end writes them (Rust's own enum has
    /// no names to parse, so it lists the strings).
    fn names_of_policies(self) -> [&'static str; 3] {
        let f = match self {
            Frontend::Rust => Frontend::C,
            other => other,
        };
        [
            f.policy(RollbackPolicy::BumpClock),
            f.policy(RollbackPolicy::Wait),
            f.policy(RollbackPolicy::Error),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [Frontend; 5] = Frontend::ALL;

    #[test]
    fn policies_in_each_front_ends_words() {
        assert_eq!(
            ALL.map(|f| f.policy(RollbackPolicy::Error)).to_vec(),
            [
                "RollbackPolicy::Error",
                "\"error\"",
                "'error'",
                "'error'",
                "\"error\""
            ]
        );
    }

    #[test]
    fn unknown_policy_names_the_setting_and_the_choices() {
        let e = Frontend::Python.rollback_policy("Bump").unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Config);
        assert_eq!(
            e.message(),
            "on_rollback: unknown policy \"Bump\"; use 'bump', 'wait' or 'error'"
        );
        let e = Frontend::Rust.rollback_policy("x").unwrap_err();
        assert_eq!(
            e.message(),
            "rollback_policy: unknown policy \"x\"; use \"bump\", \"wait\" or \"error\""
        );
        for f in ALL {
            assert_eq!(f.rollback_policy("wait"), Ok(RollbackPolicy::Wait));
            assert_eq!(f.rollback_policy("bump"), Ok(RollbackPolicy::BumpClock));
            assert_eq!(f.rollback_policy("error"), Ok(RollbackPolicy::Error));
        }
    }

    fn config_error(b: crate::Builder) -> String {
        let e = b.build().unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Config, "{e}");
        e.message().to_string()
    }

    #[test]
    fn bump_on_a_layout_without_clock_ids_in_each_front_ends_words() {
        let on = |f: Frontend| {
            config_error(
                crate::Generator::builder()
                    .frontend(f)
                    .layout(crate::Layout::twitter())
                    .worker_id(1)
                    .in_memory()
                    .rollback_policy(RollbackPolicy::BumpClock),
            )
        };
        assert_eq!(
            on(Frontend::Python),
            "on_rollback: 'bump' needs clock-id bits, and layout twitter has none; use 'wait' \
             or 'error'"
        );
        assert_eq!(
            on(Frontend::Node),
            "onRollback: 'bump' needs clock-id bits, and layout twitter has none; use 'wait' \
             or 'error'"
        );
        assert_eq!(
            on(Frontend::Rust),
            "rollback_policy: RollbackPolicy::BumpClock needs clock-id bits, and layout twitter \
             has none; use RollbackPolicy::Wait or RollbackPolicy::Error"
        );
    }

    #[test]
    fn a_max_drift_above_five_minutes_is_refused_in_each_front_ends_words() {
        let drift = |f: Frontend, d: Duration| {
            crate::Generator::builder()
                .frontend(f)
                .worker_id(1)
                .in_memory()
                .max_drift(d)
                .build()
        };
        for (f, name) in [
            (Frontend::Rust, "max_drift"),
            (Frontend::Python, "max_drift_ms"),
            (Frontend::Node, "maxDriftMs"),
            (Frontend::C, "max_drift_ms"),
        ] {
            let e = drift(f, Duration::from_secs(600)).unwrap_err();
            assert_eq!(e.kind(), crate::ErrorKind::Config);
            assert_eq!(
                e.message(),
                format!(
                    "{name}: 600000 ms is more than a generator may have: at most 300000 ms \
                     (five minutes), since a successor of its worker ID would have to wait it \
                     out; a larger rollback moves to another clock-id"
                )
            );
            drift(f, MAX_MAX_DRIFT).unwrap().close().unwrap();
        }
    }

    #[test]
    fn worker_id_settings_in_each_front_ends_words() {
        let in_memory =
            |f: Frontend| config_error(crate::Generator::builder().frontend(f).in_memory());
        assert!(
            in_memory(Frontend::Cli)
                .starts_with("--worker: an in-memory generator needs a fixed worker ID: give --worker, or set RIMEFLAKE_WORKER_ID"),
            "{}",
            in_memory(Frontend::Cli)
        );
        assert!(in_memory(Frontend::Node).starts_with("workerId: "));
        assert!(in_memory(Frontend::C).starts_with("worker_id: "));

        let too_big = config_error(
            crate::Generator::builder()
                .frontend(Frontend::Cli)
                .worker_id(99_999)
                .in_memory(),
        );
        assert_eq!(
            too_big,
            "worker ID 99999 (from --worker) is above this layout's largest worker ID 1023"
        );
        let empty_dir = config_error(
            crate::Generator::builder()
                .frontend(Frontend::Node)
                .worker_id(1)
                .state_dir(""),
        );
        assert!(empty_dir.starts_with("stateDir: empty"), "{empty_dir}");
        let ttl = config_error(
            crate::Generator::builder()
                .frontend(Frontend::Python)
                .worker_id(1)
                .in_memory()
                .lease_ttl(std::time::Duration::from_millis(1)),
        );
        assert!(
            ttl.starts_with("lease_ttl_ms: 1 ms is out of range"),
            "{ttl}"
        );
    }
}
