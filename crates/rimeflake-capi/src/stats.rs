//! `rimeflake_generator_stats`: the core's `Stats` as C reads it. The struct and its filling are
//! written from the core's table of counters (`Stats::FIELDS`, whose order is this struct's,
//! growing only at its end) by `make contract`, and the core's contract test holds them to it.

use core_rimeflake::{LeaseState, Stats};

/// rimeflake_generator_stats.lease_state without a server lease.
pub const RIMEFLAKE_LEASE_NONE: u32 = 0;
/// rimeflake_generator_stats.lease_state while the server lease is held.
pub const RIMEFLAKE_LEASE_HELD: u32 = 1;
/// rimeflake_generator_stats.lease_state while the server lease is lost (no ID is issued).
pub const RIMEFLAKE_LEASE_LOST: u32 = 2;

/// The C value of a lease state.
fn lease_state(state: LeaseState) -> u32 {
    match state {
        LeaseState::Held => RIMEFLAKE_LEASE_HELD,
        LeaseState::Lost => RIMEFLAKE_LEASE_LOST,
        LeaseState::None => RIMEFLAKE_LEASE_NONE,
    }
}

// <contract:stats> generated from the core's tables by `make contract`: do not edit
/// Counters of a generator (rimeflake_stats). Fields a newer header adds come after these.
#[repr(C)]
#[derive(Clone, Copy, Default)]
#[allow(non_camel_case_types)]
pub struct rimeflake_generator_stats {
    /// IDs handed out.
    pub ids_issued: u64,
    /// Times the clock was seen to go back (each step back counts once).
    pub rollbacks: u64,
    /// The largest step back of the clock seen, in ms.
    pub largest_rollback_ms: u64,
    /// Switches to another clock-id after a large rollback.
    pub clock_id_bumps: u64,
    /// Of the switches, those to a lower clock-id whose IDs all lie in the past (unique, not
    /// increasing across it).
    pub clock_id_reuses: u64,
    /// Calls that had to wait (for the clock to catch up, or for a reservation).
    pub waits: u64,
    /// Time spent in those waits, in ms.
    pub waited_ms: u64,
    /// Time the counter moved ahead of the clock when a unit's sequence ran out, in ms.
    pub borrowed_ms: u64,
    /// The clock-id in use.
    pub clock_id: u64,
    /// On a server backend: the server's clock minus this host's when the lease was taken; 0
    /// otherwise, in ms.
    pub server_skew_ms: i64,
    /// Writes of the durable state (reservations, clock-id switches, start and close), failed ones
    /// included.
    pub reservation_writes: u64,
    /// Writes of the durable state that failed.
    pub reservation_write_failures: u64,
    /// Time spent in writes of the durable state (over the writes: their mean latency), in ns.
    pub reservation_write_ns: u64,
    /// While the server's lease is held: how long it stays valid without another renewal; 0
    /// otherwise, in ms.
    pub lease_remaining_ms: u64,
    /// Renewals of the server's lease answered, failed ones included.
    pub lease_renewals: u64,
    /// Renewals of the server's lease that failed (an error, or the server refused).
    pub lease_renewal_failures: u64,
    /// Times the server's lease was lost (its deadline passed unrenewed, or another process took
    /// it), however briefly.
    pub lease_losses: u64,
    /// The server lease: RIMEFLAKE_LEASE_NONE (no server leases the worker ID),
    /// RIMEFLAKE_LEASE_HELD or RIMEFLAKE_LEASE_LOST (no ID is issued until it is held again).
    pub lease_state: u32,
}

impl From<&Stats> for rimeflake_generator_stats {
    fn from(s: &Stats) -> Self {
        rimeflake_generator_stats {
            ids_issued: s.ids_issued,
            rollbacks: s.rollbacks,
            largest_rollback_ms: s.largest_rollback_ms,
            clock_id_bumps: s.clock_id_bumps,
            clock_id_reuses: s.clock_id_reuses,
            waits: s.waits,
            waited_ms: s.waited_ms,
            borrowed_ms: s.borrowed_ms,
            clock_id: s.clock_id,
            server_skew_ms: s.server_skew_ms,
            reservation_writes: s.reservation_writes,
            reservation_write_failures: s.reservation_write_failures,
            reservation_write_ns: s.reservation_write_ns,
            lease_remaining_ms: s.lease_remaining_ms,
            lease_renewals: s.lease_renewals,
            lease_renewal_failures: s.lease_renewal_failures,
            lease_losses: s.lease_losses,
            lease_state: lease_state(s.lease),
        }
    }
}
// </contract:stats>
