//! Where the state directory is, and checks on it: the default directory, container detection
//! (and the text of its warning, which `settings` sends through the warning channel), and refusing network and FUSE file systems where `flock` is not
//! reliable.

use crate::error::{Error, Result};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Environment variable that names the state directory, above every other default.
pub use crate::env::STATE_DIR_ENV;
/// Set to `1` to silence the warning about the default directory in a container.
pub const NO_CONTAINER_WARNING_ENV: &str = "RIMEFLAKE_NO_CONTAINER_WARNING";
/// Set to `1` to allow a state directory on a network or FUSE file system.
pub const ALLOW_NETWORK_FS_ENV: &str = "RIMEFLAKE_ALLOW_NETWORK_FS";

/// The default state directory: `$RIMEFLAKE_STATE_DIR`, else `$XDG_STATE_HOME/rimeflake`, else
/// `$HOME/.local/state/rimeflake`, with the environment `env`.
///
/// # Errors
/// [`ErrorKind::Config`](crate::ErrorKind::Config) when none of these variables is set.
pub(crate) fn default_state_dir_from(env: impl Fn(&str) -> Option<OsString>) -> Result<PathBuf> {
    let set = |name: &str| env(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(dir) = set(STATE_DIR_ENV) {
        return Ok(dir);
    }
    // The XDG spec says a relative XDG_STATE_HOME is invalid and must be ignored.
    if let Some(xdg) = set("XDG_STATE_HOME").filter(|p| p.is_absolute()) {
        return Ok(xdg.join("rimeflake"));
    }
    if let Some(home) = set("HOME") {
        return Ok(home.join(".local/state/rimeflake"));
    }
    Err(Error::config(format!(
        "no state directory: set {STATE_DIR_ENV}, XDG_STATE_HOME or HOME, or give the generator \
         a state directory"
    )))
}

/// Whether this process runs in a container (Docker, Podman, Kubernetes, containerd): where a
/// generator on the default state directory warns ([`Warning::CONTAINER`](crate::Warning::CONTAINER)).
pub fn in_container() -> bool {
    in_container_at(Path::new("/"))
}

/// [`in_container`] with the file system rooted at `root` (for tests).
pub fn in_container_at(root: &Path) -> bool {
    if root.join(".dockerenv").exists() || root.join("run/.containerenv").exists() {
        return true;
    }
    std::fs::read_to_string(root.join("proc/1/cgroup")).is_ok_and(|cgroup| {
        ["docker", "kubepods", "containerd", "libpod"]
            .iter()
            .any(|k| cgroup.contains(k))
    })
}

/// The text of the warning about the default state directory `dir` in a container: a
/// generator built with it warns (kind [`Warning::CONTAINER`](crate::Warning::CONTAINER)),
/// unless `RIMEFLAKE_NO_CONTAINER_WARNING=1`. A directory chosen with `RIMEFLAKE_STATE_DIR` (a
/// volume shared on purpose, say) or given to the builder is not warned about.
pub fn container_warning(dir: &Path) -> String {
    format!(
        "running in a container with the default state directory {}: local worker leases only \
         coordinate the processes that share this directory, so generators in other containers \
         can take the same worker IDs. Give each container its own worker ID \
         (RIMEFLAKE_WORKER_ID) or share one state directory between them (RIMEFLAKE_STATE_DIR \
         on a volume they all mount); set {NO_CONTAINER_WARNING_ENV}=1 to silence this",
        dir.display()
    )
}

/// The name of the network or FUSE file system `path` is on, or `None` for a local one (or
/// when the platform cannot tell).
///
/// # Errors
/// The `statfs` error, such as "not found".
pub fn network_fs_name(path: &Path) -> std::io::Result<Option<String>> {
    #[cfg(any(target_os = "linux", target_os = "android", target_vendor = "apple"))]
    {
        use std::os::unix::ffi::OsStrExt;
        let c_path = std::ffi::CString::new(path.as_os_str().as_bytes())?;
        // SAFETY: statfs is plain data; all-zero is a valid value to be overwritten.
        let mut st: libc::statfs = unsafe { std::mem::zeroed() };
        // SAFETY: a NUL-terminated path and a writable statfs.
        if unsafe { libc::statfs(c_path.as_ptr(), &mut st) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(fs_name_of(&st))
    }
    #[cfg(not(any(target_os = "linux", target_os = "android", target_vendor = "apple")))]
    {
        let _ = path;
        Ok(None)
    }
}

#[cfg(any(target_os = "linux", target_os = "android"))]
fn fs_name_of(st: &libc::statfs) -> Option<String> {
    // Magic numbers from linux/magic.h and the file systems' sources; all of these either lack
    // flock or implement it per client, so two hosts may both hold "the" lock.
    #[allow(clippy::unnecessary_cast)] // f_type's type differs between targets
    let name = match st.f_type as u32 {
        0x6969 => "nfs",
        0x517b => "smb",
        0xff53_4d42 => "cifs",
        0xfe53_4d42 => "smb2",
        0x6573_5546 => "fuse",
        0x0102_1997 => "9p",
        0x00c3_6400 => "ceph",
        0x5346_414f | 0x6b41_4653 => "afs",
        0x7375_7245 => "coda",
        0x564c => "ncp",
        0x7461_636f => "ocfs2",
        0x0116_1970 => "gfs2",
        0x0bd0_0bd0 => "lustre",
        0x2003_0528 => "orangefs",
        0x4750_4653 => "gpfs",
        0x786f_4256 => "vboxsf",
        _ => return None,
    };
    Some(name.to_string())
}

#[cfg(target_vendor = "apple")]
fn fs_name_of(st: &libc::statfs) -> Option<String> {
    let raw: Vec<u8> = st
        .f_fstypename
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    let name = String::from_utf8_lossy(&raw).into_owned();
    let network = ["nfs", "smbfs", "afpfs", "webdav", "cifs", "ftp"].contains(&name.as_str());
    (network || name.contains("fuse")).then_some(name)
}

/// Refuses a directory on a network or FUSE file system unless `allow` (or
/// `RIMEFLAKE_ALLOW_NETWORK_FS=1`).
///
/// # Errors
/// [`ErrorKind::Config`](crate::ErrorKind::Config) naming the file system, or when `statfs`
/// fails.
pub fn check_local_fs(dir: &Path, allow: bool) -> Result<()> {
    let allow = allow || std::env::var_os(ALLOW_NETWORK_FS_ENV).is_some_and(|v| v == "1");
    let fs = network_fs_name(dir)
        .map_err(|e| Error::config(format!("state directory {}: {e}", dir.display())))?;
    refuse_network_fs(dir, fs, allow)
}

fn refuse_network_fs(dir: &Path, fs: Option<String>, allow: bool) -> Result<()> {
    match fs {
        Some(fs) if !allow => Err(Error::config(format!(
            "state directory {} is on a {fs} file system, where file locks are not reliable \
             across hosts: use a local directory, or allow it explicitly \
             ({ALLOW_NETWORK_FS_ENV}=1) if only one host uses it",
            dir.display()
        ))),
        _ => Ok(()),
    }
}

/// Refuses a directory that another user could use to plant files or links, as ssh's
/// `StrictModes` does: it must be owned by this process's effective user or by root, and not be
/// writable by group or others. `follow`: the path itself may be a symlink to the directory (a
/// state directory the user chose); a namespace directory inside it may not.
///
/// # Errors
/// [`ErrorKind::Config`](crate::ErrorKind::Config) naming the path and the command that fixes it.
pub fn check_dir_trusted(dir: &Path, follow: bool) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let meta = if follow {
        std::fs::metadata(dir)
    } else {
        std::fs::symlink_metadata(dir)
    }
    .map_err(|e| Error::config(format!("state directory {}: {e}", dir.display())))?;
    if !meta.is_dir() {
        return Err(Error::config(format!(
            "{} is not a directory{}: refused (remove it; rimeflake creates its directories)",
            dir.display(),
            if meta.file_type().is_symlink() {
                " but a symbolic link"
            } else {
                ""
            }
        )));
    }
    // SAFETY: geteuid cannot fail.
    let euid = unsafe { libc::geteuid() };
    if meta.uid() != euid && meta.uid() != 0 {
        return Err(Error::config(format!(
            "directory {} is owned by uid {}, not by this user (uid {euid}) or root: another \
             user could plant links or take worker IDs there. Fix: chown {euid} {} (or use \
             another state directory)",
            dir.display(),
            meta.uid(),
            dir.display()
        )));
    }
    let mode = meta.mode() & 0o7777;
    if follow {
        // The directories above it too: whoever can rename an entry on the way could swap the
        // whole tree. A sticky directory (/tmp) lets no one rename another's entry.
        if let Ok(real) = std::fs::canonicalize(dir) {
            for up in real.ancestors().skip(1) {
                let Ok(m) = std::fs::metadata(up) else {
                    continue;
                };
                let loose = m.mode() & 0o022 != 0 && m.mode() & 0o1000 == 0;
                if (m.uid() != euid && m.uid() != 0) || loose {
                    return Err(Error::config(format!(
                        "state directory {} lies in {}, which another user can change (owner \
                         uid {}, mode {:04o}): they could swap the state directory. Fix: chmod \
                         go-w {} (or chown it), or use another state directory",
                        dir.display(),
                        up.display(),
                        m.uid(),
                        m.mode() & 0o7777,
                        up.display()
                    )));
                }
            }
        }
    }
    if mode & 0o022 != 0 {
        return Err(Error::config(format!(
            "directory {} is writable by {} (mode {mode:04o}): another user could plant links \
             or take worker IDs there. Fix: chmod go-w {}",
            dir.display(),
            match mode & 0o022 {
                0o020 => "its group",
                0o002 => "everyone",
                _ => "its group and everyone",
            },
            dir.display()
        )));
    }
    Ok(())
}

/// A directory removed on drop, for tests (no tempfile crate).
#[cfg(test)]
pub(crate) struct TempDir(pub PathBuf);

#[cfg(test)]
impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        use std::sync::atomic::{AtomicU64, Ordering};
        static N: AtomicU64 = AtomicU64::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!(
            "rimeflake-{tag}-{}-{n}-{}",
            std::process::id(),
            crate::clock::monotonic_ns()
        ));
        std::fs::create_dir_all(&path).unwrap();
        TempDir(path)
    }
}

#[cfg(test)]
impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
        let map: HashMap<String, OsString> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.into()))
            .collect();
        move |name| map.get(name).cloned()
    }

    #[test]
    fn default_dir_follows_the_documented_order() {
        let all = [
            (STATE_DIR_ENV, "/s"),
            ("XDG_STATE_HOME", "/x"),
            ("HOME", "/h"),
        ];
        assert_eq!(default_state_dir_from(env(&all)).unwrap(), Path::new("/s"));
        assert_eq!(
            default_state_dir_from(env(&all[1..])).unwrap(),
            Path::new("/x/rimeflake")
        );
        assert_eq!(
            default_state_dir_from(env(&all[2..])).unwrap(),
            Path::new("/h/.local/state/rimeflake")
        );
        // Empty and relative values are ignored, as the XDG spec says.
        let odd = [
            (STATE_DIR_ENV, ""),
            ("XDG_STATE_HOME", "rel"),
            ("HOME", "/h"),
        ];
        assert_eq!(
            default_state_dir_from(env(&odd)).unwrap(),
            Path::new("/h/.local/state/rimeflake")
        );
        let err = default_state_dir_from(env(&[])).unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::Config);
        assert!(err.message().contains("HOME"), "{err}");
    }

    #[test]
    fn containers_are_detected_from_their_marks() {
        let root = TempDir::new("container");
        assert!(!in_container_at(&root.0));
        std::fs::create_dir_all(root.0.join("proc/1")).unwrap();
        std::fs::write(root.0.join("proc/1/cgroup"), "0::/init.scope\n").unwrap();
        assert!(!in_container_at(&root.0));
        std::fs::write(
            root.0.join("proc/1/cgroup"),
            "0::/kubepods/burstable/pod1\n",
        )
        .unwrap();
        assert!(in_container_at(&root.0));
        let docker = TempDir::new("docker");
        std::fs::write(docker.0.join(".dockerenv"), "").unwrap();
        assert!(in_container_at(&docker.0));
        assert!(container_warning(&docker.0).contains(NO_CONTAINER_WARNING_ENV));
    }

    #[test]
    fn the_temp_dir_is_local_and_missing_dirs_are_config_errors() {
        let dir = TempDir::new("fs");
        // The test machine's temp dir is local; if it is not, this test says so.
        assert_eq!(network_fs_name(&dir.0).unwrap(), None);
        check_local_fs(&dir.0, false).unwrap();
        let err = check_local_fs(&dir.0.join("missing"), false).unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::Config);
    }

    #[cfg(any(target_os = "linux", target_os = "android"))]
    #[test]
    fn network_and_fuse_file_systems_are_named_and_refused() {
        // SAFETY: statfs is plain data.
        let mut st: libc::statfs = unsafe { std::mem::zeroed() };
        for (magic, name) in [
            (0x6969, "nfs"),
            (0x6573_5546, "fuse"),
            (0xff53_4d42u32, "cifs"),
        ] {
            #[allow(clippy::unnecessary_cast)]
            {
                st.f_type = magic as i64 as _;
            }
            assert_eq!(fs_name_of(&st).as_deref(), Some(name));
        }
        st.f_type = 0xef53; // ext4
        assert_eq!(fs_name_of(&st), None);
        let dir = Path::new("/srv/state");
        let err = refuse_network_fs(dir, Some("nfs".into()), false).unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::Config);
        assert!(
            err.message().contains("/srv/state is on a nfs file system"),
            "{err}"
        );
        assert!(err.message().contains(ALLOW_NETWORK_FS_ENV), "{err}");
        refuse_network_fs(dir, Some("nfs".into()), true).unwrap();
        refuse_network_fs(dir, None, false).unwrap();
    }
}
