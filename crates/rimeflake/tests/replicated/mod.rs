//! The holders and successors of the tests of replicated servers (replicas.rs for Redis and
//! PostgreSQL, replicas_mysql_zk.rs for MariaDB and ZooKeeper) and of holders cut off from
//! their server (cut_off.rs): each case runs two pairs at
//! once, on worker IDs of their own: one issuing at full speed on a layout capped at 16 IDs per
//! ms (so it runs `max_drift` ahead of its clock), one paced at 16 IDs per ms (so it stays at its
//! clock). Every holder and successor is the test binary run again with
//! `RIMEFLAKE_TEST_REPLICA_CHILD` set; it writes every ID it issued to a file.

use crate::issuers::{self, repeated, Issuer};
use rimeflake_testkit::support::{self, Since};

use rimeflake::{Backend, ErrorKind, Generator, Layout};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// 16 IDs per ms: a holder issuing at full speed soon runs `max_drift` ahead of its clock.
const CAPPED: &str = "clock_id=0,time=41,worker=18,sequence=4,epoch_ms=1420070400000";
/// IDs each successor issues: 2.5 s of the capped layout.
const SUCCESSOR_IDS: u64 = 40_000;
/// The lease TTL of every child but the holders of [`holders_with_ttl`].
const TTL_MS: u64 = 1_000;
/// The two pairs of each case: (worker ID, IDs per ms; 0: full speed).
const PAIRS: [(u64, u64); 2] = [(5, 0), (6, 16)];
/// How long a child tries to start, and waits for an ID, before it gives up: far above any wait
/// the docs allow, far below a hang.
const BOUND: Duration = Duration::from_secs(30);

/// What a child prints: when (CLOCK_BOOTTIME, ns) the attempt to build that took the lease
/// began, and when its last ID came back.
const BUILD_BEGAN: &str = "BUILD_BEGAN ns=";
const LAST_ID: &str = "LAST_ID ns=";

/// The number a child printed after `prefix`.
fn said_ns(said: &[String], prefix: &str) -> Option<u64> {
    said.iter()
        .find_map(|l| l.strip_prefix(prefix))
        .and_then(|n| n.trim().parse().ok())
}

#[allow(dead_code)] // cut_off.rs's
/// Per pair: whether the holder's last ID came back before the attempt that gave its
/// successor the lease began (`None` when a child did not say).
pub fn stopped_before_taken(
    ours: &[(Vec<u64>, Vec<String>)],
    theirs: &[(Vec<u64>, Vec<String>)],
) -> Vec<Option<bool>> {
    ours.iter()
        .zip(theirs)
        .map(|((_, held), (_, said))| Some(said_ns(held, LAST_ID)? < said_ns(said, BUILD_BEGAN)?))
        .collect()
}

fn layout() -> Layout {
    Layout::from_spec(CAPPED).unwrap()
}

fn var(name: &str) -> Option<String> {
    issuers::child::var("REPLICA", name)
}

fn var_u64(name: &str) -> Option<u64> {
    issuers::child::var_u64("REPLICA", name)
}

/// The child's side. Prints `BUILDING`, builds a generator on the URL it is given (retrying
/// while the worker ID is held, up to [`BOUND`]), then `STARTED ms=<build time>` or `FAILED
/// kind=<kind> ms=<build time> <message>`, and `RUNNING`. Issues (`PACE` IDs per ms at most, or
/// at full speed) until it has `COUNT` IDs (0: until a line on stdin), giving up after [`BOUND`]
/// without one; writes them to `OUT` and prints `DONE <count>`. Each error is printed once in a
/// row (`ERROR <message>`).
#[test]
fn child_issues_and_writes_its_ids() {
    let Some(url) = var("CHILD") else {
        return; // only meaningful as a child of the tests below
    };
    let out = PathBuf::from(var("OUT").unwrap());
    let count = var_u64("COUNT").unwrap();
    let pace = var_u64("PACE").unwrap_or(0);
    let builder = || {
        Generator::builder()
            .layout(layout())
            .backend(Backend::parse(&url).unwrap())
            .namespace(var("NAMESPACE").unwrap())
            .worker_id(var_u64("WORKER").unwrap())
            .lease_ttl(Duration::from_millis(var_u64("TTL").unwrap_or(TTL_MS)))
            .on_warning(|w| println!("WARNING {}", w.message().replace('\n', " ")))
    };
    println!("BUILDING");
    std::io::stdout().flush().unwrap();
    let began = Since::now();
    // When (CLOCK_BOOTTIME, the same for every process) the attempt that built began: the
    // lease was taken after it.
    let mut attempt_ns;
    let built = loop {
        attempt_ns = rimeflake::clock::boottime_ns();
        match builder().build() {
            Err(e) if e.kind() == ErrorKind::Lease && began.elapsed() < BOUND => {
                std::thread::sleep(Duration::from_millis(20));
            }
            other => break other,
        }
    };
    if built.is_ok() {
        println!("{BUILD_BEGAN}{attempt_ns}");
    }
    let g = issuers::child::say_started(built, began.elapsed().as_millis());
    let done = issuers::child::stop_on_stdin(count);
    let mut ids = Vec::new();
    let mut last_ns = 0;
    if let Some(g) = &g {
        let started = Since::now();
        let mut last = Since::now();
        let mut said = String::new();
        while !done.load(Ordering::Relaxed) && (count == 0 || (ids.len() as u64) < count) {
            if let Some(us) = (ids.len() as u64 * 1_000).checked_div(pace) {
                let due = Duration::from_micros(us);
                let now = started.elapsed();
                if due > now {
                    std::thread::sleep(due - now);
                }
            }
            match g.next_id() {
                Ok(id) => {
                    ids.push(id);
                    last_ns = rimeflake::clock::boottime_ns();
                    last = Since::now();
                    said.clear();
                }
                Err(e) => {
                    if e.message() != said {
                        said = e.message().to_string();
                        println!("ERROR {said}");
                    }
                    if count > 0 && last.elapsed() > BOUND {
                        println!("GAVEUP {e}");
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
        }
    }
    // After the last ID came back: it was issued before.
    println!("{LAST_ID}{last_ns}");
    issuers::child::write_ids(&out, &ids);
    // A close may fail (the lease is gone, the server too): what was issued is written.
    if let Some(g) = g {
        let _ = g.close();
    }
}

impl Issuer {
    /// Starts a child on `url` for worker ID `worker` of `namespace`, issuing `count` IDs (0:
    /// until told to stop) at `pace` IDs per ms (0: full speed); returns once it began to
    /// build its generator.
    fn spawn(
        url: &str,
        namespace: &str,
        dir: &Path,
        what: &str,
        (worker, pace): (u64, u64),
        count: u64,
        ttl_ms: u64,
    ) -> Issuer {
        let out = dir.join(format!("{what}.ids"));
        let mut cmd = Command::new(std::env::current_exe().unwrap());
        support::without_rimeflake_env(&mut cmd);
        cmd.args([
            "replicated::child_issues_and_writes_its_ids",
            "--exact",
            "--nocapture",
        ])
        .env("RIMEFLAKE_TEST_REPLICA_CHILD", url)
        .env("RIMEFLAKE_TEST_REPLICA_NAMESPACE", namespace)
        .env("RIMEFLAKE_TEST_REPLICA_OUT", &out)
        .env("RIMEFLAKE_TEST_REPLICA_COUNT", count.to_string())
        .env("RIMEFLAKE_TEST_REPLICA_WORKER", worker.to_string())
        .env("RIMEFLAKE_TEST_REPLICA_PACE", pace.to_string())
        .env("RIMEFLAKE_TEST_REPLICA_TTL", ttl_ms.to_string())
        .env("RIMEFLAKE_NO_DURABILITY_WARNING", "1");
        let mut issuer = Issuer::launch(cmd, out, what);
        issuer.read_until("BUILDING");
        issuer
    }
}

/// The name of a pair's speed.
pub fn speed((_, pace): (u64, u64)) -> &'static str {
    if pace == 0 {
        "full speed"
    } else {
        "16 IDs/ms"
    }
}

/// A holder per pair in `namespace`, each issuing until told to stop; returned once each has
/// started (and a moment later, long enough for the one at full speed to run `max_drift`
/// ahead of its clock).
#[allow(dead_code)] // not cut_off.rs's
pub fn holders(url: &str, namespace: &str, dir: &Path) -> Vec<Issuer> {
    holders_with_ttl(url, namespace, dir, TTL_MS)
}

/// [`holders`] with a lease TTL of `ttl_ms`.
#[allow(dead_code)] // cut_off.rs's
pub fn holders_with_ttl(url: &str, namespace: &str, dir: &Path, ttl_ms: u64) -> Vec<Issuer> {
    let mut holders: Vec<Issuer> = PAIRS
        .iter()
        .map(|&p| {
            let what = format!("holder-{}", p.0);
            Issuer::spawn(url, namespace, dir, &what, p, 0, ttl_ms)
        })
        .collect();
    for h in &mut holders {
        h.read_until("RUNNING");
        assert!(
            h.said.iter().any(|l| l.starts_with("STARTED")),
            "{}: {:?}",
            h.what,
            h.said
        );
    }
    std::thread::sleep(Duration::from_millis(2_500));
    holders
}

/// A successor per pair on `url`, all started at once, each issuing [`SUCCESSOR_IDS`]; then
/// the holders stopped. Counts the successors' IDs that repeat their holder's, prints them, and
/// fails the test when any did.
#[allow(dead_code)] // not cut_off.rs's
pub fn successors(case: &str, url: &str, namespace: &str, dir: &Path, holders: Vec<Issuer>) {
    let theirs = successors_issue(url, namespace, dir, "successor");
    let ours: Vec<(Vec<u64>, Vec<String>)> = holders.into_iter().map(Issuer::finish).collect();
    let failed = count(case, &ours, &theirs);
    let _ = std::fs::remove_dir_all(dir);
    assert!(failed.is_empty(), "{case}:\n{}", failed.join("\n"));
}

/// A successor per pair on `url`, all started at once, each issuing [`SUCCESSOR_IDS`]: their
/// IDs and what they printed.
pub fn successors_issue(
    url: &str,
    namespace: &str,
    dir: &Path,
    what: &str,
) -> Vec<(Vec<u64>, Vec<String>)> {
    let successors: Vec<Issuer> = PAIRS
        .iter()
        .map(|&p| {
            Issuer::spawn(
                url,
                namespace,
                dir,
                &format!("{what}-{}", p.0),
                p,
                SUCCESSOR_IDS,
                TTL_MS,
            )
        })
        .collect();
    successors.into_iter().map(Issuer::finish).collect()
}

/// Prints, per pair, how many of the successor's IDs repeat the holder's; returns what went
/// wrong (a repeat, or a successor that did not issue all its IDs).
pub fn count(
    case: &str,
    ours: &[(Vec<u64>, Vec<String>)],
    theirs: &[(Vec<u64>, Vec<String>)],
) -> Vec<String> {
    let mut failed = Vec::new();
    for ((pair, (ours, held)), (theirs, said)) in PAIRS.iter().zip(ours).zip(theirs) {
        let n = repeated(ours, theirs);
        let started = said
            .iter()
            .find_map(|l| l.strip_prefix("STARTED "))
            .unwrap_or("not started");
        eprintln!(
            "{case}: {}: holder {} IDs, successor {} IDs (started {started}), repeated {n}",
            speed(*pair),
            ours.len(),
            theirs.len()
        );
        assert!(
            ours.len() > 1_000,
            "{case}: the holder issued {}: {held:?}",
            ours.len()
        );
        if n > 0 || theirs.len() as u64 != SUCCESSOR_IDS {
            failed.push(format!(
                "{}: repeated {n} of the holder's IDs in {} IDs\n  holder: {held:?}\n  successor: {said:?}",
                speed(*pair),
                theirs.len()
            ));
        }
    }
    failed
}
