//! The signals that stop the service: SIGTERM (systemd, Kubernetes), SIGINT (Ctrl-C) and
//! SIGHUP (a closed terminal). The first starts a clean stop; a second, of any of them, ends
//! the process at once.

#[cfg(unix)]
use tokio::signal::unix::{signal, Signal, SignalKind};

/// The stop signals, listened to from the service's start until the process ends.
pub(crate) struct Signals {
    #[cfg(unix)]
    term: Option<Signal>,
    #[cfg(unix)]
    int: Option<Signal>,
    #[cfg(unix)]
    hup: Option<Signal>,
}

impl Signals {
    /// Starts listening (inside the runtime). A signal that cannot be listened to keeps its
    /// default action, which ends the process.
    pub(crate) fn listen() -> Signals {
        #[cfg(unix)]
        {
            Signals {
                term: signal(SignalKind::terminate()).ok(),
                int: signal(SignalKind::interrupt()).ok(),
                hup: signal(SignalKind::hangup()).ok(),
            }
        }
        #[cfg(not(unix))]
        Signals {}
    }

    /// The next stop signal's number.
    pub(crate) async fn next(&mut self) -> i32 {
        #[cfg(unix)]
        {
            tokio::select! {
                () = recv(&mut self.term) => libc::SIGTERM,
                () = recv(&mut self.int) => libc::SIGINT,
                () = recv(&mut self.hup) => libc::SIGHUP,
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            2
        }
    }
}

#[cfg(unix)]
async fn recv(s: &mut Option<Signal>) {
    match s {
        Some(s) => {
            s.recv().await;
        }
        None => std::future::pending().await,
    }
}

/// The name of signal `n`, for the log.
pub(crate) fn name(n: i32) -> &'static str {
    match n {
        15 => "SIGTERM",
        2 => "SIGINT",
        1 => "SIGHUP",
        _ => "a signal",
    }
}
