//! The `rimeflake` binary, run as a real process.

use rimeflake_testkit::support;
use support::TempDir;

use rimeflake::{parse, Encoding, Layout};
use serde_json::Value;
use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Output, Stdio};

/// Options of the tests that check formats rather than state: no state on disk, worker 1.
const MEM: [&str; 3] = ["--in-memory", "--worker", "1"];

fn rimeflake(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rimeflake"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("the rimeflake binary runs")
}

fn ok(args: &[&str]) -> String {
    let out = rimeflake(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "rimeflake {args:?}: {stderr}");
    String::from_utf8(out.stdout).expect("utf-8 output")
}

fn gen(count: usize, extra: &[&str]) -> Vec<String> {
    let n = count.to_string();
    let mut args = vec!["gen", "-n", &n];
    args.extend(MEM);
    args.extend(extra);
    ok(&args).lines().map(str::to_string).collect()
}

/// `decode --json` of `texts`, fed through stdin (as `rimeflake gen | rimeflake decode` does).
fn decode_json(texts: &[String], extra: &[&str]) -> Vec<Value> {
    let mut args = vec!["decode", "--json"];
    args.extend(extra);
    let mut child = Command::new(env!("CARGO_BIN_EXE_rimeflake"))
        .args(&args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = texts.join("\n") + "\n";
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is one JSON object"))
        .collect()
}

/// Checks that `out` holds `n` decimal IDs, strictly increasing.
fn assert_increasing(out: &str, n: usize) {
    let mut count = 0;
    let mut last = 0u64;
    for line in out.lines() {
        let id: u64 = line.parse().expect("a decimal ID a line");
        assert!(id > last, "{id} after {last}");
        last = id;
        count += 1;
    }
    assert_eq!(count, n);
}

#[test]
fn gen_prints_a_million_distinct_increasing_ids() {
    // The embedded default: a leased worker ID and durable state, here in a directory of its own.
    let dir = TempDir::new("million");
    assert_increasing(
        &ok(&["gen", "-n", "1000000", "--state-dir", dir.path()]),
        1_000_000,
    );
}

#[test]
fn gen_in_memory_prints_a_million_distinct_increasing_ids() {
    assert_increasing(
        &ok(&["gen", "-n", "1000000", "--in-memory", "--worker", "1"]),
        1_000_000,
    );
}

#[test]
fn decode_round_trips_gen_in_every_format() {
    let layout = Layout::default();
    for (name, enc) in [
        ("dec", Encoding::Decimal),
        ("hex", Encoding::Hex),
        ("base62", Encoding::Base62),
        ("base32", Encoding::Base32),
    ] {
        let texts = gen(3000, &["--format", name]);
        let ids: Vec<u64> = texts.iter().map(|t| parse(t, enc).unwrap()).collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "{name}: increasing");
        // The fixed-width forms sort as text the way the IDs sort as numbers.
        if name != "dec" {
            assert!(
                texts.windows(2).all(|w| w[0] < w[1]),
                "{name}: sorted as text"
            );
        }
        let decoded = decode_json(&texts, &["--format", name]);
        assert_eq!(decoded.len(), ids.len(), "{name}");
        for (id, d) in ids.iter().zip(&decoded) {
            let parts = layout.decode(*id).unwrap();
            assert_eq!(d["id"], id.to_string(), "{name}");
            assert_eq!(d["clock_id"], parts.clock_id);
            assert_eq!(d["timestamp_ms"], parts.timestamp_ms);
            assert_eq!(d["worker_id"], 1);
            assert_eq!(d["sequence"], parts.sequence);
            assert_eq!(d["layout"], "default");
            assert_eq!(d["expires_at"], "2093-09-06T15:47:35.552Z");
        }
    }
}

#[test]
fn gen_json_carries_the_id_as_a_string_and_its_parts() {
    let layout = Layout::twitter();
    let lines = gen(500, &["--format", "json", "--layout", "twitter"]);
    assert_eq!(lines.len(), 500);
    for line in lines {
        let v: Value = serde_json::from_str(&line).unwrap();
        let id: u64 = v["id"].as_str().expect("id is a string").parse().unwrap();
        let parts = layout.decode(id).unwrap();
        assert_eq!(v["worker_id"], 1);
        assert_eq!(v["timestamp_ms"], parts.timestamp_ms);
        assert_eq!(v["sequence"], parts.sequence);
        let time = v["time"].as_str().unwrap();
        assert!(time.len() == 24 && time.ends_with('Z'), "{time}");
    }
}

#[test]
fn decode_prints_a_table_with_the_layout_and_its_expiry() {
    // 2024-01-01T00:00:00.005Z, clock-id 1, worker 3, sequence 7 in the default layout.
    let id = Layout::default()
        .compose(&rimeflake::Parts {
            clock_id: 1,
            timestamp_ms: 1_704_067_200_005,
            datacenter_id: None,
            worker_id: 3,
            sequence: 7,
        })
        .unwrap();
    let out = ok(&["decode", &id.to_string()]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert!(
        lines[0].contains("expires_at 2093-09-06T15:47:35.552Z"),
        "{out}"
    );
    let row: Vec<&str> = lines[2].split_whitespace().collect();
    assert_eq!(
        row,
        [
            id.to_string().as_str(),
            "1",
            "2024-01-01T00:00:00.005Z",
            "3",
            "7"
        ]
    );
}

#[test]
fn every_preset_generates_and_decodes() {
    for (preset, extra) in [
        ("default", vec![]),
        ("twitter", vec![]),
        ("sonyflake", vec![]),
        ("sonyflake_v2", vec![]),
        ("js_safe", vec![]),
        ("baidu", vec![",epoch_ms=1735689600000"]),
    ] {
        let layout = format!("{preset}{}", extra.concat());
        let args = vec!["--layout", &layout];
        let texts = gen(50, &args);
        let decoded = decode_json(&texts, &args);
        assert_eq!(decoded.len(), 50, "{preset}");
        assert!(decoded
            .iter()
            .all(|d| d["layout"] == preset && d["worker_id"] == 1));
    }
}

#[test]
fn bad_arguments_fail_with_one_line_and_no_panic() {
    let cases: &[(&[&str], i32)] = &[
        (&[], 2),
        (&["nope"], 2),
        (&["gen", "--format", "xml"], 2),
        (&["gen", "-n", "abc"], 2),
        (&["gen", "--in-memory"], 2), // needs --worker
        (
            &["gen", "--layout", "nope", "--in-memory", "--worker", "1"],
            2,
        ),
        (
            &["gen", "--layout", "baidu", "--in-memory", "--worker", "1"],
            2,
        ),
        (&["gen", "--worker", "5000", "--in-memory"], 2),
        (
            &["gen", "--in-memory", "--worker", "1", "--state-dir", "/tmp"],
            2,
        ),
        (
            &[
                "gen",
                "--layout",
                "twitter",
                "--baidu-epoch-ms",
                "1",
                "--in-memory",
                "--worker",
                "1",
            ],
            2,
        ),
        // Baidu's own epoch ran out in 2024.
        (
            &[
                "gen",
                "--layout",
                "baidu",
                "--baidu-epoch-ms",
                "1463673600000",
                "--in-memory",
                "--worker",
                "1",
            ],
            2,
        ),
        (&["bench", "--seconds", "0"], 2),
        (&["bench", "--threads", "0"], 2),
        (&["decode", "12a"], 1),
        (&["decode", "--format", "base62", "123"], 1),
        (&["decode", "9223372036854775808"], 1), // the sign bit
        (&["decode", "--layout", "js_safe", "9007199254740992"], 1), // bit 53
        (&["decode", "18446744073709551616"], 1),
    ];
    for (args, code) in cases {
        let out = rimeflake(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(*code),
            "rimeflake {args:?}: {stderr}"
        );
        assert_eq!(
            stderr.lines().count(),
            1,
            "rimeflake {args:?}: one line: {stderr}"
        );
        assert!(
            stderr.starts_with("rimeflake: error: "),
            "rimeflake {args:?}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "rimeflake {args:?}: {stderr}");
        assert!(
            out.stdout.is_empty(),
            "rimeflake {args:?}: nothing on stdout"
        );
    }
}

#[test]
fn help_and_version_succeed() {
    let help = ok(&["--help"]);
    for word in ["gen", "decode", "bench", "Exit status"] {
        assert!(help.contains(word), "{help}");
    }
    assert!(ok(&["gen", "--help"]).contains("--in-memory"));
    assert!(ok(&["--version"]).starts_with("rimeflake "));
}

#[test]
fn a_reader_that_stops_early_ends_gen_quietly() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rimeflake"))
        .args(["gen", "-n", "1000000", "--in-memory", "--worker", "1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut seen = HashSet::new();
    for _ in 0..10 {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        assert!(seen.insert(line));
    }
    drop(reader); // as `| head` does
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.is_empty(), "quiet on a closed pipe: {stderr}");
}

#[test]
fn bench_reports_throughput_and_cpu_use() {
    let out = rimeflake(&[
        "bench",
        "--threads",
        "2",
        "--seconds",
        "0.3",
        "--layout",
        "twitter",
        "--in-memory",
        "--worker",
        "1",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains('\r'),
        "a progress line on stderr: {stderr:?}"
    );
    for word in [
        "2 thread(s)",
        "IDs/s",
        "steady",
        "ns/ID",
        "CPU use",
        "layout twitter",
    ] {
        assert!(stdout.contains(word), "{word}: {stdout}");
    }
}

/// The embedded default with a state directory: a rerun continues above the first run, and
/// `--worker` takes that worker ID; a namespace keeps the layout it was made with.
#[test]
fn gen_with_a_state_dir_continues_above_the_last_run() {
    let dir = TempDir::new("rerun");
    let d = dir.path();
    let ids = |out: String| -> Vec<u64> { out.lines().map(|l| l.parse().unwrap()).collect() };
    let a = ids(ok(&[
        "gen",
        "-n",
        "2000",
        "--state-dir",
        d,
        "--namespace",
        "t",
    ]));
    let b = ids(ok(&[
        "gen",
        "-n",
        "2000",
        "--state-dir",
        d,
        "--namespace",
        "t",
    ]));
    assert_eq!((a.len(), b.len()), (2000, 2000));
    assert!(a.windows(2).all(|w| w[0] < w[1]) && b.windows(2).all(|w| w[0] < w[1]));
    assert!(a[1999] < b[0], "the rerun continues above the first run");
    let args = [
        "gen",
        "-n",
        "3",
        "--state-dir",
        d,
        "--namespace",
        "t",
        "--worker",
        "9",
        "--format",
        "json",
    ];
    for line in ok(&args).lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["worker_id"], 9);
    }
    // Another layout in the same namespace is refused: a configuration error, one line.
    let out = rimeflake(&[
        "gen",
        "--state-dir",
        d,
        "--namespace",
        "t",
        "--layout",
        "twitter",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("rimeflake: error: namespace t"),
        "{stderr}"
    );
}

/// While one process holds a worker ID, another gets the next free one, and asking for the held
/// one by number fails at run time (a lease error) with one line.
#[test]
fn processes_sharing_a_state_dir_never_share_a_worker_id() {
    let dir = TempDir::new("lease");
    let mut holder = Command::new(env!("CARGO_BIN_EXE_rimeflake"))
        .args(["bench", "--seconds", "30", "--state-dir", dir.path()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The first progress line means the holder has its lease (worker 0, the lowest free one).
    let mut stderr = BufReader::new(holder.stderr.take().unwrap());
    let mut first = Vec::new();
    stderr.read_until(b'\r', &mut first).unwrap();
    stderr.read_until(b'\r', &mut first).unwrap();

    let json = ok(&[
        "gen",
        "-n",
        "2",
        "--state-dir",
        dir.path(),
        "--format",
        "json",
    ]);
    for line in json.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["worker_id"], 1, "the next free worker ID: {line}");
    }
    let out = rimeflake(&["gen", "--worker", "0", "--state-dir", dir.path()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("held by another process"), "{err}");

    let _ = holder.kill();
    let _ = holder.wait();
}

#[test]
fn state_show_lists_leases_clock_ids_reservations_and_expiry() {
    let dir = TempDir::new("show");
    let d = dir.path();
    ok(&["gen", "-n", "3", "--state-dir", d, "--namespace", "orders"]);
    ok(&[
        "gen",
        "-n",
        "3",
        "--state-dir",
        d,
        "--namespace",
        "tw",
        "--layout",
        "twitter",
        "--worker",
        "9",
    ]);
    let shown = ok(&["state", "show", "--state-dir", d]);
    assert!(shown.contains("namespace orders: default ("), "{shown}");
    assert!(shown.contains("expires_at 2093-"), "{shown}");
    assert!(shown.contains("namespace tw: twitter ("), "{shown}");
    assert!(shown.contains("worker     9  free"), "{shown}");
    assert!(shown.contains("closed cleanly"), "{shown}");
    assert!(shown.contains("clock-id 0: reserved to"), "{shown}");

    let missing = rimeflake(&["state", "show", "--state-dir", &format!("{d}/nope")]);
    assert_eq!(missing.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("no state directory"), "{stderr}");
}

/// Flips every byte of a state file, so both of its slots rot: no valid record is left.
fn rot_both_slots(file: &std::path::Path) {
    let bytes: Vec<u8> = std::fs::read(file)
        .unwrap()
        .iter()
        .map(|b| b ^ 0x5a)
        .collect();
    std::fs::write(file, bytes).unwrap();
}

/// `state reset` asks for what it needs and changes nothing else: on a missing file it says it does
/// not exist (exit 1) and leaves no lock file; on a namespace of another layout it reads the layout
/// from the namespace; with the high-water file lost it refuses, names the evidence it takes, and
/// takes it.
#[test]
fn state_reset_says_what_is_missing_reads_the_layout_and_takes_evidence() {
    let dir = TempDir::new("cli-reset");
    let d = dir.path();
    let ns = dir.0.join("tw");
    let ids = |out: &str| -> Vec<u64> { out.lines().map(|l| l.parse().unwrap()).collect() };
    let run = ["--layout", "twitter", "--namespace", "tw", "--state-dir", d];
    let mut gen_args = vec!["gen", "-n", "1000", "--worker", "2"];
    gen_args.extend(run);
    let before = ids(&ok(&gen_args));

    // A worker ID that never ran: nothing to reset (done, exit 0), no stray lock file.
    let out = rimeflake(&[
        "state",
        "reset",
        "--worker",
        "9",
        "--namespace",
        "tw",
        "--state-dir",
        d,
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.starts_with("nothing to reset: worker 9 of namespace tw"),
        "{said}"
    );
    assert!(said.contains("does not exist"), "{said}");
    assert!(!ns.join("worker-00009.lock").exists(), "a stray lock file");

    // A readable state is not reset.
    let reset = [
        "state",
        "reset",
        "--worker",
        "2",
        "--namespace",
        "tw",
        "--state-dir",
        d,
    ];
    assert_eq!(rimeflake(&reset).status.code(), Some(2));

    // Corrupt: reset without --layout (read from the namespace), from the high-water file.
    rot_both_slots(&ns.join("worker-00002.state"));
    let text = ok(&reset);
    assert!(text.contains("high-water"), "{text}");
    assert!(text.contains("copied to"), "{text}");
    let after = ids(&ok(&gen_args));
    assert!(after[0] > *before.last().unwrap());

    // Corrupt, and the high-water file lost too: refused, with what it needs.
    rot_both_slots(&ns.join("worker-00002.state"));
    std::fs::remove_file(ns.join("worker-00002.hw")).unwrap();
    let out = rimeflake(&reset);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    for needle in ["--above-id", "--reserve-until", "high-water"] {
        assert!(stderr.contains(needle), "{needle}: {stderr}");
    }
    let last = after.last().unwrap().to_string();
    let mut with_id = reset.to_vec();
    with_id.extend(["--above-id", &last]);
    let text = ok(&with_id);
    assert!(text.contains("no ID above"), "{text}");
    let again = ids(&ok(&gen_args));
    assert!(again[0] > *after.last().unwrap());

    // --reserve-until takes ISO 8601; a bad time is a usage error.
    rot_both_slots(&ns.join("worker-00002.state"));
    let mut bad = reset.to_vec();
    bad.extend(["--reserve-until", "tomorrow"]);
    assert_eq!(rimeflake(&bad).status.code(), Some(2));
    let until = rimeflake::frontend::iso8601(rimeflake::clock::system_now_ms() + 2_000);
    let mut with_time = reset.to_vec();
    with_time.extend(["--reserve-until", &until]);
    let text = ok(&with_time);
    assert!(text.contains("reserve_until"), "{text}");
}

/// Unmounts on drop.
struct Mount(std::path::PathBuf);

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// A failed reset changes nothing: a reset on a full disk. The old reset moved the corrupt file
/// aside before the new state was durable, so a failed write left no state at all and the next
/// generator started as a new worker (~900,000 duplicates). Now the failed reset changes nothing:
/// the corrupt file stays, and generators keep refusing until a reset succeeds. Needs root (a
/// 64 KiB tmpfs is mounted); CI runs as root.
#[test]
fn a_reset_that_fails_on_a_full_disk_leaves_the_corrupt_file_in_place() {
    let dir = TempDir::new("cli-reset-full");
    let mnt = dir.0.join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs"])
        .arg(&mnt)
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        assert_ne!(
            // SAFETY: geteuid has no preconditions and cannot fail.
            unsafe { libc::geteuid() },
            0,
            "root could not mount a tmpfs"
        );
        eprintln!("not root: the full-disk reset test needs to mount a tmpfs; skipped");
        return;
    }
    let _mount = Mount(mnt.clone());
    let state = mnt.join("state");
    let s = state.to_str().unwrap();
    let gen_args = ["gen", "-n", "1000", "--worker", "4", "--state-dir", s];
    let before: Vec<u64> = ok(&gen_args).lines().map(|l| l.parse().unwrap()).collect();
    let file = state.join("default/worker-00004.state");
    rot_both_slots(&file);
    let corrupt = std::fs::read(&file).unwrap();
    // Fill the file system.
    let mut filler = std::fs::File::create(mnt.join("filler")).unwrap();
    while filler.write_all(&[0u8; 4096]).is_ok() {}
    drop(filler);

    let reset = ["state", "reset", "--worker", "4", "--state-dir", s];
    let out = rimeflake(&reset);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("nothing was changed"), "{stderr}");
    assert!(!stderr.contains("rewritten on the next save"), "{stderr}");
    assert_eq!(
        std::fs::read(&file).unwrap(),
        corrupt,
        "the corrupt file was touched"
    );
    let out = rimeflake(&gen_args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "a generator started after a failed reset"
    );
    assert!(stderr.contains("corrupt state file"), "{stderr}");

    std::fs::remove_file(mnt.join("filler")).unwrap();
    ok(&reset);
    let after: Vec<u64> = ok(&gen_args).lines().map(|l| l.parse().unwrap()).collect();
    assert!(after[0] > *before.last().unwrap());
}
