//! [`inspect`]: what a state directory holds, for `rimeflake state show`: per namespace and
//! worker ID, whether it is leased and by whom, the layout, the current clock-id, the
//! reservations and the state file's health. It only reads, and never disturbs a holder.

use crate::error::{Error, ErrorKind, Result};
use crate::lease::local::LockHolder;
use crate::lease::local::{lock_file_name, parse_lock_file_name, read_holder, state_file_name};
use crate::lease::namespace::{read_layout_file, LayoutRecord};
use crate::state::file::decode_file;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

/// The health of a worker ID's state file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StateHealth {
    /// No state file yet (the worker ID was leased but never saved state).
    Missing,
    /// A valid record.
    Ok {
        /// The current clock-id.
        clock_id: u64,
        /// Per clock-id, the highest reserved time in layout units.
        reserved: Vec<Option<u64>>,
        /// The same as Unix ms (the start of the last reserved unit), when the layout is known.
        reserved_ms: Vec<Option<u64>>,
        /// The last ID's packed counter, when the last generator closed cleanly.
        closed_at: Option<u64>,
    },
    /// Unreadable or corrupt: why.
    Corrupt(String),
}

/// One worker ID of one namespace in a state directory.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct LeaseInfo {
    /// The namespace.
    pub namespace: String,
    /// The worker ID.
    pub worker_id: u64,
    /// Whether a process holds the lease now.
    pub held: bool,
    /// Who holds it, or last held it when it is free.
    pub holder: LockHolder,
    /// The namespace's layout, described; `None` when its layout file is missing or unreadable.
    pub layout: Option<String>,
    /// The state file's health and content.
    pub state: StateHealth,
    /// The lock file.
    pub lock_path: PathBuf,
    /// The state file.
    pub state_path: PathBuf,
}

/// Lists every lease of every namespace in the state directory `dir` (sorted); empty when `dir`
/// does not exist.
///
/// # Errors
/// [`ErrorKind::State`] when a directory cannot be listed.
pub fn inspect(dir: &Path) -> Result<Vec<LeaseInfo>> {
    let mut out = Vec::new();
    for (namespace, ns_dir) in sorted_entries(dir, |p| p.is_dir())? {
        let layout = read_layout_file(&ns_dir).ok().flatten();
        let mut ids: Vec<u64> = sorted_entries(&ns_dir, |p| p.is_file())?
            .iter()
            .filter_map(|(name, _)| parse_lock_file_name(name))
            .collect();
        ids.sort_unstable();
        for worker_id in ids {
            let lock_path = ns_dir.join(lock_file_name(worker_id));
            let state_path = ns_dir.join(state_file_name(worker_id));
            out.push(LeaseInfo {
                namespace: namespace.clone(),
                worker_id,
                held: is_held(&lock_path).map_err(|e| list_err(&lock_path, e))?,
                holder: read_holder(&lock_path),
                layout: layout.as_ref().map(|l| l.description.clone()),
                state: read_state(&state_path, layout.as_ref()),
                lock_path,
                state_path,
            });
        }
    }
    Ok(out)
}

fn list_err(path: &Path, e: io::Error) -> Error {
    Error::new(ErrorKind::State, format!("{}: {e}", path.display()))
}

fn sorted_entries(dir: &Path, keep: impl Fn(&Path) -> bool) -> Result<Vec<(String, PathBuf)>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(list_err(dir, e)),
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| list_err(dir, e))?;
        let path = entry.path();
        if let (true, Some(name)) = (keep(&path), entry.file_name().to_str()) {
            out.push((name.to_string(), path));
        }
    }
    out.sort();
    Ok(out)
}

/// Whether another open file holds the lock: a non-blocking *shared* lock fails only against an
/// exclusive one. When it succeeds it is dropped at once; a generator that tries to lock in that
/// instant retries an exact worker ID, or takes the next free one.
fn is_held(lock_path: &Path) -> io::Result<bool> {
    // No symlink followed, no FIFO waited on.
    let file: File = OpenOptions::new()
        .read(true)
        .custom_flags(crate::state::disk::SAFE_OPEN_FLAGS)
        .open(lock_path)?;
    crate::state::disk::require_regular(lock_path, &file)?;
    if crate::state::disk::try_flock(&file, libc::LOCK_SH)? {
        // SAFETY: a valid open descriptor; unlocking our own shared lock touches no one else's.
        unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_UN) };
        return Ok(false);
    }
    Ok(true)
}

fn read_state(path: &Path, layout: Option<&LayoutRecord>) -> StateHealth {
    // Capped, no symlink, no FIFO: `state show` never hangs or reads without bound.
    let bytes = match crate::state::disk::read_regular(path, crate::state::file::MAX_FILE_BYTES) {
        Ok(Some(b)) => b,
        Ok(None) => return StateHealth::Missing,
        Err(e) => return StateHealth::Corrupt(format!("cannot read {}: {e}", path.display())),
    };
    let rec = match decode_file(&bytes) {
        Ok((_, rec)) => rec,
        Err(why) => return StateHealth::Corrupt(format!("no slot holds a valid record ({why})")),
    };
    if let Some(l) = layout.filter(|l| l.clock_ids != rec.state.reserved.len()) {
        return StateHealth::Corrupt(format!(
            "holds {} clock-ids, the namespace's layout has {}",
            rec.state.reserved.len(),
            l.clock_ids
        ));
    }
    let reserved_ms = rec
        .state
        .reserved
        .iter()
        .map(|r| layout?.unix_ms((*r)?))
        .collect();
    StateHealth::Ok {
        clock_id: rec.state.clock_id,
        reserved: rec.state.reserved,
        reserved_ms,
        closed_at: rec.state.closed_at,
    }
}

/// A plain-text table of `infos` for people (`rimeflake state show`).
pub fn render(dir: &Path, infos: &[LeaseInfo]) -> String {
    if infos.is_empty() {
        return format!("no leases in {}\n", dir.display());
    }
    let mut out = format!("state directory {}\n", dir.display());
    let mut last_ns: Option<&str> = None;
    for i in infos {
        if last_ns != Some(&i.namespace) {
            let layout = i
                .layout
                .as_deref()
                .unwrap_or("layout file missing or unreadable");
            out.push_str(&format!("\nnamespace {}: {layout}\n", i.namespace));
            last_ns = Some(&i.namespace);
        }
        let who = match (i.holder.pid, &i.holder.host) {
            (Some(pid), Some(host)) => format!("pid {pid} on {host}"),
            (Some(pid), None) => format!("pid {pid}"),
            _ => "unknown".to_string(),
        };
        let lease = if i.held {
            format!("held by {who}")
        } else {
            format!("free (last: {who})")
        };
        out.push_str(&format!("  worker {:>5}  {lease}\n", i.worker_id));
        match &i.state {
            StateHealth::Missing => out.push_str("    state: none yet\n"),
            StateHealth::Corrupt(why) => out.push_str(&format!(
                "    state: CORRUPT {}: {why}\n",
                i.state_path.display()
            )),
            StateHealth::Ok {
                clock_id,
                reserved,
                reserved_ms,
                closed_at,
            } => {
                let closed = match closed_at {
                    Some(_) => "closed cleanly",
                    None => "running, or stopped without close",
                };
                out.push_str(&format!("    state: ok, clock-id {clock_id}, {closed}\n"));
                for (cid, (r, ms)) in reserved.iter().zip(reserved_ms).enumerate() {
                    let Some(r) = r else { continue };
                    let when = ms.map_or(String::new(), |ms| {
                        format!(" ({})", crate::utc::iso8601(ms))
                    });
                    out.push_str(&format!("      clock-id {cid}: reserved to {r}{when}\n"));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_directory_lists_nothing() {
        let dir = crate::lease::dirs::TempDir::new("inspect-missing");
        assert!(inspect(&dir.0.join("nope")).unwrap().is_empty());
        assert!(render(&dir.0, &[]).starts_with("no leases"));
    }
}
