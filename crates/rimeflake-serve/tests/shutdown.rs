//! Stopping: SIGTERM while requests are in flight, on a real Redis: a batch still waiting for
//! the clock finishes with all its IDs, a request whose headers are half sent gets a clean end
//! (an answer or a close, never a hang), the process exits 0, and the lease's key is gone from
//! Redis. SIGHUP and SIGINT stop as SIGTERM does; a half-sent request does not hold the stop;
//! a second signal ends the process at once, with the signal's status.

use common::support::TempDir;
use rimeflake_testkit::servers;

mod common;
use common::{ids, signal, wait_until, Server};

use rimeflake::Layout;
use std::collections::HashSet;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// Two IDs a millisecond: a batch of 12,000 is 6 s of the clock's IDs, of which `max_drift`
/// (2 s) may be borrowed ahead, so it waits for the clock about 4 s, in slices.
const SLOW: &str = "clock_id=0,time=52,worker=10,sequence=1,epoch_ms=1420070400000";

fn lease_keys(redis: &servers::Redis) -> Vec<String> {
    // The raw reply: an array of bulk strings, one line each after its length line.
    redis
        .command(&["KEYS", "rimeflake:*"])
        .lines()
        .filter(|l| l.starts_with("rimeflake:") && l.ends_with(":lease"))
        .map(String::from)
        .collect()
}

/// A request for 12,000 IDs, which on [`SLOW`] waits for the clock for seconds; its answer is
/// read from the stream returned.
fn ask_for_a_batch(server: &Server) -> TcpStream {
    let mut batch = TcpStream::connect(server.addr).unwrap();
    batch
        .set_read_timeout(Some(Duration::from_secs(120)))
        .unwrap();
    batch
        .write_all(b"GET /ids?n=12000 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .unwrap();
    batch
}

/// The body of the answer read from `s` to its end: (status, body).
fn answer(s: &mut TcpStream) -> (Option<u16>, String) {
    let mut bytes = Vec::new();
    let _ = s.read_to_end(&mut bytes);
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let status = text.split_whitespace().nth(1).and_then(|c| c.parse().ok());
    let body = text
        .split_once("\r\n\r\n")
        .map_or(String::new(), |(_, b)| b.to_string());
    (status, body)
}

#[test]
fn sigterm_finishes_a_waiting_batch_ends_a_half_sent_request_and_frees_the_lease() {
    let redis = servers::Redis::start();
    let env = [("RIMEFLAKE_NO_DURABILITY_WARNING", "1")];
    let mut server = Server::start(
        &[
            "--backend",
            &redis.url(),
            "--layout",
            SLOW,
            "--max-n",
            "12000",
            "--shutdown-timeout",
            "30",
            // The batch waits for the clock for seconds, past the default wait deadline.
            "--wait-deadline",
            "30",
        ],
        &env,
    );
    assert_eq!(server.get("/id").0, 200);
    assert_eq!(lease_keys(&redis).len(), 1, "one lease while serving");

    // A batch that waits for the clock: in flight for seconds.
    let mut batch = ask_for_a_batch(&server);
    // A request whose headers stop half-way.
    let mut half = TcpStream::connect(server.addr).unwrap();
    half.set_read_timeout(Some(Duration::from_secs(120)))
        .unwrap();
    half.write_all(b"GET /id HTTP/1.1\r\nHost: t\r\nX-Part")
        .unwrap();
    // The batch is waiting once the generator has issued past the clock's borrowable reach:
    // its IDs issued climb while /metrics answers.
    wait_until("the batch under way", Duration::from_secs(60), || {
        let (_, page) = server.get("/metrics");
        page.lines()
            .filter(|l| l.starts_with("rimeflake_ids_issued_total{"))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .any(|n| n > 2.0)
    });

    signal(&server.child, libc::SIGTERM);

    let (status, body) = answer(&mut batch);
    assert_eq!(status, Some(200), "the batch in flight: {body:?}");
    let got = ids(&body);
    assert_eq!(got.len(), 12_000, "every ID of the batch in flight");
    let layout = Layout::from_spec(SLOW).unwrap();
    let distinct: HashSet<u64> = got.iter().copied().collect();
    assert_eq!(distinct.len(), got.len());
    assert!(got.windows(2).all(|w| w[0] < w[1]));
    assert!(got.iter().all(|&id| layout.decode(id).is_ok()));

    // The half-sent request: an answer (a 4xx, or a 503 as the server stops) or a close.
    let (status, text) = answer(&mut half);
    if let Some(code) = status {
        assert!((400..600).contains(&code), "{code}: {text:?}");
    }

    let exit = server.wait(Duration::from_secs(60));
    assert!(
        exit.success(),
        "{exit:?}: {}",
        server.stderr.lock().unwrap()
    );
    assert_eq!(
        lease_keys(&redis),
        Vec::<String>::new(),
        "the lease was not released: {}",
        server.stderr.lock().unwrap()
    );
}

/// `rimeflake state show` of `dir`.
fn state_show(dir: &TempDir) -> String {
    let out = std::process::Command::new(common::binary())
        .args(["state", "show", "--state-dir", dir.path()])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn sighup_and_sigint_stop_cleanly_as_sigterm_does() {
    for (sig, name) in [(libc::SIGHUP, "SIGHUP"), (libc::SIGINT, "SIGINT")] {
        let dir = TempDir::new("serve-signals");
        let mut server = Server::start(&["--worker", "4", "--state-dir", dir.path()], &[]);
        assert_eq!(server.get("/id").0, 200);
        assert_eq!(server.get("/api/snowflake/get/k").0, 200);
        signal(&server.child, sig);
        let exit = server.wait(Duration::from_secs(60));
        let log = server.stderr.lock().unwrap().clone();
        assert_eq!(exit.code(), Some(0), "{name}: {exit:?}: {log}");
        assert!(log.contains(&format!("stopping on {name}")), "{log}");
        assert!(log.contains("stopped: every generator closed"), "{log}");
        // Both generators (the main one and the Leaf path's): lease free, state closed.
        let shown = state_show(&dir);
        assert_eq!(
            shown.matches("closed cleanly").count(),
            2,
            "{name}: {shown}"
        );
        assert!(!shown.contains("held by"), "{name}: {shown}");
    }
}

#[test]
fn a_half_sent_request_does_not_hold_the_stop() {
    let dir = TempDir::new("serve-half");
    let mut server = Server::start(
        &[
            "--worker",
            "5",
            "--state-dir",
            dir.path(),
            "--shutdown-timeout",
            "30",
            "--header-timeout",
            "60",
        ],
        &[],
    );
    let mut half = TcpStream::connect(server.addr).unwrap();
    half.set_read_timeout(Some(Duration::from_secs(120)))
        .unwrap();
    half.write_all(b"GET /id HTTP/1.1\r\nHost: t\r\nX-Part")
        .unwrap();
    assert_eq!(server.get("/id").0, 200);
    signal(&server.child, libc::SIGTERM);
    // No request is in flight: the stop does not wait for the half-sent one's headers (60 s)
    // nor for the grace period (30 s).
    let exit = server.wait(Duration::from_secs(10));
    assert!(exit.success(), "{exit:?}");
    let (status, _) = answer(&mut half);
    assert!(status.is_none_or(|c| c >= 400));
    assert!(state_show(&dir).contains("closed cleanly"));
}

#[test]
fn a_second_signal_ends_at_once_with_the_signals_status() {
    let dir = TempDir::new("serve-second");
    let mut server = Server::start(
        &[
            "--state-dir",
            dir.path(),
            "--worker",
            "1",
            "--layout",
            SLOW,
            "--max-n",
            "12000",
            "--wait-deadline",
            "30",
            "--shutdown-timeout",
            "30",
        ],
        &[],
    );
    assert_eq!(server.get("/id").0, 200);
    let mut batch = ask_for_a_batch(&server);
    wait_until("the batch waiting", Duration::from_secs(60), || {
        let (_, page) = server.get("/metrics");
        page.lines()
            .any(|l| l.starts_with("rimeflake_http_requests_waiting ") && !l.ends_with(" 0"))
    });
    signal(&server.child, libc::SIGTERM);
    wait_until("the stop under way", Duration::from_secs(60), || {
        server
            .stderr
            .lock()
            .unwrap()
            .contains("stopping on SIGTERM")
    });
    signal(&server.child, libc::SIGINT);
    let exit = server.wait(Duration::from_secs(60));
    assert_eq!(exit.code(), Some(128 + libc::SIGINT), "{exit:?}");
    // The batch, still waiting for the clock, was not finished.
    let (status, body) = answer(&mut batch);
    assert!(
        status != Some(200) || ids(&body).len() < 12_000,
        "the batch finished: the second signal waited for it"
    );
    assert!(server
        .stderr
        .lock()
        .unwrap()
        .contains("SIGINT while stopping: ending at once"));
}
