//! The hot path: one compare-and-swap on the counter, below the fence, when nothing unusual
//! happens; `None` hands every other case to the slow path ([`super::slow`]).
//!
//! The lease deadline costs it nothing per ID. IDs are issued from a clock reading in a time
//! unit that is *open*: the unit of `high`, the highest reading seen. Whoever first reads a
//! later unit (or an earlier one, the clock having stepped back) opens it only if the unit
//! ends, by this clock, before the deadline on `CLOCK_BOOTTIME` ([`Inner::unit_opens`]). Every
//! later reading in an open unit was taken before its end, so before the deadline; the first
//! reading past it finds a unit that does not open, whatever the keeper thread has done. The
//! deadline never moves back (the keeper raises it at each renewal), so an open unit stays
//! within it.
//!
//! With `random_sequence_start`, a unit the counter enters after an idle spell (the counter
//! short of the last value of the unit before) starts at an offset rather than at sequence 0:
//! drawn from the generator's random key and the unit, so every thread that enters the unit
//! draws the same one, and no state is shared. The offset only ever raises the first value
//! above what the counter would take at 0, and stays below what the fence and `max_drift`
//! allow for the call (it is cut to the room left, so it never makes a call fail that would
//! not at 0): uniqueness, the reservation and the lead keep their proofs. A unit entered while
//! busy (the counter at or past its start) starts where the counter is, so a saturated
//! generator never skips a value.

use super::stats::Counters;
use super::{CounterShape, Inner};
use crate::clock::Clock;
use crate::sync::Ordering::*;

impl<C: Clock> Inner<C> {
    /// The ID of counter value `c`: the worker bits inserted where the layout puts them.
    #[inline]
    pub(super) fn compose(&self, c: u64) -> u64 {
        let k = &self.shape;
        ((c & !k.low_mask) << k.worker_bits) | k.worker_part | (c & k.low_mask)
    }

    /// The hot path: commits `n` consecutive counter values and returns the first, or `None`
    /// when anything needs the slow path to decide (a large rollback, the lead or the fence
    /// reached, the clock outside the time field, the generator closed, forked or switching
    /// clock-ids).
    ///
    /// Always inlined: as a call of its own (what the compiler chose once the deadline check
    /// made it larger) it cost `next_id` about 3% (`make bench-hotpath`).
    #[inline(always)]
    pub(super) fn claim(&self, n: u64) -> Option<u64> {
        let k = &self.shape;
        let hot = &*self.hot;
        // `high` before the clock: a reading below it is then a real step back of the clock,
        // not a reading that another thread merely published first. The counter after the
        // clock, right before the compare-and-swap, so another thread seldom commits in between.
        let high = hot.high.load(Acquire);
        let since_epoch = self.clock.now_ms().wrapping_sub(k.epoch_ms);
        if since_epoch > k.max_span_ms {
            return None; // before the epoch (wrapped) or past the end of the time field
        }
        let now = if k.unit_ms == 1 {
            since_epoch
        } else {
            since_epoch / k.unit_ms
        };
        let mut cur = hot.counter.load(Acquire);
        let fence = hot.fence.load(Acquire);
        let cid_base = cur & k.cid_mask;
        if (fence ^ cur) & k.cid_mask != 0 {
            return None; // a clock-id switch is under way, or the generator is closed
        }
        let now_high = (cid_base >> k.seq_bits) | now;
        if (now_high ^ high) >> k.time_bits != 0 {
            // `high` is of another clock-id than the counter: a switch happened around our
            // reading, which may be from before it; the slow path re-reads and re-decides.
            return None;
        }
        if now_high != high {
            // A unit other than the open one: it opens only if it ends before the deadline.
            if !self.unit_opens(since_epoch) {
                return None;
            }
            if now_high > high {
                // A new highest reading. Losing this race only leaves `high` a unit low.
                let _ = hot.high.compare_exchange(high, now_high, Relaxed, Relaxed);
            } else {
                if high - now_high > k.drift_units {
                    return None; // a large rollback: the policy decides
                }
                // A small rollback: keep counting from the counter, so IDs stay increasing.
                self.note_rollback(high, now_high);
            }
        }
        let base = cid_base | (now << k.seq_bits);
        let limit = (base + k.drift_span).min(fence);
        loop {
            let first = if cur + 1 >= base {
                cur + 1
            } else if k.spread {
                k.unit_start(now, base, limit, n)
            } else {
                base
            };
            let last = first + (n - 1);
            if last > limit {
                return None; // the lead past the clock, or the reservation, is used up
            }
            match hot
                .counter
                .compare_exchange_weak(cur, last, AcqRel, Acquire)
            {
                Ok(_) => {
                    if first != cur + 1 {
                        self.note_skipped(first - cur - 1); // the counter caught up with the clock
                    } else if last >> k.seq_bits > (cur >> k.seq_bits).max(now_high) {
                        self.note_borrowed(last >> k.seq_bits, (cur >> k.seq_bits).max(now_high));
                    }
                    return Some(first);
                }
                // Another thread won: retry with its counter, unless it switched clock-ids, in
                // which case our reading is stale and the slow path must re-read and re-decide.
                Err(actual) if (actual ^ cur) & k.cid_mask != 0 => return None,
                Err(actual) => cur = actual,
            }
        }
    }

    /// Whether the time unit of a clock reading `since_epoch` (ms since the start of the
    /// epoch's unit) ends before the lease deadline: the reading's unit may then issue IDs.
    /// Without a server lease every unit opens. Read once per new unit, not per ID.
    #[cold]
    #[inline(never)]
    pub(super) fn unit_opens(&self, since_epoch: u64) -> bool {
        let deadline = self.hot.deadline.load(Acquire);
        if deadline == super::NO_DEADLINE {
            return true;
        }
        let unit_ms = self.shape.unit_ms;
        // The reading has ms resolution: the unit's rest is at most this long.
        let left_ms = unit_ms - since_epoch % unit_ms;
        crate::clock::boottime_ns().saturating_add(left_ms.saturating_mul(1_000_000)) <= deadline
    }

    #[cold]
    fn note_skipped(&self, values: u64) {
        Counters::add(&self.stats.skipped, values);
    }

    #[cold]
    fn note_borrowed(&self, to: u64, from: u64) {
        Counters::add(&self.stats.borrowed_units, to - from);
    }
}

impl CounterShape {
    /// The first of `n` values a call takes in unit `unit`, whose first value is `base`, when
    /// the counter enters it after an idle spell: `base` raised by the unit's offset, cut so
    /// that the `n` values end within the unit (when they fit in one) and at most at `limit`,
    /// the fence or `max_drift`. So an offset never makes a call fail that would not at 0.
    #[cold]
    #[inline(never)]
    pub(super) fn unit_start(&self, unit: u64, base: u64, limit: u64, n: u64) -> u64 {
        let unit_end = base + ((1u64 << self.seq_bits) - 1);
        base + self.offset(unit, limit.min(unit_end).saturating_sub(base + (n - 1)))
    }

    /// The offset at which unit `unit` starts, uniform in `[0, min(room, max_sequence)]`. 0
    /// without `random_sequence_start`.
    fn offset(&self, unit: u64, room: u64) -> u64 {
        if !self.spread {
            return 0;
        }
        let max_sequence = (1u64 << self.seq_bits) - 1;
        // splitmix64's output for step `unit` from the key: uniform, and independent from unit
        // to unit for all a test of shards can see.
        let mut z = self
            .spread_key
            .wrapping_add(unit.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        // Scaled to the range by a multiply (Lemire's), not a modulo: uniform within 2^-64.
        ((u128::from(z) * u128::from(room.min(max_sequence) + 1)) >> 64) as u64
    }

    /// Where a counter set to `counter` at time unit `unit` (the start of a generator, a switch
    /// of clock-id) continues: raised by the unit's offset when it stands just below the unit's
    /// first value `base`, as the hot path raises a unit it enters. Never lower than `counter`.
    pub(super) fn spread_start(&self, counter: u64, base: u64, unit: u64) -> u64 {
        match counter.checked_add(1) {
            Some(next) if next == base => counter + self.offset(unit, u64::MAX),
            _ => counter,
        }
    }
}
