//! [`reset`]: the way out of a corrupt state file, without repeating IDs.
//!
//! A corrupt file has lost the reservations that keep a restart from repeating IDs, so a fresh
//! state with nothing reserved is not safe: after a later rollback the generator would take a
//! clock-id whose old IDs lie ahead of the clock. A reset instead reserves *every* clock-id up
//! to a time no lost reservation can exceed: a reservation is written at most
//! `max_drift + reserve_ahead` ahead of the clock of the moment, and the file's modification
//! time is the clock of its last write. So every clock-id is reserved to the later of now and
//! that time, plus [`RESET_MARGIN_MS`].

use super::file::FileStore;
use super::{StateStore, WorkerState};
use crate::clock::system_now_ms;
use crate::error::{Error, ErrorKind, Result};
use crate::layout::Layout;
use crate::worker::{LeaseRequest, LocalLease};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

/// How far past its last write a lost file's reservations may reach: the default `max_drift`
/// (2 s) plus `reserve_ahead` (1 s), and a second to spare. Small enough that the next
/// generator starts within its `max_wait`; generators configured with larger windows must also
/// wait until the clock has passed their last ID before a reset.
pub const RESET_MARGIN_MS: u64 = 4_000;

/// Replaces the corrupt state of `worker_id` in `namespace` of `dir`: takes its lease (so no
/// process runs it meanwhile), moves the corrupt file aside (to `<file>.corrupt-<unix ms>`), and
/// writes a state with every clock-id reserved past anything the lost file can have held.
/// Returns where the corrupt file went.
///
/// # Errors
/// [`ErrorKind::Lease`] while a process holds the worker ID; [`ErrorKind::Config`] when the
/// state file is readable (nothing to reset) or `layout` is not the namespace's;
/// [`ErrorKind::State`] when the new state cannot be written.
pub fn reset(dir: &Path, namespace: &str, layout: &Layout, worker_id: u64) -> Result<PathBuf> {
    let lease = LocalLease::acquire(dir, namespace, layout, LeaseRequest::Exact(worker_id))?;
    let path = lease.state_path();
    let clock_ids = layout.max_clock_id() as usize + 1;
    match FileStore::open(path.clone(), clock_ids)?.load() {
        Ok(_) => {
            return Err(Error::config(format!(
                "{} is readable: there is nothing to reset (a reset only replaces a corrupt state)",
                path.display()
            )))
        }
        Err(e) if e.kind() == ErrorKind::State => {}
        Err(e) => return Err(e),
    }
    let written_ms = std::fs::metadata(&path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_millis() as u64);
    let now_ms = system_now_ms();
    let until_ms = now_ms.max(written_ms) + RESET_MARGIN_MS;
    let until = layout.time_of(until_ms.min(layout.expires_at_ms() - 1))?;
    let aside = PathBuf::from(format!("{}.corrupt-{now_ms}", path.display()));
    std::fs::rename(&path, &aside).map_err(|e| {
        Error::new(
            ErrorKind::State,
            format!("cannot move {} aside: {e}", path.display()),
        )
    })?;
    let mut state = WorkerState::fresh(clock_ids);
    for clock_id in 0..clock_ids as u64 {
        state.raise(clock_id, until);
    }
    FileStore::open(path, clock_ids)?.save(&state)?;
    lease.release();
    Ok(aside)
}
