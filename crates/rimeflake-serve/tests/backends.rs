//! Two `rimeflake serve` processes on one Redis, and two on one PostgreSQL (real servers on
//! loopback): each leases its own worker ID, and no ID repeats among all their clients' IDs.
//! And a server that stops answering: the service says 503 with the error's kind (and
//! /readyz says not ready, and why only to those with the token; the log says the lease is
//! lost, then back) until the server is back, then serves again by itself. A server that lost
//! its data: /readyz is ready again without any request for an ID.

use rimeflake_testkit::servers;

mod common;
use common::{check_unique, clients, wait_until, Server};

use rimeflake::Layout;
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

fn two_servers_on(url: &str) {
    let env = [("RIMEFLAKE_NO_DURABILITY_WARNING", "1")];
    let mut a = Server::start(&["--backend", url], &env);
    let mut b = Server::start(&["--backend", url], &env);
    let stop = Arc::new(AtomicBool::new(false));
    let got = Arc::new(AtomicUsize::new(0));
    let mut running = clients(a.addr, 4, stop.clone(), got.clone());
    running.extend(clients(b.addr, 4, stop.clone(), got.clone()));
    wait_until("IDs from both servers", Duration::from_secs(120), || {
        got.load(Relaxed) >= 4000
    });
    stop.store(true, Relaxed);
    let mut all = Vec::new();
    for c in running {
        all.extend(c.join().unwrap());
    }
    for s in [&mut a, &mut b] {
        let status = s.stop();
        assert!(status.success(), "{}", s.stderr.lock().unwrap());
    }
    let layout = Layout::default();
    let workers: HashSet<u64> = all
        .iter()
        .map(|&id| layout.decode(id).unwrap().worker_id)
        .collect();
    assert_eq!(workers.len(), 2, "two servers, two worker IDs: {workers:?}");
    check_unique(&all, &layout, &workers.into_iter().collect::<Vec<_>>());
}

#[test]
fn two_servers_on_one_redis_lease_two_worker_ids_and_never_repeat_an_id() {
    let redis = servers::Redis::start();
    two_servers_on(&redis.url());
}

#[test]
fn two_servers_on_one_postgresql_lease_two_worker_ids_and_never_repeat_an_id() {
    let pg = servers::Postgres::start();
    two_servers_on(&pg.url());
}

#[test]
fn a_paused_backend_is_a_503_with_its_kind_until_it_answers_again() {
    let redis = servers::Redis::start();
    let env = [
        ("RIMEFLAKE_NO_DURABILITY_WARNING", "1"),
        ("RIMEFLAKE_LEASE_TTL_MS", "1000"),
        ("RIMEFLAKE_SERVE_TOKEN", TOKEN),
    ];
    let mut server = Server::start(&["--backend", &redis.url()], &env);
    assert_eq!(authed(&server, "/id").0, 200);
    assert_eq!(authed(&server, "/readyz").0, 200);
    // The lease is renewed a few times a TTL: renewals show, the lease held.
    wait_until("a renewal in /metrics", Duration::from_secs(60), || {
        metric(
            &server,
            "rimeflake_lease_renewals_total{namespace=\"default\"}",
        ) >= 1.0
    });
    let held = "rimeflake_lease_state{namespace=\"default\",state=\"held\"}";
    assert_eq!(metric(&server, held), 1.0);
    assert!(
        metric(
            &server,
            "rimeflake_lease_remaining_seconds{namespace=\"default\"}"
        ) > 0.0
    );
    // Probes spend no ID.
    let issued = "rimeflake_ids_issued_total{namespace=\"default\"}";
    assert_eq!(metric(&server, issued), 1.0);
    for _ in 0..5 {
        assert_eq!(authed(&server, "/readyz").0, 200);
    }
    assert_eq!(metric(&server, issued), 1.0);

    redis.pause();
    let mut refused = String::new();
    wait_until(
        "a 503 while Redis is paused",
        Duration::from_secs(120),
        || {
            let (status, body) = authed(&server, "/id");
            refused = body;
            status == 503
        },
    );
    let kind = refused.split(':').next().unwrap_or("");
    assert!(
        ["LEASE", "STATE", "CLOCK_ROLLBACK"].contains(&kind),
        "the 503 names no error kind: {refused:?}"
    );
    assert_eq!(refused.trim_end().lines().count(), 1, "{refused:?}");
    let (status, body) = authed(&server, "/readyz");
    assert_eq!(status, 503, "{body}");
    // Without the token: not ready, and no more (the reason names hosts and worker IDs).
    let (status, terse) = server.get("/readyz");
    assert_eq!(status, 503);
    assert_eq!(terse, "not ready (the reason is shown with the token)\n");
    wait_until(
        "the lease lost in /metrics",
        Duration::from_secs(60),
        || {
            metric(
                &server,
                "rimeflake_lease_state{namespace=\"default\",state=\"lost\"}",
            ) == 1.0
        },
    );
    assert!(
        metric(
            &server,
            "rimeflake_lease_renewal_failures_total{namespace=\"default\"}"
        ) >= 1.0
    );
    assert!(
        body.starts_with("not ready: namespace \"default\""),
        "{body}"
    );
    assert_eq!(authed(&server, "/healthz").0, 200);
    // The log says so while it lasts.
    wait_until("the loss logged", Duration::from_secs(60), || {
        let log = server.stderr.lock().unwrap();
        log.contains("namespace default: the lease of worker") && log.contains("is lost")
    });

    redis.resume();
    wait_until(
        "IDs again once Redis answers",
        Duration::from_secs(120),
        || authed(&server, "/id").0 == 200,
    );
    assert_eq!(authed(&server, "/readyz").0, 200);
    let status = server.stop();
    let log = server.stderr.lock().unwrap().clone();
    assert!(status.success(), "{log}");
    // And when it was back.
    let lost = log.find("is lost").expect(&log);
    let back = log.find("is held again").expect(&log);
    assert!(lost < back, "{log}");
}

const TOKEN: &str = "t0ken";

/// GET `path` with the token.
fn authed(server: &Server, path: &str) -> (u16, String) {
    server.get_with(path, &[&format!("Authorization: Bearer {TOKEN}")])
}

#[test]
fn after_redis_lost_its_data_readyz_is_ready_again_without_a_request_for_an_id() {
    let redis = servers::Redis::start();
    let env = [
        ("RIMEFLAKE_NO_DURABILITY_WARNING", "1"),
        ("RIMEFLAKE_LEASE_TTL_MS", "1000"),
    ];
    let mut server = Server::start(&["--backend", &redis.url()], &env);
    assert_eq!(server.get("/id").0, 200);
    redis.command(&["FLUSHALL"]);
    // The holder sees it at its next renewal.
    wait_until("the loss seen", Duration::from_secs(60), || {
        metric(
            &server,
            "rimeflake_lease_renewal_failures_total{namespace=\"default\"}",
        ) >= 1.0
    });
    // Probes alone (no request for an ID) bring it back: a probe that gates traffic would
    // otherwise never let the request through that clears it.
    wait_until("ready again", Duration::from_secs(30), || {
        server.get("/readyz").0 == 200
    });
    // It moved to another worker ID, as the next request would have made it, or (when the
    // keeper, which goes on trying, took the freed worker ID back first) holds its own again:
    // which one comes first is a race, and either is logged.
    wait_until(
        "the move or the lease back logged",
        Duration::from_secs(30),
        || {
            let log = server.stderr.lock().unwrap();
            log.contains("moved from worker") || log.contains("is held again")
        },
    );
    assert_eq!(server.get("/id").0, 200);
    let status = server.stop();
    assert!(status.success(), "{}", server.stderr.lock().unwrap());
}

/// The value of the sample `name{labels}` on /metrics.
fn metric(server: &Server, sample: &str) -> f64 {
    let (status, page) = authed(server, "/metrics");
    assert_eq!(status, 200, "{page}");
    page.lines()
        .find_map(|l| l.strip_prefix(sample)?.strip_prefix(' '))
        .unwrap_or_else(|| panic!("no {sample} in:\n{page}"))
        .parse()
        .unwrap()
}
