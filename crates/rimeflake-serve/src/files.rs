//! The open-file limit: every connection is a file descriptor, so a limit below what
//! `--max-connections` needs makes new connections wait in the listen queue unanswered. At start
//! the soft limit is raised to what is needed (up to the hard limit), or the start is refused
//! with what to change.

use rimeflake::{Error, ErrorKind, Result};

/// Descriptors beyond the connections: the runtime's, the log's, a margin for the core's
/// files and server connections, and the connections being refused (each held a moment).
pub(crate) const MARGIN: u64 = 64;

/// What the open-file limit was and is.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limit {
    pub(crate) soft: u64,
    pub(crate) raised_from: Option<u64>,
}

/// Raises the soft open-file limit to `needed` when it is lower; an error naming the limits
/// and the fix when the hard limit is lower too. `why` says what needs them.
pub(crate) fn ensure(needed: u64, why: &str) -> Result<Limit> {
    #[cfg(unix)]
    {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes the struct we own.
        if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
            return Ok(Limit {
                soft: u64::MAX,
                raised_from: None,
            });
        }
        // rlim_t is u64 where this is built, but not on every platform libc knows.
        #[allow(clippy::unnecessary_cast)]
        let (soft, hard) = (lim.rlim_cur as u64, lim.rlim_max as u64);
        if soft >= needed {
            return Ok(Limit {
                soft,
                raised_from: None,
            });
        }
        if hard < needed {
            return Err(Error::new(
                ErrorKind::Config,
                format!(
                    "{why} need {needed} open files, and this process may open at most {hard} \
                     (its hard limit; soft {soft}): raise it (LimitNOFILE={needed} in a systemd \
                     unit, ulimit -Hn {needed} in a shell, the container's nofile ulimit) or \
                     lower --max-connections"
                ),
            ));
        }
        lim.rlim_cur = needed as libc::rlim_t;
        // SAFETY: setrlimit reads the struct we own; raising the soft limit up to the hard one
        // needs no privilege.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) } != 0 {
            return Err(Error::new(
                ErrorKind::Config,
                format!(
                    "{why} need {needed} open files, and raising the limit from {soft} failed: \
                     {}",
                    std::io::Error::last_os_error()
                ),
            ));
        }
        Ok(Limit {
            soft: needed,
            raised_from: Some(soft),
        })
    }
    #[cfg(not(unix))]
    {
        let _ = why;
        Ok(Limit {
            soft: u64::MAX,
            raised_from: None,
        })
    }
}

/// The descriptors this process has open now (Linux's /proc; a guess elsewhere).
pub(crate) fn open_now() -> u64 {
    std::fs::read_dir("/proc/self/fd").map_or(16, |d| d.count() as u64)
}
