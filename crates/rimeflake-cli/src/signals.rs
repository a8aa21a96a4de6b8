//! SIGINT, SIGTERM and SIGHUP for the commands that hold a lease (`gen`, `bench`): the first
//! one asks the command to stop, close its generator (the lease released, the state stored as
//! closed) and then die by that signal, so a shell still sees 130, 143 or 129; a second one
//! ends the process at once.
//!
//! The three signals are blocked in every thread (threads inherit the mask of the thread that
//! starts them, and [`install`] runs before any) and taken by one thread of their own with
//! `sigwait`: no handler runs in the generator's threads, and no system call of theirs is
//! interrupted. That thread wakes the main thread with `SIGURG` (ignored by default, and sent by
//! the kernel only to an owner set with `F_SETOWN`, which nothing here sets), whose empty
//! handler makes a write blocked on a full pipe return, so that [`Stdout`] stops waiting for a
//! reader that has stopped reading.

use crate::fail::Failure;
use std::io::{self, Write};

/// The signal caught first, if any; always `None` without [`install`].
pub fn caught() -> Option<i32> {
    imp::caught()
}

/// Whether a signal was caught: the hook for the core's waits (`build_with`, `fill_with`).
pub fn interrupted() -> bool {
    caught().is_some()
}

pub use imp::{die_by, install};

/// Says why the command failed on its way out (a failure to close, say), then ends the process
/// by `sig`.
pub fn fail_by(failure: Failure, sig: i32) -> ! {
    if let Failure::Error { message, .. } = failure {
        // Not eprintln: stderr may be gone (SIGHUP), and a failed print must not panic.
        let _ = writeln!(
            io::stderr(),
            "rimeflake: error: {}",
            crate::fail::one_line(&message)
        );
    }
    die_by(sig)
}

/// Standard output, written straight to its descriptor. Until a signal, writes block as
/// usual; a write blocked on a full pipe when one comes returns, and from then on a write
/// waits at most [`READER_WAIT`] for the reader to make room, then gives up: the generator is
/// closed even when the reader has stopped reading (`| less`). std's own stdout would retry the
/// write, and block until the reader reads.
pub struct Stdout(imp::Out);

/// After a signal, how long a write waits for the reader of a full pipe.
pub const READER_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

impl Stdout {
    pub fn new() -> Self {
        Stdout(imp::Out::new())
    }
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

#[cfg(unix)]
mod imp {
    use std::fs::File;
    use std::io::{self, Write};
    use std::mem::ManuallyDrop;
    use std::os::fd::FromRawFd;
    use std::sync::atomic::{AtomicI32, Ordering::SeqCst};
    use std::sync::Once;

    const STOP: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];
    const WAKE: libc::c_int = libc::SIGURG;

    static CAUGHT: AtomicI32 = AtomicI32::new(0);

    pub fn caught() -> Option<i32> {
        Some(CAUGHT.load(SeqCst)).filter(|&s| s != 0)
    }

    /// The stop signals this process does not ignore: one ignored by whoever started it
    /// (`nohup` ignores SIGHUP, a shell script's `&` SIGINT) stays ignored.
    fn stop_set() -> libc::sigset_t {
        // SAFETY: sigemptyset initialises the set it is given, sigaction with no new action
        // only reads the current one, and sigaddset adds valid signals.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            for sig in STOP {
                let mut now: libc::sigaction = std::mem::zeroed();
                let read = libc::sigaction(sig, std::ptr::null(), &mut now) == 0;
                if !(read && now.sa_sigaction == libc::SIG_IGN) {
                    libc::sigaddset(&mut set, sig);
                }
            }
            set
        }
    }

    extern "C" fn wake(_: libc::c_int) {}

    /// Takes SIGINT, SIGTERM and SIGHUP from now on. Call it from the main thread before any
    /// other thread starts (later calls do nothing).
    pub fn install() {
        static ONCE: Once = Once::new();
        ONCE.call_once(|| {
            let set = stop_set();
            // SAFETY: pthread_self is always valid; the sigaction struct is zeroed and then
            // given a handler that does nothing, without SA_RESTART so that a blocked write
            // returns EINTR.
            let main = unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = wake as extern "C" fn(libc::c_int) as libc::sighandler_t;
                libc::sigemptyset(&mut action.sa_mask);
                libc::sigaction(WAKE, &action, std::ptr::null_mut());
                libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
                libc::pthread_self()
            };
            // Without this thread the signals would stay blocked: better to keep their default.
            let started = std::thread::Builder::new()
                .name("rimeflake-signals".into())
                .spawn(move || loop {
                    let mut sig: libc::c_int = 0;
                    // SAFETY: `set` is initialised and `sig` is ours to write.
                    if unsafe { libc::sigwait(&set, &mut sig) } != 0 {
                        continue;
                    }
                    if CAUGHT.compare_exchange(0, sig, SeqCst, SeqCst).is_ok() {
                        // SAFETY: the main thread outlives this one (the process ends with it).
                        unsafe { libc::pthread_kill(main, WAKE) };
                    } else {
                        die_by(sig);
                    }
                });
            if started.is_err() {
                // SAFETY: as above.
                unsafe { libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut()) };
            }
        });
    }

    /// Ends the process by `sig`, as the signal's default action would have.
    pub fn die_by(sig: i32) -> ! {
        // SAFETY: setting a default disposition, raising a signal at this thread and unblocking
        // it here: its default action ends the process.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
            libc::raise(sig);
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, sig);
            libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        }
        std::process::exit(128 + sig)
    }

    /// Descriptor 1 (never closed here), and whether a write gave up after a signal.
    pub struct Out {
        fd: ManuallyDrop<File>,
        gave_up: bool,
    }

    impl Out {
        pub fn new() -> Self {
            Out {
                // SAFETY: descriptor 1 stays open for the process's life, and ManuallyDrop
                // never closes it.
                fd: ManuallyDrop::new(unsafe { File::from_raw_fd(1) }),
                gave_up: false,
            }
        }

        fn give_up(&mut self) -> io::Error {
            self.gave_up = true;
            io::Error::other("stopped by a signal while the reader of stdout was not reading")
        }

        pub fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            loop {
                if self.gave_up {
                    return Err(self.give_up());
                }
                let part = if caught().is_some() {
                    // Only as much as fits now (a pipe that polls writable has room for
                    // PIPE_BUF bytes), once the reader has made room.
                    let mut p = libc::pollfd {
                        fd: 1,
                        events: libc::POLLOUT,
                        revents: 0,
                    };
                    let ms = super::READER_WAIT.as_millis() as libc::c_int;
                    // SAFETY: one pollfd of ours.
                    if unsafe { libc::poll(&mut p, 1, ms) } <= 0 {
                        return Err(self.give_up());
                    }
                    &buf[..buf.len().min(libc::PIPE_BUF)]
                } else {
                    buf
                };
                match self.fd.write(part) {
                    // The wake (or another signal's handler): look again.
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    other => return other,
                }
            }
        }

        pub fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
}

#[cfg(not(unix))]
mod imp {
    use std::io::{self, Write};

    pub fn caught() -> Option<i32> {
        None
    }

    /// Signals keep their default here.
    pub fn install() {}

    pub fn die_by(sig: i32) -> ! {
        std::process::exit(128 + sig)
    }

    pub struct Out(io::Stdout);

    impl Out {
        pub fn new() -> Self {
            Out(io::stdout())
        }

        pub fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.write(buf)
        }

        pub fn flush(&mut self) -> io::Result<()> {
            self.0.flush()
        }
    }
}
