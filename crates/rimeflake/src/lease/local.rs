//! [`LocalLease`]: a worker ID leased from a local directory with `flock`, the embedded default.
//!
//! `DIR/<namespace>/` holds `layout` (the namespace's layout fingerprint, written once) and, per
//! worker ID, `worker-00005.lock` and `worker-00005.state` (the durable state beside its lock).
//! A lease is an exclusive `flock` on the lock file: the kernel drops it when the holder exits,
//! however it exits, so a SIGKILLed process frees its worker ID at once. Lock files are never
//! deleted (deleting one would let two processes lock two different files of the same name), and
//! after locking, the locked file's identity is checked against the path; the state store a
//! lease hands out checks it again before every save ([`LockIdentity`]), so a holder whose lock
//! file was deleted, moved over or replaced by a link stops issuing IDs before a newcomer that
//! locked the new file can read the state.
//!
//! Files are opened without following symlinks and without blocking (a FIFO planted as a lock
//! file is refused, not waited on), created 0600, in directories created 0700; a state or
//! namespace directory that another user owns or can write to is refused (see
//! [`check_dir_trusted`](crate::lease::dirs::check_dir_trusted)).

use crate::error::{Error, ErrorKind, Result};
use crate::layout::Layout;
use crate::lease::dirs::{check_dir_trusted, check_local_fs};
use crate::lease::namespace::{create_dir_durable, settle_layout};
use crate::state::disk::{read_regular, require_regular, SAFE_OPEN_FLAGS};
use crate::state::{FileStore, LeaseGuard};
use std::fs::{File, OpenOptions};
use std::io;
use std::ops::RangeInclusive;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Which worker ID to lease.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LeaseRequest {
    /// The lowest free worker ID in `range`.
    Any {
        /// The worker IDs this directory may lease.
        range: RangeInclusive<u64>,
    },
    /// Exactly this worker ID, or an error when another process holds it.
    Exact(u64),
}

/// Options of [`LocalLease::acquire_with`].
#[derive(Clone, Debug, Default)]
pub struct LeaseOptions {
    /// Allow a directory on a network or FUSE file system (where `flock` may not exclude other
    /// hosts). Also allowed by `RIMEFLAKE_ALLOW_NETWORK_FS=1`.
    pub allow_network_fs: bool,
}

/// Who holds (or last held) a lock file, as its holder wrote it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LockHolder {
    /// The holder's process ID.
    pub pid: Option<u32>,
    /// The holder's host name.
    pub host: Option<String>,
    /// When the holder took the lease, in Unix ms.
    pub started_ms: Option<u64>,
}

/// A leased worker ID: held until [`LocalLease::release`], drop, or the process's exit.
#[derive(Debug)]
pub struct LocalLease {
    file: Option<File>,
    worker_id: u64,
    ns_dir: PathBuf,
    lock_path: PathBuf,
    /// The locked file's device and inode.
    identity: (u64, u64),
    /// The layout's time unit, for the state store's high-water step.
    unit_ms: u64,
    abandoned: bool,
}

/// The identity of a locked lock file, checked before every save of the store its lease
/// handed out: the path must still name the very file that is locked.
#[derive(Debug)]
pub struct LockIdentity {
    path: PathBuf,
    dev: u64,
    ino: u64,
    worker_id: u64,
}

impl LeaseGuard for LockIdentity {
    fn check(&self) -> Result<()> {
        let found = match std::fs::symlink_metadata(&self.path) {
            Ok(m) if m.file_type().is_file() && m.dev() == self.dev && m.ino() == self.ino => {
                return Ok(())
            }
            Ok(m) if m.file_type().is_symlink() => "replaced by a symbolic link".to_string(),
            Ok(_) => "replaced by another file".to_string(),
            Err(e) if e.kind() == io::ErrorKind::NotFound => "deleted".to_string(),
            Err(e) => format!("unreadable ({e})"),
        };
        Err(Error::new(
            ErrorKind::Lease,
            format!(
                "the lock file {} of worker ID {} was {found} while this process held it: \
                 another process can now take the worker ID, so this process stops issuing IDs \
                 (restart it to take a lease again; never delete, move or link lock files)",
                self.path.display(),
                self.worker_id
            ),
        ))
    }
}

/// The lock file name of `worker_id`.
pub fn lock_file_name(worker_id: u64) -> String {
    format!("worker-{worker_id:05}.lock")
}

/// The state file name of `worker_id`.
pub fn state_file_name(worker_id: u64) -> String {
    format!("worker-{worker_id:05}.state")
}

/// The worker ID of a lock file name such as `worker-00005.lock`.
pub fn parse_lock_file_name(name: &str) -> Option<u64> {
    let digits = name.strip_prefix("worker-")?.strip_suffix(".lock")?;
    (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| digits.parse().ok())
        .flatten()
}

/// `text` as one word of a POSIX shell: as it is when it holds nothing a shell reads, else in
/// single quotes (a quote in it as `'\''`).
fn shell_word(text: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-./:=@%+,".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// Checks a namespace name: it becomes a directory name, so no separators, no `.`/`..`.
///
/// # Errors
/// [`ErrorKind::Config`] saying what is wrong.
pub fn validate_namespace(namespace: &str) -> Result<()> {
    let bad = namespace.is_empty()
        || namespace == "."
        || namespace == ".."
        || namespace.len() > 200
        || namespace.contains(['/', '\\', '\0', '\n', '\r']);
    if bad {
        return Err(Error::config(format!(
            "namespace {namespace:?} ({} bytes): must be 1 to 200 bytes of UTF-8, not \".\" or \
             \"..\", with no '/', '\\', newline or NUL (it names a directory, and keys on a \
             server)",
            namespace.len()
        )));
    }
    Ok(())
}

fn lease_err(what: &str, path: &Path, e: impl std::fmt::Display) -> Error {
    Error::new(ErrorKind::Lease, format!("{what} {}: {e}", path.display()))
}

/// Takes an exclusive `flock` on `path` without blocking: `None` when another open file holds
/// it. Retries when the file was replaced between open and lock.
fn try_lock(path: &Path) -> Result<Option<File>> {
    for _ in 0..16 {
        // No symlink followed, no FIFO waited on, nothing truncated: a planted name is refused.
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .custom_flags(SAFE_OPEN_FLAGS)
            .open(path)
            .map_err(|e| {
                let e = match e.raw_os_error() {
                    Some(libc::ELOOP) | Some(libc::EMLINK) => {
                        io::Error::new(e.kind(), "it is a symbolic link: refused (remove the link)")
                    }
                    _ => e,
                };
                lease_err("cannot open lock file", path, e)
            })?;
        require_regular(path, &file).map_err(|e| lease_err("cannot use lock file", path, e))?;
        if !crate::state::disk::try_flock(&file, libc::LOCK_EX)
            .map_err(|e| lease_err("cannot lock", path, e))?
        {
            return Ok(None);
        }
        // Locked an open file: it is the lease only if the path still names that file (someone
        // may have deleted or replaced it; then a newcomer would lock the new one).
        let fd_meta = file
            .metadata()
            .map_err(|e| lease_err("cannot stat", path, e))?;
        match std::fs::symlink_metadata(path) {
            Ok(m) if m.dev() == fd_meta.dev() && m.ino() == fd_meta.ino() => return Ok(Some(file)),
            _ => continue, // dropping `file` releases its lock: nobody else has it open
        }
    }
    Err(lease_err(
        "lock file keeps being replaced",
        path,
        "is another program deleting lock files?",
    ))
}

/// This host's name (`gethostname`).
pub(crate) fn hostname() -> Option<String> {
    let mut buf = [0u8; 256];
    // SAFETY: a writable buffer of the given length.
    if unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } != 0 {
        return None;
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    Some(String::from_utf8_lossy(&buf[..end]).into_owned())
}

/// Reads who holds (or last held) the lock file at `path`.
pub fn read_holder(path: &Path) -> LockHolder {
    // Capped, no symlink, no FIFO: a lock file only ever holds three short lines.
    let bytes = read_regular(path, 4096).ok().flatten().unwrap_or_default();
    let text = String::from_utf8_lossy(&bytes);
    let field = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix(' '))
    };
    LockHolder {
        pid: field("pid").and_then(|v| v.parse().ok()),
        host: field("host").map(str::to_string),
        started_ms: field("started_ms").and_then(|v| v.parse().ok()),
    }
}

fn holder_text(h: &LockHolder) -> String {
    match (h.pid, &h.host) {
        (Some(pid), _) if pid == std::process::id() => format!("pid {pid}: this process"),
        (Some(pid), Some(host)) => format!("pid {pid} on {host}"),
        (Some(pid), None) => format!("pid {pid}"),
        _ => "holder unknown".to_string(),
    }
}

impl LocalLease {
    /// Leases a worker ID in `dir/namespace` for a generator with `layout`.
    ///
    /// # Errors
    /// [`ErrorKind::Config`] for a bad namespace or worker ID, a network file system, or a
    /// namespace created with another layout; [`ErrorKind::Lease`] when an exact worker ID is
    /// held or a lock cannot be taken; [`ErrorKind::NoFreeWorker`] when the whole range is held;
    /// [`ErrorKind::State`] when the layout file cannot be written or read.
    pub fn acquire(
        dir: &Path,
        namespace: &str,
        layout: &Layout,
        request: LeaseRequest,
    ) -> Result<LocalLease> {
        LocalLease::acquire_with(dir, namespace, layout, request, &LeaseOptions::default())
    }

    /// [`LocalLease::acquire`] with options.
    ///
    /// # Errors
    /// As [`LocalLease::acquire`].
    pub fn acquire_with(
        dir: &Path,
        namespace: &str,
        layout: &Layout,
        request: LeaseRequest,
        options: &LeaseOptions,
    ) -> Result<LocalLease> {
        validate_namespace(namespace)?;
        let max = layout.max_worker_id();
        let range = match &request {
            LeaseRequest::Exact(id) => *id..=*id,
            LeaseRequest::Any { range } => range.clone(),
        };
        if range.is_empty() || *range.end() > max {
            return Err(Error::config(format!(
                "worker IDs {range:?}: this layout's worker IDs are 0..={max}"
            )));
        }
        let ns_dir = dir.join(namespace);
        create_dir_durable(&ns_dir)
            .map_err(|e| lease_err("cannot create lease directory", &ns_dir, e))?;
        check_dir_trusted(dir, true)?;
        check_dir_trusted(&ns_dir, false)?;
        check_local_fs(&ns_dir, options.allow_network_fs)?;
        settle_layout(&ns_dir, namespace, layout)?;
        let exact = matches!(request, LeaseRequest::Exact(_));
        for worker_id in range.clone() {
            let lock_path = ns_dir.join(lock_file_name(worker_id));
            let mut file = try_lock(&lock_path)?;
            // `rimeflake state show` probes locks for an instant: retry an exact ID briefly
            // rather than fail because of a probe.
            for _ in 0..5 {
                if file.is_some() || !exact {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(2));
                file = try_lock(&lock_path)?;
            }
            let Some(file) = file else {
                if exact {
                    return Err(Error::new(
                        ErrorKind::Lease,
                        format!(
                            "worker ID {worker_id} of namespace {namespace} in {} is held by \
                             another process ({})",
                            dir.display(),
                            holder_text(&read_holder(&lock_path))
                        ),
                    ));
                }
                continue;
            };
            let me = LockHolder {
                pid: Some(std::process::id()),
                host: hostname(),
                started_ms: Some(crate::clock::system_now_ms()),
            };
            let text = format!(
                "pid {}\nhost {}\nstarted_ms {}\n",
                me.pid.unwrap_or(0),
                me.host.unwrap_or_default(),
                me.started_ms.unwrap_or(0)
            );
            // Informational (for `state show` and error messages): not synced.
            let _ = file
                .set_len(0)
                .and_then(|()| file.write_all_at(text.as_bytes(), 0));
            let meta = file
                .metadata()
                .map_err(|e| lease_err("cannot stat", &lock_path, e))?;
            return Ok(LocalLease {
                file: Some(file),
                worker_id,
                ns_dir,
                lock_path,
                identity: (meta.dev(), meta.ino()),
                unit_ms: layout.unit_ms(),
                abandoned: false,
            });
        }
        let count = range.end() - range.start() + 1;
        Err(Error::new(
            ErrorKind::NoFreeWorker,
            format!(
                "all {count} worker IDs {}..={} of namespace {namespace} in {} are held by other \
                 processes: stop one, widen the worker range, or use another state directory",
                range.start(),
                range.end(),
                dir.display()
            ),
        ))
    }

    /// The leased worker ID.
    pub fn worker_id(&self) -> u64 {
        self.worker_id
    }

    #[cfg(test)]
    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.lock_path
    }

    /// The state file of this worker ID, beside its lock.
    pub fn state_path(&self) -> PathBuf {
        self.ns_dir.join(state_file_name(self.worker_id))
    }

    /// The durable state store of this worker ID (the state file beside the lock). It checks
    /// before every save that the lock file is still the one this lease locked
    /// ([`LockIdentity`]), and keeps its high-water record in steps of about 5 s.
    ///
    /// # Errors
    /// [`ErrorKind::Lease`] after [`LocalLease::abandon_after_fork`];
    /// [`ErrorKind::Config`] for a bad `clock_ids`.
    pub fn state_store(&self, clock_ids: usize) -> Result<FileStore> {
        if self.abandoned {
            return Err(lease_err(
                "lease abandoned after fork",
                &self.lock_path,
                "a forked child must take its own lease",
            ));
        }
        let guard = LockIdentity {
            path: self.lock_path.clone(),
            dev: self.identity.0,
            ino: self.identity.1,
            worker_id: self.worker_id,
        };
        Ok(FileStore::open(self.state_path(), clock_ids)?
            .with_guard(Arc::new(guard))
            .with_high_water_step(crate::state::hw::STEP_MS.div_ceil(self.unit_ms))
            .with_reset_command(self.reset_command()))
    }

    /// The command that resets this worker ID's state file: `rimeflake state reset --worker 5
    /// --namespace default --state-dir /var/lib/ids`, each word ready for a shell.
    fn reset_command(&self) -> String {
        let namespace = self.ns_dir.file_name().unwrap_or_default();
        let dir = self.ns_dir.parent().unwrap_or(Path::new("."));
        format!(
            "rimeflake state reset --worker {} --namespace {} --state-dir {}",
            self.worker_id,
            shell_word(&namespace.to_string_lossy()),
            shell_word(&dir.to_string_lossy())
        )
    }

    /// The lock's descriptor, for an at-fork child handler that closes it itself (then call
    /// [`LocalLease::forget_after_fork`], not [`LocalLease::abandon_after_fork`]).
    pub fn lock_fd(&self) -> Option<std::os::unix::io::RawFd> {
        self.file.as_ref().map(AsRawFd::as_raw_fd)
    }

    /// In a forked child whose at-fork handler already closed [`LocalLease::lock_fd`]: forgets
    /// the descriptor without closing it again (its number may belong to another file by now)
    /// and without unlocking.
    pub fn forget_after_fork(&mut self) {
        self.abandoned = true;
        if let Some(file) = self.file.take() {
            let _ = std::os::unix::io::IntoRawFd::into_raw_fd(file);
        }
    }

    #[cfg(test)]
    /// Whether the lease was abandoned or forgotten after a fork.
    pub fn is_abandoned(&self) -> bool {
        self.abandoned
    }

    /// Frees the lease: unlock, then close.
    pub fn release(self) {
        drop(self)
    }

    #[cfg(test)]
    /// In a forked child: closes the inherited descriptor WITHOUT unlocking. The child's
    /// descriptor shares the parent's open file description, and so its `flock`: unlocking here
    /// would free the parent's lease. Only `close` is called (async-signal-safe).
    pub fn abandon_after_fork(&mut self) {
        self.abandoned = true;
        drop(self.file.take());
    }
}

impl Drop for LocalLease {
    fn drop(&mut self) {
        if let Some(file) = self.file.take() {
            if !self.abandoned {
                // Unlock explicitly: a forked child that still holds a copy of the descriptor
                // would otherwise keep the lock alive after this close.
                // SAFETY: a valid open descriptor.
                unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_UN) };
            }
        }
    }
}
