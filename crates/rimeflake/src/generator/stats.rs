//! [`Stats`]: what a generator has done, the table of its fields that every front end renders
//! ([`Stats::FIELDS`]), and the counters behind it.
//!
//! A new counter is a row of `stats!` below and its reading in `Inner::stats` (both here): the
//! four front ends and `rimeflake serve`'s `/metrics` render the table, and the typed stubs and
//! the C struct are generated from it (`make contract`).

use super::Inner;
use crate::clock::Clock;
use crate::sync::{
    AtomicU64,
    Ordering::{AcqRel, Acquire, Relaxed},
};

/// Declares [`Stats`] and its table [`Stats::FIELDS`] from one list of rows: a field's doc, its
/// name and type, its unit, and its Prometheus family (type, name, help), optionally the name of
/// its C field. The rows' order is the C struct's, which only grows at its end.
macro_rules! stats {
    ($(
        $(#[doc = $doc:literal])*
        $field:ident: $ty:ty, $unit:ident, $kind:ident $metric:literal, $help:literal $(, c $c:literal)?;
    )*) => {
        /// Counters of one generator, read with [`Generator::stats`](crate::Generator::stats).
        /// `#[non_exhaustive]`: counters are added; read the fields, or walk
        /// [`Stats::FIELDS`].
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        #[non_exhaustive]
        pub struct Stats {
            $( $(#[doc = $doc])* pub $field: $ty, )*
        }

        impl Stats {
            /// Every field of [`Stats`], in order: what the front ends render (Python's dict,
            /// Node's object, C's struct, `/metrics`), so that a new counter reaches them all.
            pub const FIELDS: &'static [StatField] = &[$(
                StatField {
                    name: stringify!($field),
                    c_name: stats!(@c $field $($c)?),
                    unit: StatUnit::$unit,
                    kind: MetricKind::$kind,
                    metric: $metric,
                    help: $help,
                    get: |s: &Stats| StatValue::from(s.$field),
                },
            )*];
        }
    };
    (@c $field:ident) => { stringify!($field) };
    (@c $field:ident $c:literal) => { $c };
}

stats! {
    /// IDs handed out.
    ids_issued: u64, Count, Counter "rimeflake_ids_issued_total",
        "IDs handed out";
    /// Times the clock was seen to go back (each step back counts once).
    rollbacks: u64, Count, Counter "rimeflake_clock_rollbacks_total",
        "Times the clock was seen to go back (each step back counts once)";
    /// The largest step back seen, in ms.
    largest_rollback_ms: u64, Millis, Gauge "rimeflake_clock_rollback_largest_seconds",
        "The largest step back of the clock seen";
    /// Switches to another clock-id after a large rollback.
    clock_id_bumps: u64, Count, Counter "rimeflake_clock_id_switches_total",
        "Switches to another clock-id after a large rollback";
    /// Of those, switches to a lower clock-id whose old IDs all lie in the past: IDs stay unique
    /// but do not increase across such a switch (forbidden by `strict_monotonic`).
    clock_id_reuses: u64, Count, Counter "rimeflake_clock_id_reuses_total",
        "Of the switches, those to a lower clock-id whose IDs all lie in the past (unique, not increasing across it)";
    /// Calls that had to wait (for the clock to catch up, or for a reservation), counted once
    /// the wait has slept: a call whose interrupt hook stops it before then counts none.
    waits: u64, Count, Counter "rimeflake_waits_total",
        "Calls that had to wait (for the clock to catch up, or for a reservation)";
    /// Time spent in those waits, in ms.
    waited_ms: u64, Millis, Counter "rimeflake_wait_seconds_total",
        "Time spent in those waits";
    /// Time units the counter moved ahead of the clock because a unit's sequence ran out,
    /// in ms: IDs borrowed from the future instead of spinning.
    borrowed_ms: u64, Millis, Counter "rimeflake_borrowed_seconds_total",
        "Time the counter moved ahead of the clock when a unit's sequence ran out";
    /// The clock-id in use now.
    clock_id: u64, Count, Gauge "rimeflake_clock_id",
        "The clock-id in use";
    /// On a server backend: the server's clock minus this host's when the lease was taken, in
    /// ms (above 1 s it is also a warning); 0 otherwise.
    server_skew_ms: i64, Millis, Gauge "rimeflake_server_skew_seconds",
        "On a server backend: the server's clock minus this host's when the lease was taken; 0 otherwise";
    /// Writes of the durable state: reservations moved ahead, clock-id switches, the write at
    /// start and the final write of `close` (failed ones included); 0 in memory.
    reservation_writes: u64, Count, Counter "rimeflake_reservation_writes_total",
        "Writes of the durable state (reservations, clock-id switches, start and close), failed ones included";
    /// Of those, writes that failed.
    reservation_write_failures: u64, Count, Counter "rimeflake_reservation_write_failures_total",
        "Writes of the durable state that failed";
    /// Time spent in those writes, in ns (divided by `reservation_writes`: the mean latency).
    reservation_write_ns: u64, Nanos, Counter "rimeflake_reservation_write_seconds_total",
        "Time spent in writes of the durable state (over the writes: their mean latency)";
    /// While the lease is held: how long it stays valid without another renewal, in ms
    /// (`CLOCK_BOOTTIME`); 0 otherwise.
    lease_remaining_ms: u64, Millis, Gauge "rimeflake_lease_remaining_seconds",
        "While the server's lease is held: how long it stays valid without another renewal; 0 otherwise";
    /// Renewals of the server's lease sent and answered (not the tries to take it back while
    /// lost).
    lease_renewals: u64, Count, Counter "rimeflake_lease_renewals_total",
        "Renewals of the server's lease answered, failed ones included";
    /// Of those, renewals that failed: an error, or the server refused.
    lease_renewal_failures: u64, Count, Counter "rimeflake_lease_renewal_failures_total",
        "Renewals of the server's lease that failed (an error, or the server refused)";
    /// Times the server's lease was lost (its deadline passed unrenewed, or another process
    /// took it), however briefly: a loss and its end between two looks at [`Stats::lease`]
    /// still count here.
    lease_losses: u64, Count, Counter "rimeflake_lease_losses_total",
        "Times the server's lease was lost (its deadline passed unrenewed, or another process took it), however briefly";
    /// Whether a server's lease is held now ([`LeaseState::None`] without a server lease).
    lease: LeaseState, Lease, Gauge "rimeflake_lease_state",
        "The server lease's state: none (no server leases the worker ID), held, or lost (no ID is issued until it is held again)",
        c "lease_state";
}

/// One field of [`Stats`], as [`Stats::FIELDS`] lists it. `#[non_exhaustive]`.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct StatField {
    /// The field's name (Python's key; Node's is its camelCase).
    pub name: &'static str,
    /// The name of the C struct's field.
    pub c_name: &'static str,
    /// What it counts in.
    pub unit: StatUnit,
    /// Whether it only grows (a Prometheus counter) or moves both ways (a gauge).
    pub kind: MetricKind,
    /// Its Prometheus family, in seconds where the field is in ms or ns.
    pub metric: &'static str,
    /// One sentence on what it is: the family's help and every front end's doc line.
    pub help: &'static str,
    get: fn(&Stats) -> StatValue,
}

impl StatField {
    /// This field's value in `stats`.
    pub fn value(&self, stats: &Stats) -> StatValue {
        (self.get)(stats)
    }
}

/// What a field of [`Stats`] counts in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StatUnit {
    /// A number of things (or an ID).
    Count,
    /// Milliseconds (seconds in `/metrics`).
    Millis,
    /// Nanoseconds (seconds in `/metrics`).
    Nanos,
    /// A [`LeaseState`] (`/metrics` has a sample per state).
    Lease,
}

/// A Prometheus family's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MetricKind {
    /// Only grows.
    Counter,
    /// Moves both ways.
    Gauge,
}

impl MetricKind {
    /// `counter` or `gauge`, as the text format writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            MetricKind::Counter => "counter",
            MetricKind::Gauge => "gauge",
        }
    }
}

/// The value of one field of [`Stats`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StatValue {
    /// An unsigned count or duration.
    Unsigned(u64),
    /// A signed duration.
    Signed(i64),
    /// The state of the server's lease.
    Lease(LeaseState),
}

impl From<u64> for StatValue {
    fn from(v: u64) -> Self {
        StatValue::Unsigned(v)
    }
}

impl From<i64> for StatValue {
    fn from(v: i64) -> Self {
        StatValue::Signed(v)
    }
}

impl From<LeaseState> for StatValue {
    fn from(v: LeaseState) -> Self {
        StatValue::Lease(v)
    }
}

impl StatValue {
    /// The value as a number in its field's `/metrics` unit (seconds for ms and ns); a lease
    /// state is `None` (it has a sample per state).
    pub fn metric_value(self, unit: StatUnit) -> Option<f64> {
        let v = match self {
            StatValue::Unsigned(v) => v as f64,
            StatValue::Signed(v) => v as f64,
            StatValue::Lease(_) => return None,
        };
        Some(match unit {
            StatUnit::Millis => v / 1000.0,
            StatUnit::Nanos => v / 1e9,
            _ => v,
        })
    }
}

impl<C: Clock> Inner<C> {
    /// A snapshot of the counters: a field of each row of `stats!`.
    pub(super) fn stats(&self) -> Stats {
        let s = &self.stats;
        let unit = self.shape.unit_ms;
        let (lease, lease_remaining_ms) = self.lease_now();
        Stats {
            ids_issued: s.issued_now(&self.hot.counter),
            rollbacks: Counters::get(&s.rollbacks),
            largest_rollback_ms: Counters::get(&s.largest_rollback_units) * unit,
            clock_id_bumps: Counters::get(&s.bumps),
            clock_id_reuses: Counters::get(&s.reuses),
            waits: Counters::get(&s.waits),
            waited_ms: Counters::get(&s.waited_ns) / 1_000_000,
            borrowed_ms: Counters::get(&s.borrowed_units) * unit,
            clock_id: self.clock_id_of(self.hot.counter.load(Acquire)),
            server_skew_ms: self.durable.server_skew_ms,
            reservation_writes: Counters::get(&s.writes),
            reservation_write_failures: Counters::get(&s.write_failures),
            reservation_write_ns: Counters::get(&s.write_ns),
            lease_remaining_ms,
            lease_renewals: Counters::get(&s.renewals),
            lease_renewal_failures: Counters::get(&s.renewal_failures),
            lease_losses: self.durable.lease_losses.load(Acquire),
            lease,
        }
    }
}

/// Whether a generator holds a server's lease, in [`Stats::lease`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum LeaseState {
    /// No server leases the worker ID (fixed, local, or embedded lease).
    #[default]
    None,
    /// The lease is held and valid.
    Held,
    /// The lease is lost, or may be (not renewed in time, or the server refused it): no ID is
    /// issued until it is held again.
    Lost,
}

impl LeaseState {
    /// `"none"`, `"held"` or `"lost"`: the name the bindings and `rimeflake serve` use.
    pub fn as_str(self) -> &'static str {
        match self {
            LeaseState::None => "none",
            LeaseState::Held => "held",
            LeaseState::Lost => "lost",
        }
    }
}

/// Lock-free counters, none of them touched by the hot path on an ordinary call.
///
/// IDs issued are not counted one by one (an atomic add per ID would cost the hot path a second
/// locked instruction): within one clock-id the counter rises by exactly one per ID, except
/// where it jumps ahead to the clock, and those jumps (at most one per time unit under load) are
/// summed in `skipped`. So `issued = finished + (counter - epoch_start) - skipped`.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    /// IDs issued under earlier clock-ids.
    pub(crate) finished: AtomicU64,
    /// The counter's value when the current clock-id started.
    pub(crate) epoch_start: AtomicU64,
    /// Counter values passed over under the current clock-id.
    pub(crate) skipped: AtomicU64,
    pub(crate) rollbacks: AtomicU64,
    pub(crate) largest_rollback_units: AtomicU64,
    pub(crate) bumps: AtomicU64,
    pub(crate) reuses: AtomicU64,
    pub(crate) waits: AtomicU64,
    pub(crate) waited_ns: AtomicU64,
    pub(crate) borrowed_units: AtomicU64,
    pub(crate) writes: AtomicU64,
    pub(crate) write_failures: AtomicU64,
    pub(crate) write_ns: AtomicU64,
    pub(crate) renewals: AtomicU64,
    pub(crate) renewal_failures: AtomicU64,
    /// Odd while a clock-id switch rewrites the three words above `skipped`: readers retry.
    switching: AtomicU64,
}

impl Counters {
    /// IDs issued, given the counter now. Exact once the calls in flight have returned.
    pub(crate) fn issued(&self, counter: u64) -> u64 {
        let within = counter.wrapping_sub(self.epoch_start.load(Relaxed));
        (self.finished.load(Relaxed) + within).saturating_sub(self.skipped.load(Relaxed))
    }

    /// A clock-id switch: the old clock-id's IDs are finished; counting restarts at `counter`.
    pub(crate) fn new_epoch(&self, old_counter: u64, counter: u64) {
        self.switching.fetch_add(1, AcqRel);
        let done = self.issued(old_counter);
        self.finished.store(done, Relaxed);
        self.skipped.store(0, Relaxed);
        self.epoch_start.store(counter, Relaxed);
        self.switching.fetch_add(1, AcqRel);
    }

    /// IDs issued, read without a lock (a forked child must never wait on one its parent held):
    /// retried while a switch is under way, a bounded number of times, so a child whose parent
    /// forked mid-switch still gets an answer.
    pub(crate) fn issued_now(&self, counter: &AtomicU64) -> u64 {
        let mut issued = 0;
        for _ in 0..64 {
            let before = self.switching.load(Acquire);
            issued = self.issued(counter.load(Acquire) & !super::SEALED);
            if before % 2 == 0 && self.switching.load(Acquire) == before {
                break;
            }
            std::thread::yield_now();
        }
        issued
    }

    pub(crate) fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Relaxed);
    }

    pub(crate) fn get(counter: &AtomicU64) -> u64 {
        counter.load(Relaxed)
    }

    /// A write of the durable state (`save`), counted with its latency and outcome. Never on
    /// the hot path: the I/O thread, the start and the slow path make the writes.
    pub(crate) fn timed_write<T>(
        &self,
        save: impl FnOnce() -> crate::Result<T>,
    ) -> crate::Result<T> {
        let started = crate::clock::monotonic_ns();
        let result = save();
        Self::add(
            &self.write_ns,
            crate::clock::monotonic_ns().saturating_sub(started),
        );
        Self::add(&self.writes, 1);
        if result.is_err() {
            Self::add(&self.write_failures, 1);
        }
        result
    }
}
