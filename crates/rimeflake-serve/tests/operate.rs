//! `rimeflake serve` as operators run it: a start line with the whole configuration (the
//! backend's password masked, the token only said to be on), a stop line, `--log json`, a
//! warning for a listen other hosts reach with no token, host names in `--listen`, the
//! endpoints in `--help`, HEAD, `/decode/{id}` that says when the server's layout reads an ID
//! as a future time, and a clock-id switch logged when the clock goes back.

use common::support::TempDir;
use rimeflake_testkit::servers;

mod common;
use common::{faked, wait_until, Conn, Server};

use rimeflake::Layout;
use std::process::Command;
use std::time::Duration;

#[test]
fn the_start_and_stop_lines_give_the_configuration_with_the_secrets_kept_out() {
    let redis = servers::Redis::start_with_password("pw-s3cret");
    let env = [
        ("RIMEFLAKE_NO_DURABILITY_WARNING", "1"),
        ("RIMEFLAKE_SERVE_TOKEN", "tok-s3cret"),
    ];
    let mut server = Server::start(
        &["--backend", &redis.url(), "--max-connections", "100"],
        &env,
    );
    assert!(server.stop().success());
    let log = server.stderr.lock().unwrap().clone();
    let start = log.lines().find(|l| l.contains("serving on")).unwrap();
    for says in [
        "namespace default (layout default), worker ",
        "Leaf path: namespace twitter (layout twitter",
        "keys any",
        "backend redis://:***@127.0.0.1:",
        "token on",
        "100 connections (open files ",
        "4096 requests",
        "1000000 IDs in flight",
        "wait deadline 0.1 s",
        "header 10 s, idle 60 s, shutdown 10 s",
    ] {
        assert!(
            start.contains(says),
            "the start line does not say {says:?}: {start}"
        );
    }
    assert!(
        !log.contains("pw-s3cret") && !log.contains("tok-s3cret"),
        "{log}"
    );
    assert!(log.contains("stopping on SIGTERM"), "{log}");
    assert!(log.contains("stopped: every generator closed"), "{log}");
}

#[test]
fn log_json_writes_one_object_a_line() {
    let dir = TempDir::new("serve-json");
    let mut server = Server::start(
        &["--worker", "1", "--state-dir", dir.path(), "--log", "json"],
        &[],
    );
    assert_eq!(server.get("/id").0, 200);
    assert!(server.stop().success());
    let log = server.stderr.lock().unwrap().clone();
    let events: Vec<serde_json::Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l:?} is not JSON: {e}")))
        .collect();
    let names: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["start", "stopping", "stopped"], "{log}");
    let start = &events[0];
    assert_eq!(start["level"], "info");
    assert_eq!(start["worker"], 1);
    assert_eq!(start["token"], false);
    assert!(start["listen"].as_str().unwrap().starts_with("127.0.0.1:"));
    assert!(start["time"].as_str().unwrap().ends_with('Z'));
    assert_eq!(events[1]["signal"], libc::SIGTERM);
}

#[test]
fn a_listen_other_hosts_reach_with_no_token_is_warned_about() {
    let dir = TempDir::new("serve-open");
    let args = ["--worker", "1", "--state-dir", dir.path()];
    let bin = || Command::new(common::binary());
    // Read once the server stopped: every line it wrote is in.
    let warned = |mut s: Server| {
        assert!(s.stop().success());
        let log = s.stderr.lock().unwrap().clone();
        log.contains("reachable from other hosts")
    };
    assert!(warned(Server::start_with(bin(), "0.0.0.0:0", &args, &[])));
    // With a token, or on loopback: no warning.
    let token = [("RIMEFLAKE_SERVE_TOKEN", "t")];
    assert!(!warned(Server::start_with(
        bin(),
        "0.0.0.0:0",
        &args,
        &token
    )));
    assert!(!warned(Server::start(&args, &[])));
}

#[test]
fn a_host_name_in_listen_is_resolved() {
    let dir = TempDir::new("serve-localhost");
    let mut server = Server::start_with(
        Command::new(common::binary()),
        "localhost:0",
        &["--worker", "1", "--state-dir", dir.path()],
        &[],
    );
    assert!(server.addr.ip().is_loopback());
    assert_eq!(server.get("/id").0, 200);
    assert!(server.stop().success());
    let out = Command::new(common::binary())
        .args(["serve", "--listen", "no-such-host.invalid:80"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--listen no-such-host.invalid:80"));
}

#[test]
fn help_lists_the_endpoints_and_points_at_no_file() {
    let out = Command::new(common::binary())
        .args(["serve", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    for endpoint in [
        "/id",
        "/ids?n=N",
        "/api/snowflake/get/{key}",
        "/decodeSnowflakeId",
        "/decode/{id}",
        "/metrics",
        "/healthz",
        "/readyz",
        "SIGHUP",
    ] {
        assert!(help.contains(endpoint), "no {endpoint} in:\n{help}");
    }
    assert!(!help.contains(".md"), "the help points at a file:\n{help}");
}

#[test]
fn head_answers_as_get_would_without_a_body_and_spends_no_id() {
    let dir = TempDir::new("serve-head");
    let mut server = Server::start(&["--worker", "1", "--state-dir", dir.path()], &[]);
    let mut conn = Conn::open(server.addr);
    let get = conn.get("/healthz");
    let head = conn.ask("HEAD", "/healthz", &[]);
    assert_eq!(head.status, 200);
    assert_eq!(head.header("content-length"), get.header("content-length"));
    assert_eq!(head.body, "");
    for path in [
        "/id",
        "/ids?n=5",
        "/api/snowflake/get/k",
        "/readyz",
        "/metrics",
    ] {
        let a = conn.ask("HEAD", path, &[]);
        assert_eq!(a.status, 200, "HEAD {path}: {a:?}");
    }
    // Still served on the same connection: no body was sent for any.
    let a = conn.get("/metrics");
    assert!(
        a.body
            .contains("rimeflake_ids_issued_total{namespace=\"default\"} 0\n"),
        "HEAD spent an ID:\n{}",
        a.body
    );
    let a = conn.ask("DELETE", "/id", &[]);
    assert_eq!(a.status, 405);
    assert_eq!(a.header("allow"), Some("GET, HEAD"));
    assert!(server.stop().success());
}

#[test]
fn decode_says_when_the_servers_layout_reads_an_id_as_a_future_time() {
    let dir = TempDir::new("serve-decode");
    let mut server = Server::start(&["--worker", "1", "--state-dir", dir.path()], &[]);
    // A twitter ID (Leaf's) read with the server's layout, default: a time in 2082.
    let leaf: u64 = server.get("/api/snowflake/get/k").1.parse().unwrap();
    let (status, body) = server.get(&format!("/decode/{leaf}"));
    assert_eq!(status, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["in_the_future"], true, "{body}");
    let warning = v["warning"].as_str().expect("a warning");
    assert!(warning.contains("?layout=twitter"), "{warning}");
    // Read with its own layout: a time of today, no warning.
    let (_, body) = server.get(&format!("/decode/{leaf}?layout=twitter"));
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["in_the_future"], false, "{body}");
    assert!(v.get("warning").is_none(), "{body}");
    assert_eq!(
        v["timestamp_ms"],
        Layout::twitter().decode(leaf).unwrap().timestamp_ms
    );
    assert!(server.stop().success());
}

#[test]
fn a_clock_id_switch_is_logged() {
    let dir = TempDir::new("serve-switch");
    // libfaketime reads the offset from this file at every call: the clock moves meanwhile.
    let offset = dir.path().to_string() + "/offset";
    std::fs::write(&offset, "+0\n").unwrap();
    let mut cmd = faked("+0");
    cmd.env_remove("FAKETIME")
        .env("FAKETIME_TIMESTAMP_FILE", &offset)
        .env("FAKETIME_NO_CACHE", "1");
    let mut server = Server::start_with(
        cmd,
        "127.0.0.1:0",
        &["--worker", "1", "--state-dir", dir.path()],
        &[],
    );
    assert_eq!(server.get("/id").0, 200);
    std::fs::write(&offset, "-3600\n").unwrap(); // an hour back
    assert_eq!(server.get("/id").0, 200);
    wait_until("the switch logged", Duration::from_secs(30), || {
        server
            .stderr
            .lock()
            .unwrap()
            .contains("namespace default: switched from clock-id 0 to clock-id 1")
    });
    assert!(server.stop().success());
}
