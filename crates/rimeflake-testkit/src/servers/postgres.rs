//! PostgreSQL (`initdb`, `postgres`), as an unprivileged user when the tests run as root;
//! plain, or with TLS only.

use super::{deadline, fresh_dir, log_stdio, now_ns, Certs, Process, Server, INSTALL};
use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

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

/// The role that must log in with a password (scram-sha-256), for the tests of credentials.
pub const PG_PASSWORD_ROLE: &str = "rimeflake_pw";
pub const PG_PASSWORD: &str = "secret-pw";

/// A PostgreSQL cluster with a database `rimeflake`: the superuser `postgres` logs in without a
/// password, the role `rimeflake_pw` only with the password `secret-pw`.
pub struct Postgres {
    pub(super) process: Process,
    /// The unprivileged uid and gid the server runs as when the tests run as root.
    pub(super) owner: Option<(u32, u32)>,
    /// With TLS (`ssl=on`, plain TCP refused): the certificates, copied for the server into
    /// its directory.
    pub(super) tls: Option<Certs>,
}

/// The role that logs in with a client certificate only (`cert` in pg_hba.conf), on servers
/// from [`Postgres::start_tls`]; [`Certs`] has its certificate.
pub const PG_CERT_ROLE: &str = "rimeflake_cert";

/// PostgreSQL refuses to run as root, and CI runs the tests as root: then initdb and postgres
/// run as `nobody` (or a system user made for it when there is no `nobody`).
pub(super) fn pg_owner() -> Option<(u32, u32)> {
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

    /// The superuser's URL on a server from [`Postgres::start_tls`], checked as `verify-full`
    /// against the harness's CA.
    pub fn tls_url(&self) -> String {
        format!(
            "postgresql://postgres@localhost:{}/rimeflake?sslmode=verify-full&sslrootcert={}",
            self.process.port,
            self.certs().path("ca.pem").display()
        )
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
            "dbname=rimeflake sslmode=verify-ca sslrootcert={}",
            self.certs().path(&format!("{ca}.pem")).display()
        );
        let until = deadline(10);
        loop {
            let out = self
                .psql_command(&conninfo)
                .args(["-c", "SELECT 1"])
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

    pub(super) fn data(&self) -> PathBuf {
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
    pub(super) fn give(&self, path: &Path) {
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
    pub(super) fn as_owner(&self, program: &str) -> Command {
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
        let mut cmd = self.psql_command(db);
        self.run_psql(cmd.args(["-c", sql]), sql)
    }

    /// psql as `postgres` on database `db` over TCP: no ~/.psqlrc (-X), never a prompt (-w),
    /// unaligned tuples only, and a failing statement fails psql.
    pub(super) fn psql_command(&self, db: &str) -> Command {
        let mut cmd = Command::new(pg_bin("psql"));
        cmd.args([
            "-X",
            "-w",
            "-At",
            "-v",
            "ON_ERROR_STOP=1",
            "-h",
            "127.0.0.1",
        ])
        .args([
            "-p",
            &self.process.port.to_string(),
            "-U",
            "postgres",
            "-d",
            db,
        ])
        .env("PGCONNECT_TIMEOUT", "10")
        .stdin(Stdio::null());
        cmd
    }

    /// Runs `cmd` (doing `what`) and returns its output; panics with psql's stderr on failure.
    pub(super) fn run_psql(&self, cmd: &mut Command, what: &str) -> String {
        let out = cmd
            .output()
            .unwrap_or_else(|e| panic!("cannot run psql: {e}"));
        if !out.status.success() {
            panic!(
                "psql -c {what:?} failed ({}):\n{}\n{}",
                out.status,
                String::from_utf8_lossy(&out.stderr),
                self.process.logs()
            );
        }
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// With `true`, every transaction is read-only (`default_transaction_read_only`, reloaded
    /// into open sessions too), as on a standby or a server out of disk space that refuses
    /// writes; with `false`, writable again.
    pub fn read_only(&self, on: bool) {
        let sql = if on {
            "ALTER SYSTEM SET default_transaction_read_only = on"
        } else {
            "ALTER SYSTEM RESET default_transaction_read_only"
        };
        for sql in [sql, "SELECT pg_reload_conf()"] {
            let mut cmd = self.psql_command("rimeflake");
            // This session itself may write, whatever the default is now.
            cmd.env("PGOPTIONS", "-c default_transaction_read_only=off");
            self.run_psql(cmd.args(["-c", sql]), sql);
        }
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
