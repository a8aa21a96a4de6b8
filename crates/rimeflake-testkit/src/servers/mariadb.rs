//! MariaDB (`mariadbd`), plain or with TLS only. Its system tables come from a template data
//! directory made once per machine (`mariadb-install-db` and the tests' users, about 5 s) and
//! copied for each server, which then starts in well under a second.

use super::{deadline, fresh_dir, log_stdio, now_ns, Certs, Process, Server, INSTALL};
use std::fs;
use std::io::Read;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

/// The user that must log in with a password, for the tests of credentials.
pub const MY_PASSWORD_ROLE: &str = "rimeflake_pw";
pub const MY_PASSWORD: &str = "secret-pw";
/// On servers from [`MariaDb::start_tls`]: a user that must show a client certificate.
pub const MY_CERT_ROLE: &str = "rimeflake_cert";

/// The server program: `mariadbd` (or `mysqld`, its older name) in /usr/sbin or on PATH.
pub fn mariadbd() -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    ["/usr/sbin".into(), "/usr/bin".into()]
        .into_iter()
        .chain(std::env::split_paths(&path))
        .flat_map(|dir: PathBuf| [dir.join("mariadbd"), dir.join("mysqld")])
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("mariadbd is not installed: {INSTALL}"))
}

/// What every start gives `mariadbd`: loopback only, no name lookups, small logs and buffers
/// (the data is a test's), and the durable settings a generator checks for.
fn common_args(dir: &Path) -> Vec<String> {
    let d = dir.display();
    let mut args = vec![
        "--no-defaults".to_string(),
        format!("--datadir={d}/data"),
        format!("--socket={d}/sock"),
        format!("--pid-file={d}/mariadbd.pid"),
        format!("--log-error={d}/mariadb.log"),
        "--skip-name-resolve".into(),
        "--innodb-log-file-size=4M".into(),
        "--innodb-buffer-pool-size=32M".into(),
        "--innodb-flush-log-at-trx-commit=1".into(),
        "--performance-schema=OFF".into(),
        "--max-connections=500".into(),
    ];
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        // mariadbd runs as root when told to (it warns).
        args.push("--user=root".into());
    }
    args
}

/// The template data directory: system tables (with the superuser `root`, without a password,
/// from 127.0.0.1), the database `rimeflake` and the users of the credential tests. Made once per
/// machine and kept in the temporary directory (a new MariaDB version makes another).
fn template() -> &'static Path {
    static TEMPLATE: OnceLock<PathBuf> = OnceLock::new();
    TEMPLATE.get_or_init(|| {
        let bin = mariadbd();
        let stamp = fs::metadata(&bin)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_secs());
        // SAFETY: geteuid has no preconditions.
        let uid = unsafe { libc::geteuid() };
        let done = std::env::temp_dir().join(format!("rimeflake-mariadb-template-{uid}-{stamp}"));
        if done.join("data").join("rimeflake").is_dir() {
            return done;
        }
        let work = fresh_dir("mariadb-template");
        let out = Command::new("mariadb-install-db")
            .arg("--no-defaults")
            .arg(format!("--datadir={}/data", work.display()))
            .args([
                "--auth-root-authentication-method=normal",
                "--skip-test-db",
                "--innodb-log-file-size=4M",
            ])
            .args(if uid == 0 {
                vec!["--user=root"]
            } else {
                vec![]
            })
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("cannot run mariadb-install-db ({e}): {INSTALL}"));
        assert!(
            out.status.success(),
            "mariadb-install-db failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        // The users and the database, over the socket, on a server of its own.
        let mut child = Command::new(&bin)
            .args(common_args(&work))
            .arg("--skip-networking")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("run mariadbd for the template");
        let sock = work.join("sock");
        let setup = format!(
            "CREATE DATABASE rimeflake; \
             CREATE USER '{MY_PASSWORD_ROLE}'@'%' IDENTIFIED BY '{MY_PASSWORD}'; \
             GRANT ALL ON rimeflake.* TO '{MY_PASSWORD_ROLE}'@'%'; \
             CREATE USER '{MY_CERT_ROLE}'@'%' REQUIRE X509; \
             GRANT ALL ON rimeflake.* TO '{MY_CERT_ROLE}'@'%'"
        );
        let until = deadline(60);
        loop {
            let out = Command::new("mariadb")
                .arg("--no-defaults")
                .arg(format!("--socket={}", sock.display()))
                .args(["-uroot", "-e", &setup])
                .stdin(Stdio::null())
                .output()
                .expect("run mariadb");
            if out.status.success() {
                break;
            }
            // Only "cannot connect (yet)" is waited out.
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                err.contains("ERROR 2002") && now_ns() < until,
                "the template's server did not take the setup: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        super::signal(child.id(), libc::SIGTERM);
        let _ = child.wait();
        for name in ["sock", "mariadbd.pid", "mariadb.log"] {
            let _ = fs::remove_file(work.join(name));
        }
        // Another process may have made it meanwhile: then its copy stays, and this one goes.
        if fs::rename(&work, &done).is_err() {
            let _ = fs::remove_dir_all(&work);
        }
        done
    })
}

/// A MariaDB server with a database `rimeflake`: `root` logs in from 127.0.0.1 without a
/// password, [`MY_PASSWORD_ROLE`] only with [`MY_PASSWORD`].
pub struct MariaDb {
    process: Process,
    /// With TLS (`require_secure_transport`): the certificates, copied into its directory.
    tls: Option<Certs>,
    /// More arguments for `mariadbd` (replication's: mariadb_replica.rs).
    args: Vec<String>,
}

impl Server for MariaDb {
    fn process(&mut self) -> &mut Process {
        &mut self.process
    }

    fn spawn_and_wait(&mut self) -> Result<(), String> {
        let dir = self.process.dir.clone();
        let mut cmd = Command::new(mariadbd());
        cmd.args(common_args(&dir))
            .arg(format!("--port={}", self.process.port))
            .arg("--bind-address=127.0.0.1")
            .args(&self.args);
        if self.tls.is_some() {
            let f = |n: &str| dir.join(n).display().to_string();
            cmd.arg(format!("--ssl-cert={}", f("server.pem")))
                .arg(format!("--ssl-key={}", f("server.key")))
                .arg(format!("--ssl-ca={}", f("ca.pem")))
                .arg("--require-secure-transport=ON");
        }
        let out = dir.join("mariadb.out");
        let child = cmd
            .stdin(Stdio::null())
            .stdout(log_stdio(&out))
            .stderr(log_stdio(&out))
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run mariadbd: {e}"));
        let port = self.process.port;
        self.process
            .wait_ready(child, 60, Duration::from_millis(50), || greets(port))
    }
}

/// True when the server sends its greeting (it does once it takes logins).
fn greets(port: u16) -> bool {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    let mut head = [0u8; 5];
    // A greeting is protocol 10; an error packet (0xFF) says it is not ready.
    s.read_exact(&mut head).is_ok() && head[4] == 10
}

impl MariaDb {
    pub fn start() -> MariaDb {
        MariaDb::launch(None, Vec::new())
    }

    /// A server that takes TLS connections only, with the certificate [`Certs`] made for
    /// `localhost`; [`MY_CERT_ROLE`] logs in with its client certificate.
    pub fn start_tls() -> MariaDb {
        MariaDb::launch(Some(Certs::make()), Vec::new())
    }

    pub(super) fn launch(tls: Option<Certs>, args: Vec<String>) -> MariaDb {
        let template = template();
        let dir = fresh_dir("mariadb");
        let out = Command::new("cp")
            .args(["-a", "--sparse=always"])
            .arg(template.join("data"))
            .arg(dir.join("data"))
            .output()
            .expect("run cp");
        assert!(out.status.success(), "copy the template: {out:?}");
        if let Some(certs) = &tls {
            for name in ["server.pem", "server.key", "ca.pem"] {
                fs::copy(certs.path(name), dir.join(name)).expect("copy a certificate");
            }
        }
        let mut db = MariaDb {
            process: Process::new(
                "mariadbd",
                dir,
                &["mariadb.log", "mariadb.out"],
                // A normal shutdown: InnoDB flushes, the data stays.
                (libc::SIGTERM, "SIGTERM", 60),
                // The directory goes anyway: no flush needed.
                None,
            ),
            tls,
            args,
        };
        db.start_on_free_port();
        db
    }

    /// The certificates of a server from [`MariaDb::start_tls`].
    pub fn certs(&self) -> &Certs {
        self.tls.as_ref().expect("a server started with TLS")
    }

    /// Makes the server show the certificate `name` of [`Certs`] (`impostor`, or `server`
    /// again): its copy of the files replaced and reloaded (`FLUSH SSL`), then every connection
    /// over TCP cut, so that each must connect (and check it) again.
    pub fn serve_certificate(&self, name: &str) {
        for (from, to) in [("pem", "server.pem"), ("key", "server.key")] {
            fs::copy(
                self.certs().path(&format!("{name}.{from}")),
                self.process.dir.join(to),
            )
            .expect("copy a certificate for mariadbd");
        }
        self.sql("FLUSH SSL");
        let ids = self.sql(
            "SELECT id FROM information_schema.processlist WHERE host LIKE '%:%' \
             AND id <> CONNECTION_ID()",
        );
        for id in ids.split_whitespace() {
            // One may have ended meanwhile: not an error.
            let _ = Command::new("mariadb")
                .arg("--no-defaults")
                .arg(format!(
                    "--socket={}",
                    self.process.dir.join("sock").display()
                ))
                .args(["-uroot", "-e", &format!("KILL {id}")])
                .output();
        }
    }

    /// The superuser's URL.
    pub fn url(&self) -> String {
        format!("mysql://root@127.0.0.1:{}/rimeflake", self.process.port)
    }

    /// The superuser's URL on a server from [`MariaDb::start_tls`], checked as
    /// `VERIFY_IDENTITY` against the harness's CA.
    pub fn tls_url(&self) -> String {
        format!(
            "mysql://root@localhost:{}/rimeflake?ssl-mode=VERIFY_IDENTITY&ssl-ca={}",
            self.process.port,
            self.certs().path("ca.pem").display()
        )
    }

    /// The password user with `pw` (right only when `pw` is [`MY_PASSWORD`]).
    pub fn url_with_password(&self, pw: &str) -> String {
        format!(
            "mysql://{MY_PASSWORD_ROLE}:{pw}@127.0.0.1:{}/rimeflake",
            self.process.port
        )
    }

    pub fn port(&self) -> u16 {
        self.process.port
    }

    /// Its directory: data, socket, logs.
    pub fn dir(&self) -> &Path {
        &self.process.dir
    }

    /// Runs SQL as `root` in database `rimeflake` (over the socket) and returns the client's
    /// tab-separated rows without column names; panics with its stderr on failure.
    pub fn sql(&self, sql: &str) -> String {
        let out = Command::new("mariadb")
            .arg("--no-defaults")
            .arg(format!(
                "--socket={}",
                self.process.dir.join("sock").display()
            ))
            .args([
                "-uroot",
                "-N",
                "-B",
                "--connect-timeout=10",
                "rimeflake",
                "-e",
                sql,
            ])
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("cannot run mariadb: {e}"));
        if !out.status.success() {
            panic!(
                "mariadb -e {sql:?} failed ({}):\n{}\n{}",
                out.status,
                String::from_utf8_lossy(&out.stderr),
                self.process.logs()
            );
        }
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// A normal shutdown (SIGTERM): the data stays.
    pub fn stop(&mut self) {
        self.process.stop();
    }

    /// SIGKILL, as a crash: what InnoDB acknowledged stays (its log is synced at every commit).
    pub fn kill(&mut self) {
        if let Some(mut child) = self.process.child.take() {
            super::kill_tree(&mut child);
        }
    }

    /// Starts the server again on the same port and data directory (stopping it first if it
    /// runs) and waits until it takes logins.
    pub fn restart(&mut self) {
        self.restart_process();
    }

    /// SIGSTOP: new connections wait in the kernel's backlog, open ones get no answers.
    pub fn pause(&self) {
        self.process.pause();
    }

    pub fn resume(&self) {
        self.process.resume();
    }
}
