//! [`Disk`]: the few file operations the file store needs, so a simulation can inject faults.
//!
//! [`RealDisk`] is the operating system (`F_FULLFSYNC` on macOS, `fsync` elsewhere). It opens
//! with `O_NOFOLLOW` (a symlink planted at a state path is refused, never followed), `O_NONBLOCK`
//! (a FIFO planted there cannot hang the open) and `O_CLOEXEC`, requires a regular file, caps
//! every read, and creates files only exclusively (`O_EXCL`, mode 0600), so it never truncates
//! or writes through a name someone else prepared. `SimDisk` (in
//! `testing/sim_disk.rs`) is an in-memory disk for tests and simulations.

use std::fmt::Debug;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::Path;

/// The file operations the file store writes through.
pub trait Disk: Send + Sync + Debug + 'static {
    /// An open file.
    type File: Send + Sync + Debug;
    /// Opens an existing regular file for reading and writing; `None` when it does not exist.
    ///
    /// # Errors
    /// Any I/O error but "not found"; a symlink, FIFO, device or directory at `path` is an
    /// error, never opened through.
    fn open(&self, path: &Path) -> io::Result<Option<Self::File>>;
    /// Creates a new file (mode 0600) for reading and writing; fails when `path` exists.
    ///
    /// # Errors
    /// Any I/O error; `AlreadyExists` when something is at `path`.
    fn create_new(&self, path: &Path) -> io::Result<Self::File>;
    /// The whole content of the file, at most `cap` bytes.
    ///
    /// # Errors
    /// Any I/O error; `InvalidData` when the file holds more than `cap` bytes.
    fn read_all(&self, file: &Self::File, cap: usize) -> io::Result<Vec<u8>>;
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
    /// Makes `from`'s file also appear at `to`; fails when `to` exists (an exclusive "rename").
    ///
    /// # Errors
    /// Any I/O error; `AlreadyExists` when something is at `to`.
    fn link(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Removes the name `path` (not a directory).
    ///
    /// # Errors
    /// Any I/O error.
    fn remove(&self, path: &Path) -> io::Result<()>;
    /// Makes the directory's entries (creations, renames) durable.
    ///
    /// # Errors
    /// Any I/O error.
    fn sync_dir(&self, dir: &Path) -> io::Result<()>;
    /// Tries to take an exclusive advisory lock on `file` without blocking: `false` when another
    /// open file holds it.
    ///
    /// # Errors
    /// Any I/O error.
    fn try_lock(&self, file: &Self::File) -> io::Result<bool>;
    /// Drops the lock [`Disk::try_lock`] took.
    fn unlock(&self, file: &Self::File);
    /// Whether `path` (not followed if it is a symlink) still names the open `file`.
    ///
    /// # Errors
    /// Any I/O error but "not found" (which is `false`).
    fn same_file(&self, path: &Path, file: &Self::File) -> io::Result<bool>;
}

/// Takes `flock` lock `op` (`LOCK_EX` or `LOCK_SH`) on `file` without blocking: `false` when
/// another open file holds a conflicting lock. Retried on EINTR.
pub(crate) fn try_flock(file: &File, op: libc::c_int) -> io::Result<bool> {
    loop {
        // SAFETY: a valid open descriptor.
        if unsafe { libc::flock(file.as_raw_fd(), op | libc::LOCK_NB) } == 0 {
            return Ok(true);
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::EWOULDBLOCK) => return Ok(false),
            _ => return Err(e),
        }
    }
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

/// The flags of every open of a file rimeflake keeps: never through a symlink, never blocking
/// on a FIFO, never inherited by a child program.
pub(crate) const SAFE_OPEN_FLAGS: i32 = libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC;

/// Turns the error of an `O_NOFOLLOW` open of a symlink (ELOOP, or EMLINK on some BSDs) into
/// one that says what happened.
fn explain_open_error(path: &Path, e: io::Error) -> io::Error {
    match e.raw_os_error() {
        Some(libc::ELOOP) | Some(libc::EMLINK) => io::Error::new(
            e.kind(),
            format!(
                "{} is a symbolic link: refused (rimeflake never follows links in its state \
                 directory; remove the link)",
                path.display()
            ),
        ),
        _ => e,
    }
}

/// Requires `file` (opened from `path`) to be a regular file: a FIFO, device or directory
/// planted at a state path is refused with a message that names it.
pub(crate) fn require_regular(path: &Path, file: &File) -> io::Result<()> {
    let meta = file.metadata()?;
    if meta.file_type().is_file() {
        return Ok(());
    }
    let ft = meta.file_type();
    use std::os::unix::fs::FileTypeExt;
    let what = if ft.is_fifo() {
        "a FIFO"
    } else if ft.is_char_device() || ft.is_block_device() {
        "a device"
    } else if ft.is_dir() {
        "a directory"
    } else if ft.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    };
    Err(io::Error::new(
        io::ErrorKind::InvalidData,
        format!(
            "{} is {what}, not a regular file: refused (remove it; rimeflake recreates its \
             files)",
            path.display()
        ),
    ))
}

/// Opens the existing regular file `path` without following a symlink and without blocking;
/// `None` when it does not exist. `write` opens it for writing too.
pub(crate) fn open_regular(path: &Path, write: bool) -> io::Result<Option<File>> {
    let opened = OpenOptions::new()
        .read(true)
        .write(write)
        .custom_flags(SAFE_OPEN_FLAGS)
        .open(path);
    let file = match opened {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(explain_open_error(path, e)),
    };
    require_regular(path, &file)?;
    Ok(Some(file))
}

/// Reads all of `file`, at most `cap` bytes: a file that grew past it (or a link to an endless
/// device, were one ever opened) is an error, not an unbounded read.
pub(crate) fn read_capped(file: &File, cap: usize) -> io::Result<Vec<u8>> {
    // Positioned reads: the descriptor's offset is never used, so no seek is needed.
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let want = buf.len().min(cap + 1 - out.len());
        match file.read_at(&mut buf[..want], out.len() as u64) {
            Ok(0) => return Ok(out),
            Ok(n) => {
                out.extend_from_slice(&buf[..n]);
                if out.len() > cap {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("larger than {cap} bytes: not a file rimeflake wrote"),
                    ));
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(out),
            Err(e) => return Err(e),
        }
    }
}

/// Reads the regular file `path` (no symlink, no FIFO), at most `cap` bytes; `None` when it
/// does not exist.
pub(crate) fn read_regular(path: &Path, cap: usize) -> io::Result<Option<Vec<u8>>> {
    match open_regular(path, false)? {
        None => Ok(None),
        Some(file) => read_capped(&file, cap)
            .map(Some)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display()))),
    }
}

/// Creates the new file `path` (mode 0600) exclusively: never through a symlink or over an
/// existing file.
pub(crate) fn create_exclusive(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(SAFE_OPEN_FLAGS)
        .open(path)
        .map_err(|e| explain_open_error(path, e))
}

impl Disk for RealDisk {
    type File = File;

    fn open(&self, path: &Path) -> io::Result<Option<File>> {
        open_regular(path, true)
    }

    fn create_new(&self, path: &Path) -> io::Result<File> {
        create_exclusive(path)
    }

    fn read_all(&self, file: &File, cap: usize) -> io::Result<Vec<u8>> {
        read_capped(file, cap)
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

    fn link(&self, from: &Path, to: &Path) -> io::Result<()> {
        std::fs::hard_link(from, to)
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        std::fs::remove_file(path)
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        let dir = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_CLOEXEC | libc::O_DIRECTORY | libc::O_NOFOLLOW)
            .open(dir)?;
        full_sync(&dir)
    }

    fn try_lock(&self, file: &File) -> io::Result<bool> {
        try_flock(file, libc::LOCK_EX)
    }

    fn unlock(&self, file: &File) {
        // SAFETY: a valid open descriptor; unlocking our own lock.
        unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_UN) };
    }

    fn same_file(&self, path: &Path, file: &File) -> io::Result<bool> {
        let fd = file.metadata()?;
        match std::fs::symlink_metadata(path) {
            Ok(m) => Ok(m.file_type().is_file() && m.dev() == fd.dev() && m.ino() == fd.ino()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e),
        }
    }
}
