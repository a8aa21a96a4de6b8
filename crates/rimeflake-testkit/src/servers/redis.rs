//! redis-server: plain, with a password, or with TLS beside its plain port.

use super::{free_port, fresh_dir, log_stdio, Certs, Process, Server, INSTALL};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// The redis-server on PATH.
pub fn redis_server() -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join("redis-server"))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("redis-server is not on PATH: {INSTALL}"))
}

/// A redis-server with an append-only file fsynced on every write, so a stop and restart (or a
/// SIGKILL) loses nothing that was acknowledged.
pub struct Redis {
    process: Process,
    password: Option<String>,
    /// With TLS: the certificates, and the TLS port (the plain one stays, for the harness).
    tls: Option<(Certs, u16)>,
    /// A cluster node (`cluster-enabled yes`) serving every slot itself.
    cluster: bool,
    /// More arguments for redis-server (a replica's `--replicaof`, say).
    extra: Vec<String>,
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
        if self.cluster {
            let nodes = format!("{dir}/nodes.conf");
            cmd.args(["--cluster-enabled", "yes", "--cluster-config-file", &nodes]);
        }
        cmd.args(&self.extra);
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

    /// A one-node cluster (`cluster-enabled yes`) that serves all 16384 slots: commands whose
    /// keys lie in different slots fail there with CROSSSLOT, as on any cluster.
    pub fn start_cluster() -> Redis {
        let mut redis = Redis::unstarted(None, None);
        redis.cluster = true;
        redis.start_on_free_port();
        let added = redis.command(&["CLUSTER", "ADDSLOTSRANGE", "0", "16383"]);
        assert_eq!(added, "+OK\r\n");
        let mut tries = 0;
        while !redis
            .command(&["CLUSTER", "INFO"])
            .contains("cluster_state:ok")
        {
            tries += 1;
            assert!(tries < 200, "the cluster never got ready");
            std::thread::sleep(Duration::from_millis(50));
        }
        redis
    }

    /// A server started with more arguments for redis-server (`--replicaof 127.0.0.1 PORT`
    /// makes a replica).
    pub fn start_with(args: &[&str]) -> Redis {
        let mut redis = Redis::unstarted(None, None);
        redis.extra = args.iter().map(|a| a.to_string()).collect();
        redis.start_on_free_port();
        redis
    }

    /// A replica of the server on `port` (its primary, or a proxy in front of it), waited for
    /// until its first synchronisation is done.
    pub fn start_replica_of(port: u16) -> Redis {
        let replica = Redis::start_with(&["--replicaof", "127.0.0.1", &port.to_string()]);
        replica.wait_for("master_link_status:up", 20);
        replica
    }

    /// Waits until `INFO` holds `text`, at most `seconds`.
    pub fn wait_for(&self, text: &str, seconds: u64) {
        let until = super::deadline(seconds);
        loop {
            let info = self.command(&["INFO"]);
            if info.contains(text) {
                return;
            }
            assert!(
                crate::now_ns() < until,
                "redis-server on port {}: no {text:?} in INFO within {seconds} s:\n{info}\n{}",
                self.process.port,
                self.process.logs()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGKILL: the server is gone at once, as when its host dies.
    pub fn kill(&mut self) {
        self.process.kill();
    }

    fn launch(password: Option<String>, tls: Option<(Certs, u16)>) -> Redis {
        let mut redis = Redis::unstarted(password, tls);
        redis.start_on_free_port();
        redis
    }

    fn unstarted(password: Option<String>, tls: Option<(Certs, u16)>) -> Redis {
        Redis {
            process: Process::new(
                "redis-server",
                fresh_dir("redis"),
                &["redis.log", "redis.out"],
                (libc::SIGTERM, "SIGTERM", 30),
                None,
            ),
            password,
            tls,
            cluster: false,
            extra: Vec::new(),
        }
    }

    /// The TLS port of a server from [`Redis::start_tls`].
    pub fn tls_port(&self) -> u16 {
        self.tls.as_ref().expect("a server started with TLS").1
    }

    /// The certificates of a server from [`Redis::start_tls`].
    pub fn certs(&self) -> &Certs {
        &self.tls.as_ref().expect("a server started with TLS").0
    }

    /// The URL of the TLS port of a server from [`Redis::start_tls`], checked against the
    /// harness's CA.
    pub fn tls_url(&self) -> String {
        format!(
            "rediss://localhost:{}/0?sslrootcert={}",
            self.tls_port(),
            self.certs().path("ca.pem").display()
        )
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

    /// With `true`, every write is refused with `-OOM`, as when the server is out of memory
    /// (`maxmemory` 1 byte, no eviction); with `false`, back to no limit.
    pub fn out_of_memory(&self, on: bool) {
        let limit = if on { "1" } else { "0" };
        let reply = self.command(&["CONFIG", "SET", "maxmemory", limit]);
        assert!(reply.starts_with("+OK"), "{reply}");
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
pub(super) fn redis_connect(
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
pub(super) fn resp_array(args: &[&str]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for arg in args {
        out.extend_from_slice(format!("${}\r\n", arg.len()).as_bytes());
        out.extend_from_slice(arg.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out
}

/// Reads exactly one reply, however nested, and returns its raw text.
pub(super) fn read_reply(conn: &mut BufReader<TcpStream>) -> std::io::Result<String> {
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
