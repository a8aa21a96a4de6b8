//! Real HTTP clients against a real `rimeflake serve`: curl (HTTP/1.1 keep-alive and HTTP/2
//! cleartext), Python's urllib, Go's net/http and Java's HttpClient, each fetching IDs from many
//! threads at once; every ID unique and decoding with the server's worker ID. Then SIGTERM: the
//! server exits 0 with its lease freed and its state closed cleanly.

use common::support::TempDir;

mod common;
use common::{check_unique, ids, python, tool, Server};

use rimeflake::Layout;
use std::process::{Command, Output};

fn output(cmd: &mut Command) -> Output {
    let out = cmd.output().expect("the client runs");
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// `rimeflake state show` of `dir`.
fn state_show(dir: &TempDir) -> String {
    let out =
        output(Command::new(common::binary()).args(["state", "show", "--state-dir", dir.path()]));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// SIGTERM: exit 0; the lease is free and the state closed cleanly.
fn stop_cleanly(server: &mut Server, dir: &TempDir) {
    let status = server.stop();
    assert!(
        status.success(),
        "exit {status:?}: {}",
        server.stderr.lock().unwrap()
    );
    let shown = state_show(dir);
    assert!(shown.contains("free (last: pid"), "{shown}");
    assert!(!shown.contains("held"), "{shown}");
    assert!(shown.contains("closed cleanly"), "{shown}");
}

#[test]
fn curl_fetches_unique_ids_over_http1_and_h2c_then_sigterm_frees_the_lease() {
    let curl = tool("curl", "apt-get install curl");
    let dir = TempDir::new("serve-curl");
    let mut server = Server::start(&["--worker", "5", "--state-dir", dir.path()], &[]);
    // 8 clients at once, each 40 requests and a batch: 4 curl processes on one keep-alive
    // connection each (HTTP/1.1), and 4 that ask over HTTP/2 cleartext one curl a request (this
    // curl, 7.88, fails a second request on an h2c connection it reuses; Go's client reuses
    // them in go_net_http_fetches_unique_ids).
    let clients: Vec<_> = (0..8)
        .map(|c| {
            let curl = curl.clone();
            let urls: Vec<String> = (0..40)
                .map(|_| server.url("/id"))
                .chain([server.url("/ids?n=500")])
                .collect();
            std::thread::spawn(move || {
                let runs: Vec<Vec<String>> = if c % 2 == 1 {
                    urls.into_iter()
                        .map(|u| vec!["--http2-prior-knowledge".into(), u])
                        .collect()
                } else {
                    vec![urls]
                };
                let mut text = String::new();
                for args in runs {
                    let out = Command::new(&curl)
                        .args(["-sS", "--fail"])
                        .args(args)
                        .output()
                        .unwrap();
                    assert!(
                        out.status.success(),
                        "{}",
                        String::from_utf8_lossy(&out.stderr)
                    );
                    text.push_str(&String::from_utf8_lossy(&out.stdout));
                }
                ids(&text)
            })
        })
        .collect();
    let mut all = Vec::new();
    for client in clients {
        all.extend(client.join().unwrap());
    }
    assert_eq!(all.len(), 8 * (40 + 500));
    check_unique(&all, &Layout::default(), &[5]);

    // Every format, and the parts of an ID as JSON.
    for (format, width) in [("hex", 16), ("base62", 11), ("base32", 13)] {
        let out = output(Command::new(&curl).args([
            "-sS",
            "--fail",
            &server.url(&format!("/ids?n=3&format={format}")),
        ]));
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        let encoding = rimeflake::Encoding::from_name(format).unwrap();
        for l in lines {
            assert_eq!(l.len(), width, "{l}");
            let id = rimeflake::parse(l, encoding).unwrap();
            assert_eq!(Layout::default().decode(id).unwrap().worker_id, 5);
        }
    }
    let id = all[0];
    let out =
        output(Command::new(&curl).args(["-sS", "--fail", &server.url(&format!("/decode/{id}"))]));
    let parts: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let want = Layout::default().decode(id).unwrap();
    assert_eq!(parts["id"], id.to_string());
    assert_eq!(parts["worker_id"], want.worker_id);
    assert_eq!(parts["sequence"], want.sequence);
    assert_eq!(parts["timestamp_ms"], want.timestamp_ms);
    assert_eq!(parts["clock_id"], want.clock_id);

    stop_cleanly(&mut server, &dir);
}

#[test]
fn python_urllib_fetches_unique_ids_and_reads_the_metrics_with_prometheus_client() {
    let dir = TempDir::new("serve-python");
    let mut server = Server::start(&["--worker", "9", "--state-dir", dir.path()], &[]);
    let base = server.url("");
    let client = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/clients/client.py");
    let out = output(Command::new(python()).args([client, &base, "16", "30"]));
    let all = ids(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(all.len(), 16 * (30 + 100));
    check_unique(&all, &Layout::default(), &[9]);

    // Leaf's path has its generator of its own, in Leaf's layout: a second namespace in the
    // metrics.
    let (status, body) = server.get("/api/snowflake/get/orders");
    assert_eq!(status, 200, "{body}");
    assert!(
        body.parse::<u64>().is_ok(),
        "Leaf's answer is the bare ID: {body:?}"
    );

    // Readiness probes spend no ID.
    for _ in 0..5 {
        assert_eq!(server.get("/readyz").0, 200);
    }

    let metrics = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/clients/metrics.py");
    let out = output(Command::new(python()).args([metrics, &base]));
    let samples = String::from_utf8_lossy(&out.stdout).into_owned();
    let line = |s: &str| {
        samples
            .lines()
            .find(|l| l.contains(s))
            .unwrap_or_else(|| panic!("no {s} in:\n{samples}"))
            .to_string()
    };
    let value = |s: &str| -> f64 {
        let l = line(s);
        l.rsplit(' ').next().unwrap().parse().unwrap()
    };
    assert!(line("rimeflake_ids_issued_total{namespace=default}").starts_with("counter "));
    assert_eq!(
        value("rimeflake_ids_issued_total{namespace=default}"),
        all.len() as f64
    );
    assert_eq!(value("rimeflake_ids_issued_total{namespace=twitter}"), 1.0);
    // The service's own counts and gauges parse too.
    assert!(line("rimeflake_http_connections_refused_total{}").starts_with("counter "));
    assert!(line("rimeflake_http_requests_refused_total{reason=deadline}").starts_with("counter "));
    assert!(line("rimeflake_http_ids_in_flight{}").starts_with("gauge "));
    assert_eq!(value("rimeflake_worker_id{namespace=default}"), 9.0);
    line("rimeflake_wait_seconds_total{namespace=default}");
    line("rimeflake_clock_rollbacks_total{namespace=default}");
    // State writes on a state directory: at least the one at start, none failed.
    assert!(line("rimeflake_reservation_writes_total{namespace=default}").starts_with("counter "));
    assert!(value("rimeflake_reservation_writes_total{namespace=default}") >= 1.0);
    assert_eq!(
        value("rimeflake_reservation_write_failures_total{namespace=default}"),
        0.0
    );
    assert!(value("rimeflake_reservation_write_seconds_total{namespace=default}") > 0.0);
    // No server lease here.
    assert!(line("rimeflake_lease_state{namespace=default,state=none}").starts_with("gauge "));
    assert_eq!(
        value("rimeflake_lease_state{namespace=default,state=none}"),
        1.0
    );
    assert_eq!(
        value("rimeflake_lease_state{namespace=default,state=held}"),
        0.0
    );
    assert_eq!(
        value("rimeflake_lease_renewals_total{namespace=default}"),
        0.0
    );
    line("rimeflake_lease_renewal_failures_total{namespace=default}");
    line("rimeflake_lease_remaining_seconds{namespace=default}");
    stop_cleanly(&mut server, &dir);
}

#[test]
fn go_net_http_fetches_unique_ids() {
    let go = tool("go", "install Go (https://go.dev/dl)");
    let dir = TempDir::new("serve-go");
    let gocache = TempDir::new("serve-gocache");
    let mut server = Server::start(&["--worker", "11", "--state-dir", dir.path()], &[]);
    let client = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/clients/client.go");
    // The standard library only: no module is fetched.
    let out = output(
        Command::new(go)
            .args(["run", client, &server.url(""), "16", "30"])
            .env("GOTOOLCHAIN", "local")
            .env("GOFLAGS", "-mod=mod")
            .env("GOPROXY", "off")
            .env(
                "GOCACHE",
                std::env::var("GOCACHE").unwrap_or_else(|_| gocache.path().to_string()),
            ),
    );
    let all = ids(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(all.len(), 16 * (30 + 100));
    check_unique(&all, &Layout::default(), &[11]);
    stop_cleanly(&mut server, &dir);
}

#[test]
fn java_http_client_fetches_unique_ids() {
    let java = tool(
        "java",
        "install a JDK 11 or later (apt-get install default-jdk-headless)",
    );
    let dir = TempDir::new("serve-java");
    let mut server = Server::start(&["--worker", "12", "--state-dir", dir.path()], &[]);
    let client = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/clients/Client.java");
    let out = output(Command::new(java).args([client, &server.url(""), "16", "30"]));
    let all = ids(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(all.len(), 16 * (30 + 100));
    check_unique(&all, &Layout::default(), &[12]);
    stop_cleanly(&mut server, &dir);
}

#[test]
fn sigint_stops_as_sigterm_does_and_the_port_is_closed_after() {
    let dir = TempDir::new("serve-sigint");
    let mut server = Server::start(&["--worker", "4", "--state-dir", dir.path()], &[]);
    assert_eq!(server.get("/id").0, 200);
    common::signal(&server.child, libc::SIGINT);
    let status = server.wait(std::time::Duration::from_secs(60));
    assert!(
        status.success(),
        "exit {status:?}: {}",
        server.stderr.lock().unwrap()
    );
    assert!(
        std::net::TcpStream::connect(server.addr).is_err(),
        "the port still accepts after the server stopped"
    );
    let shown = state_show(&dir);
    assert!(shown.contains("closed cleanly"), "{shown}");
}
