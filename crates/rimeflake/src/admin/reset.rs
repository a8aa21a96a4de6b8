//! [`reset`]: the way out of a corrupt state file, without repeating IDs.
//!
//! A corrupt file has lost the reservations that keep a restart from repeating IDs, so a fresh
//! state with nothing reserved is not safe. A reset reserves every clock-id past a bound that
//! holds: the high-water record kept beside the state ([`hw`](crate::state::hw): raised before any
//! reservation passes it), or evidence the operator gives (the highest ID the worker issued, or
//! a time no ID of it reached). With neither, it refuses and says what it needs.
//!
//! It is crash-safe at every instant: the new state is written to a temporary file and synced,
//! the corrupt file is *copied* aside and synced, and only then is the new file renamed over
//! the corrupt one and the directory synced. Until that rename the corrupt file (which makes
//! every generator refuse) is at the path; after it, the new, synced state.

use crate::clock::system_now_ms;
use crate::error::{Error, ErrorKind, Result};
use crate::layout::Layout;
use crate::lease::local::{state_file_name, validate_namespace};
use crate::lease::namespace::{layout_from_record, read_layout_file};
use crate::lease::{LeaseRequest, LocalLease};
use crate::state::disk::{Disk, RealDisk};
use crate::state::file::{decode_file, encode, MAX_FILE_BYTES, SLOT_SIZE};
use crate::state::hw;
use crate::state::{reserve_above_id, time_or_end, WorkerState};
use std::path::{Path, PathBuf};

/// Evidence the operator gives when the high-water record cannot bound the lost state (or to
/// reserve further than it). Both may be given; the reset then honours each.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ResetOptions {
    /// An ID at least as high as every ID this worker ID has issued (the highest one in your
    /// logs or database). Its clock-id and time bound what the lost state can have reserved:
    /// its clock-id is reserved past its time, lower clock-ids to the end of the time field
    /// (nothing else bounds them), higher ones were never used.
    pub above_id: Option<u64>,
    /// A time, in Unix ms, that no ID of this worker ID has reached, on any clock-id: every
    /// clock-id is reserved up to it.
    pub reserve_until_ms: Option<u64>,
}

impl ResetOptions {
    /// These options with `above_id` (`#[non_exhaustive]`: start from `ResetOptions::default()`).
    pub fn above_id(mut self, id: Option<u64>) -> Self {
        self.above_id = id;
        self
    }

    /// These options with `reserve_until_ms`.
    pub fn reserve_until_ms(mut self, ms: Option<u64>) -> Self {
        self.reserve_until_ms = ms;
        self
    }
}

/// What a reset did.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ResetReport {
    /// The state file, now holding the new state.
    pub state_path: PathBuf,
    /// The copy of the corrupt file.
    pub aside: PathBuf,
    /// The new state's clock-id.
    pub clock_id: u64,
    /// The new reservations, in time units, per clock-id.
    pub reserved: Vec<Option<u64>>,
    /// The same, in Unix ms (the start of the last reserved unit).
    pub reserved_ms: Vec<Option<u64>>,
    /// What bounded the lost state: the high-water file, the evidence, or both.
    pub basis: String,
}

/// Replaces the corrupt state of `worker_id` in `namespace` of `dir`: takes its lease (so no
/// process runs it meanwhile), then replaces the state file. `layout` `None` reads the namespace's
/// layout from its layout file.
///
/// # Errors
/// [`ErrorKind::State`] when there is no state file (nothing to reset; no lock file is created
/// then), when neither the high-water file nor `options` bound the lost state, or when the new
/// state cannot be written (the corrupt file then stays in place); [`ErrorKind::Lease`] while a
/// process holds the worker ID; [`ErrorKind::Config`] for a bad namespace, a layout that is not
/// the namespace's, or a state file that is readable (nothing to reset).
pub fn reset(
    dir: &Path,
    namespace: &str,
    layout: Option<&Layout>,
    worker_id: u64,
    options: &ResetOptions,
) -> Result<ResetReport> {
    match reset_if_any(dir, namespace, layout, worker_id, options)? {
        Reset::Done(report) => Ok(report),
        Reset::NoStateFile { state_path } => Err(Error::new(
            ErrorKind::State,
            format!(
                "state file {} does not exist: nothing to reset (a reset only replaces a corrupt \
                 state file; check --worker, --namespace and the state directory)",
                state_path.display()
            ),
        )),
    }
}

/// What [`reset_if_any`] did. `#[non_exhaustive]`: match with a wildcard arm.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reset {
    /// The corrupt state was replaced.
    Done(ResetReport),
    /// The worker ID has no state file in the namespace (it never ran there): nothing was
    /// changed, and no lock file was made.
    NoStateFile {
        /// Where its state file would be.
        state_path: PathBuf,
    },
}

/// As [`reset`], but a worker ID without a state file is an outcome, not an error: there is
/// nothing to reset, and nothing is touched. For a front end whose reset may run before any
/// generator has (a fresh state directory).
///
/// # Errors
/// As [`reset`], except for the missing state file.
pub fn reset_if_any(
    dir: &Path,
    namespace: &str,
    layout: Option<&Layout>,
    worker_id: u64,
    options: &ResetOptions,
) -> Result<Reset> {
    validate_namespace(namespace)?;
    let ns_dir = dir.join(namespace);
    let state_path = ns_dir.join(state_file_name(worker_id));
    if std::fs::symlink_metadata(&state_path).is_err() {
        // Checked before the lease: a reset of a worker ID that never ran leaves no lock file.
        return Ok(Reset::NoStateFile { state_path });
    }
    let from_file;
    let layout = match layout {
        Some(l) => l,
        None => {
            let record = read_layout_file(&ns_dir)?.ok_or_else(|| {
                Error::config(format!(
                    "namespace directory {} has no layout file: give the layout",
                    ns_dir.display()
                ))
            })?;
            from_file = layout_from_record(&record).ok_or_else(|| {
                Error::config(format!(
                    "the layout file of {} describes {:?}, which this version cannot rebuild: \
                     give the layout",
                    ns_dir.display(),
                    record.description
                ))
            })?;
            &from_file
        }
    };
    let lease = LocalLease::acquire(dir, namespace, layout, LeaseRequest::Exact(worker_id))?;
    let report = reset_store(
        RealDisk,
        lease.state_path(),
        layout,
        system_now_ms(),
        options,
    );
    lease.release();
    report.map(Reset::Done)
}

/// The reset itself, on any [`Disk`], with the clock reading `now_ms` (Unix ms): the caller
/// holds the worker ID's lease. See the module docs for the order of the writes.
///
/// # Errors
/// As [`reset`], but for the lease.
pub fn reset_store<D: Disk>(
    disk: D,
    state_path: PathBuf,
    layout: &Layout,
    now_ms: u64,
    options: &ResetOptions,
) -> Result<ResetReport> {
    let clock_ids = layout.max_clock_id() as usize + 1;
    let state_err = |what: &str, e: &dyn std::fmt::Display| {
        Error::new(
            ErrorKind::State,
            format!("state file {}: {what}: {e}", state_path.display()),
        )
    };
    let file = disk
        .open(&state_path)
        .map_err(|e| state_err("open", &e))?
        .ok_or_else(|| {
            Error::new(
                ErrorKind::State,
                format!(
                    "state file {} does not exist: nothing to reset",
                    state_path.display()
                ),
            )
        })?;
    let bytes = disk
        .read_all(&file, MAX_FILE_BYTES)
        .map_err(|e| state_err("read", &e))?;
    let why = match decode_file(&bytes) {
        Ok((_, rec)) if rec.state.reserved.len() == clock_ids => {
            return Err(Error::config(format!(
                "state file {} is valid (clock-id {}): there is nothing to reset (a reset only \
                 replaces a corrupt state)",
                state_path.display(),
                rec.state.clock_id
            )))
        }
        Ok((_, rec)) => {
            return Err(Error::config(format!(
                "state file {} holds a valid state of a layout with {} clock-ids, not this \
                 layout's {clock_ids}: it is not corrupt; use the namespace's own layout",
                state_path.display(),
                rec.state.reserved.len()
            )))
        }
        Err(why) => why,
    };

    let hw_now = hw::read(&disk, &state_path);
    let marks = match &hw_now {
        Ok(Some(m)) if m.len() == clock_ids => Some(m.clone()),
        _ => None,
    };
    let marks_from = hw::path_of(&state_path).display().to_string();
    let Some((state, basis)) = bounded_state(
        layout,
        now_ms,
        marks.as_deref().map(|m| (m, marks_from.as_str())),
        options,
    )?
    else {
        let hw_why = match hw_now {
            Ok(None) => "does not exist".to_string(),
            Ok(Some(m)) => format!("holds {} clock-ids, not {clock_ids}", m.len()),
            Err(why) => format!("is unreadable ({why})"),
        };
        return Err(Error::new(
            ErrorKind::State,
            format!(
                "cannot reset {} safely: it is corrupt ({why}) and its high-water file {} \
                 {hw_why}, so nothing bounds the reservations it held. Give evidence: the highest \
                 ID this worker ID is known to have issued (`rimeflake state reset --above-id ID`, \
                 ResetOptions::above_id), or a time no ID of it has reached on any clock-id \
                 (`--reserve-until 2030-01-01T00:00:00Z`, ResetOptions::reserve_until_ms)",
                state_path.display(),
                hw::path_of(&state_path).display()
            ),
        ));
    };

    let reserved = state.reserved.clone();
    let clock_id = state.clock_id;
    // 1. The high-water record first, so it bounds the new state before that is in place.
    let old_marks = marks.unwrap_or_else(|| vec![None; clock_ids]);
    let new_marks: Vec<Option<u64>> = old_marks
        .iter()
        .zip(&reserved)
        .map(|(m, r)| match (*m, *r) {
            (Some(m), Some(r)) => Some(m.max(r)),
            (m, r) => m.or(r),
        })
        .collect();
    let untouched = "nothing was changed: the corrupt file is still in place";
    hw::write(&disk, &state_path, &new_marks)
        .map_err(|e| state_err(&format!("write of the high-water file ({untouched})"), &e))?;

    // 2. The new state, in a temporary file of its own, synced.
    let tmp = hw::temp_name(&state_path, "reset");
    let record = encode(1, &state);
    let written = disk.create_new(&tmp).and_then(|f| {
        for slot in 0..2 {
            disk.write_at(&f, (slot * SLOT_SIZE) as u64, &record)?;
        }
        disk.sync_file(&f)
    });
    if let Err(e) = written {
        let _ = disk.remove(&tmp);
        return Err(state_err(
            &format!("write of the new state ({untouched})"),
            &e,
        ));
    }

    // 3. A copy of the corrupt file, synced (a copy: the corrupt file stays at the path).
    let mut aside = PathBuf::from(format!("{}.corrupt-{now_ms}", state_path.display()));
    let mut n = 0;
    let copied = loop {
        match disk.create_new(&aside) {
            Ok(f) => {
                break disk
                    .write_at(&f, 0, &bytes)
                    .and_then(|()| disk.sync_file(&f));
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 100 => {
                n += 1;
                aside = PathBuf::from(format!("{}.corrupt-{now_ms}-{n}", state_path.display()));
            }
            Err(e) => break Err(e),
        }
    };
    if let Err(e) = copied {
        let _ = disk.remove(&tmp);
        return Err(state_err(
            &format!("copy of the corrupt file ({untouched})"),
            &e,
        ));
    }

    // 4. The switch: one rename, then the directory's sync makes it (and the copy) durable.
    if let Err(e) = disk.rename(&tmp, &state_path) {
        let _ = disk.remove(&tmp);
        return Err(state_err(&format!("rename into place ({untouched})"), &e));
    }
    disk.sync_dir(hw::dir_of(&state_path)).map_err(|e| {
        state_err(
            "sync of the directory (the new state is in place, but a power loss now may bring \
             back the corrupt file, which is safe: run the reset again then)",
            &e,
        )
    })?;
    let reserved_ms = reserved
        .iter()
        .map(|r| {
            r.and_then(|t| {
                t.checked_mul(layout.unit_ms())
                    .and_then(|x| x.checked_add(layout.epoch_ms()))
            })
        })
        .collect();
    Ok(ResetReport {
        state_path,
        aside,
        clock_id,
        reserved,
        reserved_ms,
        basis,
    })
}

/// The state a reset stores: every clock-id reserved past what the lost state can have held,
/// as bounded by high-water `marks` (with where they come from), `options`' evidence, and the
/// clock (`now_ms`); with a description of what bounded it. `None` when nothing bounds it.
///
/// # Errors
/// [`ErrorKind::TimeRange`] or [`ErrorKind::InvalidId`] for evidence outside the layout.
pub(crate) fn bounded_state(
    layout: &Layout,
    now_ms: u64,
    marks: Option<(&[Option<u64>], &str)>,
    options: &ResetOptions,
) -> Result<Option<(WorkerState, String)>> {
    let clock_ids = layout.max_clock_id() as usize + 1;
    let max_time = layout.max_time();
    let time_at = |ms: u64| time_or_end(layout, ms);
    let now = time_at(now_ms)?;
    let mut reserved: Vec<Option<u64>> = vec![None; clock_ids];
    let raise = |r: &mut Option<u64>, t: u64| *r = Some(r.map_or(t, |x| x.max(t)));
    let mut basis = Vec::new();
    if let Some((marks, from)) = marks {
        basis.push(format!("high-water file {from}"));
        for (r, m) in reserved.iter_mut().zip(marks) {
            if let Some(m) = *m {
                raise(r, m.min(max_time).max(now));
            }
        }
    }
    if let Some(ms) = options.reserve_until_ms {
        basis.push(format!(
            "no ID past {} (reserve_until)",
            crate::utc::iso8601(ms)
        ));
        let t = time_at(ms.max(now_ms))?;
        reserved.iter_mut().for_each(|r| raise(r, t));
    }
    if let Some(id) = options.above_id {
        let parts = reserve_above_id(&mut reserved, layout, id, now_ms)?;
        basis.push(format!(
            "no ID above {id} (clock-id {}, {})",
            parts.clock_id,
            crate::utc::iso8601(parts.timestamp_ms)
        ));
    }
    if basis.is_empty() {
        return Ok(None);
    }
    // The current clock-id: one whose reservation is lowest, preferring one above every
    // clock-id reserved higher, so IDs keep rising across the reset where they can.
    let key = |r: &Option<u64>| r.unwrap_or(0);
    let low = reserved.iter().map(key).min().unwrap_or(0);
    let above = reserved.iter().rposition(|r| key(r) > low);
    let clock_id = (0..clock_ids)
        .find(|&c| key(&reserved[c]) == low && above.is_none_or(|a| c > a))
        .or_else(|| (0..clock_ids).find(|&c| key(&reserved[c]) == low))
        .unwrap_or(0) as u64;
    if reserved[clock_id as usize].is_none() {
        reserved[clock_id as usize] = Some(now);
    }
    let state = WorkerState {
        clock_id,
        reserved,
        closed_at: None,
    };
    Ok(Some((state, basis.join("; "))))
}
