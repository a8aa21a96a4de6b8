//! A holder paused past its lease deadline (SIGSTOP, then SIGCONT), against real Redis,
//! PostgreSQL, MariaDB and ZooKeeper (where the deadline is the session's: the ensemble ends the
//! holder's session while it is stopped): while it was stopped another process took its worker ID; once it runs again it
//! must not issue a single ID, whether or not its keeper thread has noticed the deadline yet.
//!
//! The holder is this test binary run again with `RIMEFLAKE_TEST_PAUSED_CHILD` set. Its threads
//! issue IDs as fast as they can and count each success by when its call *began* (on
//! `CLOCK_BOOTTIME`, which every process of the machine shares): a call that began after the
//! parent saw the child stopped began after the resume.

use rimeflake_testkit::servers;

use rimeflake::clock::boottime_ns;
use rimeflake::{Backend, ErrorKind, Generator, Layout};
use servers::{MariaDb, Postgres, Redis, ZooKeeper};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const TTL_MS: u64 = 1_000;
const WORKER: u64 = 5;
const NAMESPACE: &str = "paused";
const THREADS: usize = 2;

fn generator(url: &str) -> rimeflake::Builder {
    Generator::builder()
        .layout(Layout::default())
        .backend(Backend::parse(url).expect("a backend this build has"))
        .namespace(NAMESPACE)
        .worker_id(WORKER)
        .lease_ttl(Duration::from_millis(TTL_MS))
        .max_wait(Duration::from_millis(200))
}

/// Successes and failures per millisecond of `CLOCK_BOOTTIME` at which their call began.
#[derive(Default)]
struct Tally {
    ok: BTreeMap<u64, u64>,
    errors: BTreeMap<u64, Vec<ErrorKind>>,
}

/// The child's side: issues on `THREADS` threads until the parent writes "STOPPED <ns>" (the
/// `CLOCK_BOOTTIME` by which it had seen this process stopped), then prints what it issued
/// from calls that began after that time.
#[test]
fn child_issues_until_told() {
    let Ok(url) = std::env::var("RIMEFLAKE_TEST_PAUSED_CHILD") else {
        return; // only meaningful as a child of `a_holder_paused_past_its_deadline_...`
    };
    let g = Arc::new(generator(&url).build().unwrap());
    let done = Arc::new(AtomicBool::new(false));
    let tally = Arc::new(Mutex::new(Tally::default()));
    let threads: Vec<_> = (0..THREADS)
        .map(|_| {
            let (g, done, tally) = (g.clone(), done.clone(), tally.clone());
            std::thread::spawn(move || {
                let mut mine = Tally::default();
                while !done.load(Ordering::Relaxed) {
                    let began = boottime_ns() / 1_000_000;
                    match g.next_id() {
                        Ok(_) => *mine.ok.entry(began).or_default() += 1,
                        Err(e) => {
                            mine.errors.entry(began).or_default().push(e.kind());
                            std::thread::sleep(Duration::from_millis(1));
                        }
                    }
                }
                let mut all = tally.lock().unwrap();
                for (ms, n) in mine.ok {
                    *all.ok.entry(ms).or_default() += n;
                }
                for (ms, kinds) in mine.errors {
                    all.errors.entry(ms).or_default().extend(kinds);
                }
            })
        })
        .collect();
    println!();
    println!("RUNNING");
    std::io::stdout().flush().unwrap();
    let mut line = String::new();
    std::io::stdin().read_line(&mut line).unwrap();
    let stopped_ms: u64 = line
        .trim()
        .strip_prefix("STOPPED ")
        .and_then(|n| n.parse::<u64>().ok())
        .expect("STOPPED <ns>")
        / 1_000_000;
    done.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().unwrap();
    }
    let all = tally.lock().unwrap();
    // The millisecond in which the parent saw the child stopped holds only calls from before
    // the stop (the resume came seconds later): count strictly later ones.
    let before: u64 = all.ok.range(..=stopped_ms).map(|(_, n)| n).sum();
    let after: u64 = all.ok.range(stopped_ms + 1..).map(|(_, n)| n).sum();
    let errors_after: Vec<ErrorKind> = all
        .errors
        .range(stopped_ms + 1..)
        .flat_map(|(_, k)| k.iter().copied())
        .collect();
    let lease_errors = errors_after
        .iter()
        .filter(|k| **k == ErrorKind::Lease)
        .count();
    println!(
        "RESULT before={before} after={after} errors_after={} lease_errors_after={lease_errors}",
        errors_after.len()
    );
    std::io::stdout().flush().unwrap();
}

/// Whether every thread of `pid` is stopped (state `T` in /proc): a stop signal stops each
/// thread when it next runs in the kernel, not all at once.
fn is_stopped(pid: u32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    let mut any = false;
    for task in tasks {
        let path = task.unwrap().path().join("stat");
        let stat = std::fs::read_to_string(path).unwrap_or_default();
        // The state follows the command name, which is in parentheses.
        if !stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('T'))
        {
            return false;
        }
        any = true;
    }
    any
}

/// Kills the holder if the test fails before it exits.
struct Reap(Child);

impl Drop for Reap {
    fn drop(&mut self) {
        if self.0.try_wait().ok().flatten().is_none() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

fn signal(child: &Child, sig: libc::c_int) {
    // SAFETY: a plain kill(2) of our own child, which has not been waited for.
    let rc = unsafe { libc::kill(child.id() as libc::pid_t, sig) };
    assert_eq!(rc, 0, "kill({}, {sig})", child.id());
}

/// One server: start the holder, stop it once it issues, take its worker ID from here once its
/// lease expired, resume it, and count what it issued after the resume.
fn paused_holder_issues_nothing(url: &str, server: &str) {
    let mut reap = Reap(
        Command::new(std::env::current_exe().unwrap())
            .args(["child_issues_until_told", "--exact", "--nocapture"])
            .env("RIMEFLAKE_TEST_PAUSED_CHILD", url)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let child = &mut reap.0;
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    lines
        .by_ref()
        .map(|l| l.unwrap())
        .find(|l| l.contains("RUNNING"))
        .unwrap_or_else(|| panic!("{server}: the holder did not start"));
    // Issuing for a while, renewing its lease meanwhile.
    std::thread::sleep(Duration::from_millis(TTL_MS));
    signal(child, libc::SIGSTOP);
    let mut waited = 0;
    while !is_stopped(child.id()) {
        assert!(waited < 5_000, "{server}: the holder did not stop");
        std::thread::sleep(Duration::from_millis(1));
        waited += 1;
    }
    let stopped = boottime_ns();

    // Its lease expires on the server: take the worker ID here, as another host would.
    let mut tries = 0;
    let thief = loop {
        match generator(url).build() {
            Ok(g) => break g,
            Err(e) if e.kind() == ErrorKind::Lease && tries < 100 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(e) => panic!("{server}: the worker ID did not come free: {e}"),
        }
    };
    for _ in 0..1_000 {
        thief.next_id().unwrap();
    }
    // Well past the holder's deadline (three quarters of a TTL after its last renewal).
    let paused_ms = (boottime_ns() - stopped) / 1_000_000;
    std::thread::sleep(Duration::from_millis(
        (2 * TTL_MS).saturating_sub(paused_ms),
    ));
    let paused_ms = (boottime_ns() - stopped) / 1_000_000;

    signal(child, libc::SIGCONT);
    // Let it run: its keeper notices, and its threads call as fast as they can meanwhile.
    std::thread::sleep(Duration::from_millis(TTL_MS));
    let stdin = child.stdin.as_mut().unwrap();
    writeln!(stdin, "STOPPED {stopped}").unwrap();
    stdin.flush().unwrap();
    let result = lines
        .by_ref()
        .map(|l| l.unwrap())
        .find_map(|l| l.split_once("RESULT ").map(|(_, r)| r.to_string()))
        .unwrap_or_else(|| panic!("{server}: the holder reported nothing"));
    lines.for_each(drop);
    assert!(
        child.wait().unwrap().success(),
        "{server}: the holder failed"
    );
    thief.close().unwrap();
    eprintln!("{server}: paused {paused_ms} ms: {result}");

    let field = |name: &str| -> u64 {
        result
            .split(' ')
            .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{name} in {result}"))
    };
    assert!(
        field("before") > 0,
        "{server}: nothing issued before the stop: {result}"
    );
    assert_eq!(
        field("after"),
        0,
        "{server}: IDs issued after the resume, past the lease deadline: {result}"
    );
    assert!(
        field("lease_errors_after") > 0,
        "{server}: no lease error after the resume: {result}"
    );
}

#[test]
fn a_holder_paused_past_its_deadline_issues_no_id_after_the_resume() {
    let redis = Redis::start();
    paused_holder_issues_nothing(&redis.url(), "redis");
    drop(redis);
    let postgres = Postgres::start();
    paused_holder_issues_nothing(&postgres.url(), "postgres");
    drop(postgres);
    let mariadb = MariaDb::start();
    paused_holder_issues_nothing(&mariadb.url(), "mariadb");
    drop(mariadb);
    let zookeeper = ZooKeeper::start();
    paused_holder_issues_nothing(&zookeeper.url(), "zookeeper");
}
