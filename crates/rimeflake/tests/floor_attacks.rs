//! Attacks on the floor a start on a server keeps above when the server may have lost a
//! worker's state (docs/many-hosts.md, "A server that forgets"): a start killed or interrupted
//! while it waits, a clock behind the server's or stepped back during the wait, many starts
//! racing to mark their worker IDs, and a holder whose clock steps back while a successor takes
//! over. Every holder and successor is this test binary run again as a child process with
//! `RIMEFLAKE_TEST_FLOOR_CHILD` set, on real Redis and PostgreSQL servers; every ID every child
//! issued is collected, and none may repeat.

mod issuers;
use issuers::{repeated, scratch, Issuer};
use rimeflake_testkit::servers;
use rimeflake_testkit::support;

use rimeflake::{Backend, ErrorKind, Generator, Layout};
use servers::{Postgres, Redis};
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::Ordering;
use std::time::Duration;
use support::Since;

const WORKER: u64 = 5;
/// 16 IDs per ms: a holder issuing at full speed soon runs `max_drift` ahead of its clock.
const CAPPED: &str = "clock_id=0,time=41,worker=18,sequence=4,epoch_ms=1420070400000";
/// IDs a successor issues: a few seconds of the capped layout.
const SUCCESSOR_IDS: u64 = 40_000;
/// What "bounded" means here: far above any wait the docs allow, far below a hang.
const BOUND: Duration = Duration::from_secs(30);

/// The capped layout, or the one `LAYOUT` names.
fn layout() -> Layout {
    Layout::from_spec(&var("LAYOUT").unwrap_or_else(|| CAPPED.to_string())).unwrap()
}

fn var(name: &str) -> Option<String> {
    issuers::child::var("FLOOR", name)
}

fn var_u64(name: &str) -> Option<u64> {
    issuers::child::var_u64("FLOOR", name)
}

/// The child's side (on the layout `LAYOUT` names, the capped one by default). Prints
/// `BUILDING`, builds a generator on the URL it is given (retrying while the worker ID is held;
/// with `INTERRUPT_MS`, a first build interrupted after that long and then a second); then
/// `STARTED ms=<build time>` or `FAILED kind=<kind> ms=<build time>`, and `RUNNING`. Issues
/// until it has `COUNT` IDs (0: until a line on stdin), giving up after 5 s without one, writes
/// them to `OUT` and prints `DONE <count>`.
#[test]
fn child_issues_and_writes_its_ids() {
    let Some(url) = var("CHILD") else {
        return; // only meaningful as a child of the tests below
    };
    let out = PathBuf::from(var("OUT").unwrap());
    let count = var_u64("COUNT").unwrap();
    let builder = || {
        let mut b = Generator::builder()
            .layout(layout())
            .backend(Backend::parse(&url).unwrap())
            .namespace(var("NAMESPACE").unwrap())
            .worker_id(var_u64("WORKER").unwrap_or(WORKER))
            .lease_ttl(Duration::from_millis(1_000))
            .on_warning(|w| println!("WARNING {}", w.message().replace('\n', " ")));
        if let Some(ms) = var_u64("DRIFT_MS") {
            b = b.max_drift(Duration::from_millis(ms));
        }
        if let Some(ms) = var_u64("MAX_WAIT_MS") {
            b = b.max_wait(Duration::from_millis(ms));
        }
        if let Some(ms) = var_u64("AHEAD_MS") {
            b = b.reserve_ahead(Duration::from_millis(ms));
        }
        b
    };
    println!("BUILDING");
    std::io::stdout().flush().unwrap();
    let began = Since::now();
    if let Some(ms) = var_u64("INTERRUPT_MS") {
        let at = Since::now();
        let first = builder().build_with(&mut || at.elapsed() >= Duration::from_millis(ms));
        match first {
            Err(e) if e.kind() == ErrorKind::Interrupted => println!("INTERRUPTED {e}"),
            other => panic!(
                "the first start was not interrupted: {:?}",
                other.map(|_| ())
            ),
        }
    }
    let mut tries = 0;
    let built = loop {
        match builder().build() {
            Err(e) if e.kind() == ErrorKind::Lease && tries < 200 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(50));
            }
            other => break other,
        }
    };
    let mut ids = Vec::new();
    let g = issuers::child::say_started(built, began.elapsed().as_millis());
    let done = issuers::child::stop_on_stdin(count);
    if let Some(g) = &g {
        let mut last = Since::now();
        while !done.load(Ordering::Relaxed) && (count == 0 || (ids.len() as u64) < count) {
            match g.next_id() {
                Ok(id) => {
                    ids.push(id);
                    last = Since::now();
                }
                Err(e) if last.elapsed() > Duration::from_secs(5) => {
                    println!("GAVEUP {e}");
                    break;
                }
                Err(_) => std::thread::sleep(Duration::from_millis(1)),
            }
        }
    }
    issuers::child::write_ids(&out, &ids);
    if count == 0 {
        while !done.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    // A close may fail (the lease is gone with the server's data): what was issued is written.
    if let Some(g) = g {
        let _ = g.close();
    }
}

impl Issuer {
    /// Starts a child on `url` in `namespace` that issues `count` IDs (0: until told to stop);
    /// returns once it began to build its generator.
    fn spawn(
        url: &str,
        namespace: &str,
        dir: &Path,
        what: &str,
        count: u64,
        env: &[(&str, &str)],
    ) -> Issuer {
        let out = dir.join(format!("{what}.ids"));
        let mut cmd = Command::new(std::env::current_exe().unwrap());
        support::without_rimeflake_env(&mut cmd);
        cmd.args(["child_issues_and_writes_its_ids", "--exact", "--nocapture"])
            .env("RIMEFLAKE_TEST_FLOOR_CHILD", url)
            .env("RIMEFLAKE_TEST_FLOOR_NAMESPACE", namespace)
            .env("RIMEFLAKE_TEST_FLOOR_OUT", &out)
            .env("RIMEFLAKE_TEST_FLOOR_COUNT", count.to_string())
            .env("RIMEFLAKE_NO_DURABILITY_WARNING", "1");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut issuer = Issuer::launch(cmd, out, what);
        issuer.read_until("BUILDING");
        issuer
    }

    /// As [`Issuer::spawn`], and waits until its generator started (or failed to).
    fn start(
        url: &str,
        namespace: &str,
        dir: &Path,
        what: &str,
        count: u64,
        env: &[(&str, &str)],
    ) -> Issuer {
        let mut issuer = Issuer::spawn(url, namespace, dir, what, count, env);
        issuer.read_until("RUNNING");
        issuer
    }
}

/// The value of `name=` on the line of `said` that starts with `prefix`.
fn field(said: &[String], prefix: &str, name: &str) -> Option<u64> {
    let line = said.iter().find_map(|l| l.strip_prefix(prefix))?;
    line.split(' ')
        .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
        .and_then(|v| v.parse().ok())
}

/// How long the child's start took (whether it started or failed), checked to be bounded.
fn start_took(what: &str, said: &[String]) -> Duration {
    let ms = field(said, "STARTED ", "ms")
        .or_else(|| field(said, "FAILED ", "ms"))
        .unwrap_or_else(|| panic!("{what}: no STARTED or FAILED line in {said:?}"));
    let took = Duration::from_millis(ms);
    assert!(took < BOUND, "{what}: its start took {took:?}: {said:?}");
    took
}

/// A holder issuing at full speed in `namespace`, long enough to run `max_drift` ahead of its
/// clock.
fn holder(url: &str, namespace: &str, dir: &Path, env: &[(&str, &str)]) -> Issuer {
    let holder = Issuer::start(url, namespace, dir, "holder", 0, env);
    std::thread::sleep(Duration::from_millis(2_500));
    holder
}

fn no_repeats(case: &str, ours: &[u64], theirs: &[u64], said: &[String]) {
    assert!(
        ours.len() > 1_000,
        "{case}: the holder issued {}",
        ours.len()
    );
    let n = repeated(ours, theirs);
    eprintln!(
        "{case}: holder {} IDs, successor {} IDs, repeated {n}",
        ours.len(),
        theirs.len()
    );
    assert_eq!(
        n, 0,
        "{case}: the successor repeated {n} of the holder's IDs: {said:?}"
    );
}

/// A start after a FLUSHALL is killed (SIGKILL) while it waits for its floor, before it stored
/// anything; the next start on the worker ID, in another process, gets it once the killed one's
/// lease ran out (its TTL) and repeats none of the lost holder's IDs. And a start interrupted
/// while it waits, started again in the same process, repeats none either.
#[test]
fn a_start_killed_or_interrupted_in_its_floor_wait_leaves_the_next_above_the_lost_holder() {
    let redis = Redis::start();
    let url = redis.url();
    for (case, interrupt) in [("killed", false), ("interrupted", true)] {
        let ns = format!("killed-wait-{case}");
        let dir = scratch(case);
        let holder = holder(&url, &ns, &dir, &[]);
        assert_eq!(redis.command(&["FLUSHALL"]), "+OK\r\n");
        let (theirs, said) = if interrupt {
            let next = Issuer::start(
                &url,
                &ns,
                &dir,
                "next",
                SUCCESSOR_IDS,
                &[("RIMEFLAKE_TEST_FLOOR_INTERRUPT_MS", "400")],
            );
            next.finish()
        } else {
            let mut killed = Issuer::spawn(&url, &ns, &dir, "killed", SUCCESSOR_IDS, &[]);
            std::thread::sleep(Duration::from_millis(400));
            killed.child.kill().unwrap();
            killed.child.wait().unwrap();
            // It was in the wait: its worker ID marked and its lease held, no state stored.
            let hash = format!("rimeflake:{{{ns}}}:used");
            let lease = format!("rimeflake:{{{ns}:{WORKER}}}:lease");
            let state = format!("rimeflake:{{{ns}:{WORKER}}}:state");
            assert_ne!(
                redis.command(&["HGET", &hash, &WORKER.to_string()]),
                "$-1\r\n",
                "killed before it marked its worker ID: {:?}",
                killed.said
            );
            assert_eq!(redis.command(&["EXISTS", &lease]), ":1\r\n");
            assert_eq!(redis.command(&["EXISTS", &state]), ":0\r\n");
            Issuer::start(&url, &ns, &dir, "next", SUCCESSOR_IDS, &[]).finish()
        };
        start_took(case, &said);
        if interrupt {
            assert!(
                said.iter().any(|l| l.starts_with("INTERRUPTED")),
                "{said:?}"
            );
        }
        assert_eq!(theirs.len() as u64, SUCCESSOR_IDS, "{case}: {said:?}");
        let (ours, _) = holder.finish();
        no_repeats(
            &format!("a start {case} in its wait"),
            &ours,
            &theirs,
            &said,
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// Runs a child's clock through libfaketime: `FAKETIME` itself, or a file it reads at every
/// reading (so the test can step the clock while the child runs). The monotonic clocks stay.
fn faked(spec_or_file: Result<&str, &Path>) -> Vec<(String, String)> {
    let lib = support::libfaketime();
    let mut env = vec![
        ("LD_PRELOAD".to_string(), lib.to_string_lossy().into_owned()),
        ("FAKETIME_DONT_FAKE_MONOTONIC".to_string(), "1".to_string()),
    ];
    match spec_or_file {
        Ok(spec) => env.push(("FAKETIME".into(), spec.into())),
        Err(file) => {
            env.push((
                "FAKETIME_TIMESTAMP_FILE".into(),
                file.to_string_lossy().into_owned(),
            ));
            env.push(("FAKETIME_NO_CACHE".into(), "1".into()));
        }
    }
    env
}

fn pairs(env: &[(String, String)]) -> Vec<(&str, &str)> {
    env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
}

/// A successor whose clock is 5 s behind the server's (and the lost holder's) takes the worker
/// ID after a FLUSHALL: the floor is reckoned on the server's clock, which the lost holder's
/// agreed with, so it repeats nothing: it waits for its clock as after a rollback, within
/// `max_wait` (which fails the start if the clock does not come).
#[test]
fn a_successor_whose_clock_is_behind_repeats_nothing_and_waits_a_bounded_time() {
    let redis = Redis::start();
    let url = redis.url();
    let ns = "behind";
    let dir = scratch(ns);
    let holder = holder(&url, ns, &dir, &[]);
    assert_eq!(redis.command(&["FLUSHALL"]), "+OK\r\n");
    let mut env = faked(Ok("-5"));
    // Long enough for its clock to near the floor: 5 s behind the server's plus the reach,
    // less what a quick restart resumes above.
    env.push(("RIMEFLAKE_TEST_FLOOR_MAX_WAIT_MS".into(), "8000".into()));
    let (theirs, said) =
        Issuer::start(&url, ns, &dir, "behind", SUCCESSOR_IDS, &pairs(&env)).finish();
    let took = start_took("5 s behind", &said);
    let (ours, _) = holder.finish();
    eprintln!("5 s behind: the start took {took:?}: {said:?}");
    assert_eq!(theirs.len() as u64, SUCCESSOR_IDS, "{said:?}");
    no_repeats("a successor 5 s behind", &ours, &theirs, &said);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A successor's clock steps back a minute while it waits for its floor: it repeats nothing,
/// and its start still ends (starts or fails) within a bounded time, not when the clock has
/// made up the minute.
#[test]
fn a_clock_stepped_back_during_the_floor_wait_keeps_the_start_bounded() {
    let redis = Redis::start();
    let url = redis.url();
    let ns = "stepped";
    let dir = scratch(ns);
    let holder = holder(&url, ns, &dir, &[]);
    assert_eq!(redis.command(&["FLUSHALL"]), "+OK\r\n");
    let file = dir.join("faketime");
    std::fs::write(&file, "+0\n").unwrap();
    let env = faked(Err(&file));
    let mut next = Issuer::spawn(&url, ns, &dir, "stepped", SUCCESSOR_IDS, &pairs(&env));
    std::thread::sleep(Duration::from_millis(400));
    std::fs::write(&file, "-60\n").unwrap();
    next.read_until("RUNNING");
    if let Some(failed) = next.said.iter().find(|l| l.starts_with("FAILED ")) {
        // As a rollback past max_wait; the lease given back at once, not left for its TTL.
        assert!(failed.contains("ClockRollback"), "{failed}");
        let lease = format!("rimeflake:{{{ns}:{WORKER}}}:lease");
        assert_eq!(redis.command(&["EXISTS", &lease]), ":0\r\n", "{failed}");
    }
    let (theirs, said) = next.finish();
    let took = start_took("stepped back", &said);
    let (ours, _) = holder.finish();
    eprintln!("stepped back 60 s in the wait: the start took {took:?}: {said:?}");
    no_repeats("a clock stepped back in the wait", &ours, &theirs, &said);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A holder's clock steps back 3 s and then forward again while, after a FLUSHALL, another
/// process takes its worker ID: no ID of either repeats.
#[test]
fn a_holder_whose_clock_steps_back_and_forward_repeats_nothing_with_its_successor() {
    let redis = Redis::start();
    let url = redis.url();
    let ns = "holder-stepped";
    let dir = scratch(ns);
    let file = dir.join("faketime");
    std::fs::write(&file, "+0\n").unwrap();
    let env = faked(Err(&file));
    let holder = holder(&url, ns, &dir, &pairs(&env));
    std::fs::write(&file, "-3\n").unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(redis.command(&["FLUSHALL"]), "+OK\r\n");
    let next = Issuer::spawn(&url, ns, &dir, "next", SUCCESSOR_IDS, &[]);
    std::thread::sleep(Duration::from_millis(300));
    std::fs::write(&file, "+0\n").unwrap();
    let (theirs, said) = next.finish();
    start_took("successor", &said);
    assert_eq!(theirs.len() as u64, SUCCESSOR_IDS, "{said:?}");
    let (ours, _) = holder.finish();
    no_repeats("a holder stepped back 3 s", &ours, &theirs, &said);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Racers per worker ID, and worker IDs, in [`racing`].
const RACERS: u64 = 2;
const RACED_WORKERS: u64 = 4;

/// A holder per worker ID issues, the server loses the namespace (`forget`), and then
/// `RACERS` processes per worker ID start at once, each with another `reserve_ahead` (none below
/// the holders'; `max_drift` is the namespace's): the record
/// ends with every worker ID marked with the largest reach of its racers (`mark` reads it), and
/// no ID of any holder or racer repeats.
fn racing(url: &str, case: &str, forget: impl FnOnce(), mark: impl Fn(u64) -> Option<u64>) {
    let ns = "racing";
    let dir = scratch(case);
    let holders: Vec<Issuer> = (0..RACED_WORKERS)
        .map(|w| {
            let w = w.to_string();
            Issuer::start(
                url,
                ns,
                &dir,
                &format!("holder-{w}"),
                0,
                // No larger than any racer's: a whole loss forgets a larger reach (the docs).
                &[
                    ("RIMEFLAKE_TEST_FLOOR_WORKER", &w),
                    ("RIMEFLAKE_TEST_FLOOR_DRIFT_MS", "500"),
                ],
            )
        })
        .collect();
    std::thread::sleep(Duration::from_millis(2_500));
    forget();
    let mut expected = HashMap::new();
    let racers: Vec<Issuer> = (0..RACERS * RACED_WORKERS)
        .map(|i| {
            let w = i % RACED_WORKERS;
            // Distinct reaches: the namespace's max_drift (500 ms) plus reserve_ahead.
            let ahead = 1_000 + 100 * i;
            let reach = 500 + ahead;
            let top = expected.entry(w).or_insert(0);
            *top = reach.max(*top);
            Issuer::spawn(
                url,
                ns,
                &dir,
                &format!("racer-{i}"),
                2_000,
                &[
                    ("RIMEFLAKE_TEST_FLOOR_WORKER", &w.to_string()),
                    ("RIMEFLAKE_TEST_FLOOR_DRIFT_MS", "500"),
                    ("RIMEFLAKE_TEST_FLOOR_AHEAD_MS", &ahead.to_string()),
                ],
            )
        })
        .collect();
    // The holders lost their leases: stopped now, they hold nothing the racers wait for.
    let mut by: HashMap<u64, String> = HashMap::new();
    let mut repeats: HashMap<(String, String), usize> = HashMap::new();
    let mut total = 0;
    let mut note = |what: &str, ids: Vec<u64>| {
        total += ids.len();
        for id in ids {
            if let Some(first) = by.insert(id, what.to_string()) {
                *repeats.entry((first, what.to_string())).or_default() += 1;
            }
        }
    };
    for holder in holders {
        let what = holder.what.clone();
        note(&what, holder.finish().0);
    }
    let mut issued = 0;
    for racer in racers {
        let what = racer.what.clone();
        let (ids, said) = racer.finish();
        start_took(&what, &said);
        assert_eq!(ids.len(), 2_000, "{what}: {said:?}");
        issued += ids.len();
        note(&what, ids);
    }
    let repeated: usize = repeats.values().sum();
    eprintln!(
        "{case}: {total} IDs ({issued} by {} racers), {repeated} repeated: {repeats:?}",
        RACERS * RACED_WORKERS,
    );
    assert_eq!(repeated, 0, "{case}: repeated IDs: {repeats:?}");
    for (w, reach) in &expected {
        assert_eq!(mark(*w), Some(*reach), "{case}: the mark of worker ID {w}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn racing_starts_after_a_flushall_mark_the_largest_reach_and_repeat_nothing() {
    let redis = Redis::start();
    racing(
        &redis.url(),
        "redis",
        || assert_eq!(redis.command(&["FLUSHALL"]), "+OK\r\n"),
        |w| {
            let reply = redis.command(&["HGET", "rimeflake:{racing}:used", &w.to_string()]);
            reply.lines().nth(1).and_then(|v| v.parse().ok())
        },
    );
}

#[test]
fn racing_starts_after_the_rows_are_deleted_mark_the_largest_reach_and_repeat_nothing() {
    let postgres = Postgres::start();
    racing(
        &postgres.url(),
        "postgres",
        || {
            postgres.psql(
                "DELETE FROM rimeflake_namespaces WHERE namespace = 'racing'; \
                 DELETE FROM rimeflake_workers WHERE namespace = 'racing'",
            );
        },
        |w| {
            postgres
                .psql(&format!(
                    "SELECT used ->> '{w}' FROM rimeflake_namespaces WHERE namespace = 'racing'"
                ))
                .trim()
                .parse()
                .ok()
        },
    );
}

/// A generator whose `max_drift` is not its namespace's is refused, naming both values (a
/// successor of its worker ID could not resume above what it reserved), and one above the cap
/// is refused whatever the namespace: neither leaves a reach that later starts of the namespace
/// must wait out. An ordinary start after them takes the worker ID at once.
#[test]
fn a_max_drift_other_than_the_namespaces_is_refused_and_poisons_nothing() {
    let redis = Redis::start();
    let url = redis.url();
    let ns = "drift";
    let dir = scratch(ns);
    let (_, said) = Issuer::start(&url, ns, &dir, "first", 10, &[]).finish();
    assert!(said.iter().any(|l| l.starts_with("STARTED")), "{said:?}");
    for (drift, why) in [("30000", "2000 ms"), ("600000", "at most")] {
        let poison = Issuer::start(
            &url,
            ns,
            &dir,
            "poison",
            0,
            &[("RIMEFLAKE_TEST_FLOOR_DRIFT_MS", drift)],
        );
        // At full speed long enough to run its max_drift ahead of its clock, if it runs.
        std::thread::sleep(Duration::from_millis(2_500));
        let (ids, said) = poison.finish();
        let failed = said.iter().find(|l| l.starts_with("FAILED "));
        assert!(
            ids.is_empty() && failed.is_some_and(|l| l.contains("kind=Config") && l.contains(why)),
            "max_drift {drift} ms was not refused ({} IDs): {said:?}",
            ids.len()
        );
        if drift == "30000" {
            let l = failed.expect("checked above");
            assert!(l.contains("30000 ms"), "{l}");
        }
        let (ids, said) = Issuer::start(&url, ns, &dir, "ordinary", 2_000, &[]).finish();
        let took = start_took("ordinary", &said);
        assert_eq!(ids.len(), 2_000, "after max_drift {drift} ms: {said:?}");
        assert!(
            took < Duration::from_secs(2),
            "after max_drift {drift} ms: {took:?}: {said:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A host 30 s behind the last holder of a worker ID takes it over on a fresh clock-id (the
/// `default` layout has 3 clock-id bits), at once, in a new namespace as in an old one; a
/// layout without clock-ids cannot, and its error names the skew it measured and the host to
/// fix.
#[test]
fn a_successor_30s_behind_starts_on_a_fresh_clock_id_or_names_the_skew() {
    let redis = Redis::start();
    let url = redis.url();
    let dir = scratch("behind30");
    let behind = faked(Ok("-30"));
    for (layout, fresh) in [("default", true), (CAPPED, false)] {
        let ns = if fresh { "behind30" } else { "behind30-capped" };
        let layout_env = ("RIMEFLAKE_TEST_FLOOR_LAYOUT", layout);
        let holder = Issuer::start(&url, ns, &dir, "holder", 0, &[layout_env]);
        std::thread::sleep(Duration::from_millis(500));
        let (ours, _) = holder.finish();
        let mut env = pairs(&behind);
        env.push(layout_env);
        let (theirs, said) = Issuer::start(&url, ns, &dir, "behind", 2_000, &env).finish();
        start_took("30 s behind", &said);
        if fresh {
            assert_eq!(theirs.len(), 2_000, "{said:?}");
            assert_eq!(repeated(&ours, &theirs), 0);
        } else {
            told_its_skew(&said);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The child failed to start, as a clock rollback whose message names the skew it measured and
/// the host to fix.
fn told_its_skew(said: &[String]) {
    let failed = said
        .iter()
        .find(|l| l.starts_with("FAILED "))
        .unwrap_or_else(|| panic!("{said:?}"));
    assert!(
        failed.contains("kind=ClockRollback")
            && failed.contains("this host's clock is")
            && failed.contains("behind the clock of")
            && failed.contains("fix this host's time synchronisation"),
        "{failed}"
    );
}

/// After a FLUSHALL, a successor whose clock is 10 s behind the server's cannot start within
/// `max_wait` (5 s): its error names the skew it measured and the host to fix.
#[test]
fn after_a_flushall_a_successor_far_behind_is_told_its_skew() {
    let redis = Redis::start();
    let url = redis.url();
    let ns = "far-behind";
    let dir = scratch(ns);
    let holder = holder(&url, ns, &dir, &[]);
    assert_eq!(redis.command(&["FLUSHALL"]), "+OK\r\n");
    let env = faked(Ok("-10"));
    let (theirs, said) =
        Issuer::start(&url, ns, &dir, "behind", SUCCESSOR_IDS, &pairs(&env)).finish();
    start_took("10 s behind", &said);
    let (ours, _) = holder.finish();
    assert_eq!(repeated(&ours, &theirs), 0);
    told_its_skew(&said);
    let _ = std::fs::remove_dir_all(&dir);
}
