//! A server that forgets a worker's state (FLUSHALL, Redis restarted without its data, the
//! PostgreSQL row deleted, a row restored from an older copy) must not make IDs repeat: a
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
use servers::{Postgres, Redis};
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

/// Starts that find their state, or take a worker ID never used in a namespace older than a
/// holder's reach (3 s with the default settings), begin at the clock: the first ID's time is
/// not ahead of the clock read just after it, and nothing is said.
#[test]
fn an_ordinary_start_does_not_begin_ahead_of_the_clock() {
    let redis = Redis::start();
    let postgres = Postgres::start();
    let dir = scratch("ordinary");
    let urls = [redis.url(), postgres.url()];
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
/// (`RIMEFLAKE_WAIT_AT_TAKEOVER=1`).
#[test]
fn a_row_restored_from_an_older_copy_repeats_nothing_with_wait_at_takeover() {
    let postgres = Postgres::start();
    let url = postgres.url();
    let dir = scratch("restored");
    let row = format!("namespace = '{NAMESPACE}' AND worker_id = {WORKER}");
    let holder = Issuer::start(&url, &dir, "holder", 0, &[]);
    std::thread::sleep(Duration::from_millis(500));
    let copy = postgres.psql(&format!(
        "SELECT state || '|' || version FROM rimeflake_workers WHERE {row}"
    ));
    let (state, version) = copy
        .trim()
        .split_once('|')
        .expect("a state and its version");
    std::thread::sleep(Duration::from_millis(2_000));
    let (ours, _) = holder.finish();
    let restore = || {
        postgres.psql(&format!(
            "UPDATE rimeflake_workers SET state = '{state}', version = {version} WHERE {row}"
        ));
    };
    restore();
    let (plain, _) = Issuer::start(&url, &dir, "plain", SUCCESSOR_IDS, &[]).finish();
    let without = repeated(&ours, &plain);
    restore();
    let (waited, said) = Issuer::start(
        &url,
        &dir,
        "waited",
        SUCCESSOR_IDS,
        &[("RIMEFLAKE_WAIT_AT_TAKEOVER", "1")],
    )
    .finish();
    let with = repeated(&ours, &waited);
    eprintln!(
        "restored from a copy 2.0 s older: holder {} IDs; repeated without the opt-in {without}, \
         with it {with}",
        ours.len()
    );
    assert_eq!(with, 0, "with RIMEFLAKE_WAIT_AT_TAKEOVER=1: {said:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
