//! 48 processes race for the 8 worker IDs of one namespace on MariaDB and on ZooKeeper (real
//! servers on loopback): each takes any free worker ID (retrying while all are held), issues
//! at full speed, closes and so hands its worker ID on. No two processes may issue the same ID.
//!
//! Each racer is this test binary run again with `RIMEFLAKE_TEST_CROWD_CHILD` set.

use rimeflake_testkit::servers::{MariaDb, ZooKeeper};

use rimeflake::{Backend, ErrorKind, Generator, Layout, WorkerSource};
use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

const RACERS: usize = 48;
const IDS_EACH: usize = 20_000;

/// The child's side: waits for a line on stdin, then takes a worker ID of 0 to 7 (retrying
/// while every one is held), issues `IDS_EACH` IDs, closes, and prints them in hex.
#[test]
fn child_races_for_a_worker_id() {
    let Ok(url) = std::env::var("RIMEFLAKE_TEST_CROWD_CHILD") else {
        return; // only meaningful as a child of the test below
    };
    let mut go = String::new();
    std::io::stdin().read_line(&mut go).unwrap();
    let started = rimeflake::clock::monotonic_ns();
    let g = loop {
        let built = Generator::builder()
            .layout(Layout::default())
            .backend(Backend::parse(&url).unwrap())
            .namespace("crowd")
            .worker(WorkerSource::LocalLease { range: Some(0..=7) })
            .lease_ttl(Duration::from_secs(5))
            .build();
        match built {
            Ok(g) => break g,
            Err(e) if matches!(e.kind(), ErrorKind::NoFreeWorker | ErrorKind::Lease) => {
                assert!(
                    rimeflake::clock::monotonic_ns() - started < 120_000_000_000,
                    "no worker ID in 120 s: {e}"
                );
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => panic!("{e}"),
        }
    };
    let ids: Vec<u64> = (0..IDS_EACH).map(|_| g.next_id().unwrap()).collect();
    let worker = g.worker_id();
    g.close().unwrap();
    let hex: Vec<String> = ids.iter().map(|id| format!("{id:x}")).collect();
    let mut out = std::io::stdout().lock();
    writeln!(out).unwrap();
    writeln!(out, "W {worker} {}", hex.join(" ")).unwrap();
    out.flush().unwrap();
}

fn race(url: &str, server: &str) {
    let mut children: Vec<_> = (0..RACERS)
        .map(|_| {
            Command::new(std::env::current_exe().unwrap())
                .args(["child_races_for_a_worker_id", "--exact", "--nocapture"])
                .env("RIMEFLAKE_TEST_CROWD_CHILD", url)
                .env("RIMEFLAKE_NO_DURABILITY_WARNING", "1")
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    // All at once.
    for child in &mut children {
        writeln!(child.stdin.as_mut().unwrap()).unwrap();
    }
    let layout = Layout::default();
    let mut ids = HashSet::with_capacity(RACERS * IDS_EACH);
    let mut workers = HashSet::new();
    for mut child in children {
        let mut found = false;
        for line in BufReader::new(child.stdout.take().unwrap()).lines() {
            let line = line.unwrap();
            let Some((_, rest)) = line.split_once("W ") else {
                continue;
            };
            let mut fields = rest.split(' ');
            let worker: u64 = fields.next().unwrap().parse().unwrap();
            assert!(worker <= 7, "{server}: worker ID {worker}");
            workers.insert(worker);
            for hex in fields {
                let id = u64::from_str_radix(hex, 16).unwrap();
                assert_eq!(layout.decode(id).unwrap().worker_id, worker);
                assert!(ids.insert(id), "{server}: ID {id} issued twice");
            }
            found = true;
        }
        let mut rest = String::new();
        let _ = child.stdout.take().map(|mut o| o.read_to_string(&mut rest));
        assert!(child.wait().unwrap().success(), "{server}: a racer failed");
        assert!(found, "{server}: a racer printed no IDs");
    }
    assert_eq!(ids.len(), RACERS * IDS_EACH, "{server}");
    eprintln!(
        "{server}: {RACERS} racers on {} worker IDs issued {} IDs, none twice",
        workers.len(),
        ids.len()
    );
}

#[test]
fn forty_eight_processes_racing_for_eight_worker_ids_issue_no_id_twice() {
    let mariadb = MariaDb::start();
    race(&mariadb.url(), "mariadb");
    drop(mariadb);
    let zookeeper = ZooKeeper::start();
    race(&zookeeper.url(), "zookeeper");
}
