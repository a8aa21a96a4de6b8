//! A server that forgets a worker's state (FLUSHALL, Redis restarted without its data, the
//! PostgreSQL or MariaDB row or the ZooKeeper node deleted, a row restored from an older copy)
//! must not make IDs repeat, nor a server killed (SIGKILL) and restarted: a
//! holder issues as fast as a layout capped at 16 IDs per ms lets it (so it runs up to
//! `max_drift` ahead of its clock), the server forgets, and a successor in another process takes
//! the same worker ID and issues. No ID of the successor may be one of the holder's.
//!
//! Each holder and successor is this test binary run again with `RIMEFLAKE_TEST_FORGET_CHILD`
//! set: it writes every ID it issued to a file, and prints its warnings.

mod issuers;
use issuers::{repeated, scratch, Issuer};
use rimeflake_testkit::servers;

use rimeflake::{Backend, ErrorKind, Generator, Layout};
use servers::{MariaDb, Postgres, Redis, ZooKeeper};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::Ordering;
use std::time::Duration;

const WORKER: u64 = 5;
const NAMESPACE: &str = "forgetting";
/// 16 IDs per ms: a holder issuing at full speed soon runs `max_drift` ahead of its clock.
const CAPPED: &str = "clock_id=0,time=41,worker=18,sequence=4,epoch_ms=1420070400000";
/// IDs a successor issues: a few seconds of the capped layout.
const SUCCESSOR_IDS: u64 = 40_000;

fn layout() -> Layout {
    Layout::from_spec(CAPPED).unwrap()
}

/// The child's side: builds a generator on the URL it is given (retrying while the worker ID is
/// held), prints `RUNNING`, issues until it has `RIMEFLAKE_TEST_FORGET_COUNT` IDs (0: until a
/// line on stdin), writes them to `RIMEFLAKE_TEST_FORGET_OUT` and prints `DONE <count>`.
#[test]
fn child_issues_and_writes_its_ids() {
    let Ok(url) = std::env::var("RIMEFLAKE_TEST_FORGET_CHILD") else {
        return; // only meaningful as a child of the tests below
    };
    let out = PathBuf::from(std::env::var("RIMEFLAKE_TEST_FORGET_OUT").unwrap());
    let count: u64 = std::env::var("RIMEFLAKE_TEST_FORGET_COUNT")
        .unwrap()
        .parse()
        .unwrap();
    let builder = || {
        Generator::builder()
            .layout(layout())
            .backend(Backend::parse(&url).unwrap())
            .namespace(NAMESPACE)
            .worker_id(
                std::env::var("RIMEFLAKE_TEST_FORGET_WORKER")
                    .map_or(WORKER, |w| w.parse().unwrap()),
            )
            .lease_ttl(Duration::from_millis(1_000))
            .on_warning(|w| println!("WARNING {}", w.message().replace('\n', " ")))
    };
    let mut tries = 0;
    let g = loop {
        match builder().build() {
            Ok(g) => break g,
            Err(e) if e.kind() == ErrorKind::Lease && tries < 100 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(e) => panic!("the generator did not start: {e}"),
        }
    };
    let first = g.next_id().unwrap();
    let clock_ms = rimeflake::clock::Clock::now_ms(&rimeflake::clock::SystemClock);
    let first_ms = layout().decode(first).unwrap().timestamp_ms;
    println!("FIRST id_ms={first_ms} clock_ms={clock_ms}");
    println!("RUNNING");
    std::io::stdout().flush().unwrap();
    let done = issuers::child::stop_on_stdin(count);
    let mut ids = vec![first];
    while !done.load(Ordering::Relaxed) && (count == 0 || (ids.len() as u64) < count) {
        match g.next_id() {
            Ok(id) => ids.push(id),
            Err(_) => std::thread::sleep(Duration::from_millis(1)),
        }
    }
    issuers::child::write_ids(&out, &ids);
    // A close may fail (the lease is gone with the server's data): what was issued is written.
    let _ = g.close();
}

impl Issuer {
    /// Starts a child on `url` that issues `count` IDs (0: until told to stop), and waits until
    /// it issued its first.
    fn start(url: &str, dir: &Path, what: &str, count: u64, env: &[(&str, &str)]) -> Issuer {
        let out = dir.join(format!("{what}.ids"));
        let mut cmd = Command::new(std::env::current_exe().unwrap());
        cmd.args(["child_issues_and_writes_its_ids", "--exact", "--nocapture"])
            .env("RIMEFLAKE_TEST_FORGET_CHILD", url)
            .env("RIMEFLAKE_TEST_FORGET_OUT", &out)
            .env("RIMEFLAKE_TEST_FORGET_COUNT", count.to_string())
            .env("RIMEFLAKE_NO_DURABILITY_WARNING", "1")
            .env_remove("RIMEFLAKE_WAIT_AT_TAKEOVER")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut issuer = Issuer {
            child,
            lines,
            out,
            said: Vec::new(),
            what: what.to_string(),
        };
        issuer.read_until("RUNNING");
        issuer
    }
}

/// The `WARNING` lines of what a child printed.
fn warnings(said: &[String]) -> Vec<&str> {
    said.iter()
        .filter_map(|l| l.strip_prefix("WARNING "))
        .collect()
}

/// The first ID's time and the clock just after it was issued, in Unix ms.
fn first(said: &[String]) -> (u64, u64) {
    {
        let line = said
            .iter()
            .find_map(|l| l.strip_prefix("FIRST "))
            .expect("a FIRST line");
        let field = |name: &str| -> u64 {
            line.split(' ')
                .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{name} in {line}"))
        };
        (field("id_ms"), field("clock_ms"))
    }
}

/// A holder issues at full speed, `forget` makes the server lose its state, a successor takes
/// the worker ID and issues while the holder still runs: returns (holder's IDs, successor).
fn forgotten(url: &str, case: &str, forget: impl FnOnce()) -> (Vec<u64>, Vec<u64>, Vec<String>) {
    let dir = scratch(case);
    let holder = Issuer::start(url, &dir, &format!("{case}-holder"), 0, &[]);
    // Long enough to run max_drift (2 s) ahead of its clock.
    std::thread::sleep(Duration::from_millis(2_500));
    forget();
    let successor = Issuer::start(url, &dir, &format!("{case}-successor"), SUCCESSOR_IDS, &[]);
    let (theirs, said) = successor.finish();
    let (ours, _) = holder.finish();
    let _ = std::fs::remove_dir_all(&dir);
    (ours, theirs, said)
}

fn no_repeats(case: &str, ours: &[u64], theirs: &[u64]) {
    assert!(
        ours.len() > 1_000,
        "{case}: the holder issued {}",
        ours.len()
    );
    assert_eq!(theirs.len() as u64, SUCCESSOR_IDS, "{case}");
    let n = repeated(ours, theirs);
    eprintln!(
        "{case}: holder {} IDs, successor {} IDs, repeated {n}",
        ours.len(),
        theirs.len()
    );
    assert_eq!(
        n, 0,
        "{case}: the successor repeated {n} of the holder's IDs"
    );
}

#[test]
fn after_flushall_a_successor_repeats_no_id() {
    let redis = Redis::start();
    let (ours, theirs, _) = forgotten(&redis.url(), "flushall", || {
        assert_eq!(redis.command(&["FLUSHALL"]), "+OK\r\n");
    });
    no_repeats("FLUSHALL", &ours, &theirs);
}

#[test]
fn after_redis_restarts_without_its_data_a_successor_repeats_no_id() {
    let mut redis = Redis::start();
    let url = redis.url();
    let dir = redis.dir().to_path_buf();
    let (ours, theirs, _) = forgotten(&url, "restart", || {
        redis.stop();
        // What a server without persistence has after a restart: nothing.
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if name.starts_with("appendonly") || name.ends_with(".rdb") {
                if path.is_dir() {
                    std::fs::remove_dir_all(&path).unwrap();
                } else {
                    std::fs::remove_file(&path).unwrap();
                }
            }
        }
        redis.restart();
        assert_eq!(redis.command(&["DBSIZE"]), ":0\r\n");
    });
    no_repeats("Redis restarted empty", &ours, &theirs);
}

#[test]
fn after_its_row_is_deleted_a_successor_repeats_no_id_and_says_why() {
    let postgres = Postgres::start();
    let (ours, theirs, said) = forgotten(&postgres.url(), "row", || {
        postgres.psql(&format!(
            "DELETE FROM rimeflake_workers WHERE namespace = '{NAMESPACE}' AND worker_id = {WORKER}"
        ));
    });
    no_repeats("row deleted", &ours, &theirs);
    let warned = warnings(&said);
    assert!(
        warned.iter().any(
            |w| w.contains(&format!("worker ID {WORKER} of namespace {NAMESPACE}"))
                && w.contains("no state")
        ),
        "{warned:?}"
    );
}

#[test]
fn after_a_mariadb_row_or_a_zookeeper_node_is_deleted_a_successor_repeats_no_id() {
    let mariadb = MariaDb::start();
    let (ours, theirs, said) = forgotten(&mariadb.url(), "mariadb-row", || {
        mariadb.sql(&format!(
            "DELETE FROM rimeflake_workers WHERE namespace = '{NAMESPACE}' AND worker_id = {WORKER}"
        ));
    });
    no_repeats("MariaDB row deleted", &ours, &theirs);
    assert!(
        warnings(&said).iter().any(|w| w.contains("no state")),
        "{said:?}"
    );
    drop(mariadb);
    // The worker's node with its lease and state: the holder's session stays, its lease goes.
    let zookeeper = ZooKeeper::start();
    let (ours, theirs, said) = forgotten(&zookeeper.url(), "zookeeper-node", || {
        zookeeper.cli(&format!(
            "deleteall /rimeflake/workers/{NAMESPACE}/{WORKER}"
        ));
    });
    no_repeats("ZooKeeper node deleted", &ours, &theirs);
    assert!(
        warnings(&said).iter().any(|w| w.contains("no state")),
        "{said:?}"
    );
}

/// SIGKILL of the server while a holder issues at full speed; the holder stops (its close
/// fails), the server restarts from what it synced, and a successor takes the worker ID once the
/// holder's lease (a row, or a session restored by the ensemble) has run out.
#[test]
fn after_the_server_is_killed_and_restarted_a_successor_repeats_no_id() {
    fn case(url: &str, name: &str, kill: &mut dyn FnMut(), restart: &mut dyn FnMut()) {
        let dir = scratch(name);
        let holder = Issuer::start(url, &dir, &format!("{name}-holder"), 0, &[]);
        std::thread::sleep(Duration::from_millis(2_500));
        kill();
        let (ours, _) = holder.finish();
        restart();
        let successor = Issuer::start(url, &dir, &format!("{name}-successor"), SUCCESSOR_IDS, &[]);
        let (theirs, _) = successor.finish();
        let _ = std::fs::remove_dir_all(&dir);
        no_repeats(&format!("{name} killed and restarted"), &ours, &theirs);
    }
    let mut mariadb = MariaDb::start();
    let url = mariadb.url();
    let m = std::cell::RefCell::new(&mut mariadb);
    case(
        &url,
        "mariadb-kill",
        &mut || m.borrow_mut().kill(),
        &mut || m.borrow_mut().restart(),
    );
    drop(mariadb);
    let mut zookeeper = ZooKeeper::start();
    let url = zookeeper.url();
    let z = std::cell::RefCell::new(&mut zookeeper);
    case(
        &url,
        "zookeeper-kill",
        &mut || z.borrow_mut().kill(),
        &mut || z.borrow_mut().restart(),
    );
}

/// Starts that find their state, or take a worker ID never used in a namespace older than a
/// holder's reach (3 s with the default settings), begin at the clock: the first ID's time is
/// not ahead of the clock read just after it, and nothing is said.
#[test]
fn an_ordinary_start_does_not_begin_ahead_of_the_clock() {
    let redis = Redis::start();
    let postgres = Postgres::start();
    let mariadb = MariaDb::start();
    let zookeeper = ZooKeeper::start();
    let dir = scratch("ordinary");
    let urls = [redis.url(), postgres.url(), mariadb.url(), zookeeper.url()];
    // Each namespace's first start pays its reach; let it age past it.
    for url in &urls {
        Issuer::start(url, &dir, "first", 10, &[]).finish();
    }
    std::thread::sleep(Duration::from_millis(4_500));
    for url in &urls {
        for (what, env) in [
            ("restart", &[][..]),
            ("never used", &[("RIMEFLAKE_TEST_FORGET_WORKER", "9")][..]),
        ] {
            let (_, said) = Issuer::start(url, &dir, "again", 10, env).finish();
            let (id_ms, clock_ms) = first(&said);
            assert!(
                id_ms <= clock_ms,
                "{url}: {what}: the first ID is {} ms ahead of the clock",
                id_ms - clock_ms
            );
            assert!(warnings(&said).is_empty(), "{url}: {what}: {said:?}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A row restored from an older copy looks like the truth to the server: a successor repeats
/// the holder's IDs issued after the copy was taken, unless it waits at every takeover
/// (`RIMEFLAKE_WAIT_AT_TAKEOVER=1`). On PostgreSQL, MariaDB (a row) and ZooKeeper (a node).
#[test]
fn a_row_restored_from_an_older_copy_repeats_nothing_with_wait_at_takeover() {
    let row = format!("namespace = '{NAMESPACE}' AND worker_id = {WORKER}");
    let postgres = Postgres::start();
    restored(
        &postgres.url(),
        "postgres",
        || {
            postgres.psql(&format!(
                "SELECT state || '|' || version FROM rimeflake_workers WHERE {row}"
            ))
        },
        |copy| {
            let (state, version) = copy
                .trim()
                .split_once('|')
                .expect("a state and its version");
            postgres.psql(&format!(
                "UPDATE rimeflake_workers SET state = '{state}', version = {version} WHERE {row}"
            ));
        },
    );
    drop(postgres);
    let mariadb = MariaDb::start();
    restored(
        &mariadb.url(),
        "mariadb",
        || {
            mariadb.sql(&format!(
                "SELECT CONCAT(state, '|', version) FROM rimeflake_workers WHERE {row}"
            ))
        },
        |copy| {
            let (state, version) = copy
                .trim()
                .split_once('|')
                .expect("a state and its version");
            mariadb.sql(&format!(
                "UPDATE rimeflake_workers SET state = '{state}', version = {version} WHERE {row}"
            ));
        },
    );
    drop(mariadb);
    let zookeeper = ZooKeeper::start();
    let node = format!("/rimeflake/workers/{NAMESPACE}/{WORKER}/state");
    restored(
        &zookeeper.url(),
        "zookeeper",
        || {
            let got = zookeeper.cli(&format!("get {node}"));
            got.lines()
                .find(|l| {
                    l.split_once(' ')
                        .is_some_and(|(v, _)| v.parse::<u64>().is_ok())
                })
                .unwrap_or_else(|| panic!("no state in {got}"))
                .to_string()
        },
        |copy| {
            zookeeper.cli(&format!("set {node} \"{copy}\""));
        },
    );
}

/// One server of the test above: `copy` reads the worker's stored state, `restore` writes it
/// back.
fn restored(url: &str, server: &str, copy: impl Fn() -> String, restore: impl Fn(&str)) {
    let dir = scratch(&format!("restored-{server}"));
    let holder = Issuer::start(url, &dir, "holder", 0, &[]);
    std::thread::sleep(Duration::from_millis(500));
    let copied = copy();
    std::thread::sleep(Duration::from_millis(2_000));
    let (ours, _) = holder.finish();
    restore(&copied);
    let (plain, _) = Issuer::start(url, &dir, "plain", SUCCESSOR_IDS, &[]).finish();
    let without = repeated(&ours, &plain);
    restore(&copied);
    let (waited, said) = Issuer::start(
        url,
        &dir,
        "waited",
        SUCCESSOR_IDS,
        &[("RIMEFLAKE_WAIT_AT_TAKEOVER", "1")],
    )
    .finish();
    let with = repeated(&ours, &waited);
    eprintln!(
        "{server}: restored from a copy 2.0 s older: holder {} IDs; repeated without the opt-in \
         {without}, with it {with}",
        ours.len()
    );
    assert_eq!(
        with, 0,
        "{server}: with RIMEFLAKE_WAIT_AT_TAKEOVER=1: {said:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
