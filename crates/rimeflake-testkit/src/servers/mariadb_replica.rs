//! MariaDB replication as operators run it, for the tests of replicated servers: a primary that
//! writes a binary log and may wait for semi-synchronous replicas, a replica that replicates
//! from it by GTID (through a proxy the test controls), promoted by hand, and a dump restored.

use super::{deadline, now_ns, MariaDb};
use std::process::{Command, Stdio};
use std::time::Duration;

/// How long a primary waits for a semi-synchronous replica before it answers a commit anyway
/// and falls back to asynchronous replication (MariaDB's default).
pub const SEMI_SYNC_TIMEOUT_MS: u64 = 10_000;

impl MariaDb {
    /// A primary: server ID 1 of GTID domain 0, a binary log synced at every commit, and, with
    /// `semi_sync`, semi-synchronous replication waiting `AFTER_SYNC` (for
    /// [`SEMI_SYNC_TIMEOUT_MS`] at most).
    pub fn start_primary(semi_sync: bool) -> MariaDb {
        let mut args: Vec<String> = [
            "--server-id=1",
            "--log-bin=binlog",
            "--binlog-format=ROW",
            "--sync-binlog=1",
        ]
        .map(String::from)
        .to_vec();
        if semi_sync {
            args.extend([
                "--rpl-semi-sync-master-enabled=ON".to_string(),
                "--rpl-semi-sync-master-wait-point=AFTER_SYNC".to_string(),
                format!("--rpl-semi-sync-master-timeout={SEMI_SYNC_TIMEOUT_MS}"),
            ]);
        }
        MariaDb::launch(None, args)
    }

    /// A replica (server ID 2, read-only, semi-synchronous when its primary asks) of the
    /// primary whose port, or a proxy's to it, is `via`, replicating by GTID as `root`; returned
    /// once its replication threads run, and, for a semi-synchronous `primary`, once the primary
    /// counts it as a client.
    pub fn start_replica_of(primary: &MariaDb, via: u16) -> MariaDb {
        let args = [
            "--server-id=2",
            "--log-bin=binlog",
            "--binlog-format=ROW",
            "--read-only=ON",
            "--rpl-semi-sync-slave-enabled=ON",
        ]
        .map(String::from)
        .to_vec();
        let replica = MariaDb::launch(None, args);
        replica.sql(&format!(
            "CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = {via}, \
             MASTER_USER = 'root', MASTER_CONNECT_RETRY = 1, MASTER_USE_GTID = slave_pos; \
             START SLAVE"
        ));
        replica.wait_until(
            "SELECT COUNT(*) FROM information_schema.processlist \
             WHERE command IN ('Slave_IO', 'Slave_SQL')",
            |v| v.parse::<u32>().is_ok_and(|n| n >= 2),
            30,
        );
        if primary.semi_sync_status("enabled") == "ON" {
            primary.wait_until(
                "SELECT variable_value FROM information_schema.global_status \
                 WHERE variable_name = 'RPL_SEMI_SYNC_MASTER_CLIENTS'",
                |v| v == "1",
                30,
            );
        }
        replica
    }

    /// `rpl_semi_sync_master_<name>`, a variable of the primary's side.
    pub fn semi_sync_status(&self, name: &str) -> String {
        self.sql(&format!("SELECT @@rpl_semi_sync_master_{name}"))
            .trim()
            .to_string()
    }

    /// Waits (up to `seconds`) until `sql` returns a value `ok` takes.
    pub fn wait_until(&self, sql: &str, ok: impl Fn(&str) -> bool, seconds: u64) {
        let until = deadline(seconds);
        loop {
            let got = self.sql(sql);
            if ok(got.trim()) {
                return;
            }
            assert!(
                now_ns() < until,
                "MariaDB on port {}: {sql} still returns {got:?} after {seconds} s",
                self.port()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Promotes a replica as an operator does: replication stopped and forgotten, writes
    /// allowed.
    pub fn promote(&self) {
        self.sql("STOP SLAVE; RESET SLAVE ALL; SET GLOBAL read_only = OFF");
    }

    /// `mariadb-dump` of `tables` in database `rimeflake`: the SQL that restores them as they
    /// are now (dropped and made again, foreign keys unchecked while it runs).
    pub fn dump(&self, tables: &[&str]) -> String {
        let out = Command::new("mariadb-dump")
            .arg("--no-defaults")
            .arg(format!("--socket={}", self.dir().join("sock").display()))
            .args(["-uroot", "--single-transaction", "rimeflake"])
            .args(tables)
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("cannot run mariadb-dump: {e}"));
        assert!(
            out.status.success(),
            "mariadb-dump failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Runs `sql` (a dump) in database `rimeflake`, stopping at the first error.
    pub fn restore(&self, sql: &str) {
        let mut cmd = Command::new("mariadb");
        cmd.arg("--no-defaults")
            .arg(format!("--socket={}", self.dir().join("sock").display()))
            .args(["-uroot", "rimeflake"]);
        super::restore_with(cmd, sql);
    }
}
