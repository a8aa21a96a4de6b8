//! Durable state: the [`StateStore`] trait, and what a generator keeps per (namespace, worker ID).
//!
//! The state is the current clock-id and, for every clock-id, the highest time it has reserved.
//! A generator never issues an ID past the reservation of its clock-id, so a restart (or a
//! successor on another host) that starts above the stored reservations cannot repeat an ID.

pub mod disk;
pub mod file;
pub mod hw;
pub mod record;
#[cfg(test)]
pub mod sim;

pub use file::{FileStore, LeaseGuard};
// The paths the core's tests use.
#[cfg(test)]
pub use sim::{Fault, SimDisk};

use crate::error::Result;
use std::fmt::Debug;

/// The durable state of one (namespace, worker ID).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorkerState {
    /// The clock-id in use.
    pub clock_id: u64,
    /// For each clock-id, the highest time (in the layout's units since its epoch) reserved
    /// under it; `None` for a clock-id never used.
    pub reserved: Vec<Option<u64>>,
    /// The packed counter (`clock_id:time:sequence`) of the last ID, written by a clean
    /// `close()`: a restart may continue right above it instead of above the reservation.
    /// `None` while a generator runs, and so after a crash.
    pub closed_at: Option<u64>,
}

impl WorkerState {
    /// A state on clock-id 0 with nothing reserved, for a layout with `clock_ids` clock-ids.
    pub fn fresh(clock_ids: usize) -> Self {
        WorkerState {
            clock_id: 0,
            reserved: vec![None; clock_ids],
            closed_at: None,
        }
    }

    /// The reservation of `clock_id`.
    pub fn reserved_of(&self, clock_id: u64) -> Option<u64> {
        self.reserved.get(clock_id as usize).copied().flatten()
    }

    /// Raises the reservation of `clock_id` to `time`; reservations never go down.
    pub fn raise(&mut self, clock_id: u64, time: u64) {
        let slot = &mut self.reserved[clock_id as usize];
        *slot = Some(slot.map_or(time, |r| r.max(time)));
    }
}

/// Where the state of one (namespace, worker ID) is kept durably.
pub trait StateStore: Send + Sync + Debug {
    /// The stored state, or `None` if nothing was ever stored.
    ///
    /// # Errors
    /// [`ErrorKind::State`](crate::ErrorKind::State) when the state cannot be read or is
    /// corrupt: never silently reset.
    fn load(&self) -> Result<Option<WorkerState>>;

    /// Stores `state`; returns only once it is durable (synced).
    ///
    /// # Errors
    /// [`ErrorKind::State`](crate::ErrorKind::State) when it is not durably stored.
    fn save(&self, state: &WorkerState) -> Result<()>;

    /// Where the state lives, for messages (a path, a key).
    fn describe(&self) -> String;
}
