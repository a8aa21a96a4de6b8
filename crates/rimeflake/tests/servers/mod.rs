//! Real Redis and PostgreSQL servers for the backend tests, each on a free loopback port with its
//! data in a fresh temporary directory, removed (and the server killed) when dropped.
//!
//! Include it with `mod servers;`. The servers must be installed (`make servers`): a missing one
//! fails the test with that instruction, never skips it.
#![allow(dead_code)]

use std::fs::{self, File};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

const INSTALL: &str = "run `make servers` to install redis-server, PostgreSQL and openssl";

/// The redis-server on PATH.
pub fn redis_server() -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join("redis-server"))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("redis-server is not on PATH: {INSTALL}"))
}

/// A PostgreSQL program (`initdb`, `postgres`, `pg_isready`, `psql`...) of the newest version
/// under /usr/lib/postgresql, where Debian puts them (they are not on PATH).
pub fn pg_bin(name: &str) -> PathBuf {
    let versions = fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten();
    versions
        .filter_map(|e| {
            let version: u32 = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin").join(name);
            bin.is_file().then_some((version, bin))
        })
        .max_by_key(|(version, _)| *version)
        .map(|(_, bin)| bin)
        .unwrap_or_else(|| panic!("no /usr/lib/postgresql/*/bin/{name}: {INSTALL}"))
}

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

/// Nanoseconds since the first call. Not `rimeflake::clock`: this file is also included by the
/// core's own unit tests, where that crate is `crate`.
fn now_ns() -> u64 {
    static ORIGIN: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    #[allow(clippy::disallowed_methods)] // a test harness's timeouts, not the library's clock
    let now = std::time::Instant::now();
    now.saturating_duration_since(*ORIGIN.get_or_init(|| now))
        .as_nanos() as u64
}

fn deadline(seconds: u64) -> u64 {
    now_ns() + seconds * 1_000_000_000
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

    /// SIGSTOP to the server and its children: connections still open at the kernel, but
    /// nothing answers, as with a hung host.
    fn pause(&self) {
        if let Some(child) = &self.child {
            signal_tree(child.id(), libc::SIGSTOP);
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

// ---- Redis --------------------------------------------------------------------------------------

/// A redis-server with an append-only file fsynced on every write, so a stop and restart (or a
/// SIGKILL) loses nothing that was acknowledged.
pub struct Redis {
    process: Process,
    password: Option<String>,
    /// With TLS: the certificates, and the TLS port (the plain one stays, for the harness).
    tls: Option<(Certs, u16)>,
}

impl Server for Redis {
    fn process(&mut self) -> &mut Process {
        &mut self.process
    }

    fn pick_more_ports(&mut self) {
        if let Some((_, port)) = &mut self.tls {
            *port = free_port();
        }
    }

    /// Starts the server and waits until it answers PING.
    fn spawn_and_wait(&mut self) -> Result<(), String> {
        let dir = self
            .process
            .dir
            .to_str()
            .expect("a UTF-8 temporary path")
            .to_string();
        let port = self.process.port.to_string();
        let logfile = format!("{dir}/redis.log");
        let mut cmd = Command::new(redis_server());
        cmd.args([
            "--port",
            &port,
            "--bind",
            "127.0.0.1",
            "--dir",
            &dir,
            "--save",
            "",
        ])
        .args(["--appendonly", "yes", "--appendfsync", "always"])
        .args(["--maxmemory-policy", "noeviction", "--daemonize", "no"])
        .args(["--logfile", &logfile]);
        if let Some(pw) = &self.password {
            cmd.args(["--requirepass", pw]);
        }
        if let Some((certs, tls_port)) = &self.tls {
            cmd.args(["--tls-port", &tls_port.to_string()])
                .arg("--tls-cert-file")
                .arg(certs.path("server.pem"))
                .arg("--tls-key-file")
                .arg(certs.path("server.key"))
                .arg("--tls-ca-cert-file")
                .arg(certs.path("ca.pem"))
                // Client certificates are asked for by tests that want them (CONFIG SET).
                .args(["--tls-auth-clients", "no"]);
        }
        // Errors before the log file opens (a bad argument) go to stderr: keep them too.
        let out = self.process.dir.join("redis.out");
        cmd.stdin(Stdio::null())
            .stdout(log_stdio(&out))
            .stderr(log_stdio(&out));
        let child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run redis-server: {e}"));
        let (port, password) = (self.process.port, self.password.as_deref());
        self.process
            .wait_ready(child, 10, Duration::from_millis(50), || {
                redis_ping(port, password)
            })
    }
}

impl Redis {
    pub fn start() -> Redis {
        Redis::launch(None, None)
    }

    /// A server that answers only clients that AUTH with `pw`.
    pub fn start_with_password(pw: &str) -> Redis {
        Redis::launch(Some(pw.to_string()), None)
    }

    /// A server that also listens for TLS on [`Redis::tls_port`], with the certificate
    /// [`Certs`] made for `localhost`; the plain port stays, for the harness's own commands.
    pub fn start_tls() -> Redis {
        Redis::launch(None, Some((Certs::make(), 0)))
    }

    fn launch(password: Option<String>, tls: Option<(Certs, u16)>) -> Redis {
        let mut redis = Redis {
            process: Process::new(
                "redis-server",
                fresh_dir("redis"),
                &["redis.log", "redis.out"],
                (libc::SIGTERM, "SIGTERM", 30),
                None,
            ),
            password,
            tls,
        };
        redis.start_on_free_port();
        redis
    }

    /// The TLS port of a server from [`Redis::start_tls`].
    pub fn tls_port(&self) -> u16 {
        self.tls.as_ref().expect("a server started with TLS").1
    }

    /// The certificates of a server from [`Redis::start_tls`].
    pub fn certs(&self) -> &Certs {
        &self.tls.as_ref().expect("a server started with TLS").0
    }

    /// Makes the TLS port show the certificate `name` of [`Certs`] (`impostor`, or `server`
    /// again) and cuts every client off, so that each must connect (and check it) again.
    pub fn serve_certificate(&self, name: &str) {
        let (cert, key) = (
            self.certs().path(&format!("{name}.pem")),
            self.certs().path(&format!("{name}.key")),
        );
        let (cert, key) = (cert.display().to_string(), key.display().to_string());
        let reply = self.command(&[
            "CONFIG",
            "SET",
            "tls-cert-file",
            &cert,
            "tls-key-file",
            &key,
        ]);
        assert!(reply.starts_with("+OK"), "{reply}");
        let reply = self.command(&["CLIENT", "KILL", "TYPE", "normal"]);
        assert!(reply.starts_with(':'), "{reply}");
    }

    /// A connection with timeouts (so a test against a paused server fails instead of hanging),
    /// authenticated when the server has a password.
    fn connect(&self, timeout: Duration) -> std::io::Result<BufReader<TcpStream>> {
        redis_connect(self.process.port, self.password.as_deref(), timeout)
    }

    pub fn url(&self) -> String {
        match &self.password {
            Some(pw) => format!("redis://:{pw}@127.0.0.1:{}/0", self.process.port),
            None => format!("redis://127.0.0.1:{}/0", self.process.port),
        }
    }

    pub fn port(&self) -> u16 {
        self.process.port
    }

    /// The directory holding the append-only file and the logs.
    pub fn dir(&self) -> &Path {
        &self.process.dir
    }

    /// Runs one command and returns the reply as Redis sent it, e.g. `+OK\r\n`, `$3\r\nbar\r\n`,
    /// `:1\r\n`, `$-1\r\n` or `-ERR ...\r\n`. Panics when the server does not answer in 10 s.
    pub fn command(&self, args: &[&str]) -> String {
        let run = || -> std::io::Result<String> {
            let mut conn = self.connect(Duration::from_secs(10))?;
            conn.get_mut().write_all(&resp_array(args))?;
            read_reply(&mut conn)
        };
        run().unwrap_or_else(|e| {
            panic!(
                "redis command {args:?} failed: {e}\n{}",
                self.process.logs()
            )
        })
    }

    /// SIGTERM and wait: Redis fsyncs the append-only file and exits; the data stays in `dir`.
    pub fn stop(&mut self) {
        self.process.stop();
    }

    /// Starts the server again on the same port and directory (stopping it first if it runs)
    /// and waits until it has loaded its data and answers.
    pub fn restart(&mut self) {
        self.restart_process();
    }

    /// SIGSTOP: connections still open at the kernel, but nothing answers, as with a hung host.
    pub fn pause(&self) {
        self.process.pause();
    }

    pub fn resume(&self) {
        self.process.resume();
    }
}

/// True when a fresh connection gets +PONG (after AUTH when there is a password). While the
/// server loads its append-only file it answers -LOADING instead.
fn redis_ping(port: u16, password: Option<&str>) -> bool {
    let Ok(mut conn) = redis_connect(port, password, Duration::from_millis(500)) else {
        return false;
    };
    if conn.get_mut().write_all(b"PING\r\n").is_err() {
        return false;
    }
    matches!(read_reply(&mut conn), Ok(reply) if reply.starts_with("+PONG"))
}

/// A connection with timeouts (so a test against a paused server fails instead of hanging),
/// authenticated when the server has a password.
fn redis_connect(
    port: u16,
    password: Option<&str>,
    timeout: Duration,
) -> std::io::Result<BufReader<TcpStream>> {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let stream = TcpStream::connect_timeout(&addr, timeout)?;
    stream.set_read_timeout(Some(timeout))?;
    stream.set_write_timeout(Some(timeout))?;
    let mut conn = BufReader::new(stream);
    if let Some(pw) = password {
        conn.get_mut().write_all(&resp_array(&["AUTH", pw]))?;
        let reply = read_reply(&mut conn)?;
        if !reply.starts_with("+OK") {
            return Err(std::io::Error::other(format!("AUTH failed: {reply}")));
        }
    }
    Ok(conn)
}

/// A command as a RESP array of bulk strings, which carries any bytes (spaces, CRLF) intact.
fn resp_array(args: &[&str]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for arg in args {
        out.extend_from_slice(format!("${}\r\n", arg.len()).as_bytes());
        out.extend_from_slice(arg.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out
}

/// Reads exactly one reply, however nested, and returns its raw text.
fn read_reply(conn: &mut BufReader<TcpStream>) -> std::io::Result<String> {
    let mut raw = Vec::new();
    read_value(conn, &mut raw)?;
    Ok(String::from_utf8_lossy(&raw).into_owned())
}

fn read_value(conn: &mut BufReader<TcpStream>, raw: &mut Vec<u8>) -> std::io::Result<()> {
    let start = raw.len();
    if conn.read_until(b'\n', raw)? == 0 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "connection closed",
        ));
    }
    let line = String::from_utf8_lossy(&raw[start..])
        .trim_end()
        .to_string();
    let count = |s: &str| -> std::io::Result<i64> {
        s.parse()
            .map_err(|_| std::io::Error::other(format!("bad RESP length in {line:?}")))
    };
    match line.as_bytes().first() {
        // A bulk string: its length, then that many bytes and a CRLF.
        Some(b'$') => {
            let len = count(&line[1..])?;
            if len >= 0 {
                let mut body = vec![0; len as usize + 2];
                conn.read_exact(&mut body)?;
                raw.extend_from_slice(&body);
            }
        }
        // An array: that many values follow.
        Some(b'*') => {
            for _ in 0..count(&line[1..])?.max(0) {
                read_value(conn, raw)?;
            }
        }
        // +simple, -error, :integer: the line is the whole reply.
        _ => {}
    }
    Ok(())
}

// ---- PostgreSQL ---------------------------------------------------------------------------------

/// The role that must log in with a password (scram-sha-256), for the tests of credentials.
pub const PG_PASSWORD_ROLE: &str = "rimeflake_pw";
pub const PG_PASSWORD: &str = "secret-pw";

/// A PostgreSQL cluster with a database `rimeflake`: the superuser `postgres` logs in without a
/// password, the role `rimeflake_pw` only with the password `secret-pw`.
pub struct Postgres {
    process: Process,
    /// The unprivileged uid and gid the server runs as when the tests run as root.
    owner: Option<(u32, u32)>,
    /// With TLS (`ssl=on`, plain TCP refused): the certificates, copied for the server into
    /// its directory.
    tls: Option<Certs>,
}

/// The role that logs in with a client certificate only (`cert` in pg_hba.conf), on servers
/// from [`Postgres::start_tls`]; [`Certs`] has its certificate.
pub const PG_CERT_ROLE: &str = "rimeflake_cert";

/// PostgreSQL refuses to run as root, and CI runs the tests as root: then initdb and postgres
/// run as `nobody` (or a system user made for it when there is no `nobody`).
fn pg_owner() -> Option<(u32, u32)> {
    static OWNER: OnceLock<Option<(u32, u32)>> = OnceLock::new();
    *OWNER.get_or_init(|| {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return None;
        }
        if let Some(ids) = user_ids("nobody") {
            return Some(ids);
        }
        let user = "rimeflake-test";
        if user_ids(user).is_none() {
            let status = Command::new("useradd")
                .args([
                    "--system",
                    "--no-create-home",
                    "--shell",
                    "/usr/sbin/nologin",
                    user,
                ])
                .status();
            assert!(
                matches!(status, Ok(s) if s.success()),
                "useradd {user} failed: {status:?}"
            );
        }
        Some(user_ids(user).expect("the user just made"))
    })
}

/// uid and gid of a user, through `id` (getpwnam's static buffer is not thread-safe).
fn user_ids(user: &str) -> Option<(u32, u32)> {
    let id = |flag: &str| -> Option<u32> {
        let out = Command::new("id")
            .args([flag, user])
            .stderr(Stdio::null())
            .output()
            .ok()?;
        out.status.success().then_some(())?;
        String::from_utf8_lossy(&out.stdout).trim().parse().ok()
    };
    Some((id("-u")?, id("-g")?))
}

impl Server for Postgres {
    fn process(&mut self) -> &mut Process {
        &mut self.process
    }

    fn spawn_and_wait(&mut self) -> Result<(), String> {
        let log = self.log();
        if !log.exists() {
            File::create(&log).expect("create postgres.log");
            self.give(&log);
        }
        let port = self.process.port.to_string();
        let child = self
            .as_owner("postgres")
            .arg("-D")
            .arg(self.data())
            .args(["-p", &port, "-k"])
            .arg(self.process.dir.join("sock"))
            .args(["-c", "listen_addresses=127.0.0.1", "-c", "fsync=on"])
            .args(self.tls_settings())
            .stdout(log_stdio(&log))
            .stderr(log_stdio(&log))
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run postgres: {e}"));
        self.process
            .wait_ready(child, 30, Duration::from_millis(100), || {
                let ready = Command::new(pg_bin("pg_isready"))
                    .args(["-q", "-t", "2", "-h", "127.0.0.1", "-p", &port])
                    .status();
                matches!(ready, Ok(s) if s.success())
            })
    }
}

impl Postgres {
    pub fn start() -> Postgres {
        Postgres::launch(None)
    }

    /// A server that takes TLS connections only (`hostnossl ... reject`), with the certificate
    /// [`Certs`] made for `localhost`; the role [`PG_CERT_ROLE`] logs in with its client
    /// certificate.
    pub fn start_tls() -> Postgres {
        Postgres::launch(Some(Certs::make()))
    }

    /// The certificates of a server from [`Postgres::start_tls`].
    pub fn certs(&self) -> &Certs {
        self.tls.as_ref().expect("a server started with TLS")
    }

    /// Makes the server show the certificate `name` of [`Certs`] (`impostor`, or `server`
    /// again): its copy of the files replaced and the configuration reloaded, then every
    /// rimeflake session cut off, so that each must connect (and check it) again.
    pub fn serve_certificate(&self, name: &str) {
        for (from, to) in [("pem", "server.pem"), ("key", "server.key")] {
            let copy = self.process.dir.join(to);
            fs::copy(self.certs().path(&format!("{name}.{from}")), &copy)
                .expect("copy a certificate for postgres");
            self.own_file(&copy);
        }
        self.psql("SELECT pg_reload_conf()");
        // The reload reaches the postmaster by a signal: a new session may start before it has
        // read the files. Wait until psql, trusting only the new certificate's CA, gets in.
        let ca = if name == "server" { "ca" } else { "other-ca" };
        let conninfo = format!(
            "host=127.0.0.1 port={} user=postgres dbname=rimeflake sslmode=verify-ca \
             sslrootcert={}",
            self.process.port,
            self.certs().path(&format!("{ca}.pem")).display()
        );
        let until = deadline(10);
        loop {
            let out = Command::new(pg_bin("psql"))
                .args(["-X", "-w", "-At", "-d", &conninfo, "-c", "SELECT 1"])
                .env("PGCONNECT_TIMEOUT", "5")
                .stdin(Stdio::null())
                .output()
                .unwrap_or_else(|e| panic!("cannot run psql: {e}"));
            if out.status.success() {
                break;
            }
            assert!(
                now_ns() < until,
                "postgres does not serve {name}.pem: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        self.psql(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE application_name = 'rimeflake'",
        );
    }

    /// `-c` settings for TLS, with the server's copies of the files.
    fn tls_settings(&self) -> Vec<String> {
        if self.tls.is_none() {
            return Vec::new();
        }
        let file = |name: &str| self.process.dir.join(name).display().to_string();
        let mut args = Vec::new();
        for (setting, value) in [
            ("ssl", "on".to_string()),
            ("ssl_cert_file", file("server.pem")),
            ("ssl_key_file", file("server.key")),
            ("ssl_ca_file", file("ca.pem")),
        ] {
            args.push("-c".to_string());
            args.push(format!("{setting}={value}"));
        }
        args
    }

    fn launch(tls: Option<Certs>) -> Postgres {
        let mut pg = Postgres {
            process: Process::new(
                "postgres",
                fresh_dir("pg"),
                &["postgres.log"],
                // Fast shutdown: sessions are cut, a checkpoint written, the data stays.
                (libc::SIGINT, "SIGINT", 60),
                // Immediate shutdown (SIGQUIT, as `pg_ctl stop -m immediate`): the postmaster
                // takes its backends down with it; no checkpoint, the directory goes anyway.
                Some((libc::SIGQUIT, 10)),
            ),
            owner: pg_owner(),
            tls,
        };
        pg.give(&pg.process.dir);
        if let Some(certs) = &pg.tls {
            // The server reads them as its owner; the key must be the owner's, mode 0600.
            for name in ["server.pem", "server.key", "ca.pem"] {
                let copy = pg.process.dir.join(name);
                fs::copy(certs.path(name), &copy).expect("copy a certificate for postgres");
                pg.own_file(&copy);
            }
        }
        // The data directory is made by initdb (as the owner, mode 0700, as postgres requires).
        let sock = pg.process.dir.join("sock");
        fs::create_dir(&sock).expect("create the socket directory");
        pg.give(&sock);

        let out = pg
            .as_owner("initdb")
            .arg("-D")
            .arg(pg.data())
            .args(["-U", "postgres", "--auth=trust", "-E", "UTF8"])
            // The machine's locale settings (LANG) may name a locale that is not installed.
            .arg("--locale=C")
            // initdb's own fsync of the new files: the directory is thrown away after the test.
            .arg("--no-sync")
            .output()
            .unwrap_or_else(|e| panic!("cannot run initdb: {e}"));
        assert!(
            out.status.success(),
            "initdb failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );

        // Written whole: the first matching line decides, so the password rule for the
        // password role must come before the trust rules for everyone else. With TLS, plain
        // TCP is refused first, and the certificate role may log in by certificate only.
        let tls_rules = if pg.tls.is_some() {
            format!(
                "hostnossl all  all     127.0.0.1/32  reject\n\
                 hostnossl all  all     ::1/128       reject\n\
                 hostssl all  {PG_CERT_ROLE}  127.0.0.1/32  cert\n\
                 hostssl all  {PG_CERT_ROLE}  ::1/128       cert\n"
            )
        } else {
            String::new()
        };
        let hba = format!(
            "# TYPE  DATABASE  USER  ADDRESS  METHOD\n{tls_rules}\
             host    all  {role}  127.0.0.1/32  scram-sha-256\n\
             host    all  {role}  ::1/128       scram-sha-256\n\
             local   all  {role}                scram-sha-256\n\
             local   all  all                   trust\n\
             host    all  all     127.0.0.1/32  trust\n\
             host    all  all     ::1/128       trust\n\
             local   replication  all                trust\n\
             host    replication  all  127.0.0.1/32  trust\n",
            role = PG_PASSWORD_ROLE
        );
        let hba_path = pg.data().join("pg_hba.conf");
        fs::write(&hba_path, hba).expect("write pg_hba.conf");
        pg.give(&hba_path);

        pg.start_on_free_port();

        pg.psql_in("postgres", "CREATE DATABASE rimeflake");
        pg.psql_in(
            "postgres",
            &format!("CREATE ROLE {PG_PASSWORD_ROLE} LOGIN PASSWORD '{PG_PASSWORD}'"),
        );
        pg.psql_in(
            "postgres",
            &format!("GRANT ALL ON DATABASE rimeflake TO {PG_PASSWORD_ROLE}"),
        );
        // Since PostgreSQL 15 only the owner may create in schema public.
        pg.psql(&format!("GRANT ALL ON SCHEMA public TO {PG_PASSWORD_ROLE}"));
        if pg.tls.is_some() {
            pg.psql(&format!(
                "CREATE ROLE {PG_CERT_ROLE} LOGIN; \
                 GRANT ALL ON DATABASE rimeflake TO {PG_CERT_ROLE}; \
                 GRANT ALL ON SCHEMA public TO {PG_CERT_ROLE}; \
                 ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT ALL ON TABLES TO {PG_CERT_ROLE}"
            ));
        }
        pg
    }

    fn data(&self) -> PathBuf {
        self.process.dir.join("data")
    }

    fn log(&self) -> PathBuf {
        self.process.dir.join("postgres.log")
    }

    /// Hands a file to the server's owner, readable by it alone (as a key file must be).
    fn own_file(&self, path: &Path) {
        use std::os::unix::fs::PermissionsExt;
        self.give(path);
        fs::set_permissions(path, fs::Permissions::from_mode(0o600)).expect("chmod 0600");
    }

    /// Hands a path the harness made to the unprivileged owner (nothing to do when not root).
    fn give(&self, path: &Path) {
        if let Some((uid, gid)) = self.owner {
            std::os::unix::fs::chown(path, Some(uid), Some(gid))
                .unwrap_or_else(|e| panic!("chown {}: {e}", path.display()));
        }
        if path.is_dir() {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(path, fs::Permissions::from_mode(0o700)).expect("chmod 0700");
        }
    }

    /// A PostgreSQL program run as the owner. setpriv execs it in place, so the child's pid is
    /// the server's own and signals (stop, pause) reach the postmaster itself; runuser would
    /// stand in between as a parent process.
    fn as_owner(&self, program: &str) -> Command {
        let bin = pg_bin(program);
        let mut cmd = match self.owner {
            Some((uid, gid)) => {
                let mut cmd = Command::new("setpriv");
                cmd.arg(format!("--reuid={uid}"))
                    .arg(format!("--regid={gid}"))
                    .arg("--clear-groups")
                    .arg("--")
                    .arg(bin);
                cmd
            }
            None => Command::new(bin),
        };
        // The owner may not be allowed into the test's working directory.
        cmd.current_dir(&self.process.dir).stdin(Stdio::null());
        cmd
    }

    /// The superuser, no password.
    pub fn url(&self) -> String {
        format!(
            "postgresql://postgres@127.0.0.1:{}/rimeflake",
            self.process.port
        )
    }

    /// The password role with `pw` (right only when `pw` is [`PG_PASSWORD`]).
    pub fn url_with_password(&self, pw: &str) -> String {
        format!(
            "postgresql://{PG_PASSWORD_ROLE}:{pw}@127.0.0.1:{}/rimeflake",
            self.process.port
        )
    }

    pub fn port(&self) -> u16 {
        self.process.port
    }

    /// Runs SQL as `postgres` in database `rimeflake` over TCP and returns psql's unaligned,
    /// tuples-only output (e.g. "1\n" for `SELECT 1`); panics with psql's stderr on failure.
    pub fn psql(&self, sql: &str) -> String {
        self.psql_in("rimeflake", sql)
    }

    fn psql_in(&self, db: &str, sql: &str) -> String {
        let port = self.process.port.to_string();
        let out = Command::new(pg_bin("psql"))
            // -X: no ~/.psqlrc; -w: never prompt; ON_ERROR_STOP: a failing statement fails psql.
            .args([
                "-X",
                "-w",
                "-At",
                "-v",
                "ON_ERROR_STOP=1",
                "-h",
                "127.0.0.1",
                "-p",
                &port,
            ])
            .args(["-U", "postgres", "-d", db, "-c", sql])
            .env("PGCONNECT_TIMEOUT", "10")
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("cannot run psql: {e}"));
        if !out.status.success() {
            panic!(
                "psql -c {sql:?} failed ({}):\n{}\n{}",
                out.status,
                String::from_utf8_lossy(&out.stderr),
                self.process.logs()
            );
        }
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Fast shutdown (SIGINT): sessions are cut, a checkpoint written, the data stays.
    pub fn stop(&mut self) {
        self.process.stop();
    }

    /// Starts the server again on the same port and data directory (stopping it first if it
    /// runs) and waits until it accepts connections.
    pub fn restart(&mut self) {
        self.restart_process();
    }

    /// SIGSTOP to the postmaster and every backend: new connections hang in the kernel's
    /// backlog and open sessions get no answers.
    pub fn pause(&self) {
        self.process.pause();
    }

    pub fn resume(&self) {
        self.process.resume();
    }
}

// ---- TLS ----------------------------------------------------------------------------------------

/// Certificates for the TLS tests, made by the `openssl` command in a fresh directory (removed
/// when dropped), all P-256 keys valid for 30 days:
///
/// - `ca.pem` (`ca.key`): the CA the servers and clients trust;
/// - `server.pem`, `server.key`: the servers' certificate, signed by that CA for the name
///   `localhost` only, so that `127.0.0.1` is a host it does not name;
/// - `client.pem`, `client.key`: a client certificate for [`PG_CERT_ROLE`], signed by that CA;
/// - `other-ca.pem`: another CA, which signed `impostor.pem` (`impostor.key`) for `localhost`:
///   what a server that is not ours would show.
pub struct Certs {
    dir: PathBuf,
}

impl Certs {
    pub fn make() -> Certs {
        let certs = Certs {
            dir: fresh_dir("certs"),
        };
        fs::create_dir_all(&certs.dir).expect("create the certificates' directory");
        for ca in ["ca", "other-ca"] {
            certs.openssl(&[
                "req",
                "-x509",
                "-new",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:P-256",
                "-nodes",
                "-days",
                "30",
                "-keyout",
                &format!("{ca}.key"),
                "-out",
                &format!("{ca}.pem"),
                "-subj",
                &format!("/CN=rimeflake test {ca}"),
            ]);
        }
        let server_ext = "subjectAltName=DNS:localhost\nextendedKeyUsage=serverAuth";
        for (name, ca, subject, ext, serial) in [
            ("server", "ca", "localhost", server_ext, "2"),
            (
                "client",
                "ca",
                PG_CERT_ROLE,
                "extendedKeyUsage=clientAuth",
                "3",
            ),
            ("impostor", "other-ca", "localhost", server_ext, "4"),
        ] {
            fs::write(
                certs.path(&format!("{name}.ext")),
                format!("basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\n{ext}\n"),
            )
            .expect("write an extensions file");
            certs.openssl(&[
                "req",
                "-new",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:P-256",
                "-nodes",
                "-keyout",
                &format!("{name}.key"),
                "-out",
                &format!("{name}.csr"),
                "-subj",
                &format!("/CN={subject}"),
            ]);
            certs.openssl(&[
                "x509",
                "-req",
                "-in",
                &format!("{name}.csr"),
                "-CA",
                &format!("{ca}.pem"),
                "-CAkey",
                &format!("{ca}.key"),
                "-set_serial",
                serial,
                "-days",
                "30",
                "-extfile",
                &format!("{name}.ext"),
                "-out",
                &format!("{name}.pem"),
            ]);
        }
        certs
    }

    /// A file of these certificates: `ca.pem`, `server.key`...
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    fn openssl(&self, args: &[&str]) {
        let out = Command::new("openssl")
            .args(args)
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("cannot run openssl ({e}): {INSTALL}"));
        assert!(
            out.status.success(),
            "openssl {args:?} failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

impl Drop for Certs {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.dir);
    }
}
