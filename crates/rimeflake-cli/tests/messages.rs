//! What the command says when it is given something wrong, or had to assume something: in its
//! own words (its flags, not the Rust builder's names), on one line, and nothing before an
//! error.

use rimeflake_testkit::support;
use support::TempDir;
mod binary;
use binary::{run, run_with};

use rimeflake::{format, Encoding};
use serde_json::Value;
use std::process::Output;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The one line of stderr of a run that failed with `code`, nothing on stdout.
fn error_line(out: &Output, code: i32) -> String {
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(
        out.stdout.is_empty(),
        "nothing on stdout: {}",
        text(&out.stdout)
    );
    stderr.trim_end().to_string()
}

fn stdout_ok(out: &Output) -> String {
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout)
}

#[test]
fn a_missing_subcommand_is_one_of_the_command_given() {
    assert_eq!(
        error_line(&run(&[], &[]), 2),
        "rimeflake: error: a subcommand is needed: gen, decode, bench, serve or state (see \
         rimeflake --help)"
    );
    // Not the top level's list.
    assert_eq!(
        error_line(&run(&["state"], &[]), 2),
        "rimeflake: error: a subcommand is needed: show, reset, restored or replicas (see \
         rimeflake state --help)"
    );
}

#[test]
fn a_worker_id_is_named_by_its_flag() {
    assert_eq!(
        error_line(&run(&["gen", "--worker", "99999", "--in-memory"], &[]), 2),
        "rimeflake: error: worker ID 99999 (from --worker) is above this layout's largest \
         worker ID 1023"
    );
    assert_eq!(
        error_line(&run(&["gen", "--in-memory"], &[]), 2),
        "rimeflake: error: --worker: an in-memory generator needs a fixed worker ID: give \
         --worker, or set RIMEFLAKE_WORKER_ID"
    );
    let dir = TempDir::new("msgs-empty-dir");
    for args in [
        &["gen", "--state-dir", ""][..],
        &["state", "reset", "--worker", "1", "--state-dir", ""],
    ] {
        let line = error_line(&run(args, &[("HOME", dir.path())]), 2);
        assert!(
            line.starts_with("rimeflake: error: --state-dir: empty;"),
            "{args:?}: {line}"
        );
    }
}

#[test]
fn a_count_below_one_is_refused_clearly() {
    let mem = ["--in-memory", "--worker", "1"];
    for (n, says) in [
        ("-1", "-1 is negative: give a count of 1 or more"),
        ("0", "0 IDs asked for: give a count of 1 or more"),
        ("-5", "-5 is negative: give a count of 1 or more"),
    ] {
        let mut args = vec!["gen", "-n", n];
        args.extend(mem);
        let line = error_line(&run(&args, &[]), 2);
        assert_eq!(
            line,
            format!(
                "rimeflake: error: invalid value '{n}' for '--count <COUNT>': {says} (see \
                 rimeflake --help)"
            )
        );
        assert!(!line.contains("unexpected argument"), "{line}");
    }
}

#[test]
fn a_missing_required_argument_reads_as_a_sentence() {
    let dir = TempDir::new("msgs-reset-required");
    assert_eq!(
        error_line(&run(&["state", "reset", "--state-dir", dir.path()], &[]), 2),
        "rimeflake: error: the following required arguments were not provided: --worker <N> \
         (see rimeflake --help)"
    );
}

#[test]
fn a_reset_on_a_fresh_state_directory_has_nothing_to_reset_and_succeeds() {
    let home = TempDir::new("msgs-reset-fresh");
    let state = home.0.join("state");
    let out = run(
        &["state", "reset", "--worker", "3"],
        &[("RIMEFLAKE_STATE_DIR", state.to_str().unwrap())],
    );
    let said = stdout_ok(&out);
    let file = state.join("default/worker-00003.state");
    assert_eq!(
        said,
        format!(
            "nothing to reset: worker 3 of namespace default has no state file ({} does not \
             exist); a reset only replaces a corrupt state file\n",
            file.display()
        )
    );
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
    // Nothing was made: no state directory, no lock file.
    assert!(!state.exists(), "the reset made {}", state.display());
}

/// The error for a corrupt state file gives the reset to run with this worker ID, namespace
/// and state directory (a placeholder `--worker N --namespace NS` before), ready for a shell:
/// run as printed, it resets the file, and the next start succeeds.
#[test]
fn a_corrupt_state_file_names_the_reset_that_fixes_it() {
    let dir = TempDir::new("msgs-corrupt");
    let state = dir.0.join("a dir's state");
    let state_arg = state.to_str().unwrap();
    let gen = [
        "gen",
        "--worker",
        "5",
        "--namespace",
        "orders",
        "--state-dir",
        state_arg,
    ];
    stdout_ok(&run(&gen, &[]));
    let file = state.join("orders/worker-00005.state");
    let mut bytes = std::fs::read(&file).unwrap();
    // The file's two slots each hold a record that begins with the magic `RFST`: spoil a byte
    // of each.
    let records: Vec<usize> = (0..bytes.len().saturating_sub(3))
        .filter(|&at| &bytes[at..at + 4] == b"RFST")
        .collect();
    assert_eq!(records.len(), 2, "two records in {}", file.display());
    for at in records {
        bytes[at + 20] ^= 0x5a;
    }
    std::fs::write(&file, bytes).unwrap();

    let line = error_line(&run(&gen, &[]), 1);
    let command = format!(
        "rimeflake state reset --worker 5 --namespace orders --state-dir '{}/a dir'\\''s state'",
        dir.0.display()
    );
    assert!(line.contains(&format!("`{command}`")), "{line}");
    assert!(!line.contains("--worker N"), "{line}");
    let bin = env!("CARGO_BIN_EXE_rimeflake");
    let reset = support::without_rimeflake_env(&mut std::process::Command::new("sh"))
        .arg("-c")
        .arg(command.replacen("rimeflake", "\"$0\"", 1))
        .arg(bin)
        .output()
        .unwrap();
    assert!(reset.status.success(), "{}", text(&reset.stderr));
    assert!(text(&reset.stdout).starts_with("reset worker 5 of namespace orders"));
    stdout_ok(&run(&gen, &[]));
}

#[test]
fn decode_says_it_assumed_the_default_and_which_presets_read_the_id() {
    let id = stdout_ok(&run(
        &["gen", "--layout", "twitter", "--in-memory", "--worker", "1"],
        &[],
    ));
    // Read with the default layout, because nothing named one.
    let out = run_with(&["decode"], &[], &id);
    let table = stdout_ok(&out);
    assert!(
        table.contains("(in the future: --layout twitter"),
        "{table}"
    );
    let stderr = text(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with(&format!(
            "rimeflake: note: {} was read with the default layout, as neither --layout nor \
             RIMEFLAKE_LAYOUT was given: by it, the ID was made at 20",
            id.trim()
        )),
        "{stderr}"
    );
    assert!(stderr.contains(", in the future; the "), "{stderr}");
    assert!(
        stderr.trim_end().ends_with("try --layout twitter"),
        "{stderr}"
    );

    // In JSON, the presets in a field; the note once, however many IDs.
    let two = format!("{id}{id}");
    let out = run_with(&["decode", "--json"], &[], &two);
    let rows: Vec<Value> = stdout_ok(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["in_the_future"], true);
    assert_eq!(rows[0]["plausible_presets"][0], "twitter");
    assert_eq!(text(&out.stderr).lines().count(), 1);

    // A layout given (flag or environment): nothing assumed, nothing noted.
    for (args, env) in [
        (&["decode", "--layout", "twitter"][..], &[][..]),
        (&["decode"][..], &[("RIMEFLAKE_LAYOUT", "twitter")][..]),
    ] {
        let out = run_with(args, env, &id);
        assert!(!stdout_ok(&out).contains("in the future"));
        assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
    }
    // The default named on purpose: the table still flags the time, without the note.
    let out = run_with(&["decode", "--layout", "default"], &[], &id);
    assert!(stdout_ok(&out).contains("(in the future: --layout twitter"));
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
}

#[test]
fn decode_takes_0x_hex_and_names_the_format_a_token_fits() {
    let id: u64 = stdout_ok(&run(&["gen", "--in-memory", "--worker", "1"], &[]))
        .trim()
        .parse()
        .unwrap();
    let hex = format(id, Encoding::Hex);
    let row = |args: &[&str]| {
        let out = stdout_ok(&run(args, &[]));
        out.lines()
            .nth(2)
            .unwrap()
            .split_whitespace()
            .skip(1)
            .collect::<Vec<_>>()
            .join(" ")
    };
    let by_number = row(&["decode", &id.to_string()]);
    assert_eq!(row(&["decode", &format!("0x{hex}")]), by_number);
    assert_eq!(row(&["decode", &format!("0x{id:x}")]), by_number);

    let line = error_line(&run(&["decode", &hex], &[]), 1);
    assert!(line.ends_with("; it reads as --format hex"), "{line}");
    let base62 = format(id, Encoding::Base62);
    let line = error_line(&run(&["decode", "--format", "base32", &base62], &[]), 1);
    assert!(line.contains("it reads as --format base62"), "{line}");
}

#[test]
fn warnings_never_come_before_an_error_and_the_container_one_comes_once() {
    let home = TempDir::new("msgs-home");
    let env = [("HOME", home.path())];
    // The default state directory, in a container: an error alone.
    let line = error_line(&run(&["gen", "--worker", "99999"], &env), 2);
    assert!(
        line.starts_with("rimeflake: error: worker ID 99999"),
        "{line}"
    );

    let first = run(&["gen"], &env);
    stdout_ok(&first);
    let second = run(&["gen"], &env);
    stdout_ok(&second);
    assert!(second.stderr.is_empty(), "{}", text(&second.stderr));
    let marker = home
        .0
        .join(".local/state/rimeflake/.container-warning-shown");
    let stderr = text(&first.stderr);
    if rimeflake::frontend::in_container() {
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with("rimeflake: warning: running in a container"),
            "{stderr}"
        );
        assert!(
            stderr.trim_end().ends_with(&format!(
                "(said once for this state directory: delete {} to see it again)",
                marker.display()
            )),
            "{stderr}"
        );
        assert!(marker.exists());
        // Deleted, it is said again.
        std::fs::remove_file(&marker).unwrap();
        let third = run(&["gen"], &env);
        stdout_ok(&third);
        assert!(text(&third.stderr).starts_with("rimeflake: warning: running in a container"));
        // A link planted at the marker's name (dangling here) is not written through, and the
        // warning is still said.
        std::fs::remove_file(&marker).unwrap();
        let target = home.0.join("planted-target");
        std::os::unix::fs::symlink(&target, &marker).unwrap();
        let fourth = run(&["gen"], &env);
        stdout_ok(&fourth);
        assert!(text(&fourth.stderr).starts_with("rimeflake: warning: running in a container"));
        assert!(!target.exists(), "the marker was written through a link");
    } else {
        assert!(stderr.is_empty(), "{stderr}");
        assert!(!marker.exists());
    }
}

#[test]
fn bench_at_the_cap_says_so_and_shows_the_uncapped_cost() {
    // The default layout's cap is 512,000 IDs a second: a debug build passes it at once, and
    // after the first two seconds borrowed ahead the run is held there.
    let out = run(
        &["bench", "--seconds", "3", "--in-memory", "--worker", "1"],
        &[],
    );
    let stdout = stdout_ok(&out);
    assert!(
        stdout.contains(
            "(wall time / IDs): the run was held at the layout's cap of 512,000 IDs/s, which \
             sets this figure, not the cost of a call"
        ),
        "{stdout}"
    );
    let per_call = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("per call:"))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(
        per_call.contains("ns uncapped: each thread's first 256,000 calls"),
        "{per_call}"
    );
    let ns: f64 = per_call.split_whitespace().nth(2).unwrap().parse().unwrap();
    // Far below the cap's 1,953 ns an ID: the call's own cost.
    assert!(ns > 0.0 && ns < 1_953.0, "{per_call}");
}

#[test]
fn a_misspelt_flag_or_preset_gets_the_nearest_by_the_cores_suggestion() {
    assert_eq!(
        error_line(&run(&["gen", "--workr", "1"], &[]), 2),
        "rimeflake: error: unexpected argument '--workr'; did you mean '--worker'? (see \
         rimeflake --help)"
    );
    assert_eq!(
        error_line(&run(&["state", "reset", "--abov-id", "1"], &[]), 2),
        "rimeflake: error: unexpected argument '--abov-id'; did you mean '--above-id'? (see \
         rimeflake --help)"
    );
    for args in [
        &["gen", "--layout", "Twitter", "--in-memory", "--worker", "1"][..],
        &["decode", "--layout", "TWITTER", "1"],
        &["gen", "--layout", "twiter", "--in-memory", "--worker", "1"],
    ] {
        let line = error_line(&run(args, &[]), 2);
        assert!(
            line.contains("unknown preset") && line.contains("did you mean \"twitter\"?"),
            "{args:?}: {line}"
        );
    }
    let far = error_line(&run(&["gen", "--zzz"], &[]), 2);
    assert!(!far.contains("did you mean"), "{far}");
}
