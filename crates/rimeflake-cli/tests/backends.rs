//! `rimeflake gen` and `rimeflake state show` on a server backend (real Redis, PostgreSQL and
//! MariaDB with TLS on, and ZooKeeper, started by the harness in
//! crates/rimeflake-testkit/src/servers.rs): a worker ID handed
//! from a host whose clock is ahead (libfaketime) to one whose clock is right, and back with a
//! small lead.

use rimeflake_testkit::servers;
use rimeflake_testkit::support;

use support::libfaketime;

use rimeflake::Layout;
use std::collections::HashSet;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_rimeflake");

/// `rimeflake gen -n N --worker 4` on `url`, with the wall clock moved by `offset` seconds
/// (libfaketime's syntax: "+86400", "+0.5"), or the real clock.
fn gen(url: &str, n: usize, offset: Option<&str>) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.args([
        "gen",
        "-n",
        &n.to_string(),
        "--worker",
        "4",
        "--namespace",
        "handover",
    ])
    .args(["--backend", url])
    .stdin(Stdio::null());
    if let Some(offset) = offset {
        cmd.env("LD_PRELOAD", libfaketime())
            .env("FAKETIME", offset)
            .env("FAKETIME_DONT_FAKE_MONOTONIC", "1");
    }
    let out = cmd.output().expect("rimeflake gen runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn ids(out: &Output) -> Vec<u64> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.parse().expect("an ID per line"))
        .collect()
}

#[test]
fn a_worker_id_handed_from_a_host_ahead_to_one_behind_never_repeats_an_id() {
    // Over TLS, certificates checked (verify-full): the hosts a day ahead check them by their
    // own clock too, within the certificates' 30 days.
    let redis = servers::Redis::start_tls();
    let pg = servers::Postgres::start_tls();
    let (redis_url, pg_url) = (redis.tls_url(), pg.tls_url());
    let layout = Layout::default();
    let corrupt_redis = || {
        redis.command(&["HSET", "rimeflake:{handover:4}:state", "s", "garbage"]);
    };
    let corrupt_pg = || {
        pg.psql("UPDATE rimeflake_workers SET state = 'garbage' WHERE namespace = 'handover'");
    };
    let mariadb = servers::MariaDb::start_tls();
    let corrupt_mariadb = || {
        mariadb.sql("UPDATE rimeflake_workers SET state = 'garbage' WHERE namespace = 'handover'");
    };
    let zookeeper = servers::ZooKeeper::start();
    // The state node is "version state": its state replaced, its version kept.
    let corrupt_zookeeper = || {
        let node = "/rimeflake/workers/handover/4/state";
        let got = zookeeper.cli(&format!("get {node}"));
        let version = got
            .lines()
            .find_map(|l| l.split_once(' ')?.0.parse::<u64>().ok())
            .unwrap_or_else(|| panic!("no state in {got}"));
        zookeeper.cli(&format!("set {node} \"{version} garbage\""));
    };
    let servers: [(String, &dyn Fn()); 4] = [
        (redis_url, &corrupt_redis),
        (pg_url, &corrupt_pg),
        (mariadb.tls_url(), &corrupt_mariadb),
        (zookeeper.url(), &corrupt_zookeeper),
    ];
    for (url, corrupt) in servers {
        // A host a day ahead takes worker ID 4 and hands it on (the lease is released at exit).
        let ahead = ids(&gen(&url, 50_000, Some("+86400")));
        // A host with the right clock takes it next: a day behind the reservation it inherits,
        // it continues on another clock-id, as after a restart with the clock set back.
        let right = ids(&gen(&url, 50_000, None));
        // A host 0.5 s ahead, then the right one again: a small lead is waited out on the same
        // clock-id rather than spending another.
        let slightly = ids(&gen(&url, 20_000, Some("+0.5")));
        let again = ids(&gen(&url, 20_000, None));
        let cid = |id: u64| layout.decode(id).unwrap().clock_id;
        assert_ne!(cid(ahead[0]), cid(right[0]), "{url}");
        assert_eq!(cid(right[0]), cid(slightly[0]), "{url}");
        assert_eq!(cid(slightly[0]), cid(again[0]), "{url}");
        assert!(again[0] > *slightly.last().unwrap(), "{url}");
        let mut seen = HashSet::new();
        for id in ahead.iter().chain(&right).chain(&slightly).chain(&again) {
            assert_eq!(layout.decode(*id).unwrap().worker_id, 4);
            assert!(seen.insert(*id), "ID {id} issued twice ({url})");
        }

        // `state show` lists the worker ID, free, with its clock-ids and reservations, and
        // never prints a password. The server comes from the environment here, as it may.
        let out = Command::new(BIN)
            .args(["state", "show", "--namespace", "handover"])
            .env("RIMEFLAKE_BACKEND", &url)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(text.contains("worker     4  free"), "{text}");
        assert!(text.contains("closed cleanly"), "{text}");
        // The namespace's layout is read from the server, so reservations show as dates.
        assert!(text.contains("namespace handover: default"), "{text}");
        assert!(
            text.contains("reserved to ") && text.contains("Z)"),
            "{text}"
        );
        assert!(
            text.contains(&format!("clock-id {}", cid(right[0]))),
            "{text}"
        );

        // A corrupt state stops generators; a reset needs evidence, then they go on above it.
        corrupt();
        let run = |args: &[&str]| {
            Command::new(BIN)
                .args(args)
                .args(["--backend", &url])
                .output()
                .unwrap()
        };
        let out = run(&["gen", "--worker", "4", "--namespace", "handover"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && stderr.contains("corrupt"),
            "{stderr}"
        );
        let reset = ["state", "reset", "--worker", "4", "--namespace", "handover"];
        let out = run(&reset);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && stderr.contains("--above-id"),
            "{stderr}"
        );
        let highest = seen.iter().max().unwrap().to_string();
        // The reset runs on a clock set a day back: the evidence, not the clock, decides.
        let out = Command::new(BIN)
            .args([&reset[..], &["--above-id", &highest, "--backend", &url]].concat())
            .env("LD_PRELOAD", libfaketime())
            .env("FAKETIME", "-86400")
            .env("FAKETIME_DONT_FAKE_MONOTONIC", "1")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let after = ids(&gen(&url, 10_000, None));
        assert!(after.iter().all(|id| !seen.contains(id)), "{url}");
    }
    // A password never reaches a message.
    let redis_pw = servers::Redis::start_with_password("right-pw");
    let wrong = format!("redis://:wrong-pw@127.0.0.1:{}/0", redis_pw.port());
    for args in [
        vec!["gen", "--backend", &wrong],
        vec!["state", "show", "--backend", &wrong],
    ] {
        let out = Command::new(BIN).args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success());
        assert!(
            stderr.contains("password") && !stderr.contains("wrong-pw"),
            "{stderr}"
        );
    }
    // Not even one with `/`, `?` or `@` left unencoded (drivers take those), nor a connection
    // string that is not a URL at all.
    let pg = servers::Postgres::start();
    let odd = [
        format!(
            "postgresql://postgres:s3/cr@t@127.0.0.1:{}/rimeflake",
            pg.port()
        ),
        format!("redis://:s3?cr@t@127.0.0.1:{}/0", redis_pw.port()),
        "host=127.0.0.1 user=app password=s3cr@t".to_string(),
    ];
    for url in &odd {
        for args in [vec!["gen"], vec!["state", "show"]] {
            let out = Command::new(BIN)
                .args(&args)
                .args(["--backend", url])
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(!out.status.success(), "{args:?} {url}");
            assert!(
                !stderr.contains("s3") && !stderr.contains("cr@t"),
                "{stderr}"
            );
        }
    }
}

#[test]
fn state_commands_say_when_a_backend_keeps_no_state_or_a_namespace_needs_a_server() {
    let dir = tempfile_dir("state-args");
    let run = |args: &[&str], backend: Option<&str>| {
        let mut cmd = Command::new(BIN);
        cmd.args(args)
            .env_remove("RIMEFLAKE_BACKEND")
            .env("RIMEFLAKE_STATE_DIR", &dir);
        if let Some(b) = backend {
            cmd.env("RIMEFLAKE_BACKEND", b);
        }
        let out = cmd.output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, err) = run(&["state", "show", "--namespace", "twitter"], None);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--namespace is for a server backend"), "{err}");
    for (args, backend) in [
        (&["state", "show", "--backend", "memory"][..], None),
        (&["state", "show"][..], Some("memory")),
        (&["state", "reset", "--worker", "1"][..], Some("memory")),
    ] {
        let (code, err) = run(args, backend);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(err.contains("memory backend keeps no state"), "{err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `state restored` and `state replicas` on each server: a line per namespace (one named, or
/// every one on the server); a namespace the server lacks and a missing server are errors that
/// say so; the next start after `state restored` says why it starts ahead of the clock.
#[test]
fn state_restored_and_state_replicas_act_on_a_servers_namespaces() {
    let redis = servers::Redis::start();
    restored_and_replicas_on(&redis.url());
    let pg = servers::Postgres::start();
    restored_and_replicas_on(&pg.url());
    let mariadb = servers::MariaDb::start();
    restored_and_replicas_on(&mariadb.url());
    let zookeeper = servers::ZooKeeper::start();
    restored_and_replicas_on(&zookeeper.url());
}

fn restored_and_replicas_on(url: &str) {
    let url = url.to_string();
    let run = |args: &[&str]| {
        let out = Command::new(BIN)
            .args(args)
            .env_remove("RIMEFLAKE_BACKEND")
            .env("RIMEFLAKE_NO_DURABILITY_WARNING", "1")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    for ns in ["orders", "users"] {
        let (code, _, err) = run(&["gen", "--backend", &url, "--namespace", ns, "--worker", "3"]);
        assert_eq!(code, Some(0), "{err}");
    }
    let (code, out, err) = run(&[
        "state",
        "restored",
        "--backend",
        &url,
        "--namespace",
        "orders",
    ]);
    assert_eq!(code, Some(0), "{url}: {err}");
    assert!(
        out.contains("namespace orders: restore epoch 1"),
        "{url}: {out}"
    );
    assert!(!out.contains("users"), "{out}");
    let (code, out, err) = run(&["state", "restored", "--backend", &url]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("namespace orders: restore epoch 2")
            && out.contains("namespace users: restore epoch 1"),
        "{out}"
    );
    let (code, _, err) = run(&[
        "gen",
        "--backend",
        &url,
        "--namespace",
        "orders",
        "--worker",
        "3",
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("before `rimeflake state restored` was run"),
        "{err}"
    );
    let (code, out, err) = run(&["state", "replicas", "--backend", &url, "--require", "0"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("namespace users: every lease and state write waits for 0 replica(s)"),
        "{out}"
    );
    let (code, _, err) = run(&[
        "state",
        "restored",
        "--backend",
        &url,
        "--namespace",
        "nope",
    ]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("namespace nope has no record"), "{err}");
    let (code, _, err) = run(&["state", "replicas", "--require", "1"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("state replicas is for a server backend"),
        "{err}"
    );
}

#[test]
fn state_show_on_a_server_lists_every_namespace_unless_given_one() {
    let redis = servers::Redis::start();
    let pg = servers::Postgres::start();
    let mariadb = servers::MariaDb::start();
    let zookeeper = servers::ZooKeeper::start();
    for url in [redis.url(), pg.url(), mariadb.url(), zookeeper.url()] {
        let run = |args: &[&str]| {
            let out = Command::new(BIN)
                .args(args)
                .args(["--backend", &url])
                .env_remove("RIMEFLAKE_LAYOUT")
                .env("RIMEFLAKE_NO_DURABILITY_WARNING", "1")
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
            assert!(out.status.success(), "{args:?} {url}: {stderr}");
            String::from_utf8_lossy(&out.stdout).into_owned()
        };
        let empty = run(&["state", "show"]);
        assert!(
            empty.contains("no namespace: no generator has used this server"),
            "{empty}"
        );
        run(&["gen", "--worker", "3"]);
        run(&["gen", "--worker", "5", "--layout", "twitter"]);
        run(&["gen", "--worker", "6", "--namespace", "team-a"]);
        let all = run(&["state", "show"]);
        let at = |needle: &str| {
            all.find(needle)
                .unwrap_or_else(|| panic!("{needle:?} not in {all}"))
        };
        // Sorted by name, each with its layout and worker IDs.
        assert!(
            at("namespace default: default") < at("worker     3  free"),
            "{all}"
        );
        assert!(
            at("worker     3  free") < at("namespace team-a: default"),
            "{all}"
        );
        assert!(
            at("namespace team-a: default") < at("worker     6  free"),
            "{all}"
        );
        assert!(
            at("worker     6  free") < at("namespace twitter: twitter"),
            "{all}"
        );
        assert!(
            at("namespace twitter: twitter") < at("worker     5  free"),
            "{all}"
        );
        assert!(!all.contains("more namespaces"), "{all}");
        // A namespace, or a layout's own namespace, narrows it to one.
        for (args, layout) in [
            (&["state", "show", "--namespace", "twitter"][..], None),
            (&["state", "show", "--layout", "twitter"][..], None),
            (&["state", "show"][..], Some("twitter")),
        ] {
            let mut cmd = Command::new(BIN);
            cmd.args(args)
                .args(["--backend", &url])
                .env_remove("RIMEFLAKE_LAYOUT");
            if let Some(l) = layout {
                cmd.env("RIMEFLAKE_LAYOUT", l);
            }
            let out = cmd.output().unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let one = String::from_utf8_lossy(&out.stdout);
            assert!(one.contains("namespace twitter: twitter"), "{one}");
            assert!(
                !one.contains("namespace default") && !one.contains("team-a"),
                "{one}"
            );
        }
    }
}

#[test]
fn durability_warnings_show_unless_quieted_for_a_development_server() {
    let redis = servers::Redis::start();
    redis.command(&["CONFIG", "SET", "appendonly", "no"]);
    let pg = servers::Postgres::start();
    // Every new session of the test's database gets it, but rimeflake's own sessions commit
    // with synchronous_commit on whatever the default: nothing to warn about. (The harness sets
    // fsync on its command line, which ALTER SYSTEM cannot override.)
    pg.psql("ALTER DATABASE rimeflake SET synchronous_commit = off");
    let gen = |url: &str, quiet: Option<&str>| {
        let mut cmd = Command::new(BIN);
        cmd.args(["gen", "--worker", "1", "--backend", url])
            .env_remove("RIMEFLAKE_NO_DURABILITY_WARNING");
        if let Some(q) = quiet {
            cmd.env("RIMEFLAKE_NO_DURABILITY_WARNING", q);
        }
        let out = cmd.output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, err) = gen(&pg.url(), None);
    assert_eq!(code, Some(0), "{err}");
    assert!(!err.contains("synchronous_commit"), "{err}");
    for (url, warning) in [(redis.url(), "appendonly is no")] {
        for quiet in [None, Some("0")] {
            let (code, err) = gen(&url, quiet);
            assert_eq!(code, Some(0), "{err}");
            assert!(err.contains(warning), "{url}: {err}");
            assert!(
                err.contains("RIMEFLAKE_NO_DURABILITY_WARNING=1 quiets this"),
                "{err}"
            );
        }
        let (code, err) = gen(&url, Some("1"));
        assert_eq!(code, Some(0), "{err}");
        assert!(!err.contains(warning), "{url}: {err}");
        let (code, err) = gen(&url, Some("yes"));
        assert_eq!(code, Some(2), "{err}");
        assert!(
            err.contains("RIMEFLAKE_NO_DURABILITY_WARNING=\"yes\""),
            "{err}"
        );
    }
}

/// A fresh directory under the target's temporary directory.
fn tempfile_dir(name: &str) -> PathBuf {
    let dir =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}
