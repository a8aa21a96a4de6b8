//! rimeflake on its remote backends (Redis, PostgreSQL, MariaDB, ZooKeeper) beside the embedded
//! default (a local
//! state directory), in the same run: the cost of `next_id` in loops taking turns, and the time
//! from `build()` to the first ID. The servers run on loopback, started here by the harness of the
//! core's tests (`crate::servers`), each in a fresh temporary directory, killed when dropped.

use crate::rime::{settle, LOOP, LOOPS};
use crate::servers::{self, MariaDb, Postgres, Redis, ZooKeeper};
use crate::timing::{median, REPS};
use rimeflake::{Backend, Builder, Generator, Layout};
use std::fmt::Write as _;
use std::hint::black_box;
use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

/// Builds per backend and kind of start (restart, new namespace), after one warm-up build.
pub const BUILDS: usize = 11;

/// The restarts: this namespace and this worker ID every time.
const RESTART_NS: &str = "bench-restart";
const RESTART_WORKER: u64 = 1;

/// The crowded namespace: every worker ID of `twitter` (10 bits) held by another token but one.
const CROWDED_NS: &str = "bench-crowded";
const CROWDED_FREE: u64 = 777;
const WORKER_IDS: u64 = 1024;

/// The embedded default is the reference of every ratio; it comes first.
const EMBEDDED: usize = 0;

/// One backend's figures.
pub struct Figures {
    /// What it is, e.g. "Redis 7.0.15".
    pub name: String,
    /// ns/ID of each repetition (the mean of its [`LOOPS`] loops).
    pub reps: Vec<f64>,
    /// ns/ID of each loop, in rounds (the same index is the same round for every backend).
    pub loops: Vec<f64>,
    /// ms from `build()` to the first ID, the same namespace each time (closed between).
    pub restart_ms: Vec<f64>,
    /// ms from `build()` to the first ID in a namespace never used before.
    pub fresh_ms: Vec<f64>,
    /// ms of `close()` after those builds.
    pub close_ms: Vec<f64>,
    /// ms from `build()` to the first ID of the first build on this server or state directory.
    pub first_ms: f64,
    /// ms from `build()` to the first ID in a namespace where every worker ID but one is held
    /// (servers only: empty for the others).
    pub crowded_ms: Vec<f64>,
    /// The mean latency of the state writes of the next_id generator (its reservation moves,
    /// off the hot path), in ms, from its stats; and how many.
    pub write_ms: f64,
    pub writes: u64,
}

impl Figures {
    pub fn next_id(&self) -> f64 {
        median(self.reps.clone())
    }
}

/// The measured backends (the embedded default first) and what they ran on.
pub struct Backends {
    pub figures: Vec<Figures>,
    pub redis_version: String,
    pub postgres_version: String,
    pub mariadb_version: String,
    pub zookeeper_version: String,
    /// The file system of the temporary directory, where the servers and the state directory
    /// keep their data.
    pub tmp_fs: String,
}

struct Target {
    name: String,
    backend: Backend,
    state_dir: Option<PathBuf>,
}

impl Target {
    /// twitter layout, leased worker ID, defaults for the rest.
    fn builder(&self, namespace: &str) -> Builder {
        let b = Generator::builder()
            .layout(Layout::twitter())
            .backend(self.backend.clone())
            .namespace(namespace);
        match &self.state_dir {
            Some(dir) => b.state_dir(dir),
            None => b,
        }
    }

    /// One start: build, first ID (timed together), then close (timed apart), in ms. With
    /// `worker`, that worker ID and no other: the build fails when an earlier close has not
    /// freed it.
    fn start_once(&self, namespace: &str, worker: Option<u64>) -> (f64, f64) {
        let b = self.builder(namespace);
        let b = match worker {
            Some(id) => b.worker_id(id),
            None => b,
        };
        let t = Instant::now();
        let g = b
            .build()
            .unwrap_or_else(|e| panic!("{}: build in namespace {namespace}: {e}", self.name));
        let id = g
            .next_id()
            .unwrap_or_else(|e| panic!("{}: first next_id: {e}", self.name));
        let to_first = t.elapsed().as_secs_f64() * 1e3;
        black_box(id);
        let t = Instant::now();
        g.close()
            .unwrap_or_else(|e| panic!("{}: close: {e}", self.name));
        let close = t.elapsed().as_secs_f64() * 1e3;
        drop(g);
        (to_first, close)
    }
}

fn first_line(program: &std::path::Path, arg: &str) -> String {
    Command::new(program)
        .arg(arg)
        .output()
        .ok()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .next()
                .unwrap_or("")
                .trim()
                .to_string()
        })
        .unwrap_or_default()
}

/// "Redis server v=7.0.15 sha=..." -> "7.0.15".
fn redis_version() -> String {
    let line = first_line(&servers::redis_server(), "--version");
    line.split_whitespace()
        .find_map(|w| w.strip_prefix("v="))
        .unwrap_or("?")
        .to_string()
}

/// "postgres (PostgreSQL) 15.14 (Debian 15.14-0+deb12u1)" -> "15.14".
fn postgres_version() -> String {
    let line = first_line(&servers::pg_bin("postgres"), "--version");
    line.split_whitespace().nth(2).unwrap_or("?").to_string()
}

/// "mariadbd  Ver 10.11.6-MariaDB-0+deb12u1 for debian-linux-gnu ..." -> "10.11.6".
fn mariadb_version() -> String {
    let line = first_line(&servers::mariadbd(), "--version");
    line.split_whitespace()
        .skip_while(|w| *w != "Ver")
        .nth(1)
        .and_then(|v| v.split('-').next())
        .unwrap_or("?")
        .to_string()
}

/// "Zookeeper version: 3.8.0-..., built on ..." (its `srvr`) -> "3.8.0".
fn zookeeper_version(zk: &ZooKeeper) -> String {
    servers::four_letters(zk.port(), "srvr")
        .and_then(|out| {
            let v = out.lines().next()?.split(": ").nth(1)?;
            Some(v.split(['-', ',']).next()?.to_string())
        })
        .unwrap_or_else(|| "?".to_string())
}

fn tmp_fs() -> String {
    let out = Command::new("findmnt")
        .args(["-n", "-o", "FSTYPE", "-T"])
        .arg(std::env::temp_dir())
        .output();
    out.ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "?".to_string())
}

/// Runs both measurements; a panic (a server that does not start, a failing build) becomes
/// `Err` with its message, so the rest of the run is still reported.
pub fn run() -> Result<Backends, String> {
    std::panic::catch_unwind(measure).map_err(|p| {
        p.downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "a panic".to_string())
    })
}

fn measure() -> Backends {
    let redis_version = redis_version();
    let postgres_version = postgres_version();
    let mariadb_version = mariadb_version();
    eprintln!(
        "  starting Redis {redis_version}, PostgreSQL {postgres_version}, MariaDB \
         {mariadb_version} and ZooKeeper on loopback..."
    );
    let redis = Redis::start();
    let postgres = Postgres::start();
    let mariadb = MariaDb::start();
    let zookeeper = ZooKeeper::start();
    let zookeeper_version = zookeeper_version(&zookeeper);
    // TLS: servers of their own, with the harness's certificate for `localhost`, checked.
    let redis_tls = Redis::start_tls();
    let postgres_tls = Postgres::start_tls();
    // Replicated: a Redis replica every write waits for (WAIT), a synchronous standby every
    // commit waits for.
    let redis_primary = Redis::start();
    let redis_replica = Redis::start_replica_of(redis_primary.port());
    let pg_primary = Postgres::start();
    let pg_standby = Postgres::start_standby(pg_primary.port());
    pg_primary.synchronous(true);
    let (redis_tls_url, postgres_tls_url) = (redis_tls.tls_url(), postgres_tls.tls_url());
    let dir = std::env::temp_dir().join(format!("rimeflake-bench-backends-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create the bench's state directory");

    let targets = [
        Target {
            name: "embedded default (state directory)".to_string(),
            backend: Backend::Local,
            state_dir: Some(dir.clone()),
        },
        Target {
            name: format!("Redis {redis_version}"),
            backend: Backend::parse(&redis.url()).expect("the Redis URL"),
            state_dir: None,
        },
        Target {
            name: format!("PostgreSQL {postgres_version}"),
            backend: Backend::parse(&postgres.url()).expect("the PostgreSQL URL"),
            state_dir: None,
        },
        Target {
            name: format!("Redis {redis_version}, TLS (`rediss://`)"),
            backend: Backend::parse(&redis_tls_url).expect("the rediss:// URL"),
            state_dir: None,
        },
        Target {
            name: format!("PostgreSQL {postgres_version}, TLS (`verify-full`)"),
            backend: Backend::parse(&postgres_tls_url).expect("the TLS PostgreSQL URL"),
            state_dir: None,
        },
        Target {
            name: format!("MariaDB {mariadb_version}"),
            backend: Backend::parse(&mariadb.url()).expect("the MariaDB URL"),
            state_dir: None,
        },
        Target {
            name: format!("ZooKeeper {zookeeper_version}"),
            backend: Backend::parse(&zookeeper.url()).expect("the ZooKeeper URL"),
            state_dir: None,
        },
        Target {
            name: format!("Redis {redis_version} + 1 replica (every write waits for it)"),
            backend: Backend::parse(&redis_primary.url()).expect("the Redis URL"),
            state_dir: None,
        },
        Target {
            name: format!("PostgreSQL {postgres_version} + synchronous standby"),
            backend: Backend::parse(&pg_primary.url()).expect("the PostgreSQL URL"),
            state_dir: None,
        },
    ];
    let n = targets.len();
    let mut figures: Vec<Figures> = targets
        .iter()
        .map(|t| Figures {
            name: t.name.clone(),
            reps: Vec::new(),
            loops: Vec::new(),
            restart_ms: Vec::new(),
            fresh_ms: Vec::new(),
            close_ms: Vec::new(),
            first_ms: 0.0,
            crowded_ms: Vec::new(),
            write_ms: 0.0,
            writes: 0,
        })
        .collect();

    // build -> first ID. The first build on each server makes its tables or keys: shown apart.
    eprintln!("  build -> first ID, {BUILDS} restarts and {BUILDS} new namespaces per backend...");
    for (t, f) in targets.iter().zip(figures.iter_mut()) {
        f.first_ms = t.start_once(RESTART_NS, Some(RESTART_WORKER)).0;
    }
    for round in 0..2 * BUILDS {
        for k in 0..n {
            let i = (round + k) % n;
            let (to_first, close) = if round % 2 == 0 {
                targets[i].start_once(RESTART_NS, Some(RESTART_WORKER))
            } else {
                targets[i].start_once(&format!("bench-new-{round}"), None)
            };
            let f = &mut figures[i];
            if round % 2 == 0 {
                f.restart_ms.push(to_first);
            } else {
                f.fresh_ms.push(to_first);
            }
            f.close_ms.push(close);
        }
    }

    // build -> first ID where all worker IDs but one are held, planted on the servers directly
    // (a lease of 1,023 other generators, without their connections). Each close frees the one.
    eprintln!(
        "  build -> first ID in a namespace with {} of {WORKER_IDS} worker IDs held...",
        WORKER_IDS - 1
    );
    crowd_redis(&redis);
    crowd_postgres(&postgres);
    crowd_mariadb(&mariadb);
    crowd_zookeeper(&zookeeper);
    // The plain-TCP servers: Redis, PostgreSQL, MariaDB, ZooKeeper.
    let crowded = [1, 2, 5, 6];
    for _ in 0..BUILDS {
        for &i in &crowded {
            let ms = targets[i].start_once(CROWDED_NS, None).0;
            figures[i].crowded_ms.push(ms);
        }
    }

    // next_id: one generator per backend, taking turns loop by loop, the first of each round
    // rotating.
    eprintln!("  next_id, {REPS} x {LOOPS} loops of {LOOP} IDs per backend, taking turns...");
    let gens: Vec<Generator> = targets
        .iter()
        .map(|t| {
            t.builder("bench-next-id")
                .build()
                .unwrap_or_else(|e| panic!("{}: build: {e}", t.name))
        })
        .collect();
    let timed_loop = |g: &Generator| {
        let t = Instant::now();
        let mut last = 0;
        for _ in 0..LOOP {
            last = black_box(g.next_id().unwrap_or(0));
        }
        let ns = t.elapsed().as_nanos() as f64 / LOOP as f64;
        settle(g, last);
        ns
    };
    for g in &gens {
        timed_loop(g); // warm-up
    }
    for rep in 0..REPS {
        let mut sums = vec![0.0; n];
        for l in 0..LOOPS {
            let round = rep * LOOPS + l;
            for k in 0..n {
                let i = (round + k) % n;
                let ns = timed_loop(&gens[i]);
                sums[i] += ns;
                figures[i].loops.push(ns);
            }
        }
        for (f, sum) in figures.iter_mut().zip(sums) {
            f.reps.push(sum / LOOPS as f64);
        }
    }
    for ((t, g), f) in targets.iter().zip(gens).zip(figures.iter_mut()) {
        let stats = g.stats();
        f.writes = stats.reservation_writes;
        f.write_ms =
            stats.reservation_write_ns as f64 / 1e6 / stats.reservation_writes.max(1) as f64;
        g.close()
            .unwrap_or_else(|e| panic!("{}: close: {e}", t.name));
    }

    drop(redis);
    drop(postgres);
    drop(redis_tls);
    drop(postgres_tls);
    drop(mariadb);
    drop(zookeeper);
    drop(redis_replica);
    drop(redis_primary);
    drop(pg_standby);
    drop(pg_primary);
    let _ = std::fs::remove_dir_all(&dir);
    Backends {
        figures,
        redis_version,
        postgres_version,
        mariadb_version,
        zookeeper_version,
        tmp_fs: tmp_fs(),
    }
}

/// Holds every worker ID of [`CROWDED_NS`] but [`CROWDED_FREE`] on Redis for an hour, as other
/// generators' leases would (the keys of crates/rimeflake/src/lease/remote/redis.rs).
fn crowd_redis(redis: &Redis) {
    let script = "for i = 0, tonumber(ARGV[2]) - 1 do \
         if i ~= tonumber(ARGV[3]) then \
           redis.call('SET', 'rimeflake:{' .. ARGV[1] .. ':' .. i .. '}:lease', 'bench-squatter', 'PX', 3600000) \
         end end return 1";
    let reply = redis.command(&[
        "EVAL",
        script,
        "0",
        CROWDED_NS,
        &WORKER_IDS.to_string(),
        &CROWDED_FREE.to_string(),
    ]);
    assert_eq!(reply, ":1\r\n", "crowding Redis: {reply}");
}

/// The same on PostgreSQL (the table of crates/rimeflake/src/lease/remote/postgres/sql.rs,
/// made by the first build).
fn crowd_postgres(postgres: &Postgres) {
    postgres.psql(&format!(
        "INSERT INTO rimeflake_workers (namespace, worker_id, owner, lease_expires) \
         SELECT '{CROWDED_NS}', g, 'bench-squatter', now() + interval '1 hour' \
         FROM generate_series(0, {}) g WHERE g <> {CROWDED_FREE}",
        WORKER_IDS - 1
    ));
}

/// The same on MariaDB (the table of crates/rimeflake/src/lease/remote/mysql/sql.rs, made by the
/// first build; its Sequence engine counts).
fn crowd_mariadb(mariadb: &MariaDb) {
    mariadb.sql(&format!(
        "INSERT INTO rimeflake_workers (namespace, worker_id, owner, lease_expires) \
         SELECT '{CROWDED_NS}', seq, 'bench-squatter', UNIX_TIMESTAMP() * 1000 + 3600000 \
         FROM seq_0_to_{} WHERE seq <> {CROWDED_FREE}",
        WORKER_IDS - 1
    ));
}

/// The same on ZooKeeper (the nodes of crates/rimeflake/src/lease/remote/zookeeper.rs): a lease
/// node per worker ID, persistent, so that it outlives the shell's session.
fn crowd_zookeeper(zookeeper: &ZooKeeper) {
    let parent = format!("/rimeflake/workers/{CROWDED_NS}");
    let mut script = format!("create /rimeflake\ncreate /rimeflake/workers\ncreate {parent}\n");
    for id in (0..WORKER_IDS).filter(|id| *id != CROWDED_FREE) {
        let _ = writeln!(
            script,
            "create {parent}/{id} bench-squatter\ncreate {parent}/{id}/lease bench-squatter"
        );
    }
    zookeeper.cli(&script);
}

/// `next_id` of backend `i` over the embedded default: the median of the per-round ratios.
fn paired(b: &Backends, i: usize) -> f64 {
    let (mine, base) = (&b.figures[i].loops, &b.figures[EMBEDDED].loops);
    median(mine.iter().zip(base).map(|(m, e)| m / e).collect())
}

fn ms(v: f64) -> String {
    if v < 10.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.1}")
    }
}

fn range(v: &[f64]) -> String {
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(0.0, f64::max);
    format!("{}-{}", ms(lo), ms(hi))
}

/// The subsection of the Rust section: method, server settings, two tables and the target lines.
pub fn section(b: &Backends) -> String {
    let mut out = String::new();
    let tmp = std::env::temp_dir();
    let tmp = tmp.display();
    let _ = writeln!(out, "### Remote backends beside the embedded default\n");
    let _ = writeln!(
        out,
        "Measured in the same run. The bench starts its own servers on loopback (TCP to \
         127.0.0.1), each with its data in a fresh directory under {tmp} ({fs}), through the \
         harness of the core's tests (crates/rimeflake-testkit/src/servers.rs): **Redis {rv}** with the \
         append-only file fsynced on every write (`appendonly yes`, `appendfsync always`, no RDB \
         snapshots); **PostgreSQL {pv}** with `fsync=on` (`synchronous_commit` on, the default), \
         user `postgres`, database `rimeflake`; **MariaDB {mv}** with \
         `innodb_flush_log_at_trx_commit=1` (no binary log), user `root`, database \
         `rimeflake`; **ZooKeeper {zv}**, one server (`forceSync=yes`, its log synced before \
         it answers), its jar run by Java 17. The TLS rows run on servers of their own with \
         the same settings plus TLS (Redis `--tls-port`; PostgreSQL `ssl=on`, plain TCP \
         refused), a P-256 certificate for `localhost` from a CA the harness makes with \
         `openssl`, checked by the client (rustls, ring): chain and host name. The replicated \
         rows run on a Redis primary with one replica on loopback, which every lease and state \
         write waits for (`WAIT 1` in the same round trip), and on a PostgreSQL primary with a \
         streaming standby made by `pg_basebackup` and `synchronous_standby_names = '*'`, \
         which every commit waits for. The embedded default keeps its state directory \
         under {tmp} too. Every generator uses the `twitter` layout, the default reservation (1 s \
         ahead, moved every 500 ms by the I/O thread) and lease TTL (10 s, renewed every \
         2.5 s), and a leased worker ID unless said otherwise (the embedded default leases the \
         lowest free one of its directory, the servers a free one from a random start).\n",
        fs = b.tmp_fs,
        rv = b.redis_version,
        pv = b.postgres_version,
        mv = b.mariadb_version,
        zv = b.zookeeper_version,
    );
    let rounds = REPS * LOOPS;
    let _ = writeln!(
        out,
        "**next_id**: one generator per backend, built before timing; loops of {LOOP} IDs, each \
         followed by a pause until the clock has passed the last ID (as the rows above), the \
         generators taking turns loop by loop and the first of each round rotating; \
         {REPS} repetitions of {LOOPS} loops, the median. Ratios to the embedded default: the \
         ratio of the medians, and the median of the {rounds} per-round ratios (each loop over \
         the embedded default's loop of the same round, which follows the machine's load as it \
         drifts).\n"
    );
    let _ = writeln!(
        out,
        "| backend | next_id ns/ID 1T (median of {REPS}) | × embedded (medians) | × embedded \
         (median of {rounds} rounds) | state write: mean ms (writes) | notes |\n|---|---|---|---|---|---|"
    );
    let base = b.figures[EMBEDDED].next_id();
    for (i, f) in b.figures.iter().enumerate() {
        let notes = if i == EMBEDDED {
            "the reference: `Backend::Local`, a state directory (file lease, fsynced state)"
        } else {
            "lease and state on the server; the I/O thread moves the reservation and renews \
             the lease"
        };
        let _ = writeln!(
            out,
            "| {} | {:.1} | {:.3} | {:.3} | {:.3} ({}) | {notes} |",
            f.name,
            f.next_id(),
            f.next_id() / base,
            paired(b, i),
            f.write_ms,
            f.writes
        );
    }

    let _ = writeln!(
        out,
        "\n**build → first ID**: wall time from `Builder::build()` to the return of the first \
         `next_id()`; `close()` (timed apart) then stores the last state and frees the worker \
         ID. {BUILDS} builds per backend and kind of start, the backends taking turns, \
         restarts and new namespaces alternating. Restart: the same namespace and the fixed \
         worker ID {RESTART_WORKER} each time, so a build finds the state the last close stored \
         and takes the lease that close freed (a lease still held would fail the build). New \
         namespace: one never used before (its first lease and state), a leased worker ID. The \
         first build on each fresh server or state directory (a restart too, but the first: it \
         also makes PostgreSQL's and MariaDB's tables) came before them and is shown apart.\n"
    );
    let _ = writeln!(
        out,
        "| backend | restart: ms (median of {BUILDS}) | restart: range | new namespace: ms \
         (median of {BUILDS}) | new namespace: range | × embedded (restart medians) | close: ms \
         (median of {}) | first build on a fresh server / state directory: ms |\n|---|---|---|---|---|---|---|---|",
        2 * BUILDS
    );
    let base_restart = median(b.figures[EMBEDDED].restart_ms.clone());
    for f in &b.figures {
        let restart = median(f.restart_ms.clone());
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {:.2} | {} | {} |",
            f.name,
            ms(restart),
            range(&f.restart_ms),
            ms(median(f.fresh_ms.clone())),
            range(&f.fresh_ms),
            restart / base_restart,
            ms(median(f.close_ms.clone())),
            ms(f.first_ms),
        );
    }

    let _ = writeln!(
        out,
        "\n**build → first ID in a crowded namespace**: as a new-namespace start, but in a \
         namespace where {} of its {WORKER_IDS} worker IDs are held by other tokens (leases \
         planted on the server for an hour), so the one free worker ID must be found. Redis tries \
         a random first one, then reads the next 256 leases in one pipelined round trip and \
         tries only one that looked free (a namespace's worker IDs live in as many cluster \
         slots, so no one script can pick); PostgreSQL picks and takes a free one in one \
         statement; MariaDB reads which are held in one statement and takes a free one with \
         another; ZooKeeper tries one, then reads the next 256 leases in one pipelined round \
         trip, as Redis. {BUILDS} \
         builds per server, taking turns.\n",
        WORKER_IDS - 1
    );
    let _ = writeln!(
        out,
        "| backend | crowded: ms (median of {BUILDS}) | crowded: range | × its new-namespace \
         median |\n|---|---|---|---|"
    );
    for f in b.figures.iter().filter(|f| !f.crowded_ms.is_empty()) {
        let crowded = median(f.crowded_ms.clone());
        let _ = writeln!(
            out,
            "| {} | {} | {} | {:.2} |",
            f.name,
            ms(crowded),
            range(&f.crowded_ms),
            crowded / median(f.fresh_ms.clone()),
        );
    }

    let _ = writeln!(out);
    for (i, f) in b.figures.iter().enumerate().skip(1) {
        let (r, p) = (f.next_id() / base, paired(b, i));
        let _ = writeln!(
            out,
            "- next_id on {} <= 1.05x the embedded default: {r:.3}x on medians: **{}**; {p:.3}x \
             on the median of {rounds} rounds: **{}**",
            f.name,
            crate::verdict(r <= 1.05),
            crate::verdict(p <= 1.05)
        );
    }
    out
}
