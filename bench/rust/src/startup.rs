//! Start-up latency on the server backends (Redis, PostgreSQL, MariaDB, ZooKeeper) with the
//! default settings: the time from `build()`
//! to the first ID, and to 10,000 IDs, for an ordinary start (a restart that finds its state, and
//! a worker ID never used, in a namespace older than a holder's reach), the first start of a new
//! namespace, and starts after the server lost its data (everything, as `FLUSHALL`; one worker's
//! state, as its row or keys deleted); and on replicated servers: an ordinary start, and each
//! worker ID's first start after a failover to a replica (Redis with a replica, PostgreSQL with a
//! synchronous standby), after a Redis restart, and after `rimeflake state restored`. The
//! servers run on loopback, started by the harness of the core's tests. Prints a Markdown table
//! (`make bench-startup`).

// A benchmark reads the clocks directly: the ban on SystemTime/Instant::now guards the core.
#![allow(clippy::disallowed_methods)]

use rimeflake_testkit::servers;

use rimeflake::{Backend, Generator, Layout};
use servers::{MariaDb, Postgres, Redis, ZooKeeper};
use std::time::{Duration, Instant};

/// Starts per row.
const RUNS: usize = 5;
/// IDs of the second figure.
const IDS: usize = 10_000;
/// A holder's reach with the default settings (`max_drift` 2 s plus `reserve_ahead` 1 s),
/// and a margin: a namespace older than this starts ordinarily.
const AGED: Duration = Duration::from_millis(4_500);
const WORKER: u64 = 7;

/// One start: ms to the first ID and to `IDS` IDs; closed after.
fn start(url: &str, namespace: &str, worker: u64) -> (f64, f64) {
    let t = Instant::now();
    let g = Generator::builder()
        .layout(Layout::default())
        .backend(Backend::parse(url).unwrap())
        .namespace(namespace)
        .worker_id(worker)
        .build()
        .unwrap_or_else(|e| panic!("{namespace}: build: {e}"));
    g.next_id().unwrap();
    let first = t.elapsed().as_secs_f64() * 1e3;
    for _ in 1..IDS {
        std::hint::black_box(g.next_id().unwrap());
    }
    let all = t.elapsed().as_secs_f64() * 1e3;
    g.close().unwrap();
    (first, all)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// A server and how to make it forget.
struct Server<'a> {
    name: &'static str,
    url: String,
    forget_all: &'a dyn Fn(),
    forget_worker: &'a dyn Fn(&str, u64),
}

fn rows(s: &Server) -> Vec<(String, f64, f64)> {
    let mut out = Vec::new();
    let mut row = |what: &str, runs: Vec<(f64, f64)>| {
        let (first, all): (Vec<f64>, Vec<f64>) = runs.into_iter().unzip();
        eprintln!("{} {what}: {first:?} {all:?}", s.name);
        out.push((format!("{} | {what}", s.name), median(first), median(all)));
    };
    // Ordinary: the namespace made, then aged past the reach.
    start(&s.url, "ordinary", WORKER);
    std::thread::sleep(AGED);
    row(
        "ordinary start (a restart: the state is found)",
        (0..RUNS)
            .map(|_| start(&s.url, "ordinary", WORKER))
            .collect(),
    );
    row(
        "ordinary start (a worker ID never used, namespace older than 3 s)",
        (0..RUNS)
            .map(|i| start(&s.url, "ordinary", 100 + i as u64))
            .collect(),
    );
    row(
        "first start of a new namespace",
        (0..RUNS)
            .map(|i| start(&s.url, &format!("new-{i}"), WORKER))
            .collect(),
    );
    row(
        "after the server lost everything (FLUSHALL; the tables emptied; the nodes deleted)",
        (0..RUNS)
            .map(|_| {
                start(&s.url, "lost", WORKER);
                (s.forget_all)();
                start(&s.url, "lost", WORKER)
            })
            .collect(),
    );
    // The worker's state alone lost, in a namespace older than the reach.
    start(&s.url, "lost-one", WORKER);
    std::thread::sleep(AGED);
    row(
        "after the worker's state was deleted (its keys; its row; its node)",
        (0..RUNS)
            .map(|_| {
                (s.forget_worker)("lost-one", WORKER);
                start(&s.url, "lost-one", WORKER)
            })
            .collect(),
    );
    out
}

/// Starts: ms to the first ID and to `IDS` IDs, each.
type Starts = Vec<(f64, f64)>;

/// Each of `RUNS` worker IDs started once on `before` in `namespace` (aged past the reach),
/// `change` applied, then each started on `after`: its first start there, and its second.
fn first_starts_after(
    before: &str,
    after: &str,
    namespace: &str,
    change: &mut dyn FnMut(),
) -> (Starts, Starts) {
    let workers: Vec<u64> = (0..RUNS as u64).map(|i| 200 + i).collect();
    for &w in &workers {
        start(before, namespace, w);
    }
    std::thread::sleep(AGED);
    change();
    let first = workers
        .iter()
        .map(|&w| start(after, namespace, w))
        .collect();
    let second = workers
        .iter()
        .map(|&w| start(after, namespace, w))
        .collect();
    (first, second)
}

/// The rows of the replicated servers, failovers, a restart and a restore declared.
fn replicated() -> Vec<(String, f64, f64)> {
    let mut out = Vec::new();
    let mut row = |what: &str, runs: Starts| {
        let (first, all): (Vec<f64>, Vec<f64>) = runs.into_iter().unzip();
        eprintln!("{what}: {first:?} {all:?}");
        out.push((what.to_string(), median(first), median(all)));
    };
    {
        let primary = Redis::start();
        let replica = Redis::start_replica_of(primary.port());
        let url = primary.url();
        start(&url, "ordinary", WORKER);
        std::thread::sleep(AGED);
        row(
            "Redis + 1 replica | ordinary start (a restart: the state is found)",
            (0..RUNS).map(|_| start(&url, "ordinary", WORKER)).collect(),
        );
        let (first, second) = first_starts_after(&url, &replica.url(), "failover", &mut || {
            assert!(replica
                .command(&["REPLICAOF", "NO", "ONE"])
                .starts_with("+OK"));
            replica.wait_for("role:master", 10);
        });
        row(
            "Redis + 1 replica | after the replica was promoted: each worker ID's first start",
            first,
        );
        row(
            "Redis + 1 replica | after the replica was promoted: its second start",
            second,
        );
    }
    {
        let mut redis = Redis::start();
        let url = redis.url();
        let (first, _) = first_starts_after(&url, &url, "restarted", &mut || redis.restart());
        row(
            "Redis | after a restart (its append-only file kept): each worker ID's first start",
            first,
        );
        let backend = Backend::parse(&url).unwrap();
        let (first, _) = first_starts_after(&url, &url, "restored", &mut || {
            rimeflake::admin::remote::restored(&backend, Some("restored")).unwrap();
        });
        row(
            "Redis | after `state restored`: each worker ID's first start",
            first,
        );
    }
    {
        let primary = Postgres::start();
        let standby = Postgres::start_standby(primary.port());
        primary.synchronous(true);
        let url = primary.url();
        start(&url, "ordinary", WORKER);
        std::thread::sleep(AGED);
        row(
            "PostgreSQL + synchronous standby | ordinary start (a restart: the state is found)",
            (0..RUNS).map(|_| start(&url, "ordinary", WORKER)).collect(),
        );
        let (first, second) = first_starts_after(&url, &standby.url(), "failover", &mut || {
            standby.promote();
        });
        row(
            "PostgreSQL + synchronous standby | after the standby was promoted: each worker ID's \
             first start",
            first,
        );
        row(
            "PostgreSQL + synchronous standby | after the standby was promoted: its second start",
            second,
        );
        // The standby is a primary of its own now: the old primary commits alone again.
        drop(standby);
        primary.synchronous(false);
        let backend = Backend::parse(&url).unwrap();
        let (first, _) = first_starts_after(&url, &url, "restored", &mut || {
            rimeflake::admin::remote::restored(&backend, Some("restored")).unwrap();
        });
        row(
            "PostgreSQL | after `state restored`: each worker ID's first start",
            first,
        );
    }
    out
}

fn main() {
    if cfg!(debug_assertions) {
        eprintln!("rimeflake-bench-startup: a debug build measures nothing useful; use --release");
    }
    let redis = Redis::start();
    let postgres = Postgres::start();
    let mut all = rows(&Server {
        name: "Redis",
        url: redis.url(),
        forget_all: &|| {
            redis.command(&["FLUSHALL"]);
        },
        forget_worker: &|ns, id| {
            redis.command(&[
                "DEL",
                &format!("rimeflake:{{{ns}:{id}}}:lease"),
                &format!("rimeflake:{{{ns}:{id}}}:state"),
            ]);
        },
    });
    all.extend(rows(&Server {
        name: "PostgreSQL",
        url: postgres.url(),
        forget_all: &|| {
            postgres.psql("DELETE FROM rimeflake_workers; DELETE FROM rimeflake_namespaces");
        },
        forget_worker: &|ns, id| {
            postgres.psql(&format!(
                "DELETE FROM rimeflake_workers WHERE namespace = '{ns}' AND worker_id = {id}"
            ));
        },
    }));
    let mariadb = MariaDb::start();
    all.extend(rows(&Server {
        name: "MariaDB",
        url: mariadb.url(),
        forget_all: &|| {
            mariadb.sql("DELETE FROM rimeflake_workers; DELETE FROM rimeflake_namespaces");
        },
        forget_worker: &|ns, id| {
            mariadb.sql(&format!(
                "DELETE FROM rimeflake_workers WHERE namespace = '{ns}' AND worker_id = {id}"
            ));
        },
    }));
    let zookeeper = ZooKeeper::start();
    all.extend(rows(&Server {
        name: "ZooKeeper",
        url: zookeeper.url(),
        forget_all: &|| {
            zookeeper.cli("deleteall /rimeflake");
        },
        forget_worker: &|ns, id| {
            zookeeper.cli(&format!("deleteall /rimeflake/workers/{ns}/{id}"));
        },
    }));
    all.extend(replicated());
    println!("| server | start | ms to the first ID | ms to {IDS} IDs |");
    println!("|---|---|---:|---:|");
    for (what, first, all) in all {
        println!("| {what} | {first:.1} | {all:.1} |");
    }
    println!();
    println!(
        "Medians of {RUNS} starts each; `default` layout, default settings (`max_drift` 2 s, \
         `reserve_ahead` 1 s, lease TTL 10 s), fixed worker ID."
    );
}
