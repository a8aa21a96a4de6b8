//! Switching from Meituan Leaf by URL alone: the keys of `/api/snowflake/get/{key}` share one
//! ID space, in Leaf's layout (`twitter`: Leaf's bits and epoch), `--above` keeps the first ID
//! above the largest one Leaf stored (and is refused where the layout cannot get there),
//! `/decodeSnowflakeId` answers as Leaf's does, and separate ID spaces per key when asked.

use common::support::TempDir;

mod common;
use common::{Conn, Server};

use rimeflake::{Layout, Parts};
use std::collections::HashSet;
use std::process::Command;

/// `count` IDs of the Leaf path for `key`, over one keep-alive connection.
fn fetch(server: &Server, key: &str, count: usize) -> Vec<u64> {
    let mut conn = Conn::open(server.addr);
    (0..count)
        .map(|_| {
            let a = conn.get(&format!("/api/snowflake/get/{key}"));
            assert_eq!(a.status, 200, "{}", a.body);
            a.body
                .parse()
                .unwrap_or_else(|_| panic!("Leaf's answer is the bare ID: {:?}", a.body))
        })
        .collect()
}

#[test]
fn two_keys_share_one_id_space_across_100000_fetches_in_leafs_layout() {
    let dir = TempDir::new("serve-leaf-keys");
    let mut server = Server::start(&["--worker", "6", "--state-dir", dir.path()], &[]);
    // Four clients a key, at once: 100,000 fetches.
    let mut by_key: Vec<(&str, Vec<u64>)> = std::thread::scope(|s| {
        let runs: Vec<_> = ["a", "b"]
            .into_iter()
            .flat_map(|key| (0..4).map(move |_| key))
            .map(|key| {
                let server = &server;
                s.spawn(move || (key, fetch(server, key, 12_500)))
            })
            .collect();
        runs.into_iter().map(|r| r.join().unwrap()).collect()
    });
    by_key.sort_by_key(|(k, _)| *k);
    let a: HashSet<u64> = by_key[..4]
        .iter()
        .flat_map(|(_, ids)| ids.iter().copied())
        .collect();
    let b: HashSet<u64> = by_key[4..]
        .iter()
        .flat_map(|(_, ids)| ids.iter().copied())
        .collect();
    assert_eq!(a.len(), 50_000, "an ID of key a repeated");
    assert_eq!(b.len(), 50_000, "an ID of key b repeated");
    let both = a.intersection(&b).count();
    assert_eq!(both, 0, "{both} IDs were handed to both keys");

    // Leaf's layout: twitter's bits, Twitter's epoch, so the IDs read as now and carry the
    // worker ID (its low 5 bits, below the datacenter part).
    let twitter = Layout::twitter();
    let now = rimeflake::clock::system_now_ms();
    for &id in a.iter().chain(&b) {
        let parts = twitter.decode(id).unwrap();
        assert!(
            parts.timestamp_ms.abs_diff(now) < 600_000,
            "{id} reads as {parts:?}"
        );
        assert_eq!(parts.worker_id, 6);
    }
    // The largest of them is as large as a Leaf ID of today: about 2.1e18, not 4.8e16.
    assert!(*a.iter().max().unwrap() > 2_000_000_000_000_000_000);

    // Leaf's decoding, with Leaf's keys and forms.
    let id = *a.iter().max().unwrap();
    let (status, body) = server.get(&format!("/decodeSnowflakeId?snowflakeId={id}"));
    assert_eq!(status, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    let parts = twitter.decode(id).unwrap();
    assert_eq!(v["workerId"], "6");
    assert_eq!(v["sequenceId"], parts.sequence.to_string());
    let ts = v["timestamp"].as_str().unwrap();
    assert!(ts.starts_with(&format!("{}(", parts.timestamp_ms)), "{ts}");
    assert!(server.stop().success());
}

/// A Leaf ID of `at_ms`, with the highest worker and sequence (the largest of its millisecond).
fn leaf_id(at_ms: u64) -> u64 {
    Layout::twitter()
        .compose(&Parts {
            clock_id: 0,
            timestamp_ms: at_ms,
            datacenter_id: Some(31),
            worker_id: 31,
            sequence: 4095,
        })
        .unwrap()
}

#[test]
fn above_the_largest_leaf_id_the_first_id_is_larger_and_stays_so_after_a_restart() {
    let dir = TempDir::new("serve-leaf-above");
    // Leaf's host ran 1.5 s ahead of this one: its last ID lies ahead of our clock.
    let stored = leaf_id(rimeflake::clock::system_now_ms() + 1500);
    let above = stored.to_string();
    let args = [
        "--worker",
        "0",
        "--state-dir",
        dir.path(),
        "--above",
        &above,
    ];
    let mut server = Server::start(&args, &[]);
    let first = fetch(&server, "orders", 1)[0];
    assert!(first > stored, "{first} is not above Leaf's {stored}");
    assert!(server
        .stderr
        .lock()
        .unwrap()
        .contains(&format!("above {stored}")));
    assert!(server.stop().success());
    // Restarted without --above: still above (the state was raised and stored).
    let mut server = Server::start(&args[..4], &[]);
    let next = fetch(&server, "orders", 1)[0];
    assert!(next > first, "{next} after a restart is not above {first}");
    assert!(server.stop().success());
}

#[test]
fn above_an_id_the_layout_cannot_get_past_is_refused_at_start() {
    let dir = TempDir::new("serve-leaf-above-no");
    for (above, says) in [
        // The largest twitter ID: no time unit after it.
        ("9223372036854775807", "no ID of layout twitter lies above"),
        // Not an ID: the sign bit.
        ("9223372036854775808", "sign bit"),
    ] {
        let out = Command::new(common::binary())
            .args([
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--state-dir",
                dir.path(),
            ])
            .args(["--above", above])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{above}: {err}");
        assert!(err.contains(&format!("--above {above}")), "{err}");
        assert!(err.contains(says), "{err}");
    }
}

#[test]
fn separate_id_spaces_per_key_when_asked_with_keys_as_written() {
    let dir = TempDir::new("serve-leaf-separate");
    let mut server = Server::start(
        &[
            "--worker",
            "2",
            "--state-dir",
            dir.path(),
            "--leaf-keys",
            "separate",
            "--max-keys",
            "2",
        ],
        &[],
    );
    // `+` is itself in a path (the key a+b is not "a b"), and %2B is one too.
    for key in ["a+b", "c%2Bd"] {
        let (status, body) = server.get(&format!("/api/snowflake/get/{key}"));
        assert_eq!(status, 200, "{key}: {body}");
    }
    let (status, body) = server.get("/api/snowflake/get/e");
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("--max-keys"), "{body}");
    let (_, metrics) = server.get("/metrics");
    for ns in ["a+b", "c+d"] {
        assert!(
            metrics.contains(&format!(
                "rimeflake_ids_issued_total{{namespace=\"{ns}\"}} 1"
            )),
            "no namespace {ns}: {metrics}"
        );
    }
    assert!(server.stop().success());
}
