//! SIGINT, SIGTERM and SIGHUP to real `rimeflake gen` and `rimeflake bench` processes, on the
//! embedded default (a state directory) and on a real Redis (started by the harness in
//! crates/rimeflake-testkit/src/servers.rs): the generator is closed (the lease released, the
//! state stored as closed), the process ends by the signal (a shell shows 130, 143 or 129), and
//! a restart on the same worker ID starts at once. A second signal ends the process at once; a
//! signal ends a start-up wait. Before, the signal killed the process: the state stayed
//! "running, or stopped without close", and on Redis the lease stayed held for its TTL, so the
//! restart was refused ("is held by another process").

use rimeflake_testkit::servers::Redis;
use rimeflake_testkit::support::{libfaketime, without_rimeflake_env, TempDir};

use rimeflake::Layout;
use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_rimeflake");

const SIGNALS: [(libc::c_int, &str); 3] = [
    (libc::SIGINT, "SIGINT"),
    (libc::SIGTERM, "SIGTERM"),
    (libc::SIGHUP, "SIGHUP"),
];

/// A lease far longer than the test: a lease left held cannot have expired by the restart.
const LONG_TTL_MS: &str = "600000";

fn command(args: &[&str]) -> Command {
    let mut cmd = Command::new(BIN);
    without_rimeflake_env(&mut cmd)
        .args(args)
        .env("RIMEFLAKE_NO_DURABILITY_WARNING", "1")
        .env("RIMEFLAKE_LEASE_TTL_MS", LONG_TTL_MS)
        .stdin(Stdio::null());
    cmd
}

fn run(args: &[&str]) -> Output {
    command(args).output().expect("rimeflake runs")
}

fn text(out: &Output) -> String {
    format!(
        "{}: stdout {:?}, stderr {:?}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn signal(child: &Child, sig: libc::c_int) {
    // SAFETY: kill(2) on our own child, which is not reaped yet.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, sig) }, 0);
}

/// Waits for `child`, at most a minute: a child that outlives that was not stopped.
fn wait(child: &mut Child, what: &str) -> ExitStatus {
    for _ in 0..6000 {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return status;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("{what}: still running a minute after its signal");
}

fn stderr_of(child: &mut Child) -> String {
    let mut text = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut text);
    }
    text
}

/// Until `path` holds `bytes`: the process has started and holds its lease.
fn wait_for_output(path: &Path, bytes: u64, child: &mut Child) {
    for _ in 0..3000 {
        if std::fs::metadata(path).is_ok_and(|m| m.len() >= bytes) {
            return;
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!("ended before its signal: {status}: {}", stderr_of(child));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("no output after 30 s: {}", path.display());
}

/// `rimeflake gen` on worker 3 with `place` (a state directory or a backend), its IDs written
/// to `out`, until a signal stops it. Returns the IDs it wrote, after checking that it ended by
/// the signal, closed its generator, and left whole lines.
fn gen_until(sig: libc::c_int, name: &str, place: &[&str], out: &Path) -> Vec<u64> {
    let file = std::fs::File::create(out).unwrap();
    let mut child = command(&["gen", "-n", "1000000000", "--worker", "3"])
        .args(place)
        .stdout(file)
        .stderr(Stdio::piped())
        .spawn()
        .expect("rimeflake gen starts");
    wait_for_output(out, 100_000, &mut child);
    signal(&child, sig);
    let status = wait(&mut child, name);
    let stderr = stderr_of(&mut child);
    assert_eq!(
        status.signal(),
        Some(sig),
        "{name}: {status}, stderr {stderr:?}"
    );
    assert_eq!(stderr, "", "{name}");
    let written = std::fs::read_to_string(out).unwrap();
    assert!(written.ends_with('\n'), "{name}: a line cut short");
    written.lines().map(|l| l.parse().unwrap()).collect()
}

/// `state show` of `place` says worker 3 is free and its state closed: the lease was released
/// and the state stored as closed.
fn closed_and_free(name: &str, place: &[&str]) {
    let shown = run(&[&["state", "show"], place].concat());
    let shown = String::from_utf8_lossy(&shown.stdout).to_string();
    assert!(
        shown.contains("worker     3  free") && shown.contains("closed cleanly"),
        "{name}: {shown}"
    );
}

/// A restart on worker 3 gets an ID at once, above the last one of the life before.
fn restart_continues(name: &str, place: &[&str], last: u64) {
    let out = run(&[&["gen", "-n", "1", "--worker", "3"], place].concat());
    assert!(out.status.success(), "{name}: the restart: {}", text(&out));
    let id: u64 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    assert_eq!(Layout::default().decode(id).unwrap().worker_id, 3, "{name}");
    assert!(id > last, "{name}: {id} after {last}");
}

#[test]
fn gen_on_a_state_directory_closes_on_each_signal_and_ends_by_it() {
    for (sig, name) in SIGNALS {
        let dir = TempDir::new("signal-local");
        let state = dir.0.join("state");
        let place = ["--state-dir", state.to_str().unwrap()];
        let ids = gen_until(sig, name, &place, &dir.0.join("out"));
        closed_and_free(name, &place);
        restart_continues(name, &place, *ids.last().unwrap());
    }
}

#[test]
fn gen_on_redis_releases_its_lease_on_each_signal_so_a_restart_takes_the_worker_id_at_once() {
    let redis = Redis::start();
    let url = redis.url();
    for (sig, name) in SIGNALS {
        let dir = TempDir::new("signal-redis");
        let ns = format!("sig-{sig}");
        let place = ["--backend", &url, "--namespace", &ns];
        let ids = gen_until(sig, name, &place, &dir.0.join("out"));
        closed_and_free(name, &place);
        restart_continues(name, &place, *ids.last().unwrap());
    }
}

/// The reader stopped reading (`| less` at a full screen): the write blocked on the full pipe
/// gives up at the signal, the generator is closed all the same.
#[test]
fn gen_whose_reader_stopped_reading_still_closes_on_sigterm() {
    let redis = Redis::start();
    let url = redis.url();
    let place = ["--backend", &url, "--namespace", "stuck"];
    let mut child = command(&["gen", "-n", "1000000000", "--worker", "3"])
        .args(place)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("rimeflake gen starts");
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 4096];
    stdout.read_exact(&mut first).expect("IDs");
    // No more reading: the pipe fills at once, and the process blocks writing to it.
    std::thread::sleep(Duration::from_millis(300));
    signal(&child, libc::SIGTERM);
    let status = wait(&mut child, "with its reader stopped");
    assert_eq!(status.signal(), Some(libc::SIGTERM), "{status}");
    closed_and_free("with its reader stopped", &place);
    restart_continues("with its reader stopped", &place, 0);
}

/// A close that cannot finish (the server paused, as a hung host) is cut short by a second
/// signal: the process ends at once, before the close's own timeout would have said why.
#[test]
fn a_second_signal_ends_gen_at_once_while_it_closes() {
    let redis = Redis::start();
    let url = redis.url();
    let dir = TempDir::new("signal-twice");
    let out = dir.0.join("out");
    let mut child = command(&["gen", "-n", "1000000000", "--worker", "3"])
        .args(["--backend", &url])
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(Stdio::piped())
        .spawn()
        .expect("rimeflake gen starts");
    wait_for_output(&out, 100_000, &mut child);
    redis.pause();
    signal(&child, libc::SIGINT);
    // The first signal does not end it: it is closing, and the server does not answer.
    std::thread::sleep(Duration::from_millis(300));
    if let Some(status) = child.try_wait().unwrap() {
        redis.resume();
        panic!(
            "the first signal ended it: {status}: {}",
            stderr_of(&mut child)
        );
    }
    signal(&child, libc::SIGINT);
    let status = wait(&mut child, "after the second signal");
    redis.resume();
    let stderr = stderr_of(&mut child);
    assert_eq!(status.signal(), Some(libc::SIGINT), "{status}: {stderr}");
    // The close had not ended: it would have said that it could not reach the server.
    assert_eq!(stderr, "");
}

#[test]
fn bench_on_redis_closes_on_sigint() {
    let redis = Redis::start();
    let url = redis.url();
    let mut child = command(&["bench", "--seconds", "600", "--worker", "3"])
        .args(["--backend", &url])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("rimeflake bench starts");
    // The progress line: it runs, and holds its lease.
    let mut progress = [0u8; 16];
    child
        .stderr
        .as_mut()
        .unwrap()
        .read_exact(&mut progress)
        .expect("a progress line");
    signal(&child, libc::SIGINT);
    let status = wait(&mut child, "bench");
    assert_eq!(
        status.signal(),
        Some(libc::SIGINT),
        "{status}: {}",
        stderr_of(&mut child)
    );
    closed_and_free("bench", &["--backend", &url]);
    restart_continues("bench", &["--backend", &url], 0);
}

/// A start that waits for the clock (set back 20 s behind its reservation, on a layout without
/// clock-ids: it would wait out max_wait and then fail) ends at the signal, saying nothing.
#[test]
fn a_signal_ends_a_start_up_wait() {
    let dir = TempDir::new("signal-start");
    let state = dir.0.join("state");
    let place = [
        "--layout",
        "twitter",
        "--worker",
        "2",
        "--state-dir",
        state.to_str().unwrap(),
    ];
    let first = run(&[&["gen", "-n", "1000"], &place[..]].concat());
    assert!(first.status.success(), "{}", text(&first));
    let mut child = command(&[&["gen", "-n", "1"], &place[..]].concat())
        .env("LD_PRELOAD", libfaketime())
        .env("FAKETIME", "-20")
        .env("FAKETIME_DONT_FAKE_MONOTONIC", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("rimeflake gen starts");
    std::thread::sleep(Duration::from_millis(1000));
    signal(&child, libc::SIGTERM);
    let status = wait(&mut child, "the start");
    let out = child.wait_with_output().unwrap();
    assert_eq!(status.signal(), Some(libc::SIGTERM), "{}", text(&out));
    assert!(
        out.stdout.is_empty() && out.stderr.is_empty(),
        "{}",
        text(&out)
    );
}
