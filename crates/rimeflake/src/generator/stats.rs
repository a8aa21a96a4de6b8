//! [`Stats`]: what a generator has done, and the counters behind it.

use crate::sync::{
    AtomicU64,
    Ordering::{AcqRel, Acquire, Relaxed},
};

/// Counters of one generator, read with [`Generator::stats`](crate::Generator::stats).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// IDs handed out.
    pub ids_issued: u64,
    /// Times the clock was seen to go back (each step back counts once).
    pub rollbacks: u64,
    /// The largest step back seen, in ms.
    pub largest_rollback_ms: u64,
    /// Switches to another clock-id after a large rollback.
    pub clock_id_bumps: u64,
    /// Of those, switches to a lower clock-id whose old IDs all lie in the past: IDs stay unique
    /// but do not increase across such a switch (forbidden by `strict_monotonic`).
    pub clock_id_reuses: u64,
    /// Calls that had to wait (for the clock to catch up, or for a reservation), counted once
    /// the wait has slept: a call whose interrupt hook stops it before then counts none.
    pub waits: u64,
    /// Time spent in those waits, in ms.
    pub waited_ms: u64,
    /// Time units the counter moved ahead of the clock because a unit's sequence ran out,
    /// in ms: IDs borrowed from the future instead of spinning.
    pub borrowed_ms: u64,
    /// The clock-id in use now.
    pub clock_id: u64,
    /// On a server backend: the server's clock minus this host's when the lease was taken, in
    /// ms (above 1 s it is also a warning); 0 otherwise.
    pub server_skew_ms: i64,
    /// Writes of the durable state: reservations moved ahead, clock-id switches, the write at
    /// start and the final write of `close` (failed ones included); 0 in memory.
    pub reservation_writes: u64,
    /// Of those, writes that failed.
    pub reservation_write_failures: u64,
    /// Time spent in those writes, in ns (divided by `reservation_writes`: the mean latency).
    pub reservation_write_ns: u64,
    /// Whether a server's lease is held now ([`LeaseState::None`] without a server lease).
    pub lease: LeaseState,
    /// While the lease is held: how long it stays valid without another renewal, in ms
    /// (`CLOCK_BOOTTIME`); 0 otherwise.
    pub lease_remaining_ms: u64,
    /// Renewals of the server's lease sent and answered (not the tries to take it back while
    /// lost).
    pub lease_renewals: u64,
    /// Of those, renewals that failed: an error, or the server refused.
    pub lease_renewal_failures: u64,
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
    pub(crate) fn timed_write<T>(&self, save: impl FnOnce() -> crate::Result<T>) -> crate::Result<T> {
        let started = crate::clock::monotonic_ns();
        let result = save();
        Self::add(&self.write_ns, crate::clock::monotonic_ns().saturating_sub(started));
        Self::add(&self.writes, 1);
        if result.is_err() {
            Self::add(&self.write_failures, 1);
        }
        result
    }
}
