//! Real Redis, PostgreSQL, MariaDB and ZooKeeper servers for the backend tests, each on a free loopback port with its
//! data in a fresh temporary directory, removed (and the server killed) when dropped.
//!
//! The servers must be installed (`make servers`): a missing one fails the test with that
//! instruction, never skips it.

mod certs;
mod mariadb;
mod mariadb_replica;
mod postgres;
mod proxy;
mod redis;
mod sentinel;
mod standby;
mod zookeeper;

pub use certs::Certs;
pub use mariadb::{mariadbd, MariaDb, MY_CERT_ROLE, MY_PASSWORD, MY_PASSWORD_ROLE};
pub use postgres::{pg_bin, Postgres, PG_CERT_ROLE, PG_PASSWORD, PG_PASSWORD_ROLE};
pub use proxy::Proxy;
pub use redis::{redis_server, Redis};
pub use sentinel::{Sentinel, MASTER_NAME};
pub use zookeeper::{four_letters, zookeeper_jar, Ensemble, ZooKeeper};

use std::fs::{self, File};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

const INSTALL: &str =
    "run `make servers` to install redis-server, PostgreSQL, MariaDB, ZooKeeper and openssl";

// ---- shared helpers -----------------------------------------------------------------------------

/// A port nobody listens on now. Another process may take it before the server binds it, so
/// `start` tries again on a new port when the server reports the address in use.
fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    listener.local_addr().expect("the bound address").port()
}

/// A fresh directory named with the pid and a counter, so parallel tests never share one.
fn fresh_dir(kind: &str) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("rimeflake-{kind}-{}-{n}", std::process::id()));
    // Left over from an earlier process that had the same pid.
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("create the server's temporary directory");
    dir
}

use crate::now_ns;

fn deadline(seconds: u64) -> u64 {
    now_ns() + seconds * 1_000_000_000
}

/// Runs a database's shell `cmd` with `sql` (a dump) on its stdin, its output dropped; panics
/// with its stderr when it fails.
fn restore_with(mut cmd: std::process::Command, sql: &str) {
    use std::io::Write;
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {:?}: {e}", cmd.get_program()));
    child
        .stdin
        .take()
        .expect("the shell's stdin")
        .write_all(sql.as_bytes())
        .expect("write the dump to the shell");
    let out = child.wait_with_output().expect("the shell's exit");
    assert!(
        out.status.success(),
        "the restore failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The last lines of a log, for panic messages.
fn tail(path: &Path) -> String {
    let text = fs::read(path).map(|b| String::from_utf8_lossy(&b).into_owned());
    let text = text.unwrap_or_else(|e| format!("(cannot read {}: {e})", path.display()));
    let lines: Vec<&str> = text.lines().collect();
    let from = lines.len().saturating_sub(40);
    format!(
        "--- {} (tail) ---\n{}",
        path.display(),
        lines[from..].join("\n")
    )
}

fn signal(pid: u32, sig: libc::c_int) {
    // SAFETY: kill has no memory-safety preconditions; a gone process is only an error code.
    unsafe {
        libc::kill(pid as libc::pid_t, sig);
    }
}

/// The direct children of `pid`, read from /proc: PostgreSQL's backends and Redis's rewrite
/// child, which a pause must stop too (stopping only the parent leaves open connections served).
fn children(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(child) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after
        // the last ')'.
        let after = stat.rsplit_once(')').map(|(_, rest)| rest).unwrap_or("");
        if after.split_whitespace().nth(1).and_then(|p| p.parse().ok()) == Some(pid) {
            out.push(child);
        }
    }
    out
}

/// Signals the server and its children; the parent first, so it forks nothing new meanwhile.
fn signal_tree(pid: u32, sig: libc::c_int) {
    signal(pid, sig);
    for child in children(pid) {
        signal(child, sig);
    }
}

/// Waits (at most 5 s) until every thread of `pid` and of its children is stopped: SIGSTOP is
/// delivered when a thread next runs, so a thread woken by a request just before it may still
/// answer that one, and a test that pauses a server expects no answer at all once `pause`
/// returns.
fn stopped(pid: u32) {
    let until = deadline(5);
    let all_stopped = || {
        std::iter::once(pid).chain(children(pid)).all(|p| {
            let Ok(tasks) = fs::read_dir(format!("/proc/{p}/task")) else {
                return true; // gone: nothing of it answers
            };
            tasks.flatten().all(|t| {
                // The state follows the command's closing parenthesis: T (stopped), t (traced).
                fs::read_to_string(t.path().join("stat")).map_or(true, |stat| {
                    stat.rsplit_once(") ")
                        .is_some_and(|(_, rest)| rest.starts_with(['T', 't', 'Z', 'X']))
                })
            })
        })
    };
    while !all_stopped() && now_ns() < until {
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Waits for the child to exit, at most `seconds`; true when it did.
fn wait_exit(child: &mut Child, seconds: u64) -> bool {
    let until = deadline(seconds);
    loop {
        if let Ok(Some(_)) = child.try_wait() {
            return true;
        }
        if now_ns() > until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Kills what is left of a server (a paused one too) and reaps it.
fn kill_tree(child: &mut Child) {
    signal_tree(child.id(), libc::SIGCONT);
    signal_tree(child.id(), libc::SIGKILL);
    let _ = child.wait();
}

fn log_stdio(path: &Path) -> Stdio {
    let file = File::options()
        .create(true)
        .append(true)
        .open(path)
        .expect("open the server log");
    Stdio::from(file)
}

fn port_clash(log: &str) -> bool {
    log.contains("Address already in use")
}

// ---- a server process ---------------------------------------------------------------------------

/// What `Redis` and `Postgres` share: the server process (none while stopped) on its port, with
/// its directory and logs, and how it is stopped, paused and taken down.
struct Process {
    /// The program's name, for panic messages.
    name: &'static str,
    dir: PathBuf,
    port: u16,
    child: Option<Child>,
    /// The logs in `dir`, tailed in panic messages and emptied before another port is tried.
    logs: &'static [&'static str],
    /// The signal that stops the server keeping its data, and how long it may take.
    stop: (libc::c_int, &'static str, u64),
    /// The signal that takes it down when dropped, and how long before SIGKILL follows; `None`:
    /// SIGKILL at once.
    quit: Option<(libc::c_int, u64)>,
}

/// A server that a `Process` runs: how it is spawned on `process().port`.
trait Server {
    fn process(&mut self) -> &mut Process;

    /// Spawns the server (through [`Process::wait_ready`]); Err holds the logs when it exits
    /// before it is ready.
    fn spawn_and_wait(&mut self) -> Result<(), String>;

    /// Picks the other ports a server listens on, besides `process().port`, before each first
    /// start attempt.
    fn pick_more_ports(&mut self) {}

    /// The first start: on a free port, and on another one when the port was taken meanwhile.
    fn start_on_free_port(&mut self) {
        for attempt in 1..=3 {
            self.process().port = free_port();
            self.pick_more_ports();
            match self.spawn_and_wait() {
                Ok(()) => return,
                Err(log) if port_clash(&log) && attempt < 3 => {
                    // Start the next attempt's logs empty, so its failure reads alone.
                    let process = self.process();
                    for log in process.logs {
                        let _ = fs::remove_file(process.dir.join(log));
                    }
                }
                Err(log) => panic!("{} did not start:\n{log}", self.process().name),
            }
        }
    }

    /// Starts the server again on the same port and directory (stopping it first if it runs)
    /// and waits until it is ready.
    fn restart_process(&mut self) {
        self.process().stop();
        if let Err(log) = self.spawn_and_wait() {
            let process = self.process();
            panic!(
                "{} did not restart on port {}:\n{log}",
                process.name, process.port
            );
        }
    }
}

impl Process {
    fn new(
        name: &'static str,
        dir: PathBuf,
        logs: &'static [&'static str],
        stop: (libc::c_int, &'static str, u64),
        quit: Option<(libc::c_int, u64)>,
    ) -> Process {
        Process {
            name,
            dir,
            port: 0,
            child: None,
            logs,
            stop,
            quit,
        }
    }

    /// The last lines of every log.
    fn logs(&self) -> String {
        let tails: Vec<String> = self.logs.iter().map(|l| tail(&self.dir.join(l))).collect();
        tails.join("\n")
    }

    /// Keeps `child` and polls `ready` every `poll` until it is true; Err holds the logs when the
    /// child exits first; panics after `seconds`.
    fn wait_ready(
        &mut self,
        child: Child,
        seconds: u64,
        poll: Duration,
        mut ready: impl FnMut() -> bool,
    ) -> Result<(), String> {
        self.child = Some(child);
        let until = deadline(seconds);
        loop {
            if ready() {
                return Ok(());
            }
            if let Ok(Some(status)) = self.child.as_mut().expect("a child").try_wait() {
                self.child = None;
                return Err(format!("exited with {status}\n{}", self.logs()));
            }
            if now_ns() > until {
                panic!(
                    "{} was not ready within {seconds} s\n{}",
                    self.name,
                    self.logs()
                );
            }
            std::thread::sleep(poll);
        }
    }

    /// The stop signal and a wait: the server exits keeping its data in `dir`.
    fn stop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        let (sig, sig_name, seconds) = self.stop;
        // A paused server would hold the signal until resumed.
        signal_tree(child.id(), libc::SIGCONT);
        signal(child.id(), sig);
        if !wait_exit(&mut child, seconds) {
            kill_tree(&mut child);
            panic!(
                "{} did not stop within {seconds} s of {sig_name}\n{}",
                self.name,
                self.logs()
            );
        }
    }

    /// SIGKILL to the server and its children, as when its host dies: nothing is written on
    /// the way out.
    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            kill_tree(&mut child);
        }
    }

    /// SIGSTOP to the server and its children: connections still open at the kernel, but
    /// nothing answers, as with a hung host.
    fn pause(&self) {
        if let Some(child) = &self.child {
            signal_tree(child.id(), libc::SIGSTOP);
            stopped(child.id());
        }
    }

    fn resume(&self) {
        if let Some(child) = &self.child {
            signal_tree(child.id(), libc::SIGCONT);
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let exited = self.quit.is_some_and(|(sig, seconds)| {
                signal_tree(child.id(), libc::SIGCONT);
                signal(child.id(), sig);
                wait_exit(&mut child, seconds)
            });
            if !exited {
                kill_tree(&mut child);
            }
        }
        let _ = fs::remove_dir_all(&self.dir);
    }
}
