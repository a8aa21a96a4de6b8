//! [`FileStore`]: the state of one (namespace, worker ID) in one file with two alternating slots.
//!
//! Each slot holds a record: magic, format version, clock-id count, a write sequence number, the
//! current clock-id, the reservation of every clock-id (`u64::MAX` for none) and an FNV-1a-64
//! checksum of all that. [`FileStore::load`](StateStore::load) takes the valid record with the
//! highest sequence. A save writes the slot that does *not* hold the newest good record and
//! syncs it, so a write that fails, tears or is lost in a crash can never destroy the newest good
//! record; then it writes the same record to the other slot and syncs again. So once a save has
//! returned, both slots hold its record, and rot of either one cannot bring back an older, lower
//! reservation (which two alternating copies alone could not tell from a torn write). The file
//! is created with write, sync, link into place (which fails if a file appeared meanwhile), sync
//! of the directory, so a file at the path always holds at least one synced record: one with no
//! valid slot is corrupt, never new.
//!
//! Beside the state, the high-water record ([`hw`](super::hw)) keeps an independent bound on
//! every reservation, raised before a save passes it, for [`reset`](super::reset).
//!
//! A store handed out by a lease carries a [`LeaseGuard`]: every save first takes an `flock` on
//! the state file, checks that the lease's lock file is still the one locked and that the state
//! file is still the one open, and only then writes. A process that takes the worker ID after
//! the lock file was deleted or replaced reads the state under the same `flock`, so it either
//! sees every reservation the old holder published, or the old holder's next check fails and
//! it stops issuing IDs at its fence.

use super::disk::{Disk, RealDisk};
use super::hw;
#[cfg(test)]
pub use super::record::decode;
use super::record::MAX_CLOCK_IDS;
pub use super::record::{decode_file, encode, SLOT_SIZE};
use super::{StateStore, WorkerState};
use crate::error::{Error, ErrorKind, Result};
use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

/// The most a state file may hold: two slots. A bigger file is not one rimeflake wrote.
pub const MAX_FILE_BYTES: usize = 2 * SLOT_SIZE;
/// How long a load or save waits for another process's save to let go of the state file's
/// `flock` (a save holds it for two syncs) before it fails with a state error.
const FLOCK_WAIT_MS: u64 = 5_000;

/// What a lease checks before each save: that it still holds what it held when it handed out
/// the store. A failed check stops the save, and so the generator at its fence.
pub trait LeaseGuard: Send + Sync + fmt::Debug {
    /// `Ok` while the lease is intact.
    ///
    /// # Errors
    /// [`ErrorKind::Lease`] saying what was lost.
    fn check(&self) -> Result<()>;
}

/// What the store knows of its file.
struct Known<F> {
    /// The open file; `None` while it does not exist.
    file: Option<F>,
    /// The slot of the newest good record.
    newest: usize,
    /// The highest sequence number seen or tried: every write uses a higher one.
    seq: u64,
    /// The last state known durable (read at load, or saved and synced).
    durable: Option<WorkerState>,
    /// The durable high-water marks, per clock-id (`None` until the high-water file is read
    /// valid or written).
    hw: Option<Vec<Option<u64>>>,
}

struct Inner<F> {
    known: Option<Known<F>>,
    /// A write or sync failed since the last good save: the next save writes even an unchanged
    /// state, since nothing of the failed one may be trusted.
    dirty: bool,
    /// The file was linked into place but the directory's sync failed.
    dir_unsynced: bool,
}

/// The state of one (namespace, worker ID) in one file; see the module docs for the format.
pub struct FileStore<D: Disk = RealDisk> {
    disk: D,
    path: PathBuf,
    clock_ids: usize,
    /// How far past a reservation the high-water mark goes, in time units.
    hw_step: u64,
    guard: Option<Arc<dyn LeaseGuard>>,
    /// The command that resets this file, for the message that refuses a corrupt one.
    reset_command: Option<String>,
    inner: Mutex<Inner<D::File>>,
}

impl<D: Disk> fmt::Debug for FileStore<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FileStore")
            .field("path", &self.path)
            .field("clock_ids", &self.clock_ids)
            .field("guard", &self.guard)
            .finish_non_exhaustive()
    }
}

impl FileStore<RealDisk> {
    /// The store at `path` for a layout with `clock_ids` clock-ids. Nothing is read or written
    /// until the first `load` or `save`.
    ///
    /// # Errors
    /// [`ErrorKind::Config`] when `clock_ids` is 0 or more than 256.
    pub fn open(path: PathBuf, clock_ids: usize) -> Result<Self> {
        FileStore::with_disk(RealDisk, path, clock_ids)
    }
}

/// Holds the `flock` of a state file while alive.
struct FlockGuard<'a, D: Disk> {
    disk: &'a D,
    file: &'a D::File,
}

impl<D: Disk> Drop for FlockGuard<'_, D> {
    fn drop(&mut self) {
        self.disk.unlock(self.file);
    }
}

impl<D: Disk> FileStore<D> {
    /// The store at `path` on `disk` (a `SimDisk` of `testing/` in simulations).
    ///
    /// # Errors
    /// [`ErrorKind::Config`] when `clock_ids` is 0 or more than 256.
    pub fn with_disk(disk: D, path: PathBuf, clock_ids: usize) -> Result<Self> {
        if clock_ids == 0 || clock_ids > MAX_CLOCK_IDS {
            return Err(Error::config(format!(
                "state file {}: {clock_ids} clock-ids; a layout has 1 to {MAX_CLOCK_IDS}",
                path.display()
            )));
        }
        Ok(FileStore {
            disk,
            path,
            clock_ids,
            hw_step: hw::STEP_MS,
            guard: None,
            reset_command: None,
            inner: Mutex::new(Inner {
                known: None,
                dirty: false,
                dir_unsynced: false,
            }),
        })
    }

    /// Checks `guard` before every save (a lease's lock identity).
    pub fn with_guard(mut self, guard: Arc<dyn LeaseGuard>) -> Self {
        self.guard = Some(guard);
        self
    }

    /// The command that resets this file (with its worker ID, namespace and state directory),
    /// which the error for a corrupt file gives.
    pub fn with_reset_command(mut self, command: String) -> Self {
        self.reset_command = Some(command);
        self
    }

    /// Sets how far past a reservation the high-water mark goes, in time units (default
    /// [`hw::STEP_MS`], right for 1 ms units; a lease sets it from its layout's unit).
    pub fn with_high_water_step(mut self, units: u64) -> Self {
        self.hw_step = units.max(1);
        self
    }

    fn lock(&self) -> MutexGuard<'_, Inner<D::File>> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn err(&self, what: &str, e: impl fmt::Display) -> Error {
        Error::new(
            ErrorKind::State,
            format!("state file {}: {what}: {e}", self.path.display()),
        )
    }

    /// Takes the state file's `flock`, waiting (in 1 ms sleeps) at most [`FLOCK_WAIT_MS`] for
    /// another process's save to end.
    fn flock<'a>(&'a self, file: &'a D::File) -> Result<FlockGuard<'a, D>> {
        let deadline = crate::clock::monotonic_ns() + FLOCK_WAIT_MS * 1_000_000;
        loop {
            if self.disk.try_lock(file).map_err(|e| self.err("flock", e))? {
                return Ok(FlockGuard {
                    disk: &self.disk,
                    file,
                });
            }
            if crate::clock::monotonic_ns() >= deadline {
                return Err(self.err(
                    "locked",
                    format!(
                        "another process held its lock for more than {FLOCK_WAIT_MS} ms (a \
                         save stuck on a hung disk?)"
                    ),
                ));
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    /// Reads the file once, to learn the newest good record and its slot.
    fn scan<'a>(&self, inner: &'a mut Inner<D::File>) -> Result<&'a mut Known<D::File>> {
        if inner.known.is_none() {
            let opened = self
                .disk
                .open(&self.path)
                .map_err(|e| self.err("open", e))?;
            let known = match opened {
                None => Known {
                    file: None,
                    newest: 1,
                    seq: 0,
                    durable: None,
                    hw: None,
                },
                Some(file) => {
                    let bytes = {
                        // Under the flock: a save of another process is never read half-done.
                        let _locked = self.flock(&file)?;
                        self.disk
                            .read_all(&file, MAX_FILE_BYTES)
                            .map_err(|e| self.err("read", e))?
                    };
                    let (slot, rec) = decode_file(&bytes).map_err(|why| self.corrupt(&why))?;
                    if rec.state.reserved.len() != self.clock_ids {
                        return Err(self.err(
                            "wrong layout",
                            format!(
                                "it holds {} clock-ids, this layout has {}; was the namespace's \
                                 layout file replaced?",
                                rec.state.reserved.len(),
                                self.clock_ids
                            ),
                        ));
                    }
                    Known {
                        file: Some(file),
                        newest: slot,
                        seq: rec.seq,
                        durable: Some(rec.state),
                        hw: None,
                    }
                }
            };
            inner.known = Some(known);
            // A missing or bad high-water file is rewritten at the next save, from the state.
            let marks = hw::read(&self.disk, &self.path).ok().flatten();
            let known = inner.known.as_mut().expect("just set");
            known.hw = marks.filter(|m| m.len() == self.clock_ids);
        }
        Ok(inner.known.as_mut().expect("just set"))
    }

    fn corrupt(&self, why: &str) -> Error {
        let command = match &self.reset_command {
            Some(command) => format!("`{command}`"),
            None => "`rimeflake state reset` with its worker ID, namespace and state directory"
                .to_string(),
        };
        Error::new(
            ErrorKind::State,
            format!(
                "corrupt state file {}: no slot holds a valid record ({why}). rimeflake does not \
                 reset it silently: the reservations in it are what keeps a restart from repeating \
                 IDs. Once no process uses this worker ID, {command} (or rimeflake::admin::reset) \
                 replaces it with a state reserved past anything it can have held (from its \
                 high-water file {}, or from evidence you give)",
                self.path.display(),
                hw::path_of(&self.path).display()
            ),
        )
    }

    /// Refuses a state that would lower a durable reservation: a bug in the caller.
    fn check_not_lower(&self, old: &WorkerState, new: &WorkerState) -> Result<()> {
        for (i, (o, n)) in old.reserved.iter().zip(&new.reserved).enumerate() {
            if let Some(o) = *o {
                if n.is_none_or(|n| n < o) {
                    return Err(self.err(
                        "refused (a bug)",
                        format!("the reservation of clock-id {i} would go down from {o} to {n:?}"),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Raises the high-water record, durably, before `state` is written, wherever a
    /// reservation of `state` would pass it.
    fn raise_high_water(&self, known: &mut Known<D::File>, state: &WorkerState) -> Result<()> {
        let old = known
            .hw
            .clone()
            .unwrap_or_else(|| vec![None; self.clock_ids]);
        let mut marks = old.clone();
        for (mark, r) in marks.iter_mut().zip(&state.reserved) {
            if let Some(r) = *r {
                if mark.is_none_or(|m| r > m) {
                    *mark = Some(r.saturating_add(self.hw_step).max(mark.unwrap_or(0)));
                }
            }
        }
        if known.hw.is_some() && marks == old {
            return Ok(());
        }
        hw::write(&self.disk, &self.path, &marks)
            .map_err(|e| self.err("write of the high-water file", e))?;
        known.hw = Some(marks);
        Ok(())
    }

    /// Creates the file: write a temporary file, sync it, link it into place, sync the
    /// directory. Until the link the path holds nothing, after it a synced record. The link
    /// fails if a file appeared at the path meanwhile (another process created it): then this
    /// save fails instead of replacing that file.
    fn create(&self, inner: &mut Inner<D::File>, seq: u64, record: &[u8]) -> Result<()> {
        let tmp = hw::temp_name(&self.path, "tmp");
        let file = self
            .disk
            .create_new(&tmp)
            .map_err(|e| self.err("create", e))?;
        let written = (|| {
            for slot in 0..2 {
                self.disk
                    .write_at(&file, (slot * SLOT_SIZE) as u64, record)
                    .map_err(|e| self.err("write", e))?;
            }
            self.disk
                .sync_file(&file)
                .map_err(|e| self.err("sync", e))?;
            if let Some(g) = &self.guard {
                g.check()?;
            }
            self.disk.link(&tmp, &self.path).map_err(|e| {
                if e.kind() == std::io::ErrorKind::AlreadyExists {
                    Error::new(
                        ErrorKind::Lease,
                        format!(
                            "state file {} appeared while this process created it: another \
                             process uses the same worker ID (was its lock file deleted?); this \
                             process does not overwrite it",
                            self.path.display()
                        ),
                    )
                } else {
                    self.err("link into place", e)
                }
            })
        })();
        let _ = self.disk.remove(&tmp);
        written?;
        let known = inner.known.as_mut().expect("scanned");
        known.file = Some(file);
        known.newest = 0;
        known.seq = seq;
        inner.dir_unsynced = true;
        Ok(())
    }

    fn write(&self, inner: &mut Inner<D::File>, state: &WorkerState) -> Result<()> {
        let known = inner.known.as_mut().expect("scanned");
        self.raise_high_water(known, state)?;
        known.seq += 1;
        let seq = known.seq;
        let record = encode(seq, state);
        if known.file.is_none() {
            self.create(inner, seq, &record)?;
        } else {
            let known = inner.known.as_mut().expect("scanned");
            let file = known.file.as_ref().expect("checked");
            let _locked = self.flock(file)?;
            // Under the flock, so a newcomer reads either all of this save or sees the check
            // fail: the lease is intact and this is still the file at the path.
            if let Some(g) = &self.guard {
                g.check()?;
            }
            if !self
                .disk
                .same_file(&self.path, file)
                .map_err(|e| self.err("stat", e))?
            {
                return Err(Error::new(
                    ErrorKind::Lease,
                    format!(
                        "state file {} was deleted or replaced while this process used it: \
                         another process may run this worker ID, so this process stops issuing \
                         IDs (restart it to read the state again)",
                        self.path.display()
                    ),
                ));
            }
            // First the slot that does not hold the newest good record, then the other one.
            let first = 1 - known.newest;
            for slot in [first, known.newest] {
                self.disk
                    .write_at(file, (slot * SLOT_SIZE) as u64, &record)
                    .map_err(|e| self.err("write", e))?;
                self.disk.sync_file(file).map_err(|e| self.err("sync", e))?;
                known.newest = first;
            }
        }
        if inner.dir_unsynced {
            self.disk
                .sync_dir(hw::dir_of(&self.path))
                .map_err(|e| self.err("sync of the directory", e))?;
            inner.dir_unsynced = false;
        }
        Ok(())
    }
}

impl<D: Disk> StateStore for FileStore<D> {
    /// The newest valid record's state; `None` when the file does not exist. After the first
    /// `load` or `save` the store answers from memory: the last state known durable.
    fn load(&self) -> Result<Option<WorkerState>> {
        let mut inner = self.lock();
        Ok(self.scan(&mut inner)?.durable.clone())
    }

    fn save(&self, state: &WorkerState) -> Result<()> {
        if state.reserved.len() != self.clock_ids || state.clock_id >= self.clock_ids as u64 {
            return Err(self.err(
                "refused (a bug)",
                format!(
                    "a state for {} clock-ids on clock-id {}; this store has {}",
                    state.reserved.len(),
                    state.clock_id,
                    self.clock_ids
                ),
            ));
        }
        let mut inner = self.lock();
        let known = self.scan(&mut inner)?;
        if let Some(old) = &known.durable {
            self.check_not_lower(old, state)?;
        }
        let unchanged = known.durable.as_ref() == Some(state);
        if unchanged && !inner.dirty && !inner.dir_unsynced {
            return Ok(());
        }
        match self.write(&mut inner, state) {
            Ok(()) => {
                inner.dirty = false;
                inner.known.as_mut().expect("scanned").durable = Some(state.clone());
                Ok(())
            }
            Err(e) => {
                inner.dirty = true;
                Err(Error::new(
                    e.kind(),
                    format!(
                        "{}; this state is not durable (the store writes it whole again if it \
                         is saved again)",
                        e.message()
                    ),
                ))
            }
        }
    }

    fn describe(&self) -> String {
        self.path.display().to_string()
    }
}
