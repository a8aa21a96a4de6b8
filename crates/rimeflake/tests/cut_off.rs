//! Holders cut off from their server mid-renewal, on each of the four servers: their
//! connections go through a proxy that then drops every connection and answers no new one (a
//! network partition), or holds every byte for 3 s (a network too slow for a renewal). A
//! successor reaching the server directly takes the same worker IDs once the server lets the
//! leases go: the holders must have stopped before (at three quarters of a TTL after their last
//! renewal), their last ID back before the successor's attempt that took the lease began (on
//! CLOCK_BOOTTIME, which every process shares), and none of the successor's IDs may be one of
//! theirs.
//!
//! The holders and successors are those of `replicated`.

mod issuers;
mod replicated;
use issuers::scratch;
use issuers::Issuer;
use replicated::{count, holders_with_ttl, stopped_before_taken, successors_issue};
use rimeflake_testkit::servers::{MariaDb, Postgres, Proxy, Redis, ZooKeeper};

/// The holders' lease TTL: shorter than `reserve_ahead` (1 s), so that a cut-off holder's
/// stored reservation would still let it issue when the server lets its lease go: only its
/// lease deadline (three quarters of the TTL after its last renewal) stops it in time.
const HOLDERS_TTL_MS: u64 = 800;

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
        let holders = holders_with_ttl(&url_via(way.port()), &ns, &dir, HOLDERS_TTL_MS);
        match fault {
            Fault::Blackhole => way.cut(),
            Fault::Slow => way.delay(3_000),
        }
        let theirs = successors_issue(&url_via(port), &ns, &dir, "successor");
        let ours: Vec<(Vec<u64>, Vec<String>)> = holders.into_iter().map(Issuer::finish).collect();
        let mut failed = count(&case, &ours, &theirs);
        for (i, stopped) in stopped_before_taken(&ours, &theirs).into_iter().enumerate() {
            if stopped != Some(true) {
                failed.push(format!(
                    "pair {i}: the holder's last ID came back after its successor began to \
                     take the lease ({stopped:?})\n  holder: {:?}\n  successor: {:?}",
                    ours[i].1, theirs[i].1
                ));
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
        assert!(failed.is_empty(), "{case}:\n{}", failed.join("\n"));
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
