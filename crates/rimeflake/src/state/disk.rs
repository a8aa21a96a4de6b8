//! [`Disk`]: the few file operations the file store needs, so a simulation can inject faults.
//!
//! [`RealDisk`] is the operating system (`F_FULLFSYNC` on macOS, `fsync` elsewhere; files opened
//! close-on-exec). [`SimDisk`] (in `sim.rs`) is an in-memory disk for tests and simulations.

use std::fmt::Debug;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::Path;

pub use super::sim::{Fault, SimDisk, SimFile};

/// The file operations the file store writes through.
pub trait Disk: Send + Sync + Debug + 'static {
    /// An open file.
    type File: Send + Sync + Debug;
    /// Opens an existing file for reading and writing; `None` when it does not exist.
    ///
    /// # Errors
    /// Any I/O error but "not found".
    fn open(&self, path: &Path) -> io::Result<Option<Self::File>>;
    /// Creates (or truncates) a file for reading and writing.
    ///
    /// # Errors
    /// Any I/O error.
    fn create(&self, path: &Path) -> io::Result<Self::File>;
    /// The whole content of the file.
    ///
    /// # Errors
    /// Any I/O error.
    fn read_all(&self, file: &Self::File) -> io::Result<Vec<u8>>;
    /// Writes all of `bytes` at `offset`.
    ///
    /// # Errors
    /// Any I/O error; part of `bytes` may have landed.
    fn write_at(&self, file: &Self::File, offset: u64, bytes: &[u8]) -> io::Result<()>;
    /// Makes the file's content durable.
    ///
    /// # Errors
    /// Any I/O error: nothing written since the last successful sync may be trusted.
    fn sync_file(&self, file: &Self::File) -> io::Result<()>;
    /// Renames `from` to `to`, replacing `to`.
    ///
    /// # Errors
    /// Any I/O error.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Makes the directory's entries (creations, renames) durable.
    ///
    /// # Errors
    /// Any I/O error.
    fn sync_dir(&self, dir: &Path) -> io::Result<()>;
}

/// The operating system's file system.
#[derive(Clone, Copy, Debug, Default)]
pub struct RealDisk;

/// Flushes `file` to stable storage: `F_FULLFSYNC` on macOS, where `fsync` only reaches the
/// drive's cache; `fsync` elsewhere.
pub(crate) fn full_sync(file: &File) -> io::Result<()> {
    #[cfg(target_vendor = "apple")]
    {
        // SAFETY: a valid open descriptor; F_FULLFSYNC takes no argument.
        if unsafe { libc::fcntl(file.as_raw_fd(), libc::F_FULLFSYNC) } == 0 {
            return Ok(());
        }
        // Some file systems (network, FAT) do not support F_FULLFSYNC: fall back to fsync.
    }
    // SAFETY: a valid open descriptor.
    if unsafe { libc::fsync(file.as_raw_fd()) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

impl Disk for RealDisk {
    type File = File;

    fn open(&self, path: &Path) -> io::Result<Option<File>> {
        let opened = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_CLOEXEC)
            .open(path);
        match opened {
            Ok(file) => Ok(Some(file)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn create(&self, path: &Path) -> io::Result<File> {
        OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o644)
            .custom_flags(libc::O_CLOEXEC)
            .open(path)
    }

    fn read_all(&self, file: &File) -> io::Result<Vec<u8>> {
        // Positioned reads: the descriptor's offset is never used, so no seek is needed.
        let mut out = Vec::new();
        let mut buf = [0u8; 8192];
        loop {
            match file.read_at(&mut buf, out.len() as u64) {
                Ok(0) => return Ok(out),
                Ok(n) => out.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    fn write_at(&self, file: &File, offset: u64, bytes: &[u8]) -> io::Result<()> {
        file.write_all_at(bytes, offset)
    }

    fn sync_file(&self, file: &File) -> io::Result<()> {
        full_sync(file)
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        std::fs::rename(from, to)
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        let dir = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_CLOEXEC | libc::O_DIRECTORY)
            .open(dir)?;
        full_sync(&dir)
    }
}
