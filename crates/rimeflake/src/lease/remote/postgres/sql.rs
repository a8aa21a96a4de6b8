//! The SQL of the PostgreSQL backend: the schema, and every statement, each prepared once per
//! connection.

/// The tables rimeflake keeps in PostgreSQL. They are created on the first connection when
/// missing; a role without the right to create tables can use tables made beforehand with this
/// SQL.
///
/// - `rimeflake_namespaces`: one row per namespace, with the layout record every generator of
///   the namespace must match, when the row was made (`created`, by the server's clock), the
///   worker IDs ever leased in it (`used`: a JSON object from each worker ID to the largest reach,
///   in ms, its holders declared) and its settings (`settings`: `max_drift_ms`, `replicas`,
///   `lineage`, `epoch`; see the `replication` module). Tables made by older versions get these
///   three columns.
/// - `rimeflake_workers`: one row per worker ID of a namespace: the lease (`owner`, a token, and
///   `lease_expires`, by the server's clock; both NULL when nobody holds it) and the worker's
///   state (`state`, as text) with its `version`, raised by one on every write.
pub(crate) const SCHEMA: &str = "\
CREATE TABLE IF NOT EXISTS rimeflake_namespaces (
    namespace text PRIMARY KEY,
    layout    text NOT NULL
);
CREATE TABLE IF NOT EXISTS rimeflake_workers (
    namespace     text        NOT NULL,
    worker_id     bigint      NOT NULL,
    owner         text,
    lease_expires timestamptz,
    state         text,
    version       bigint      NOT NULL DEFAULT 0,
    PRIMARY KEY (namespace, worker_id)
);
ALTER TABLE rimeflake_namespaces
    ADD COLUMN IF NOT EXISTS created timestamptz NOT NULL DEFAULT clock_timestamp();
ALTER TABLE rimeflake_namespaces
    ADD COLUMN IF NOT EXISTS used jsonb NOT NULL DEFAULT '{}';
ALTER TABLE rimeflake_namespaces
    ADD COLUMN IF NOT EXISTS settings jsonb NOT NULL DEFAULT '{}';
";

// Parameters carry explicit casts, so that each one is prepared with the type Rust sends
// (bigint is i64, text is &str).

// The tables, and the columns older versions made them without.
pub(super) const TABLES_EXIST: &str = "SELECT to_regclass('rimeflake_namespaces') IS NOT NULL \
     AND to_regclass('rimeflake_workers') IS NOT NULL \
     AND (SELECT count(*) FROM pg_attribute \
          WHERE attrelid = to_regclass('rimeflake_namespaces') \
            AND attname IN ('created', 'used', 'settings') AND NOT attisdropped) = 3";

pub(super) const INSERT_LAYOUT: &str = "INSERT INTO rimeflake_namespaces (namespace, layout) \
     VALUES ($1::text, $2::text) ON CONFLICT (namespace) DO NOTHING";

pub(super) const SELECT_LAYOUT: &str =
    "SELECT layout FROM rimeflake_namespaces WHERE namespace = $1::text";

// Takes the first free worker ID of the array $2, in its order, in one statement: `free` picks
// it by the statement's snapshot, and the insert takes it unless a row for it is held, checked
// again on the newest row (ON CONFLICT waits for and then sees another transaction's write).
// An expired lease is nobody's, by the server's clock; taking one's own lease again extends it.
// Returns the worker ID picked and the one taken: picked but not taken means another
// transaction took it in between, and the caller asks again; nothing picked, all are held.
pub(super) const ACQUIRE_FIRST: &str = "WITH free AS ( \
       SELECT c.id FROM unnest($2::bigint[]) WITH ORDINALITY AS c(id, ord) \
       WHERE NOT EXISTS ( \
         SELECT 1 FROM rimeflake_workers w \
         WHERE w.namespace = $1::text AND w.worker_id = c.id \
           AND w.owner <> $3::text AND w.lease_expires > now()) \
       ORDER BY c.ord LIMIT 1 \
     ), taken AS ( \
       INSERT INTO rimeflake_workers (namespace, worker_id, owner, lease_expires) \
       SELECT $1::text, id, $3::text, now() + $4::bigint * interval '1 millisecond' FROM free \
       ON CONFLICT (namespace, worker_id) DO UPDATE \
       SET owner = EXCLUDED.owner, lease_expires = EXCLUDED.lease_expires \
       WHERE rimeflake_workers.owner IS NULL \
          OR rimeflake_workers.owner = EXCLUDED.owner \
          OR rimeflake_workers.lease_expires <= now() \
       RETURNING worker_id \
     ) \
     SELECT (SELECT id FROM free), (SELECT worker_id FROM taken)";

// A lease write and a state write are refused while the namespace requires a synchronous
// standby ($5, $7: the replicas required) and commits do not wait for one (see SETTLE_SETTINGS).
pub(super) const RENEW: &str = "UPDATE rimeflake_workers \
     SET lease_expires = now() + $4::bigint * interval '1 millisecond' \
     WHERE namespace = $1::text AND worker_id = $2::bigint AND owner = $3::text \
       AND ($5::bigint = 0 OR current_setting('synchronous_standby_names') <> '')";

pub(super) const RELEASE: &str = "UPDATE rimeflake_workers SET owner = NULL, lease_expires = NULL \
     WHERE namespace = $1::text AND worker_id = $2::bigint AND owner = $3::text";

pub(super) const LOAD: &str = "SELECT state, version FROM rimeflake_workers \
     WHERE namespace = $1::text AND worker_id = $2::bigint";

// The lease's expiry is not checked: while the owner is still this token nobody else has taken
// the worker ID, and the generator stops before the expiry by its own clock.
pub(super) const SAVE: &str =
    "UPDATE rimeflake_workers SET state = $5::text, version = $6::bigint \
     WHERE namespace = $1::text AND worker_id = $2::bigint AND owner = $3::text \
       AND version = $4::bigint \
       AND ($7::bigint = 0 OR current_setting('synchronous_standby_names') <> '')";

// Why a conditional write failed: who holds the lease, and whether it is still live.
pub(super) const LOOK: &str = "SELECT owner, owner IS NOT NULL AND lease_expires > now() \
     FROM rimeflake_workers WHERE namespace = $1::text AND worker_id = $2::bigint";

// `state reset` of a worker ID that may have no row yet (expected version 0).
pub(super) const RESET_NEW: &str =
    "INSERT INTO rimeflake_workers (namespace, worker_id, state, version) \
     VALUES ($1::text, $2::bigint, $3::text, $4::bigint) \
     ON CONFLICT (namespace, worker_id) DO UPDATE \
     SET state = EXCLUDED.state, version = EXCLUDED.version \
     WHERE (rimeflake_workers.owner IS NULL OR rimeflake_workers.lease_expires <= now()) \
       AND rimeflake_workers.version = 0 \
     RETURNING worker_id";

// `state reset` over a stored version: only when no live lease holds the worker ID.
pub(super) const RESET: &str =
    "UPDATE rimeflake_workers SET state = $3::text, version = $4::bigint \
     WHERE namespace = $1::text AND worker_id = $2::bigint \
       AND (owner IS NULL OR lease_expires <= now()) AND version = $5::bigint";

// Marks worker ID $2 (as text) used in namespace $1 with reach $3 (ms), keeping the larger
// reach; returns the row's age (ms, by the server's clock) and the reach stored before (0: never
// marked). The row is locked first, so concurrent marks of one namespace follow one another and
// each sees the reach stored before its own.
pub(super) const MARK_USED: &str = "UPDATE rimeflake_namespaces n \
     SET used = n.used || jsonb_build_object($2::text, \
         greatest(coalesce((n.used ->> $2::text)::bigint, 0), $3::bigint)) \
     FROM (SELECT namespace, used FROM rimeflake_namespaces \
           WHERE namespace = $1::text FOR UPDATE) o \
     WHERE n.namespace = o.namespace \
     RETURNING greatest((extract(epoch FROM clock_timestamp() - n.created) * 1000)::bigint, 0), \
       coalesce((o.used ->> $2::text)::bigint, 0)";

// clock_timestamp(), not now(): now() is when the transaction began.
pub(super) const SERVER_TIME: &str =
    "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint";

// One reading of the server's clock for every row, so a holder always has a time left.
pub(super) const WORKERS: &str = "SELECT w.worker_id, \
       CASE WHEN w.owner IS NOT NULL AND w.lease_expires > c.at THEN w.owner END, \
       CASE WHEN w.owner IS NOT NULL AND w.lease_expires > c.at \
            THEN (extract(epoch FROM w.lease_expires - c.at) * 1000)::bigint END, \
       w.state, w.version \
     FROM rimeflake_workers w, (SELECT clock_timestamp() AS at) c \
     WHERE w.namespace = $1::text ORDER BY w.worker_id";

// Sorted by bytes, as the Redis backend sorts them. The caller asks for one more than it lists,
// to tell whether there are more.
pub(super) const NAMESPACES: &str =
    "SELECT namespace FROM rimeflake_namespaces ORDER BY namespace COLLATE \"C\" LIMIT $1::bigint";

// Only fsync: rimeflake's sessions commit with synchronous_commit on (set when they connect),
// whatever the server's default.
pub(super) const SETTINGS: &str = "SELECT current_setting('fsync')";

// Whether commits wait for a synchronous standby now.
pub(super) const SYNCHRONOUS: &str = "SELECT current_setting('synchronous_standby_names') <> ''";

// What the server says of itself: in recovery (a standby), its system identifier, its WAL file
// (whose first 8 hex digits are the timeline), and whether commits wait for a synchronous
// standby. A plain role may call each of these.
pub(super) const SERVER_VIEW: &str = "SELECT pg_is_in_recovery(), \
       (SELECT system_identifier FROM pg_control_system())::text, \
       CASE WHEN pg_is_in_recovery() THEN '' ELSE pg_walfile_name(pg_current_wal_lsn()) END, \
       current_setting('synchronous_standby_names') <> ''";

// Settles namespace $1's settings: keeps max_drift (else $2) and the epoch (else 0); the
// replicas required: one less on a lineage ($3) whose parent ($4) is the stored one, kept on
// any other, at least those online ($5); the lineage is then $3. Returns max_drift, replicas
// and epoch. The row exists (settled with the layout).
pub(super) const SETTLE_SETTINGS: &str = "UPDATE rimeflake_namespaces n \
     SET settings = n.settings || jsonb_build_object( \
       'max_drift_ms', coalesce((n.settings ->> 'max_drift_ms')::bigint, $2::bigint), \
       'epoch', coalesce((n.settings ->> 'epoch')::bigint, 0), \
       'replicas', greatest( \
         coalesce((n.settings ->> 'replicas')::bigint, 0) \
           - CASE WHEN n.settings ->> 'lineage' <> $3::text \
                   AND n.settings ->> 'lineage' = $4::text THEN 1 ELSE 0 END, \
         $5::bigint, 0), \
       'lineage', $3::text) \
     WHERE n.namespace = $1::text \
     RETURNING (n.settings ->> 'max_drift_ms')::bigint, (n.settings ->> 'replicas')::bigint, \
       (n.settings ->> 'epoch')::bigint";

// Raises namespace $1's restore epoch by one; returns it.
pub(super) const NEW_EPOCH: &str = "UPDATE rimeflake_namespaces n \
     SET settings = n.settings || jsonb_build_object('epoch', \
       coalesce((n.settings ->> 'epoch')::bigint, 0) + 1) \
     WHERE n.namespace = $1::text \
     RETURNING (n.settings ->> 'epoch')::bigint";

// Sets the replicas namespace $1 requires to $2.
pub(super) const SET_REPLICAS: &str = "UPDATE rimeflake_namespaces \
     SET settings = settings || jsonb_build_object('replicas', $2::bigint) \
     WHERE namespace = $1::text";
