//! Durable state: the [`StateStore`] trait, and what a generator keeps per (namespace, worker ID).
//!
//! The state is the current clock-id and, for every clock-id, the highest time it has reserved.
//! A generator never issues an ID past the reservation of its clock-id, so a restart (or a
//! successor on another host) that starts above the stored reservations cannot repeat an ID.

pub mod disk;
pub mod file;
pub mod hw;
pub mod record;

pub use file::{FileStore, LeaseGuard};

use crate::error::{Error, ErrorKind, Result};
use crate::layout::{Layout, Parts};
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

    /// Raises this state so that a generator resuming from it issues only IDs above `id` of
    /// `layout` ([`reserve_above_id`]), and moves it to `id`'s clock-id when it was on a lower
    /// one. A clean close's last ID below the raised reservation no longer says where to resume.
    ///
    /// # Errors
    /// As [`reserve_above_id`].
    pub(crate) fn raise_above_id(&mut self, layout: &Layout, id: u64, now_ms: u64) -> Result<()> {
        let parts = reserve_above_id(&mut self.reserved, layout, id, now_ms)?;
        self.clock_id = self.clock_id.max(parts.clock_id);
        let cid_shift = layout.time_bits() as u32 + layout.sequence_bits() as u32;
        if let Some(last) = self.closed_at {
            let time = last >> layout.sequence_bits() & layout.max_time();
            if self
                .reserved_of(last >> cid_shift)
                .is_some_and(|r| time < r)
            {
                self.closed_at = None;
            }
        }
        Ok(())
    }
}

/// The time unit of `layout` that Unix ms `ms` falls in, or the last one once the layout's time
/// field has run out (a bound that nothing can pass).
///
/// # Errors
/// [`ErrorKind::TimeRange`] before the layout's epoch.
pub(crate) fn time_or_end(layout: &Layout, ms: u64) -> Result<u64> {
    if ms >= layout.expires_at_ms() {
        Ok(layout.max_time())
    } else {
        layout.time_of(ms)
    }
}

/// Raises `reserved` (one reservation per clock-id of `layout`) so that no ID above `id` can
/// have been issued under them, by the evidence that none was: `id`'s clock-id is reserved to
/// its time (or `now_ms`, whichever is later), lower clock-ids to the end of the time field
/// (their IDs are all below `id`, whatever their time), higher ones are left as they are.
/// `state reset --above-id` bounds a lost state this way, and a generator told to start above
/// an ID (`Builder::start_above`) raises the state it resumes from. Returns `id`'s parts.
///
/// # Errors
/// [`ErrorKind::InvalidId`] when `id` does not decode in `layout`; [`ErrorKind::Config`] when
/// no ID of `layout` lies above it (its time field ends at `id`'s, on its last clock-id).
pub(crate) fn reserve_above_id(
    reserved: &mut [Option<u64>],
    layout: &Layout,
    id: u64,
    now_ms: u64,
) -> Result<Parts> {
    let parts = layout.decode(id)?;
    let max_time = layout.max_time();
    let t = time_or_end(layout, parts.timestamp_ms.max(now_ms))?;
    if t == max_time && parts.clock_id == layout.max_clock_id() {
        return Err(Error::new(
            ErrorKind::Config,
            format!(
                "no ID of layout {} lies above {id}: it is on the last clock-id ({}) at the end of the \
                 time field ({}); is it an ID of this layout?",
                layout.name(),
                parts.clock_id,
                crate::utc::iso8601(layout.expires_at_ms())
            ),
        ));
    }
    let raise = |r: &mut Option<u64>, t: u64| *r = Some(r.map_or(t, |x| x.max(t)));
    for (c, r) in reserved.iter_mut().enumerate() {
        match (c as u64).cmp(&parts.clock_id) {
            std::cmp::Ordering::Less => raise(r, max_time),
            std::cmp::Ordering::Equal => raise(r, t),
            std::cmp::Ordering::Greater => {}
        }
    }
    Ok(parts)
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
