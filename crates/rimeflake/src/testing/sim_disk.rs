//! [`SimDisk`]: an in-memory [`Disk`] for tests and simulations. It keeps what is durable apart
//! from what is only written, and fails, fills up, tears writes and crashes when told to; a seed
//! decides what a crash keeps, so a failure replays exactly.

use crate::state::disk::Disk;
use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// A one-shot fault for the next matching operation of a [`SimDisk`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The next `write_at` fails with EIO; nothing lands.
    WriteError,
    /// The next `write_at` lands only its first `keep` bytes, then fails with EIO.
    TornWrite {
        /// How many bytes land.
        keep: usize,
    },
    /// The next `sync_file` fails with EIO; the written data stays unsynced.
    SyncError,
    /// The next `sync_dir` fails with EIO.
    DirSyncError,
    /// The next `read_all` fails with EIO.
    ReadError,
    /// The next `create` fails with EIO.
    CreateError,
    /// The next `rename` fails with EIO.
    RenameError,
}

/// An in-memory disk for tests and simulations: not for production use.
///
/// It keeps, for every file, the *durable* image (what survives [`SimDisk::crash`]) apart from
/// the writes made since the last sync, and directory entries apart from the durable ones.
/// Clones share one disk, so a test keeps a handle while a store owns another.
#[derive(Clone, Debug, Default)]
pub struct SimDisk {
    inner: Arc<Mutex<Sim>>,
    resumed: Arc<Condvar>,
}

#[derive(Debug, Default)]
struct Inode {
    durable: Vec<u8>,
    current: Vec<u8>,
    /// Writes since the last sync, in order: a crash keeps a prefix of them.
    unsynced: Vec<(u64, Vec<u8>)>,
}

#[derive(Debug, Default)]
struct Sim {
    inodes: Vec<Inode>,
    names: BTreeMap<PathBuf, usize>,
    durable_names: BTreeMap<PathBuf, usize>,
    faults: Vec<Fault>,
    full: bool,
    /// While set, every operation blocks (a hung disk or NFS server) until `resume` or `crash`.
    stalled: bool,
    /// Operations left before the power is cut (`None`: never).
    power_left: Option<u64>,
    /// Bumped by every crash, so handles from before it are stale.
    epoch: u64,
    rng: u64,
    ops: u64,
}

/// An open file of a [`SimDisk`].
#[derive(Clone, Copy, Debug)]
pub struct SimFile {
    inode: usize,
    epoch: u64,
}

fn eio(what: &str) -> io::Error {
    io::Error::other(format!("simulated I/O error: {what}"))
}

fn write_into(buf: &mut Vec<u8>, offset: u64, bytes: &[u8]) {
    let offset = offset as usize;
    if buf.len() < offset + bytes.len() {
        buf.resize(offset + bytes.len(), 0);
    }
    buf[offset..offset + bytes.len()].copy_from_slice(bytes);
}

impl Sim {
    /// splitmix64: a tiny, seeded generator, so a crash replays exactly from its seed. The
    /// test kit's `Rng` is the same generator; this copy stays because the simulated disk is
    /// built into the library under the `testing` feature, where the kit (a dev-dependency)
    /// is not there.
    fn next_random(&mut self) -> u64 {
        self.rng = self.rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Counts an operation; fails it once the power is cut.
    fn op(&mut self) -> io::Result<()> {
        self.ops += 1;
        match self.power_left {
            Some(0) => Err(eio("the power is cut")),
            Some(ref mut left) => {
                *left -= 1;
                Ok(())
            }
            None => Ok(()),
        }
    }

    fn take_fault(&mut self, matches: impl Fn(&Fault) -> bool) -> Option<Fault> {
        let i = self.faults.iter().position(matches)?;
        Some(self.faults.remove(i))
    }

    fn inode(&mut self, file: &SimFile) -> io::Result<&mut Inode> {
        if file.epoch != self.epoch {
            return Err(eio("stale handle from before a crash"));
        }
        Ok(&mut self.inodes[file.inode])
    }
}

impl SimDisk {
    /// An empty disk whose crashes are decided by `seed`.
    pub fn new(seed: u64) -> Self {
        let disk = SimDisk::default();
        disk.lock().rng = seed;
        disk
    }

    fn lock(&self) -> MutexGuard<'_, Sim> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The lock for a disk operation: waits while the disk is stalled.
    fn lock_op(&self) -> MutexGuard<'_, Sim> {
        let mut sim = self.lock();
        while sim.stalled {
            sim = self.resumed.wait(sim).unwrap_or_else(|e| e.into_inner());
        }
        sim
    }

    /// Makes every later operation block until [`SimDisk::resume`] or [`SimDisk::crash`]: a
    /// store that hangs. The test must resume it, or the blocked thread waits forever.
    pub fn stall(&self) {
        self.lock().stalled = true;
    }

    /// Ends a [`SimDisk::stall`]: blocked operations go on.
    pub fn resume(&self) {
        self.lock().stalled = false;
        self.resumed.notify_all();
    }

    /// Queues a one-shot fault for the next operation it applies to.
    pub fn fail_next(&self, fault: Fault) {
        self.lock().faults.push(fault);
    }

    /// While `full`, every write and create fails with ENOSPC.
    pub fn set_full(&self, full: bool) {
        self.lock().full = full;
    }

    /// Cuts the power after `ops` more operations: every later one fails, as if the process had
    /// died there, until [`SimDisk::crash`]. Lets a simulation crash at any step.
    pub fn cut_power_after(&self, ops: u64) {
        self.lock().power_left = Some(ops);
    }

    /// How many operations the disk has served (to pick a step for [`SimDisk::cut_power_after`]).
    pub fn ops(&self) -> u64 {
        self.lock().ops
    }

    /// How many queued one-shot faults have not struck yet (a simulation asks before it expects
    /// a healthy disk). A crash clears them.
    pub fn pending_faults(&self) -> usize {
        self.lock().faults.len()
    }

    /// XORs `mask` into the byte at `offset` of `path`, durably (bit rot, a bad sector).
    pub fn corrupt(&self, path: &Path, offset: usize, mask: u8) {
        let mut sim = self.lock();
        let Some(&ino) = sim.names.get(path) else {
            return;
        };
        let inode = &mut sim.inodes[ino];
        for image in [&mut inode.durable, &mut inode.current] {
            if let Some(b) = image.get_mut(offset) {
                *b ^= mask;
            }
        }
    }

    /// A crash or power loss: everything not synced is lost, except that a seeded-random prefix
    /// of each file's unsynced writes may have reached the disk (the last one possibly torn),
    /// and the directory's unsynced renames and creations either all land or none. Clears faults
    /// and the power cut; handles from before the crash become stale.
    pub fn crash(&self) {
        let mut sim = self.lock();
        for ino in 0..sim.inodes.len() {
            let writes = std::mem::take(&mut sim.inodes[ino].unsynced);
            let keep = (sim.next_random() % (writes.len() as u64 + 1)) as usize;
            let tear = sim.next_random();
            let inode = &mut sim.inodes[ino];
            let mut image = std::mem::take(&mut inode.durable);
            for (i, (offset, bytes)) in writes.iter().take(keep).enumerate() {
                let last = i + 1 == keep;
                let len = if last && tear % 2 == 1 {
                    (tear >> 1) as usize % (bytes.len() + 1)
                } else {
                    bytes.len()
                };
                write_into(&mut image, *offset, &bytes[..len]);
            }
            inode.current = image.clone();
            inode.durable = image;
        }
        if sim.next_random() % 2 == 0 {
            sim.durable_names = sim.names.clone();
        } else {
            sim.names = sim.durable_names.clone();
        }
        sim.faults.clear();
        sim.power_left = None;
        sim.stalled = false;
        sim.epoch += 1;
        self.resumed.notify_all();
    }

    /// The content of `path` as a reader sees it now, if it exists.
    pub fn contents(&self, path: &Path) -> Option<Vec<u8>> {
        let sim = self.lock();
        sim.names.get(path).map(|&i| sim.inodes[i].current.clone())
    }

    /// The content of `path` that survives a crash, if its entry is durable.
    pub fn durable_contents(&self, path: &Path) -> Option<Vec<u8>> {
        let sim = self.lock();
        sim.durable_names
            .get(path)
            .map(|&i| sim.inodes[i].durable.clone())
    }
}

impl Disk for SimDisk {
    type File = SimFile;

    fn open(&self, path: &Path) -> io::Result<Option<SimFile>> {
        let mut sim = self.lock_op();
        sim.op()?;
        Ok(sim.names.get(path).map(|&inode| SimFile {
            inode,
            epoch: sim.epoch,
        }))
    }

    fn create_new(&self, path: &Path) -> io::Result<SimFile> {
        let mut sim = self.lock_op();
        sim.op()?;
        if sim.take_fault(|f| *f == Fault::CreateError).is_some() {
            return Err(eio("create"));
        }
        if sim.full {
            return Err(io::Error::from_raw_os_error(libc::ENOSPC));
        }
        if sim.names.contains_key(path) {
            return Err(io::Error::from(io::ErrorKind::AlreadyExists));
        }
        // A new inode under the name; the entry is durable only after `sync_dir`.
        sim.inodes.push(Inode::default());
        let inode = sim.inodes.len() - 1;
        sim.names.insert(path.to_path_buf(), inode);
        Ok(SimFile {
            inode,
            epoch: sim.epoch,
        })
    }

    fn read_all(&self, file: &SimFile, cap: usize) -> io::Result<Vec<u8>> {
        let mut sim = self.lock_op();
        sim.op()?;
        if sim.take_fault(|f| *f == Fault::ReadError).is_some() {
            return Err(eio("read"));
        }
        let bytes = sim.inode(file)?.current.clone();
        if bytes.len() > cap {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("larger than {cap} bytes"),
            ));
        }
        Ok(bytes)
    }

    fn write_at(&self, file: &SimFile, offset: u64, bytes: &[u8]) -> io::Result<()> {
        let mut sim = self.lock_op();
        sim.op()?;
        sim.inode(file)?;
        if sim.full {
            return Err(io::Error::from_raw_os_error(libc::ENOSPC));
        }
        let fault = sim.take_fault(|f| matches!(f, Fault::WriteError | Fault::TornWrite { .. }));
        let (landed, result) = match fault {
            Some(Fault::WriteError) => (0, Err(eio("write"))),
            Some(Fault::TornWrite { keep }) => (keep.min(bytes.len()), Err(eio("torn write"))),
            _ => (bytes.len(), Ok(())),
        };
        let inode = sim.inode(file)?;
        if landed > 0 {
            write_into(&mut inode.current, offset, &bytes[..landed]);
            inode.unsynced.push((offset, bytes[..landed].to_vec()));
        }
        result
    }

    fn sync_file(&self, file: &SimFile) -> io::Result<()> {
        let mut sim = self.lock_op();
        sim.op()?;
        sim.inode(file)?;
        if sim.take_fault(|f| *f == Fault::SyncError).is_some() {
            return Err(eio("fsync"));
        }
        let inode = sim.inode(file)?;
        inode.durable = inode.current.clone();
        inode.unsynced.clear();
        Ok(())
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let mut sim = self.lock_op();
        sim.op()?;
        if sim.take_fault(|f| *f == Fault::RenameError).is_some() {
            return Err(eio("rename"));
        }
        let inode = sim
            .names
            .remove(from)
            .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
        sim.names.insert(to.to_path_buf(), inode);
        Ok(())
    }

    fn link(&self, from: &Path, to: &Path) -> io::Result<()> {
        let mut sim = self.lock_op();
        sim.op()?;
        if sim.take_fault(|f| *f == Fault::RenameError).is_some() {
            return Err(eio("link"));
        }
        if sim.names.contains_key(to) {
            return Err(io::Error::from(io::ErrorKind::AlreadyExists));
        }
        let inode = *sim
            .names
            .get(from)
            .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
        sim.names.insert(to.to_path_buf(), inode);
        Ok(())
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        let mut sim = self.lock_op();
        sim.op()?;
        sim.names
            .remove(path)
            .map(|_| ())
            .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))
    }

    fn try_lock(&self, _file: &SimFile) -> io::Result<bool> {
        // One process per simulated disk: nothing to exclude.
        Ok(true)
    }

    fn unlock(&self, _file: &SimFile) {}

    fn same_file(&self, path: &Path, file: &SimFile) -> io::Result<bool> {
        let mut sim = self.lock_op();
        sim.op()?;
        Ok(sim.names.get(path) == Some(&file.inode))
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        let mut sim = self.lock_op();
        sim.op()?;
        if sim.take_fault(|f| *f == Fault::DirSyncError).is_some() {
            return Err(eio("fsync of the directory"));
        }
        let in_dir = |p: &Path| p.parent() == Some(dir);
        let kept: Vec<_> = sim
            .durable_names
            .iter()
            .filter(|(p, _)| !in_dir(p))
            .map(|(p, &i)| (p.clone(), i))
            .collect();
        let now: Vec<_> = sim
            .names
            .iter()
            .filter(|(p, _)| in_dir(p))
            .map(|(p, &i)| (p.clone(), i))
            .collect();
        sim.durable_names = kept.into_iter().chain(now).collect();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pending_faults_count_down_as_they_strike_and_a_crash_clears_them() {
        let disk = SimDisk::new(1);
        let file = disk.create_new(Path::new("/d/f")).unwrap();
        disk.fail_next(Fault::WriteError);
        disk.fail_next(Fault::SyncError);
        assert_eq!(disk.pending_faults(), 2);
        assert!(disk.write_at(&file, 0, b"x").is_err());
        assert_eq!(disk.pending_faults(), 1);
        disk.crash();
        assert_eq!(disk.pending_faults(), 0);
    }
}
