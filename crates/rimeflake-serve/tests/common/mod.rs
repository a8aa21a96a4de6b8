//! Running `rimeflake serve` as a real process on a free loopback port, and asking it things.
//!
//! The binary is the CLI's, built beside these tests (`make test-serve` and `cargo test
//! --workspace` build it first); a missing one fails the test with that instruction.
#![allow(dead_code)]

pub mod h2;

/// The core's test helpers (temporary directories, libfaketime), for every test here.
pub use rimeflake_testkit::support;
pub use support::libfaketime;

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The `rimeflake` binary of this build (target/<profile>/rimeflake, beside deps/).
pub fn binary() -> PathBuf {
    let exe = std::env::current_exe().expect("the test's own path");
    let dir = exe
        .parent()
        .and_then(|d| d.parent())
        .expect("target/<profile>");
    let bin = dir.join(format!("rimeflake{}", std::env::consts::EXE_SUFFIX));
    assert!(
        bin.exists(),
        "{} is missing: build it first (cargo build -p rimeflake-cli, as make test-serve does)",
        bin.display()
    );
    bin
}

/// The repository's root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A running `rimeflake serve`, stopped (SIGTERM) when dropped.
pub struct Server {
    pub child: Child,
    pub addr: SocketAddr,
    /// Everything it wrote on stderr so far.
    pub stderr: Arc<Mutex<String>>,
}

impl Server {
    /// `rimeflake serve --listen 127.0.0.1:0 <args>` with `env` (and none of rimeflake's other
    /// variables), once it says where it listens.
    pub fn start(args: &[&str], env: &[(&str, &str)]) -> Server {
        Server::start_with(Command::new(binary()), "127.0.0.1:0", args, env)
    }

    /// As [`Server::start`] on `listen`, with the binary run by `cmd` (its environment set, say).
    pub fn start_with(
        mut cmd: Command,
        listen: &str,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Server {
        cmd.args(["serve", "--listen", listen]).args(args);
        support::without_rimeflake_env(&mut cmd);
        cmd.envs(env.iter().copied())
            .env("RIMEFLAKE_NO_CONTAINER_WARNING", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("rimeflake serve starts");
        let stderr = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let mut reader = BufReader::new(child.stderr.take().unwrap());
        let seen = stderr.clone();
        std::thread::spawn(move || {
            let mut line = String::new();
            while reader.read_line(&mut line).unwrap_or(0) > 0 {
                if let Some(rest) = line.split("serving on http://").nth(1) {
                    let addr = rest.split_whitespace().next().unwrap_or("").to_string();
                    let _ = tx.send(addr);
                }
                seen.lock().unwrap().push_str(&line);
                line.clear();
            }
        });
        let addr = match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(a) => a.parse().expect("an address"),
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("rimeflake serve did not start: {}", stderr.lock().unwrap());
            }
        };
        Server {
            child,
            addr,
            stderr,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// GET `path` (one connection, closed after): the status and the body.
    pub fn get(&self, path: &str) -> (u16, String) {
        self.get_with(path, &[])
    }

    /// GET `path` with extra header lines.
    pub fn get_with(&self, path: &str, headers: &[&str]) -> (u16, String) {
        get(self.addr, path, headers)
    }

    /// SIGTERM, then its exit status (within `within`, else it is killed and the test fails).
    pub fn stop(&mut self) -> ExitStatus {
        signal(&self.child, libc::SIGTERM);
        self.wait(Duration::from_secs(60))
    }

    pub fn wait(&mut self, within: Duration) -> ExitStatus {
        let start = rimeflake::clock::monotonic_ns();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            if rimeflake::clock::monotonic_ns() - start > within.as_nanos() as u64 {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!(
                    "rimeflake serve did not stop: {}",
                    self.stderr.lock().unwrap()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

pub fn signal(child: &Child, sig: libc::c_int) {
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(child.id() as libc::pid_t, sig) };
}

/// GET `path` from `addr` with HTTP/1.1 (Connection: close): the status and the body.
pub fn get(addr: SocketAddr, path: &str, headers: &[&str]) -> (u16, String) {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut req = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for h in headers {
        req.push_str(h);
        req.push_str("\r\n");
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).expect("an answer");
    let raw = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP answer: {raw:?}"));
    (status, body.to_string())
}

/// The IDs of `text`, one a line; a line that is not one fails the test.
pub fn ids(text: &str) -> Vec<u64> {
    text.lines()
        .map(|l| {
            l.trim()
                .parse()
                .unwrap_or_else(|e| panic!("{l:?} is not an ID: {e}"))
        })
        .collect()
}

/// Fails the test when an ID repeats, or does not decode in `layout` with worker `worker`.
pub fn check_unique(all: &[u64], layout: &rimeflake::Layout, workers: &[u64]) {
    let mut seen = HashSet::with_capacity(all.len());
    for &id in all {
        assert!(seen.insert(id), "ID {id} issued twice");
        let parts = layout
            .decode(id)
            .unwrap_or_else(|e| panic!("{id} does not decode: {}", e.message()));
        assert!(
            workers.contains(&parts.worker_id),
            "{id} has worker {} (expected one of {workers:?})",
            parts.worker_id
        );
    }
}

/// A program on PATH, or the test fails saying what to install.
pub fn tool(name: &str, install: &str) -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        let p = dir.join(name);
        if p.is_file() {
            return p;
        }
    }
    panic!("{name} is not installed: {install}")
}

/// The Python with prometheus_client: $RIMEFLAKE_TEST_PYTHON, else the repository's .venv.
pub fn python() -> PathBuf {
    let p = std::env::var_os("RIMEFLAKE_TEST_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join(".venv/bin/python"));
    assert!(
        p.exists(),
        "{} is missing: make test-serve makes it (a venv with prometheus-client)",
        p.display()
    );
    p
}

/// A loopback port free now (bound, read and released).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The binary with its wall clock moved by `offset` (libfaketime's syntax: "-86400").
pub fn faked(offset: &str) -> Command {
    let mut cmd = Command::new(binary());
    cmd.env("LD_PRELOAD", libfaketime())
        .env("FAKETIME", offset)
        .env("FAKETIME_DONT_FAKE_MONOTONIC", "1");
    cmd
}

/// `threads` clients asking `addr` for IDs (/id, and /ids?n=50 every tenth request), each on
/// a new connection, until `stop` is set; a refused or cut request is retried (a server that
/// restarts). Each thread's IDs, in order.
pub fn clients(
    addr: SocketAddr,
    threads: usize,
    stop: Arc<std::sync::atomic::AtomicBool>,
    got: Arc<std::sync::atomic::AtomicUsize>,
) -> Vec<std::thread::JoinHandle<Vec<u64>>> {
    use std::sync::atomic::Ordering::Relaxed;
    (0..threads)
        .map(|t| {
            let stop = stop.clone();
            let got = got.clone();
            std::thread::spawn(move || {
                let mut mine = Vec::new();
                let mut i = t;
                while !stop.load(Relaxed) {
                    i += 1;
                    let path = if i % 10 == 0 { "/ids?n=50" } else { "/id" };
                    match try_get(addr, path) {
                        Some((200, body)) => {
                            let new = ids(&body);
                            got.fetch_add(new.len(), Relaxed);
                            mine.extend(new);
                        }
                        Some((503, _)) | None => std::thread::sleep(Duration::from_millis(10)),
                        Some((status, body)) => panic!("{path}: {status} {body}"),
                    }
                }
                mine
            })
        })
        .collect()
}

/// As [`get`], but `None` when the connection is refused or cut.
pub fn try_get(addr: SocketAddr, path: &str) -> Option<(u16, String)> {
    let mut s = TcpStream::connect(addr).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(60))).ok()?;
    let req = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).ok()?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).ok()?;
    let raw = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = raw.split_once("\r\n\r\n")?;
    let status = head.split_whitespace().nth(1)?.parse().ok()?;
    Some((status, body.to_string()))
}

/// Waits (bounded: the test fails past `within`) until `done` says so.
pub fn wait_until(what: &str, within: Duration, mut done: impl FnMut() -> bool) {
    let start = rimeflake::clock::monotonic_ns();
    while !done() {
        assert!(
            rimeflake::clock::monotonic_ns() - start < within.as_nanos() as u64,
            "{what}: not within {within:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A process's resident memory, in KiB (Linux's /proc).
pub fn rss_kib(pid: u32) -> u64 {
    proc_status(pid, "VmRSS:")
}

/// A process's threads (Linux's /proc).
pub fn threads(pid: u32) -> u64 {
    proc_status(pid, "Threads:")
}

fn proc_status(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{field} in /proc/{pid}/status"))
}

/// Whether the server has closed `s` (a read gives EOF or an error rather than timing out).
pub fn closed(s: &mut TcpStream) -> bool {
    s.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue, // an answer (408, 400): read on to the close
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock
                    || e.kind() == std::io::ErrorKind::TimedOut =>
            {
                return false
            }
            Err(_) => return true,
        }
    }
}

/// An answer read by [`Conn`]: status, headers (names lower-cased) and body.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Answer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// One keep-alive HTTP/1.1 connection, for many requests in a row.
pub struct Conn {
    reader: BufReader<TcpStream>,
    addr: SocketAddr,
}

impl Conn {
    pub fn open(addr: SocketAddr) -> Conn {
        let s = TcpStream::connect(addr).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        s.set_nodelay(true).unwrap();
        Conn {
            reader: BufReader::new(s),
            addr,
        }
    }

    /// `method path` with extra header lines; the answer (its body read by its length).
    pub fn ask(&mut self, method: &str, path: &str, headers: &[&str]) -> Answer {
        let mut req = format!("{method} {path} HTTP/1.1\r\nHost: {}\r\n", self.addr);
        for h in headers {
            req.push_str(h);
            req.push_str("\r\n");
        }
        req.push_str("\r\n");
        self.reader.get_mut().write_all(req.as_bytes()).unwrap();
        let mut line = String::new();
        self.reader.read_line(&mut line).expect("a status line");
        let status = line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("not an HTTP answer: {line:?}"));
        let mut headers = Vec::new();
        loop {
            line.clear();
            self.reader.read_line(&mut line).unwrap();
            let l = line.trim_end();
            if l.is_empty() {
                break;
            }
            let (n, v) = l.split_once(':').expect("a header line");
            headers.push((n.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
        let len: usize = headers
            .iter()
            .find(|(n, _)| n == "content-length")
            .map_or(0, |(_, v)| v.parse().unwrap());
        let mut body = vec![0u8; if method == "HEAD" { 0 } else { len }];
        self.reader.read_exact(&mut body).unwrap();
        Answer {
            status,
            headers,
            body: String::from_utf8(body).unwrap(),
        }
    }

    pub fn get(&mut self, path: &str) -> Answer {
        self.ask("GET", path, &[])
    }
}
