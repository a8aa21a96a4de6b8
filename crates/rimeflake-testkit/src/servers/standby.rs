//! A PostgreSQL streaming standby (`pg_basebackup` of a primary, on loopback, as the same
//! unprivileged owner), its promotion, synchronous commit, and a dump and restore of the
//! tables, as operators run them.

use super::postgres::pg_owner;
use super::{deadline, fresh_dir, Postgres, Process, Server};
use std::process::Stdio;
use std::time::Duration;

impl Postgres {
    /// A standby of the primary at `127.0.0.1:via` (its port, or a proxy in front of it), made
    /// with `pg_basebackup -R`, streaming its WAL from there, and started on a port of its own;
    /// returned once it streams.
    pub fn start_standby(via: u16) -> Postgres {
        let mut standby = Postgres {
            process: Process::new(
                "postgres",
                fresh_dir("pg-standby"),
                &["postgres.log"],
                (libc::SIGINT, "SIGINT", 60),
                Some((libc::SIGQUIT, 10)),
            ),
            owner: pg_owner(),
            tls: None,
        };
        standby.give(&standby.process.dir);
        let sock = standby.process.dir.join("sock");
        std::fs::create_dir(&sock).expect("create the socket directory");
        standby.give(&sock);
        let out = standby
            .as_owner("pg_basebackup")
            .args(["-h", "127.0.0.1", "-p", &via.to_string(), "-U", "postgres"])
            .arg("-D")
            .arg(standby.data())
            .args(["-R", "-X", "stream", "--no-sync", "-c", "fast"])
            .output()
            .unwrap_or_else(|e| panic!("cannot run pg_basebackup: {e}"));
        assert!(
            out.status.success(),
            "pg_basebackup failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        standby.start_on_free_port();
        standby.wait_until("SELECT status FROM pg_stat_wal_receiver", "streaming", 30);
        standby
    }

    /// Waits until `sql` answers `want` (trimmed), at most `seconds`.
    pub fn wait_until(&self, sql: &str, want: &str, seconds: u64) {
        let until = deadline(seconds);
        loop {
            let out = self
                .psql_command("rimeflake")
                .args(["-c", sql])
                .output()
                .unwrap_or_else(|e| panic!("cannot run psql: {e}"));
            let got = String::from_utf8_lossy(&out.stdout).trim().to_string();
            if out.status.success() && got == want {
                return;
            }
            assert!(
                crate::now_ns() < until,
                "postgres on port {}: {sql:?} gave {got:?}, not {want:?}, within {seconds} s: {}\n{}",
                self.process.port,
                String::from_utf8_lossy(&out.stderr),
                self.process.logs()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Promotes a standby (`pg_promote()`, as `pg_ctl promote` does) and waits until it takes
    /// writes.
    pub fn promote(&self) {
        self.psql("SELECT pg_promote(true, 30)");
        self.wait_until("SELECT pg_is_in_recovery()", "f", 30);
    }

    /// With `true`, every commit waits for a standby to have flushed it
    /// (`synchronous_standby_names = '*'`); with `false`, commits are local again.
    pub fn synchronous(&self, on: bool) {
        let sql = if on {
            "ALTER SYSTEM SET synchronous_standby_names = '*'"
        } else {
            "ALTER SYSTEM RESET synchronous_standby_names"
        };
        self.psql(sql);
        self.psql("SELECT pg_reload_conf()");
        let want = if on { "*" } else { "" };
        self.wait_until("SHOW synchronous_standby_names", want, 10);
    }

    /// SIGKILL to the postmaster and its backends: the server is gone at once, as when its host
    /// dies (no checkpoint; the data stays in its directory).
    pub fn kill(&mut self) {
        self.process.kill();
    }

    /// `pg_dump --clean` of `tables` in database `rimeflake`: the SQL that restores them as
    /// they are now.
    pub fn dump(&self, tables: &[&str]) -> String {
        let mut cmd = std::process::Command::new(super::pg_bin("pg_dump"));
        cmd.args(["-h", "127.0.0.1", "-p", &self.process.port.to_string()])
            .args([
                "-U",
                "postgres",
                "-d",
                "rimeflake",
                "--clean",
                "--if-exists",
            ])
            .stdin(Stdio::null());
        for t in tables {
            cmd.args(["-t", t]);
        }
        let out = cmd
            .output()
            .unwrap_or_else(|e| panic!("cannot run pg_dump: {e}"));
        assert!(
            out.status.success(),
            "pg_dump failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Runs `sql` (a dump) through psql in database `rimeflake`, stopping at the first error.
    pub fn restore(&self, sql: &str) {
        let mut cmd = self.psql_command("rimeflake");
        cmd.args(["-q", "-f", "-"]);
        super::restore_with(cmd, sql);
    }
}
