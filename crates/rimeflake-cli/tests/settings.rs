//! The CLI takes what the core resolves: layout specs on every subcommand, the environment
//! (RIMEFLAKE_WORKER_ID, RIMEFLAKE_LAYOUT, RIMEFLAKE_BACKEND, RIMEFLAKE_STATE_DIR), the default
//! namespace that follows the layout, warnings on stderr; and it decodes peers' IDs.

use rimeflake_testkit::support;
use support::TempDir;
mod binary;
use binary::{run, run_with};

use serde_json::Value;
use std::path::PathBuf;
use std::process::Output;

fn stdout_ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn config_error(out: &Output, needle: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.starts_with("rimeflake: error: "), "{stderr}");
    assert!(stderr.contains(needle), "{needle:?} not in {stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

fn json_lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn the_worker_id_comes_from_the_flag_then_the_environment_then_a_lease() {
    let dir = TempDir::new("cli-env-worker");
    let d = dir.path();
    let gen_json = |extra: &[&str], env: &[(&str, &str)]| {
        let mut args = vec!["gen", "--format", "json", "--state-dir", d];
        args.extend(extra);
        json_lines(&stdout_ok(&run(&args, env)))[0]["worker_id"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(gen_json(&[], &[("RIMEFLAKE_WORKER_ID", "42")]), 42);
    assert_eq!(
        gen_json(&["--worker", "7"], &[("RIMEFLAKE_WORKER_ID", "42")]),
        7
    );
    assert_eq!(gen_json(&[], &[]), 0, "a lease, the lowest free worker ID");
    assert_eq!(
        gen_json(&[], &[("RIMEFLAKE_WORKER_ID", "")]),
        0,
        "empty is unset"
    );
    for bad in ["abc", "-1", "1.5", "1024"] {
        let out = run(&["gen", "--state-dir", d], &[("RIMEFLAKE_WORKER_ID", bad)]);
        config_error(&out, "RIMEFLAKE_WORKER_ID");
    }
    config_error(
        &run(&["gen", "--state-dir", d, "--worker", "-1"], &[]),
        "--worker",
    );
    // The memory backend from the environment takes the environment's worker ID.
    let out = run(
        &["gen", "--format", "json"],
        &[
            ("RIMEFLAKE_BACKEND", "memory"),
            ("RIMEFLAKE_WORKER_ID", "9"),
        ],
    );
    assert_eq!(json_lines(&stdout_ok(&out))[0]["worker_id"], 9);
    config_error(
        &run(
            &["gen"],
            &[("RIMEFLAKE_BACKEND", "rediss://localhost?sslmode=require")],
        ),
        "RIMEFLAKE_BACKEND",
    );
}

#[test]
fn layouts_come_from_a_preset_a_spec_or_the_environment_on_every_subcommand() {
    let dir = TempDir::new("cli-env-layout");
    let d = dir.path();
    // gen with RIMEFLAKE_LAYOUT: a twitter ID (datacenter part shown), and decode reads the
    // same variable.
    let out = run(
        &["gen", "--format", "json", "--state-dir", d],
        &[
            ("RIMEFLAKE_LAYOUT", "twitter"),
            ("RIMEFLAKE_WORKER_ID", "37"),
        ],
    );
    let row = &json_lines(&stdout_ok(&out))[0];
    assert_eq!(
        (row["datacenter_id"].as_u64(), row["worker_id"].as_u64()),
        (Some(1), Some(5))
    );
    let id = row["id"].as_str().unwrap().to_string();
    let out = run(
        &["decode", "--json", &id],
        &[("RIMEFLAKE_LAYOUT", "twitter")],
    );
    let decoded = &json_lines(&stdout_ok(&out))[0];
    assert_eq!(decoded["layout"], "twitter");
    assert_eq!(decoded["datacenter_id"], 1);
    assert_eq!(decoded["in_the_future"], false);
    config_error(
        &run(&["decode", &id], &[("RIMEFLAKE_LAYOUT", "twiter")]),
        "RIMEFLAKE_LAYOUT",
    );
    // A spec on gen, and the same spec decodes.
    let spec = "time=41,worker=12,sequence=10,epoch=2025-01-01T00:00:00Z";
    let out = run(
        &[
            "gen",
            "-n",
            "3",
            "--in-memory",
            "--worker",
            "4095",
            "--layout",
            spec,
        ],
        &[],
    );
    let ids: Vec<String> = stdout_ok(&out).lines().map(str::to_string).collect();
    let out = run_with(
        &["decode", "--json", "--layout", spec],
        &[],
        &ids.join("\n"),
    );
    for row in json_lines(&stdout_ok(&out)) {
        assert_eq!(row["worker_id"], 4095);
        assert_eq!(row["layout"], "custom");
    }
    // The table shows the spec form, which --layout takes back.
    let table = stdout_ok(&run(&["decode", "--layout", spec, &ids[0]], &[]));
    let shown = table.lines().next().unwrap();
    assert!(
        shown.contains("(clock_id=0,time=41,worker=12,sequence=10,unit_ms=1,epoch_ms=1735689600000,order=worker_first)"),
        "{table}"
    );
    // bench and state reset take specs too (reset refuses a worker with no state file, after
    // the layout was read).
    let out = run(
        &[
            "bench",
            "--seconds",
            "0.2",
            "--in-memory",
            "--worker",
            "1",
            "--layout",
            spec,
        ],
        &[],
    );
    assert!(stdout_ok(&out).contains("(clock_id=0,time=41,worker=12"));
    config_error(
        &run(
            &[
                "state",
                "reset",
                "--worker",
                "1",
                "--state-dir",
                d,
                "--layout",
                "time=1",
            ],
            &[],
        ),
        "layout spec: missing",
    );
    config_error(
        &run(&["decode", "--layout", "time=41,worker=10", "1"], &[]),
        "missing",
    );
}

/// Discord's documentation's example snowflake (discord.com/developers/docs/reference#snowflakes):
/// made 2016-04-30T11:18:25.796Z by internal worker 1, process 0, increment 7.
const DISCORD_DOCS_ID: &str = "175928847299117063";

#[test]
fn discords_example_read_as_default_is_flagged_and_the_hint_reads_2016() {
    let out = run(&["decode", DISCORD_DOCS_ID], &[]);
    let table = stdout_ok(&out);
    // Read as `default`, it lies in 2034; the hint proposes Discord's reading (2016) and
    // Twitter's (the same bits from Twitter's epoch: 2012), never Sonyflake's (2017-12-27).
    assert!(
        table
            .lines()
            .last()
            .unwrap()
            .ends_with("(in the future: --layout discord or twitter?)"),
        "{table}"
    );
    let note = String::from_utf8_lossy(&out.stderr);
    assert!(
        note.contains(
            "the likeliest readings, as likely as each other, are discord \
             2016-04-30T11:18:25.796Z, twitter 2012-03-03T13:01:20.453Z: try --layout discord"
        ),
        "{note}"
    );
    assert!(
        !note.contains("sonyflake") && !table.contains("sonyflake"),
        "{note}"
    );

    let out = run(&["decode", "--layout", "discord", DISCORD_DOCS_ID], &[]);
    let table = stdout_ok(&out);
    assert!(!table.contains("in the future"), "{table}");
    // Discord's internal worker ID is the datacenter column, its process ID the worker.
    let row: Vec<&str> = table.lines().last().unwrap().split_whitespace().collect();
    assert_eq!(
        row,
        [
            DISCORD_DOCS_ID,
            "0",
            "2016-04-30T11:18:25.796Z",
            "1",
            "0",
            "7"
        ],
        "{table}"
    );
}

#[test]
fn every_layout_keeps_its_own_namespace_so_the_quick_start_runs_in_any_order() {
    // The README's lines, in order and in reverse, on one state directory.
    let lines: [&[&str]; 3] = [
        &["gen", "-n", "3"],
        &["gen", "--worker", "7", "--layout", "twitter"],
        &["gen", "-n", "2", "--layout", "sonyflake_v2"],
    ];
    for order in [[0, 1, 2], [2, 1, 0]] {
        let dir = TempDir::new("cli-any-order");
        for _round in 0..2 {
            for &k in &order {
                let out = run(lines[k], &[("RIMEFLAKE_STATE_DIR", dir.path())]);
                stdout_ok(&out);
            }
        }
        let shown = stdout_ok(&run(&["state", "show", "--state-dir", dir.path()], &[]));
        for ns in [
            "namespace default:",
            "namespace twitter:",
            "namespace sonyflake_v2:",
        ] {
            assert!(shown.contains(ns), "{ns} in {shown}");
        }
    }
    // The protection stays: one layout per namespace.
    let dir = TempDir::new("cli-ns-protect");
    let d = dir.path();
    stdout_ok(&run(&["gen", "--state-dir", d, "--namespace", "ns"], &[]));
    config_error(
        &run(
            &[
                "gen",
                "--state-dir",
                d,
                "--namespace",
                "ns",
                "--layout",
                "twitter",
            ],
            &[],
        ),
        "namespace ns",
    );
}

#[test]
fn the_container_warning_goes_to_stderr_once_and_names_only_what_exists() {
    let home = TempDir::new("cli-home");
    let out = run(&["gen"], &[("HOME", home.path())]);
    stdout_ok(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if rimeflake::frontend::in_container() {
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with("rimeflake: warning: running in a container"),
            "{stderr}"
        );
        assert!(!stderr.contains("distributed"), "{stderr}");
        assert!(stderr.contains("RIMEFLAKE_WORKER_ID"), "{stderr}");
    } else {
        assert!(stderr.is_empty(), "{stderr}");
    }
    // A directory chosen on purpose, or the variable that silences it: no warning.
    for env in [
        ("RIMEFLAKE_STATE_DIR", home.path()),
        ("RIMEFLAKE_NO_CONTAINER_WARNING", "1"),
    ] {
        let out = run(&["gen"], &[("HOME", home.path()), env]);
        stdout_ok(&out);
        assert!(
            out.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// IDs made by the peers themselves (testdata/peers/vectors.json) decode field for field from
/// the CLI, each through its layout spec.
#[test]
fn peers_ids_decode_field_for_field_through_their_layout_specs() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/peers/vectors.json");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut checked = 0;
    for peer in v["peers"].as_array().unwrap() {
        let name = peer["name"].as_str().unwrap();
        let rows = peer["ids"].as_array().unwrap();
        let input: Vec<&str> = rows.iter().map(|r| r["id"].as_str().unwrap()).collect();
        let out = run_with(
            &[
                "decode",
                "--json",
                "--layout",
                peer["layout"].as_str().unwrap(),
            ],
            &[],
            &input.join("\n"),
        );
        let decoded = json_lines(&stdout_ok(&out));
        assert_eq!(decoded.len(), rows.len(), "{name}");
        for (row, got) in rows.iter().zip(&decoded) {
            let n = |key: &str| row[key].as_str().map(|s| s.parse::<u64>().unwrap());
            assert_eq!(got["id"], row["id"], "{name}");
            assert_eq!(
                got["timestamp_ms"].as_u64(),
                n("timestamp_ms"),
                "{name} {row}"
            );
            assert_eq!(got["worker_id"].as_u64(), n("worker_id"), "{name} {row}");
            assert_eq!(got["sequence"].as_u64(), n("sequence"), "{name} {row}");
            if row.get("datacenter_id").is_some() {
                assert_eq!(got["datacenter_id"].as_u64(), n("datacenter_id"), "{name}");
            }
            checked += 1;
        }
    }
    assert!(checked > 10_000);
}

#[test]
fn an_empty_state_dir_is_refused_by_the_core() {
    for args in [
        &["gen", "--state-dir", ""][..],
        &["state", "show", "--state-dir", ""],
        &["state", "reset", "--worker", "1", "--state-dir", ""],
    ] {
        config_error(&run(args, &[]), "--state-dir: empty");
    }
}

#[test]
fn ordinal_takes_the_worker_id_from_a_statefulset_pods_host_name() {
    let dir = TempDir::new("cli-env-ordinal");
    let d = dir.path();
    let ordinal = ("RIMEFLAKE_WORKER_ID", "ordinal");
    let out = run(
        &["gen", "--state-dir", d],
        &[("HOSTNAME", "web-7"), ordinal],
    );
    let id: u64 = stdout_ok(&out).trim().parse().unwrap();
    assert_eq!(
        rimeflake::Layout::default().decode(id).unwrap().worker_id,
        7
    );
    // The pod index, when the downward API gives it, wins over the host name.
    let out = run(
        &["gen", "--state-dir", d],
        &[("HOSTNAME", "web-7"), ("RIMEFLAKE_POD_INDEX", "9"), ordinal],
    );
    let id: u64 = stdout_ok(&out).trim().parse().unwrap();
    assert_eq!(
        rimeflake::Layout::default().decode(id).unwrap().worker_id,
        9
    );
    config_error(
        &run(
            &["gen", "--state-dir", d],
            &[("HOSTNAME", "laptop"), ordinal],
        ),
        "host name \"laptop\" ($HOSTNAME) does not end in -<n>",
    );
    config_error(
        &run(
            &["gen", "--state-dir", d],
            &[("HOSTNAME", "web-5000"), ordinal],
        ),
        "worker ID 5000 (RIMEFLAKE_WORKER_ID=ordinal, host name web-5000) is above",
    );
}

#[test]
fn every_setting_of_the_cores_table_is_a_flag_of_each_generating_subcommand() {
    use rimeflake::frontend::SETTINGS;
    for sub in ["gen", "bench", "serve"] {
        let help = stdout_ok(&run(&[sub, "--help"], &[]));
        for row in SETTINGS {
            let listed = help
                .lines()
                .any(|l| l.split_whitespace().next() == Some(row.cli));
            assert!(listed, "{sub} --help lacks {}", row.cli);
        }
    }
    let all = [
        "gen",
        "--in-memory",
        "--worker",
        "1",
        "--layout",
        "twitter",
        "--namespace",
        "flags",
        "--max-drift-ms",
        "0",
        "--max-wait-ms",
        "100",
        "--on-rollback",
        "error",
        "--strict-monotonic",
        "--lease-ttl-ms",
        "1000",
        "--random-sequence-start",
    ];
    assert_eq!(stdout_ok(&run(&all, &[])).lines().count(), 1);
    config_error(
        &run(
            &[
                "gen",
                "--in-memory",
                "--worker",
                "1",
                "--on-rollback",
                "bumpp",
            ],
            &[],
        ),
        "--on-rollback: unknown policy \"bumpp\"; use \"bump\", \"wait\" or \"error\"",
    );
    config_error(
        &run(
            &["gen", "--in-memory", "--worker", "1", "--lease-ttl-ms", "1"],
            &[],
        ),
        "--lease-ttl-ms: 1 ms is out of range",
    );
    config_error(
        &run(
            &["gen", "--in-memory", "--worker", "1", "--max-wait-ms", "5s"],
            &[],
        ),
        "\"5s\" is not a number of milliseconds",
    );
}

/// `rimeflake gen --in-memory --worker 1`, then `extra`.
fn gen_worker_1(extra: &[&str]) -> Output {
    let mut args = vec!["gen", "--in-memory", "--worker", "1"];
    args.extend_from_slice(extra);
    run(&args, &[])
}

/// `--random-sequence-start`: each process's first ID starts its unit at an offset (of
/// `default`'s 512 sequences, the ID's lowest bits), where it is sequence 0 without the flag;
/// sonyflake's order refuses it.
#[test]
fn random_sequence_start_offsets_the_first_unit_and_sonyflake_refuses_it() {
    let sequence = |extra: &[&str]| -> u64 {
        let id: u64 = stdout_ok(&gen_worker_1(extra)).trim().parse().unwrap();
        id & 511
    };
    assert_eq!(sequence(&[]), 0);
    // Eight processes, eight keys: all at offset 0 has a chance of 512^-8.
    let offsets: Vec<u64> = (0..8)
        .map(|_| sequence(&["--random-sequence-start"]))
        .collect();
    assert!(offsets.iter().any(|&s| s != 0), "{offsets:?}");
    config_error(
        &gen_worker_1(&["--layout", "sonyflake", "--random-sequence-start"]),
        "--random-sequence-start: layout sonyflake puts the worker ID below the sequence",
    );
}
