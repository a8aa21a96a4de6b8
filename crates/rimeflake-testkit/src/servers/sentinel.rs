//! redis-sentinel (Debian's `redis-sentinel` package): one Sentinel watching one primary, which
//! promotes a replica when the primary stops answering it, as operators deploy Redis.

use super::redis::{read_reply, redis_connect, resp_array};
use super::{deadline, fresh_dir, log_stdio, Process, Server};
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

/// The name Sentinel knows the primary by.
pub const MASTER_NAME: &str = "rimeflake-primary";

/// A Sentinel on a free loopback port (quorum 1: it alone decides), killed when dropped.
pub struct Sentinel {
    process: Process,
    /// Where it watches the primary (the primary's port, or a proxy in front of it).
    watched: u16,
    /// Sentinel's own password (`requirepass`), if any.
    password: Option<String>,
}

/// The redis-sentinel on PATH.
fn sentinel_bin() -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join("redis-sentinel"))
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!("redis-sentinel is not on PATH: apt-get install redis-sentinel (make servers)")
        })
}

impl Server for Sentinel {
    fn process(&mut self) -> &mut Process {
        &mut self.process
    }

    fn spawn_and_wait(&mut self) -> Result<(), String> {
        let dir = self.process.dir.clone();
        let port = self.process.port;
        // Sentinel rewrites its configuration file as it learns: written afresh at each start.
        let mut conf = format!(
            "port {port}\nbind 127.0.0.1\ndaemonize no\ndir {dir}\nlogfile {dir}/sentinel.log\n\
             sentinel resolve-hostnames no\n\
             sentinel monitor {MASTER_NAME} 127.0.0.1 {watched} 1\n\
             sentinel down-after-milliseconds {MASTER_NAME} 500\n\
             sentinel failover-timeout {MASTER_NAME} 60000\n\
             sentinel parallel-syncs {MASTER_NAME} 1\n",
            dir = dir.display(),
            watched = self.watched
        );
        if let Some(pw) = &self.password {
            conf.push_str(&format!("requirepass {pw}\n"));
        }
        let file = dir.join("sentinel.conf");
        std::fs::write(&file, conf).expect("write sentinel.conf");
        let out = dir.join("sentinel.out");
        let child = Command::new(sentinel_bin())
            .arg(&file)
            .stdin(Stdio::null())
            .stdout(log_stdio(&out))
            .stderr(log_stdio(&out))
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run redis-sentinel: {e}"));
        let password = self.password.clone();
        self.process
            .wait_ready(child, 10, Duration::from_millis(50), || {
                ask(port, password.as_deref(), &["PING"]).is_ok_and(|r| r.starts_with("+PONG"))
            })
    }
}

/// One command to the Sentinel on `port`.
fn ask(port: u16, password: Option<&str>, args: &[&str]) -> std::io::Result<String> {
    let mut conn = redis_connect(port, password, Duration::from_secs(5))?;
    conn.get_mut().write_all(&resp_array(args))?;
    read_reply(&mut conn)
}

impl Sentinel {
    /// A Sentinel watching the primary at `127.0.0.1:watched`.
    pub fn start(watched: u16) -> Sentinel {
        Sentinel::launch(watched, None)
    }

    /// The same, asking clients for `password` (Sentinel's own, not the primary's).
    pub fn start_with_password(watched: u16, password: &str) -> Sentinel {
        Sentinel::launch(watched, Some(password.to_string()))
    }

    fn launch(watched: u16, password: Option<String>) -> Sentinel {
        let mut s = Sentinel {
            process: Process::new(
                "redis-sentinel",
                fresh_dir("sentinel"),
                &["sentinel.log", "sentinel.out"],
                (libc::SIGTERM, "SIGTERM", 10),
                None,
            ),
            watched,
            password,
        };
        s.start_on_free_port();
        s
    }

    pub fn port(&self) -> u16 {
        self.process.port
    }

    /// One command, as Redis sends its reply.
    pub fn command(&self, args: &[&str]) -> String {
        ask(self.process.port, self.password.as_deref(), args).unwrap_or_else(|e| {
            panic!(
                "sentinel command {args:?} failed: {e}\n{}",
                self.process.logs()
            )
        })
    }

    /// The port Sentinel gives as the primary's now.
    pub fn master_port(&self) -> Option<u16> {
        let reply = self.command(&["SENTINEL", "get-master-addr-by-name", MASTER_NAME]);
        // *2 $9 127.0.0.1 $5 6379
        reply.lines().nth(4).and_then(|p| p.trim().parse().ok())
    }

    /// Waits until Sentinel has promoted the server on `port` (it answers as the primary
    /// there), at most `seconds`.
    pub fn wait_for_primary(&self, port: u16, seconds: u64) {
        let until = deadline(seconds);
        while self.master_port() != Some(port) {
            assert!(
                crate::now_ns() < until,
                "Sentinel did not promote port {port} within {seconds} s (it gives {:?})\n{}",
                self.master_port(),
                self.process.logs()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits until Sentinel knows `n` replicas of the primary, at most `seconds`: it learns them
    /// from the primary's INFO, and fails over only to one it knows.
    pub fn wait_for_replicas(&self, n: usize, seconds: u64) {
        let until = deadline(seconds);
        loop {
            let reply = self.command(&["SENTINEL", "replicas", MASTER_NAME]);
            let known = reply.lines().next().and_then(|l| l.strip_prefix('*'));
            if known.and_then(|k| k.parse::<usize>().ok()) >= Some(n) {
                return;
            }
            assert!(
                crate::now_ns() < until,
                "Sentinel knows no {n} replicas within {seconds} s: {reply}\n{}",
                self.process.logs()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// `SENTINEL FAILOVER`: promotes a replica now, as an operator asks, whether or not the
    /// primary answers.
    pub fn failover(&self) {
        let reply = self.command(&["SENTINEL", "FAILOVER", MASTER_NAME]);
        assert!(reply.starts_with("+OK"), "SENTINEL FAILOVER: {reply}");
    }
}
