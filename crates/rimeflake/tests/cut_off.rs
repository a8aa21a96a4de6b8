//! Holders cut off from their server mid-renewal, on each of the four servers: their
//! connections go through a proxy that then drops every connection and answers no new one (a
//! network partition), or holds every byte for 3 s (a network too slow for a renewal). A
//! successor reaching the server directly takes the same worker IDs once the server lets the
//! leases go: the holders must have stopped before (at three quarters of a TTL after their last
//! renewal), so none of the successor's IDs may be one of theirs.
//!
//! The holders and successors are those of `replicated`.

mod issuers;
mod replicated;
use issuers::scratch;
use replicated::{holders, successors};
use rimeflake_testkit::servers::{MariaDb, Postgres, Proxy, Redis, ZooKeeper};

/// What happens to the holders' network.
#[derive(Clone, Copy)]
enum Fault {
    /// Every connection dropped, new ones accepted and never answered.
    Blackhole,
    /// Every byte held 3 s each way.
    Slow,
}

/// The holders on `url_via(proxy port)`, the fault, then the successors on `url_via(port)`.
fn cut_off(server: &str, port: u16, url_via: &dyn Fn(u16) -> String) {
    for (fault, name) in [(Fault::Blackhole, "blackholed"), (Fault::Slow, "3 s slow")] {
        let case = format!("{server}, the holders' network {name}");
        let dir = scratch(&format!("cut-{server}-{name}").replace(' ', "-"));
        let ns = format!("cut-{}", name.replace(' ', "-"));
        let way = Proxy::start(port);
        let holders = holders(&url_via(way.port()), &ns, &dir);
        match fault {
            Fault::Blackhole => way.cut(),
            Fault::Slow => way.delay(3_000),
        }
        successors(&case, &url_via(port), &ns, &dir, holders);
    }
}

#[test]
fn redis_holders_cut_off_stop_before_a_successor_takes_over() {
    let redis = Redis::start();
    cut_off("Redis", redis.port(), &|p| {
        format!("redis://127.0.0.1:{p}/0")
    });
}

#[test]
fn postgres_holders_cut_off_stop_before_a_successor_takes_over() {
    let pg = Postgres::start();
    cut_off("PostgreSQL", pg.port(), &|p| {
        format!("postgresql://postgres@127.0.0.1:{p}/rimeflake")
    });
}

#[test]
fn mariadb_holders_cut_off_stop_before_a_successor_takes_over() {
    let db = MariaDb::start();
    cut_off("MariaDB", db.port(), &|p| {
        format!("mysql://root@127.0.0.1:{p}/rimeflake")
    });
}

#[test]
fn zookeeper_holders_cut_off_stop_before_a_successor_takes_over() {
    let zk = ZooKeeper::start();
    cut_off("ZooKeeper", zk.port(), &|p| {
        format!("zookeeper://127.0.0.1:{p}/rimeflake")
    });
}
