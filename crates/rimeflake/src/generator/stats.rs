//! [`Stats`]: what a generator has done, and the counters behind it.

use crate::sync::{AtomicU64, CachePadded, Ordering::Relaxed};

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
    /// Calls that had to wait (for the clock to catch up, or for a reservation).
    pub waits: u64,
    /// Time spent in those waits, in ms.
    pub waited_ms: u64,
    /// Time units the counter moved ahead of the clock because a unit's sequence ran out,
    /// in ms: IDs borrowed from the future instead of spinning.
    pub borrowed_ms: u64,
    /// The clock-id in use now.
    pub clock_id: u64,
}

const SHARDS: usize = 8;

/// Lock-free counters. `issued` is striped over cache lines picked by the caller's stack
/// address, so threads seldom share one and the hot path pays an uncontended add.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    issued: [CachePadded<AtomicU64>; SHARDS],
    pub(crate) rollbacks: AtomicU64,
    pub(crate) largest_rollback_units: AtomicU64,
    pub(crate) bumps: AtomicU64,
    pub(crate) reuses: AtomicU64,
    pub(crate) waits: AtomicU64,
    pub(crate) waited_ns: AtomicU64,
    pub(crate) borrowed_units: AtomicU64,
}

impl Counters {
    #[inline]
    pub(crate) fn add_issued(&self, n: u64) {
        // Threads' stacks lie at least 64 KiB apart, so hashing the address of a local spreads
        // threads over the stripes without a thread-local lookup (costly in a shared library).
        let probe = 0u8;
        let addr = std::ptr::addr_of!(probe) as usize as u64;
        #[cfg(not(loom))]
        let i = ((addr >> 16).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 61) as usize;
        // loom replays each interleaving and needs the same atomics touched every time; its
        // threads' stacks move between replays, so the model uses one stripe.
        #[cfg(loom)]
        let i = {
            let _ = addr;
            0usize
        };
        self.issued[i % SHARDS].fetch_add(n, Relaxed);
    }

    pub(crate) fn issued(&self) -> u64 {
        self.issued.iter().map(|s| s.load(Relaxed)).sum()
    }

    pub(crate) fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Relaxed);
    }

    pub(crate) fn get(counter: &AtomicU64) -> u64 {
        counter.load(Relaxed)
    }
}
