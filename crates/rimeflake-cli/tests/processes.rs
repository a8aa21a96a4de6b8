//! Issue 4, item 9: real `rimeflake gen` processes on one state directory (the embedded
//! default): many at once, and SIGKILL followed by a restart with the clock set back.
//!
//! The clock is set back with libfaketime (`LD_PRELOAD`, wall clock only: the monotonic clock
//! stays real, so waits still end). Without it the restart test fails and says how to install
//! it: `make test` does (`apt-get install faketime`).

#[path = "../../rimeflake/tests/support/mod.rs"]
mod support;
use support::{Rng, TempDir};

use rimeflake::Layout;
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
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
    // Nobody reads the pipes until all 16 have started: each must write far more than a pipe
    // holds, so none can finish (and free its worker ID) early, and all 16 hold leases at once.
    let readers: Vec<_> = children
        .into_iter()
        .map(|child| std::thread::spawn(move || child.wait_with_output().expect("output")))
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

/// libfaketime's library: `FAKETIME_LIB`, else where Debian's `faketime` package puts it.
fn libfaketime() -> PathBuf {
    if let Some(lib) = std::env::var_os("FAKETIME_LIB") {
        return PathBuf::from(lib);
    }
    let mut dirs = vec![
        PathBuf::from("/usr/lib/faketime"),
        PathBuf::from("/usr/local/lib/faketime"),
        PathBuf::from("/usr/lib64/faketime"),
    ];
    if let Ok(entries) = std::fs::read_dir("/usr/lib") {
        dirs.extend(entries.flatten().map(|e| e.path().join("faketime")));
    }
    for dir in &dirs {
        // The multi-threaded variant: `gen` has a reservation thread.
        for name in ["libfaketimeMT.so.1", "libfaketime.so.1"] {
            if dir.join(name).is_file() {
                return dir.join(name);
            }
        }
    }
    panic!(
        "libfaketime is not installed, and this test needs it to set the clock back across \
         restarts: run `make test`, which installs it (apt-get install faketime), or set \
         FAKETIME_LIB to libfaketime.so.1"
    );
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
