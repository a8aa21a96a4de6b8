//! Two `rimeflake serve` processes on one Redis, and two on one PostgreSQL (real servers on
//! loopback): each leases its own worker ID, and no ID repeats among all their clients' IDs.

#[path = "../../rimeflake/tests/servers/mod.rs"]
mod servers;

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
