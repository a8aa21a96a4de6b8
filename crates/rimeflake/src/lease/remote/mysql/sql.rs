//! The SQL of the MySQL backend: the schema, and every statement, with `?` where
//! [`bind`] puts a value. Each statement is one autocommit transaction: no lock is held by a
//! client between two round trips, so a client paused or cut off holds nobody up.

/// The tables rimeflake keeps in MySQL (InnoDB). They are created on the first connection
/// when missing; a user without the right to create tables can use tables made beforehand
/// with this SQL.
///
/// - `rimeflake_namespaces`: one row per namespace, with the layout record every generator of
///   the namespace must match and when the row was made (`created`, Unix ms by the server's
///   clock).
/// - `rimeflake_workers`: one row per worker ID of a namespace: the lease (`owner`, a token,
///   and `lease_expires`, Unix ms by the server's clock; both NULL when nobody holds it) and
///   the worker's state (`state`, as text) with its `version`, raised on every write.
/// - `rimeflake_used`: the worker IDs ever leased in a namespace, each with the largest reach
///   (ms) its holders declared. Its foreign key deletes a namespace's marks with its row, so
///   whatever loses the record loses the marks with it.
/// - `rimeflake_settings`: the namespace's settings (see the `replication` module of the remote
///   leases): its `max_drift_ms`, the replica acknowledgements every lease and state write needs,
///   the restore epoch, and the lineage the replicas were settled on; deleted with the
///   namespace's row, as the marks are.
pub(crate) const SCHEMA: &str = "\
CREATE TABLE IF NOT EXISTS rimeflake_namespaces (
    namespace VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    layout    TEXT NOT NULL,
    created   BIGINT NOT NULL,
    PRIMARY KEY (namespace)
) ENGINE = InnoDB;
CREATE TABLE IF NOT EXISTS rimeflake_workers (
    namespace     VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    worker_id     BIGINT UNSIGNED NOT NULL,
    owner         VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
    lease_expires BIGINT NULL,
    state         TEXT NULL,
    version       BIGINT UNSIGNED NOT NULL DEFAULT 0,
    PRIMARY KEY (namespace, worker_id)
) ENGINE = InnoDB;
CREATE TABLE IF NOT EXISTS rimeflake_used (
    namespace VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    worker_id BIGINT UNSIGNED NOT NULL,
    reach_ms  BIGINT UNSIGNED NOT NULL,
    marks     BIGINT UNSIGNED NOT NULL DEFAULT 1,
    PRIMARY KEY (namespace, worker_id),
    FOREIGN KEY (namespace) REFERENCES rimeflake_namespaces (namespace) ON DELETE CASCADE
) ENGINE = InnoDB;
CREATE TABLE IF NOT EXISTS rimeflake_settings (
    namespace    VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    max_drift_ms BIGINT UNSIGNED NULL,
    replicas     INT UNSIGNED NOT NULL DEFAULT 0,
    epoch        BIGINT UNSIGNED NOT NULL DEFAULT 0,
    lineage      VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NULL,
    PRIMARY KEY (namespace),
    FOREIGN KEY (namespace) REFERENCES rimeflake_namespaces (namespace) ON DELETE CASCADE
) ENGINE = InnoDB;
";

/// A value for a `?` of a statement.
#[derive(Clone, Copy, Debug)]
pub(super) enum Val<'a> {
    Text(&'a str),
    Num(u64),
    Null,
}

/// `sql` with its `?` replaced by `vals`, in order: text as a hexadecimal literal in utf8mb4
/// (no quoting or escaping to get wrong, whatever the server's `sql_mode`), numbers in decimal.
/// The statements here hold no `?` but their parameters.
pub(super) fn bind(sql: &str, vals: &[Val<'_>]) -> String {
    let mut out = String::with_capacity(sql.len() + 64);
    let mut vals = vals.iter();
    for (i, part) in sql.split('?').enumerate() {
        if i > 0 {
            match vals.next().expect("a value for every ?") {
                Val::Num(n) => out.push_str(&n.to_string()),
                Val::Null => out.push_str("NULL"),
                Val::Text(t) => {
                    out.push_str("_utf8mb4 X'");
                    for b in t.bytes() {
                        out.push_str(&format!("{b:02x}"));
                    }
                    out.push('\'');
                }
            }
        }
        out.push_str(part);
    }
    assert!(vals.next().is_none(), "a value with no ? for it");
    out
}

/// The server's clock, in Unix ms. `NOW(3)` is when the statement began; the session's time
/// zone is UTC, so the conversion has no hour that happens twice.
macro_rules! now_ms {
    () => {
        "CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED)"
    };
}

/// Run once per connection: the session's time zone (for [`now_ms!`]), and row-lock waits cut
/// short (the connection's own timeout ends a call sooner anyway).
pub(super) const SESSION: &str = "SET time_zone = '+00:00', innodb_lock_wait_timeout = 1";

pub(super) const TABLES_EXIST: &str = "SELECT COUNT(*) FROM information_schema.tables \
     WHERE table_schema = DATABASE() AND table_name IN \
     ('rimeflake_namespaces', 'rimeflake_workers', 'rimeflake_used', 'rimeflake_settings')";

pub(super) const INSERT_LAYOUT: &str = concat!(
    "INSERT IGNORE INTO rimeflake_namespaces (namespace, layout, created) VALUES (?, ?, ",
    now_ms!(),
    ")"
);

pub(super) const SELECT_LAYOUT: &str =
    "SELECT layout FROM rimeflake_namespaces WHERE namespace = ?";

// Every worker ID of namespace ? with a row, and whether a live lease of another token than ?
// holds it (an expired lease is nobody's, by the server's clock).
pub(super) const ROWS: &str = concat!(
    "SELECT worker_id, owner IS NOT NULL AND owner <> ? AND lease_expires > ",
    now_ms!(),
    " FROM rimeflake_workers WHERE namespace = ?"
);

// Takes (owner ?, for ? ms) the lease of an existing row that nobody else holds live: the
// update locks the row and checks the newest version of it, so of two racers one wins. Taking
// one's own lease again extends it.
pub(super) const TAKE: &str = concat!(
    "UPDATE rimeflake_workers SET owner = ?, lease_expires = ",
    now_ms!(),
    " + ? WHERE namespace = ? AND worker_id = ? AND (owner IS NULL OR owner = ? OR lease_expires <= ",
    now_ms!(),
    ")"
);

// Takes the lease of a worker ID without a row; nothing when a row is there (another racer's).
pub(super) const TAKE_NEW: &str = concat!(
    "INSERT IGNORE INTO rimeflake_workers (namespace, worker_id, owner, lease_expires) \
     VALUES (?, ?, ?, ",
    now_ms!(),
    " + ?)"
);

pub(super) const RENEW: &str = concat!(
    "UPDATE rimeflake_workers SET lease_expires = ",
    now_ms!(),
    " + ? WHERE namespace = ? AND worker_id = ? AND owner = ?"
);

pub(super) const RELEASE: &str = "UPDATE rimeflake_workers SET owner = NULL, lease_expires = NULL \
     WHERE namespace = ? AND worker_id = ? AND owner = ?";

pub(super) const LOAD: &str =
    "SELECT state, version FROM rimeflake_workers WHERE namespace = ? AND worker_id = ?";

// The lease's expiry is not checked: while the owner is still this token nobody else has taken
// the worker ID, and the generator stops before the expiry by its own clock.
pub(super) const SAVE: &str = "UPDATE rimeflake_workers SET state = ?, version = ? \
     WHERE namespace = ? AND worker_id = ? AND owner = ? AND version = ?";

// Why a conditional write failed: who holds the lease, and whether it is still live.
pub(super) const LOOK: &str = concat!(
    "SELECT owner, owner IS NOT NULL AND lease_expires > ",
    now_ms!(),
    " FROM rimeflake_workers WHERE namespace = ? AND worker_id = ?"
);

// `state reset`: over the stored version ? only, and only when no live lease holds the worker
// ID. A version of 0 is a row leased but never written.
pub(super) const RESET: &str = concat!(
    "UPDATE rimeflake_workers SET state = ?, version = ? WHERE namespace = ? AND worker_id = ? \
     AND (owner IS NULL OR lease_expires <= ",
    now_ms!(),
    ") AND version = ?"
);

// `state reset` of a worker ID without a row.
pub(super) const RESET_NEW: &str = "INSERT IGNORE INTO rimeflake_workers \
     (namespace, worker_id, state, version) VALUES (?, ?, ?, ?)";

// Marks worker ID ? of namespace ? used with reach ? (ms), keeping the larger reach, in the
// namespace's row's presence (the foreign key): 1 row inserted (never marked before), 2 when it
// was (`marks` always changes, so an existing row always counts as changed), 0 when the
// namespace has no row.
pub(super) const MARK_USED: &str = "INSERT INTO rimeflake_used (namespace, worker_id, reach_ms) \
     SELECT namespace, ?, ? FROM rimeflake_namespaces WHERE namespace = ? \
     ON DUPLICATE KEY UPDATE reach_ms = GREATEST(reach_ms, VALUES(reach_ms)), marks = marks + 1";

// The namespace row's age (ms, by the server's clock) and the largest reach of worker ID ?.
pub(super) const MARKED: &str = concat!(
    "SELECT GREATEST(",
    now_ms!(),
    " - n.created, 0), u.reach_ms FROM rimeflake_namespaces n \
     JOIN rimeflake_used u ON u.namespace = n.namespace \
     WHERE n.namespace = ? AND u.worker_id = ?"
);

pub(super) const SERVER_TIME: &str = concat!("SELECT ", now_ms!());

// One reading of the server's clock for every row (NOW is the statement's start), so a holder
// always has a time left.
pub(super) const WORKERS: &str = concat!(
    "SELECT worker_id, \
       IF(owner IS NOT NULL AND lease_expires > ",
    now_ms!(),
    ", owner, NULL), \
       IF(owner IS NOT NULL AND lease_expires > ",
    now_ms!(),
    ", lease_expires - ",
    now_ms!(),
    ", NULL), state, version \
     FROM rimeflake_workers WHERE namespace = ? ORDER BY worker_id"
);

// Sorted by bytes (utf8mb4_bin orders by code point, which is UTF-8's byte order), as the other
// backends sort them. The caller asks for one more than it lists, to tell whether there are
// more.
pub(super) const NAMESPACES: &str =
    "SELECT namespace FROM rimeflake_namespaces ORDER BY namespace LIMIT ?";

pub(super) const SETTINGS: &str =
    "SELECT @@innodb_flush_log_at_trx_commit, @@log_bin, @@sync_binlog";

// What the server says of itself, MariaDB's way: its server ID and GTID domain (which name it),
// whether it is read-only (a replica, as operators set them), and the GTIDs it applied as a
// replica (`domain-server-sequence`, comma-separated), which name its former primary.
pub(super) const VIEW_MARIADB: &str =
    "SELECT @@server_id, @@gtid_domain_id, @@read_only, @@gtid_slave_pos";

// MySQL's: its server UUID, whether it is read-only, and the GTIDs it executed
// (`uuid:ranges`, comma-separated), whose other UUIDs name the primaries it replicated.
pub(super) const VIEW_MYSQL: &str =
    "SELECT @@server_uuid, @@read_only OR @@super_read_only, @@gtid_executed";

// Semi-synchronous replication, the primary's side: MariaDB and MySQL before 8.0.26 name it
// `master`, later MySQL `source`.
pub(super) const SEMI_SYNC_VARIABLES: &str = "SHOW GLOBAL VARIABLES LIKE 'rpl_semi_sync_%'";
pub(super) const SEMI_SYNC_STATUS: &str = "SHOW GLOBAL STATUS LIKE 'rpl_semi_sync_%'";

// A namespace's settings, in a transaction that locks its row: the namespace (none: it is not
// on this server), then the settings as far as they were set.
pub(super) const BEGIN: &str = "START TRANSACTION";
pub(super) const COMMIT: &str = "COMMIT";
pub(super) const LOCK_SETTINGS: &str = "SELECT n.namespace, s.max_drift_ms, s.replicas, \
     s.epoch, s.lineage FROM rimeflake_namespaces n \
     LEFT JOIN rimeflake_settings s ON s.namespace = n.namespace \
     WHERE n.namespace = ? FOR UPDATE";
pub(super) const STORE_SETTINGS: &str = "INSERT INTO rimeflake_settings \
     (namespace, max_drift_ms, replicas, epoch, lineage) VALUES (?, ?, ?, ?, ?) \
     ON DUPLICATE KEY UPDATE max_drift_ms = VALUES(max_drift_ms), \
     replicas = VALUES(replicas), epoch = VALUES(epoch), lineage = VALUES(lineage)";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_bound_in_order_as_literals() {
        assert_eq!(
            bind(
                "SELECT ? FROM t WHERE a = ? AND b = ?",
                &[Val::Text("a'b"), Val::Num(u64::MAX), Val::Text("")]
            ),
            "SELECT _utf8mb4 X'612762' FROM t WHERE a = 18446744073709551615 AND b = _utf8mb4 X''"
        );
        // Every statement's `?` are its parameters: none in a literal or a comment.
        for sql in [
            INSERT_LAYOUT,
            SELECT_LAYOUT,
            ROWS,
            TAKE,
            TAKE_NEW,
            RENEW,
            RELEASE,
            LOAD,
            SAVE,
            LOOK,
            RESET,
            RESET_NEW,
            MARK_USED,
            MARKED,
            WORKERS,
            NAMESPACES,
            LOCK_SETTINGS,
            STORE_SETTINGS,
        ] {
            assert!(!sql.contains('\'') && !sql.contains("--"), "{sql}");
        }
    }
}
