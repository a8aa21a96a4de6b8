//! No ID twice across processes and restarts: real `rimeflake gen` processes on one state directory
//! (the embedded default): many at once, and SIGKILL followed by a restart with the clock set back.
//!
//! The clock is set back with libfaketime (`LD_PRELOAD`, wall clock only: the monotonic clock
//! stays real, so waits still end). Without it the restart test fails and says how to install
//! it: `make test` does (`apt-get install faketime`).

use rimeflake_testkit::support;
use support::libfaketime;
use support::{Rng, TempDir};

use rimeflake::Layout;
use std::collections::{BTreeMap, HashSet};
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_rimeflake");

/// The complete lines of `text` as IDs: a killed process may leave its last line cut short.
fn parse_ids(text: &str) -> Vec<u64> {
    let complete = match text.rfind('\n') {
        Some(end) => &text[..end],
        None => "",
    };
    complete
        .lines()
        .map(|l| l.parse().unwrap_or_else(|e| panic!("line {l:?}: {e}")))
        .collect()
}

#[test]
fn sixteen_processes_at_once_get_distinct_worker_ids_and_never_share_an_id() {
    const PROCESSES: usize = 16;
    const EACH: usize = 200_000;
    let dir = TempDir::new("sixteen");
    let children: Vec<_> = (0..PROCESSES)
        .map(|_| {
            Command::new(BIN)
                .args(["gen", "-n", &EACH.to_string(), "--state-dir"])
                .arg(&dir.0)
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("rimeflake gen starts")
        })
        .collect();
    // Each child's first line is read before any pipe is drained: a child prints an ID only once
    // it holds its lease, and none can finish (and free its worker ID for a later child) while
    // the rest of its output, far more than a pipe holds, is unread. So all 16 hold leases at
    // once, and a worker ID seen twice is a lease given twice, not one handed on.
    let started: Vec<_> = children
        .into_iter()
        .map(|mut child| {
            let mut out = BufReader::new(child.stdout.take().expect("stdout"));
            let mut first = String::new();
            out.read_line(&mut first).expect("a first line");
            (child, out, first)
        })
        .collect();
    let readers: Vec<_> = started
        .into_iter()
        .map(|(child, mut out, first)| {
            std::thread::spawn(move || {
                let mut stdout = first.into_bytes();
                out.read_to_end(&mut stdout).expect("stdout");
                let mut output = child.wait_with_output().expect("output");
                output.stdout = stdout;
                output
            })
        })
        .collect();
    let layout = Layout::default();
    let mut workers = HashSet::new();
    let mut all = Vec::with_capacity(PROCESSES * EACH);
    for (i, reader) in readers.into_iter().enumerate() {
        let out = reader.join().expect("a reader");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "process {i}: {}: {stderr}",
            out.status
        );
        let ids = parse_ids(&String::from_utf8(out.stdout).expect("utf-8"));
        assert_eq!(ids.len(), EACH, "process {i}: {stderr}");
        assert!(
            ids.windows(2).all(|w| w[0] < w[1]),
            "process {i}: not increasing"
        );
        let worker = layout.decode(ids[0]).expect("decodes").worker_id;
        for &id in [ids[EACH / 2], ids[EACH - 1]].iter() {
            assert_eq!(layout.decode(id).unwrap().worker_id, worker, "process {i}");
        }
        assert!(
            workers.insert(worker),
            "worker ID {worker} was leased twice at once"
        );
        all.extend(ids);
    }
    all.sort_unstable();
    let dup = all.windows(2).find(|w| w[0] == w[1]);
    assert!(dup.is_none(), "ID {:?} was issued twice", dup.map(|w| w[0]));
    assert_eq!(workers.len(), PROCESSES);
}

/// `rimeflake gen` with the wall clock set back by `back_ms` (libfaketime).
fn gen_set_back(lib: &Path, back_ms: u64, args: &[&str]) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.arg("gen")
        .args(args)
        .env("LD_PRELOAD", lib)
        .env(
            "FAKETIME",
            format!("-{}.{:03}", back_ms / 1000, back_ms % 1000),
        )
        .env("FAKETIME_DONT_FAKE_MONOTONIC", "1")
        .stdin(Stdio::null());
    cmd
}

#[test]
fn sigkill_then_restart_with_the_clock_set_back_never_repeats_an_id() {
    const CYCLES: usize = 200;
    const DAY_MS: u64 = 86_400_000;
    let lib = libfaketime();
    let layout = Layout::default();

    // libfaketime must really move the clock our binary reads, or this test proves nothing.
    let out = gen_set_back(&lib, DAY_MS, &["-n", "1", "--in-memory", "--worker", "1"])
        .output()
        .expect("rimeflake gen runs under libfaketime");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let id = parse_ids(&String::from_utf8_lossy(&out.stdout))[0];
    let behind =
        rimeflake::clock::system_now_ms() as i64 - layout.decode(id).unwrap().timestamp_ms as i64;
    assert!(
        (DAY_MS as i64 - 60_000..DAY_MS as i64 + 60_000).contains(&behind),
        "under FAKETIME=-1 day the binary's clock is {behind} ms behind, not a day: is {} \
         libfaketime?",
        lib.display()
    );

    let seed = std::env::var("RIMEFLAKE_PROC_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(rimeflake::clock::system_now_ms);
    let mut rng = Rng(seed);
    let dir = TempDir::new("sigkill");
    let out_path = dir.0.join("out.txt");
    let state_dir = dir.0.join("state");
    let mut all: Vec<u64> = Vec::new();
    // The IDs of each clock-id, per life, as [first, last]: a restart must start above every
    // earlier life's IDs of the same clock-id (it starts above the durable reservation).
    let mut ranges: BTreeMap<u64, Vec<(u64, u64, usize)>> = BTreeMap::new();
    let (mut killed, mut finished, mut failed, mut with_ids, mut killed_with_ids) = (0, 0, 0, 0, 0);
    let mut log = Vec::new();
    for cycle in 0..CYCLES {
        let back_ms = rng.log_range(1, DAY_MS);
        let count = rng.log_range(1_000, 1_000_000);
        let kill_after = rng.log_range(2, 100);
        let out_file = std::fs::File::create(&out_path).expect("the output file");
        let mut child = gen_set_back(&lib, back_ms, &["-n", &count.to_string(), "--worker", "7"])
            .arg("--state-dir")
            .arg(&state_dir)
            .stdout(out_file)
            .stderr(Stdio::piped())
            .spawn()
            .expect("rimeflake gen starts");
        std::thread::sleep(Duration::from_millis(kill_after));
        let _ = child.kill(); // SIGKILL; harmless if it has exited already
        let status = child.wait().expect("the child is reaped");
        let mut stderr = String::new();
        if let Some(mut e) = child.stderr.take() {
            let _ = std::io::Read::read_to_string(&mut e, &mut stderr);
        }
        let text = std::fs::read_to_string(&out_path).expect("the output");
        let ids = parse_ids(&text);
        match status.code() {
            None => killed += 1,
            Some(0) => finished += 1,
            Some(_) => failed += 1, // e.g. no clock-id free for a clock set far back
        }
        log.push(format!(
            "cycle {cycle}: clock back {back_ms} ms, -n {count}, kill after {kill_after} ms: \
             {status}, {} IDs {}",
            ids.len(),
            stderr.trim()
        ));
        if ids.is_empty() {
            continue;
        }
        with_ids += 1;
        if status.code().is_none() {
            killed_with_ids += 1;
        }
        // One life's IDs increase within each clock-id; a life may switch clock-ids at start.
        let mut start = 0;
        for i in 1..=ids.len() {
            let cid = |id| layout.decode(id).unwrap().clock_id;
            if i == ids.len() || cid(ids[i]) != cid(ids[start]) {
                let (first, last) = (ids[start], ids[i - 1]);
                assert!(
                    ids[start..i].windows(2).all(|w| w[0] < w[1]),
                    "cycle {cycle}: IDs not increasing\n{}",
                    log.join("\n")
                );
                let earlier = ranges.entry(cid(first)).or_default();
                if let Some(&(_, l, c)) = earlier.iter().find(|&&(_, l, _)| first <= l) {
                    panic!(
                        "cycle {cycle} (seed {seed}): ID {first} ({:?}) is not above ID {l} of \
                         cycle {c} under the same clock-id: the restart did not start above the \
                         durable reservation\n{}",
                        layout.decode(first),
                        log.join("\n")
                    );
                }
                earlier.push((first, last, cycle));
                start = i;
            }
        }
        all.extend(ids);
    }
    all.sort_unstable();
    let dup = all.windows(2).find(|w| w[0] == w[1]);
    let summary = format!(
        "seed {seed}: {CYCLES} cycles: {killed} killed, {finished} finished, {failed} failed at \
         start; {with_ids} printed IDs ({killed_with_ids} of them killed), {} IDs in all, clock-ids used {:?}",
        all.len(),
        ranges.keys().collect::<Vec<_>>()
    );
    eprintln!("{summary}");
    assert!(
        dup.is_none(),
        "ID {:?} was issued twice ({summary})\n{}",
        dup.map(|w| w[0]),
        log.join("\n")
    );
    // Not vacuous. Many cycles print nothing, as they should: a clock set back past every
    // clock-id's reservation waits (up to max_wait) for a free one, and a restart within the
    // reservation window waits for the clock to come within max_drift of the counter; the
    // kill comes first.
    assert!(
        with_ids >= 20 && killed_with_ids >= 5 && ranges.len() >= 3,
        "too few cycles issued IDs to prove anything: {summary}\n{}",
        log.join("\n")
    );
}

/// How the lock file of a running holder is tampered with.
#[derive(Clone, Copy, Debug)]
enum Tamper {
    Delete,
    MoveOver,
    Symlink,
}

/// A holder whose lock file is replaced stops before a newcomer repeats its IDs: process A
/// runs `rimeflake gen` on worker 5; its lock file is deleted,
/// replaced by `mv`, or replaced by a symlink; process B then asks for worker 5. Before the fix
/// B took the "free" worker ID and both issued the same IDs (75k-104k duplicates). Now A finds
/// out at its next save and stops at its fence, and B starts above A's last reservation (or,
/// for a symlink, is refused): no ID is issued twice.
#[test]
fn a_holder_whose_lock_file_is_deleted_or_replaced_stops_before_a_newcomer_repeats_its_ids() {
    for tamper in [Tamper::Delete, Tamper::MoveOver, Tamper::Symlink] {
        let dir = TempDir::new("tamper");
        let state_dir = dir.0.join("state");
        let lock = state_dir.join("default/worker-00005.lock");
        let spawn = |name: &str| {
            let out = std::fs::File::create(dir.0.join(name)).expect("an output file");
            Command::new(BIN)
                .args(["gen", "-n", "50000000", "--worker", "5", "--state-dir"])
                .arg(&state_dir)
                .stdin(Stdio::null())
                .stdout(out)
                .stderr(Stdio::piped())
                .spawn()
                .expect("rimeflake gen starts")
        };
        let mut a = spawn("a.txt");
        // A holds the lease once it has printed IDs.
        for _ in 0..500 {
            if std::fs::metadata(dir.0.join("a.txt")).is_ok_and(|m| m.len() > 1000) {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        match tamper {
            Tamper::Delete => std::fs::remove_file(&lock).unwrap(),
            Tamper::MoveOver => {
                let other = state_dir.join("default/other");
                std::fs::write(&other, "").unwrap();
                std::fs::rename(&other, &lock).unwrap();
            }
            Tamper::Symlink => {
                let other = dir.0.join("elsewhere");
                std::fs::write(&other, "").unwrap();
                std::fs::remove_file(&lock).unwrap();
                std::os::unix::fs::symlink(&other, &lock).unwrap();
            }
        }
        let mut b = spawn("b.txt");
        std::thread::sleep(Duration::from_millis(2500));
        let _ = b.kill();
        // A stops at its fence at once, and fails once its wait there (max_wait, 5 s) ends:
        // waited for in one case only, to keep the test short.
        let wait_for_a = matches!(tamper, Tamper::MoveOver);
        for _ in 0..if wait_for_a { 1000 } else { 0 } {
            if a.try_wait().unwrap().is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let mut stderr = Vec::new();
        for (name, child) in [("A", &mut a), ("B", &mut b)] {
            let _ = child.kill();
            let status = child.wait().unwrap();
            let mut text = String::new();
            if let Some(mut e) = child.stderr.take() {
                let _ = std::io::Read::read_to_string(&mut e, &mut text);
            }
            stderr.push(format!("{name}: {status}: {}", text.trim()));
        }
        let a_ids = parse_ids(&std::fs::read_to_string(dir.0.join("a.txt")).unwrap());
        let b_ids = parse_ids(&std::fs::read_to_string(dir.0.join("b.txt")).unwrap());
        let a_set: HashSet<u64> = a_ids.iter().copied().collect();
        let dups = b_ids.iter().filter(|id| a_set.contains(id)).count();
        let summary = format!(
            "{tamper:?}: A issued {}, B issued {}, {dups} issued by both\n{}",
            a_ids.len(),
            b_ids.len(),
            stderr.join("\n")
        );
        eprintln!("{summary}");
        assert!(a_ids.len() > 1000, "A never ran: {summary}");
        assert_eq!(dups, 0, "{summary}");
        // A found out and said why; B ran (or, for a symlink, was refused and said why).
        if wait_for_a {
            assert!(stderr[0].contains("lock file"), "{summary}");
        }
        match tamper {
            Tamper::Symlink => assert!(stderr[1].contains("symbolic link"), "{summary}"),
            _ => assert!(b_ids.len() > 1000, "B never ran: {summary}"),
        }
    }
}
