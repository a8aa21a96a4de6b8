//! The floor a start on a server stays above when the worker ID's state may have been lost or
//! be a stale copy (`Usage::floor_lead_ms` says how far ahead of the clock): every clock-id's
//! reservation raised to it, and the wait, renewing the lease, until the clock nears it.

use super::skew::Skew;
use super::CounterShape;
use crate::clock::Clock;
use crate::error::{Error, ErrorKind, Result};
use crate::layout::Layout;
use crate::state::WorkerState;
use crate::warning::{Warning, WarningSink};
use std::time::Duration;

/// What renews a server lease while a start waits (each call returns the renewal's send time
/// on `CLOCK_BOOTTIME`, `None` when the lease is no longer ours), how often (ns), and how long
/// after a renewal was sent the lease is surely still ours (ns).
pub(super) type Renewer = (Box<dyn FnMut() -> Result<Option<u64>> + Send>, u64, u64);

/// The floor a start on a server stays above, when the worker ID's state may have been lost.
pub(super) struct Floor<'a, C> {
    pub(super) layout: &'a Layout,
    pub(super) clock: &'a C,
    pub(super) shape: &'a CounterShape,
    /// The clocks around the start, for the error when the clock keeps it from starting.
    pub(super) skew: &'a Skew,
    /// Told when the wait a start plans is longer than `max_wait`, and why.
    pub(super) warnings: Option<&'a WarningSink>,
}

impl<C: Clock> Floor<'_, C> {
    /// Raises every clock-id's reservation to `lead_ms` past the clock (the lost holder may have
    /// used any of them): the others past the server's (this host's plus `skew_ms`), which a
    /// lost holder's clock agreed with as this one's should; the current one past the later of
    /// the server's clock and this host's, which its IDs follow. So a host whose clock is far
    /// ahead leaves the other clock-ids free for hosts with the right time, as a restart there
    /// would, and a host whose clock is behind starts above what a lost holder with the right
    /// time issued, waiting for its clock as after a rollback. A clean close's last ID below the
    /// floor no longer says where IDs stopped. Without `all`, only the current clock-id is
    /// raised. Returns the floor by this host's clock alone.
    pub(super) fn raise(
        &self,
        state: &mut WorkerState,
        lead_ms: u64,
        skew_ms: i64,
        all: bool,
    ) -> Result<u64> {
        let now_ms = self.clock.now_ms();
        let lead = lead_ms.div_ceil(self.layout.unit_ms());
        let ours = (self.layout.time_of(now_ms)? + lead).min(self.layout.max_time());
        let server_ms = now_ms.saturating_add_signed(skew_ms);
        let others = self
            .layout
            .time_of(server_ms)
            .map_or(ours, |t| (t + lead).min(self.layout.max_time()));
        let floor = ours.max(others);
        for cid in 0..state.reserved.len() as u64 {
            if cid == state.clock_id {
                state.raise(cid, floor);
            } else if all {
                state.raise(cid, others);
            }
        }
        let time_of = |c: u64| c >> self.shape.seq_bits & self.layout.max_time();
        if state.closed_at.is_some_and(|last| time_of(last) < floor) {
            state.closed_at = None;
        }
        Ok(ours)
    }

    /// Waits, in slices of at most 50 ms, until time unit `target` is within `within` units of
    /// the clock; returns when the last renewal that succeeded was sent, and the clock's unit
    /// then. Not a rollback: neither the rollback policy nor `max_wait` applies to the wait the
    /// first reading asks for up to `planned` (a floor of a holder's reach, or a reservation it
    /// stored, makes it at most `reserve_ahead`); what a clock behind the server's adds, or a
    /// clock that goes back meanwhile, gets `max_wait_ns` more (on the monotonic clock), and
    /// then the start fails as a rollback would.
    /// The lease is renewed by `renewer` meanwhile, as its keeper would (which starts only once
    /// the generator exists): a renewal that fails is tried again at the next slice, and the
    /// wait fails only once the last renewal that succeeded (sent at `sent`, on
    /// `CLOCK_BOOTTIME`) no longer vouches for the lease.
    pub(super) fn wait(
        &self,
        (target, planned): (u64, u64),
        within: u64,
        mut renewer: Option<&mut Renewer>,
        mut sent: u64,
        max_wait_ns: u64,
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<(u64, u64)> {
        let started = self.clock.monotonic_ns();
        let mut last_renewal = started;
        let mut until = None;
        loop {
            if let Some((renew, every, valid)) = renewer.as_mut() {
                if self.clock.monotonic_ns().saturating_sub(last_renewal) >= *every {
                    match renew() {
                        Ok(Some(at)) => {
                            sent = at;
                            last_renewal = self.clock.monotonic_ns();
                        }
                        Ok(None) => {
                            return Err(Error::new(
                                ErrorKind::Lease,
                                "the worker lease was lost while the start waited for the clock \
                                 to near the reservation it starts above",
                            ))
                        }
                        // Tried again at the next slice, while the lease is surely ours.
                        Err(e) if crate::clock::boottime_ns() >= sent + *valid => return Err(e),
                        Err(_) => {}
                    }
                }
            }
            let now = self.layout.time_of(self.clock.now_ms())?;
            if target <= now + within {
                return Ok((sent, now));
            }
            let left_ms = (target - now - within) * self.layout.unit_ms();
            // What the first reading plans for, and `max_wait` for a clock behind.
            let until = *until.get_or_insert_with(|| {
                let plan_ms = planned.saturating_sub(now + within) * self.layout.unit_ms();
                if plan_ms.saturating_mul(1_000_000) > max_wait_ns {
                    // A wait longer than max_wait is never silent.
                    WarningSink::emit(
                        self.warnings,
                        Warning::new(
                            Warning::BACKEND,
                            format!(
                                "the start waits {plan_ms} ms, longer than max_wait ({} ms), \
                                 for the clock to near the reservation it must start above \
                                 (a holder of this worker ID may have reserved that far ahead \
                                 of its clock: its max_drift plus reserve_ahead)",
                                max_wait_ns / 1_000_000
                            ),
                        ),
                    );
                }
                started
                    .saturating_add(plan_ms.saturating_mul(1_000_000))
                    .saturating_add(max_wait_ns)
            });
            if self.clock.monotonic_ns() >= until {
                return Err(Error::new(
                    ErrorKind::ClockRollback,
                    format!(
                        "at start-up the clock is {left_ms} ms short of nearing the reservation it \
                         starts above (behind the server's clock, or gone back while the start \
                         waited), and max_wait ({} ms) ran out{}",
                        max_wait_ns / 1_000_000,
                        self.skew.hint(left_ms)
                    ),
                ));
            }
            if interrupted() {
                return Err(Error::new(
                    ErrorKind::Interrupted,
                    "interrupted while waiting at start-up for the clock to near the reservation \
                     it starts above",
                ));
            }
            self.clock.sleep(Duration::from_millis(left_ms.min(50)));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::generator::reach_units;
    use crate::lease::remote::Usage;

    fn usage(age_ms: u64, used_before: bool) -> Usage {
        Usage {
            age_ms,
            used_before,
            reach_ms: 4_000,
        }
    }

    #[test]
    fn the_floor_applies_only_where_a_state_may_have_been_lost() {
        // Lost: marked as used, no state.
        assert_eq!(
            usage(60_000, true).floor_lead_ms(false, false, false),
            Some(4_000)
        );
        // A record younger than the reach: new, or lost with everything else.
        assert_eq!(
            usage(0, false).floor_lead_ms(false, false, false),
            Some(4_000)
        );
        assert_eq!(
            usage(3_000, false).floor_lead_ms(false, false, false),
            Some(1_000)
        );
        // Ordinary: old record and never used, or the state found.
        assert_eq!(usage(4_000, false).floor_lead_ms(false, false, false), None);
        assert_eq!(usage(0, true).floor_lead_ms(true, false, false), None);
        // Found, but maybe a stale copy (another server, or before a restore): the whole reach.
        assert_eq!(
            usage(60_000, true).floor_lead_ms(true, true, false),
            Some(4_000)
        );
        // Waiting at every takeover: the whole reach, whatever is found.
        assert_eq!(
            usage(60_000, true).floor_lead_ms(true, false, true),
            Some(4_000)
        );
        assert_eq!(
            usage(60_000, false).floor_lead_ms(false, false, true),
            Some(4_000)
        );
    }

    #[test]
    fn a_reach_is_max_drift_and_the_reservation_window() {
        assert_eq!(reach_units(2_000, 1_000), 3_000);
        assert_eq!(reach_units(0, 1), 1);
    }
}
