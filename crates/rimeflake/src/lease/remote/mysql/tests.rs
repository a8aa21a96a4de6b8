use super::*;
use crate::lease::remote::servers::{MariaDb, MY_PASSWORD, MY_PASSWORD_ROLE};
use crate::lease::remote::Replicas;
use crate::state::WorkerState;
use crate::testing::remote_contract::{timed, v, Expired, Server, NS};
use std::sync::{Arc, Barrier};

const OP: Duration = Duration::from_millis(500);
/// For the tests of what an error says, not of when it comes (a first `CREATE TABLE` on a
/// loaded 2-core machine).
const ROOMY: Duration = Duration::from_secs(5);

impl Server for MariaDb {
    fn url(&self) -> String {
        MariaDb::url(self)
    }
    fn connect(&self, url: &str, op: Duration) -> Result<Box<dyn Conn>> {
        Ok(Box::new(MyConn::open(url, op)?))
    }
    fn op(&self) -> Duration {
        OP
    }
    fn slow(&self) -> Duration {
        OP * 5
    }
    fn unreachable(&self) -> Option<&'static str> {
        Some("could not be reached within")
    }
    fn expired(&self) -> Expired {
        Expired::KeepsOwner
    }
    fn drop_lease(&self, namespace: &str, worker_id: u64) {
        let sql = format!(
            "UPDATE rimeflake_workers SET owner = NULL, lease_expires = NULL \
             WHERE namespace = '{namespace}' AND worker_id = {worker_id}; SELECT ROW_COUNT()"
        );
        assert_eq!(self.sql(&sql).trim(), "1");
    }
    fn forget_worker(&self, namespace: &str, worker_id: u64) {
        self.sql(&format!(
            "DELETE FROM rimeflake_workers WHERE namespace = '{namespace}' \
             AND worker_id = {worker_id}"
        ));
    }
    fn forget_all(&self) {
        self.sql("DELETE FROM rimeflake_workers; DELETE FROM rimeflake_namespaces");
    }
    fn pause(&self) {
        MariaDb::pause(self)
    }
    fn resume(&self) {
        MariaDb::resume(self)
    }
    fn stop(&mut self) {
        MariaDb::stop(self)
    }
    fn restart(&mut self) {
        MariaDb::restart(self)
    }
}

crate::testing::remote_contract::contract_tests!(MariaDb::start());

fn open(db: &MariaDb) -> MyConn {
    MyConn::open(&db.url(), ROOMY).unwrap_or_else(|e| panic!("open {}: {e}", db.url()))
}

#[test]
fn the_tables_match_the_schema_and_first_connections_may_race() {
    let db = MariaDb::start();
    let barrier = Barrier::new(8);
    std::thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(|| {
                barrier.wait();
                MyConn::open(&db.url(), Duration::from_secs(10)).map(drop)
            });
        }
    });
    let columns = db.sql(
        "SELECT CONCAT(table_name, '.', column_name, ':', column_type) FROM \
         information_schema.columns WHERE table_schema = 'rimeflake' \
         ORDER BY table_name, ordinal_position",
    );
    assert_eq!(
        columns.lines().collect::<Vec<_>>(),
        [
            "rimeflake_namespaces.namespace:varchar(255)",
            "rimeflake_namespaces.layout:text",
            "rimeflake_namespaces.created:bigint(20)",
            "rimeflake_settings.namespace:varchar(255)",
            "rimeflake_settings.max_drift_ms:bigint(20) unsigned",
            "rimeflake_settings.replicas:int(10) unsigned",
            "rimeflake_settings.epoch:bigint(20) unsigned",
            "rimeflake_settings.lineage:varchar(255)",
            "rimeflake_used.namespace:varchar(255)",
            "rimeflake_used.worker_id:bigint(20) unsigned",
            "rimeflake_used.reach_ms:bigint(20) unsigned",
            "rimeflake_used.marks:bigint(20) unsigned",
            "rimeflake_workers.namespace:varchar(255)",
            "rimeflake_workers.worker_id:bigint(20) unsigned",
            "rimeflake_workers.owner:varchar(255)",
            "rimeflake_workers.lease_expires:bigint(20)",
            "rimeflake_workers.state:text",
            "rimeflake_workers.version:bigint(20) unsigned",
        ]
    );
    let engines = db.sql(
        "SELECT DISTINCT engine FROM information_schema.tables WHERE table_schema = 'rimeflake'",
    );
    assert_eq!(engines.trim(), "InnoDB");
}

#[test]
fn workers_lists_an_undecodable_state_as_none() {
    let db = MariaDb::start();
    let mut c = open(&db);
    assert!(c.acquire(NS, 4, "tok", 10_000).unwrap());
    let mut s = WorkerState::fresh(4);
    s.clock_id = 1;
    let good = super::super::encode_state(&s);
    assert_eq!(c.save(NS, 4, "tok", 0, &v(1, &good)).unwrap(), Saved::Yes);
    assert_eq!(c.reset(NS, 5, 0, &v(1, "garbage;;")).unwrap(), Saved::Yes);
    db.sql("UPDATE rimeflake_workers SET version = 6 WHERE worker_id = 5");
    let w = c.workers(NS).unwrap();
    assert_eq!(w.iter().map(|w| w.worker_id).collect::<Vec<_>>(), [4, 5]);
    assert_eq!(w[0].state, decode_state(&good));
    assert_eq!((w[1].state.clone(), w[1].version), (None, 6));
}

#[test]
fn settings_that_lose_writes_are_warned_about() {
    let db = MariaDb::start();
    db.sql("SET GLOBAL innodb_flush_log_at_trx_commit = 2");
    let warnings = open(&db).check_settings().unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("innodb_flush_log_at_trx_commit = 2"),
        "{warnings:?}"
    );
}

#[test]
fn a_restart_between_calls_costs_no_failed_call() {
    // Restarted with no call in between, the server closed the idle connection: the next call
    // opens a new one rather than failing on the old one.
    let mut db = MariaDb::start();
    let mut c = open(&db);
    assert!(c.acquire(NS, 1, "tok", 60_000).unwrap());
    assert_eq!(c.save(NS, 1, "tok", 0, &v(1, "s1")).unwrap(), Saved::Yes);
    db.restart();
    assert!(c.renew(NS, 1, "tok", 60_000).unwrap());
    db.restart();
    assert_eq!(c.save(NS, 1, "tok", 1, &v(2, "s2")).unwrap(), Saved::Yes);
}

#[test]
fn a_wrong_password_is_a_config_error_that_hides_it() {
    let db = MariaDb::start();
    let mut c = MyConn::open(&db.url_with_password(MY_PASSWORD), ROOMY).unwrap();
    assert!(c.acquire(NS, 1, "tok", 10_000).unwrap());

    let wrong = "hunter2-wrong";
    let e = MyConn::open(&db.url_with_password(wrong), ROOMY).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Config, "{e}");
    assert!(e.message().contains("refused the login"), "{e}");
    assert!(
        e.message()
            .contains(&format!("{MY_PASSWORD_ROLE}:***@127.0.0.1")),
        "{e}"
    );
    assert!(
        !e.message().contains(wrong) && !format!("{e:?}").contains(wrong),
        "{e:?}"
    );
    // The server wants a password and the URL has none.
    let url = db.url().replace("root@", &format!("{MY_PASSWORD_ROLE}@"));
    let e = MyConn::open(&url, ROOMY).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Config, "{e}");
}

#[test]
fn a_user_that_may_not_create_tables_uses_tables_made_beforehand() {
    let db = MariaDb::start();
    db.sql(&format!(
        "REVOKE ALL ON rimeflake.* FROM '{MY_PASSWORD_ROLE}'@'%'; \
         GRANT SELECT, INSERT, UPDATE, DELETE ON rimeflake.* TO '{MY_PASSWORD_ROLE}'@'%'"
    ));
    let url = db.url_with_password(MY_PASSWORD);
    let e = MyConn::open(&url, ROOMY).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Config, "{e}");
    assert!(e.message().contains("permission denied"), "{e}");
    assert!(e.message().contains("tables"), "{e}");

    db.sql(SCHEMA);
    let mut c = MyConn::open(&url, ROOMY).unwrap();
    assert_eq!(c.settle_layout(NS, "l").unwrap(), "l");
    assert!(c.acquire(NS, 1, "tok", 10_000).unwrap());
    assert!(!c.mark_used(NS, 1, 100).unwrap().used_before);
}

#[test]
fn an_unknown_database_is_a_config_error() {
    let db = MariaDb::start();
    let url = db.url().replace("/rimeflake", "/no_such_db");
    let e = MyConn::open(&url, ROOMY).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Config, "{e}");
    assert!(e.message().contains("unknown database"), "{e}");
}

#[test]
fn an_unreachable_server_is_a_lease_error_within_the_timeout() {
    // A port nobody listens on: bound, then freed.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .port();
    let url = format!("mysql://root:pw-xyz@127.0.0.1:{port}/rimeflake");
    let (out, took) = timed(|| MyConn::open(&url, OP));
    let e = out.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Lease, "{e}");
    assert!(e.message().contains(&format!("127.0.0.1:{port}")), "{e}");
    assert!(!e.message().contains("pw-xyz"), "{e}");
    assert!(took < OP * 5, "{took:?}");
}

#[test]
fn a_silent_server_and_a_resolver_that_never_answers_fail_within_the_timeout() {
    // Accepts connections and never says a word.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "mysql://root@127.0.0.1:{}/rimeflake",
        silent.local_addr().unwrap().port()
    );
    let (out, took) = timed(|| MyConn::open(&url, OP));
    let e = out.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Lease, "{e}");
    assert!(e.message().contains("within 500 ms"), "{e}");
    assert!(took < OP * 3, "{took:?}");

    fn hangs(_: &str, _: u16) -> std::io::Result<Vec<std::net::SocketAddr>> {
        std::thread::sleep(Duration::from_secs(30));
        Ok(Vec::new())
    }
    let (out, took) = timed(|| MyConn::open_with("mysql://root@db.invalid/rimeflake", OP, hangs));
    let e = out.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Lease, "{e}");
    assert!(e.message().contains("did not resolve in time"), "{e}");
    assert!(took < OP * 3, "{took:?}");
}

#[test]
fn a_url_typo_is_a_config_error() {
    for url in [
        "mysql://root@127.0.0.1:notaport/x",
        "mysql://u:pw-xyz@127.0.0.1:notaport/x",
        "mysql://u:pw-xyz@127.0.0.1/x?nosuchoption=1",
        "mysql://u:pw-xyz@127.0.0.1",
    ] {
        let e = MyConn::open(url, OP).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Config, "{url}: {e}");
        assert!(!e.message().contains("pw-xyz"), "{e}");
    }
}

/// A standalone server has no semi-synchronous replica: while the namespace requires one, lease
/// and state writes (and `state restored`'s epoch) are refused, saying why. A primary with a
/// semi-synchronous replica (`AFTER_SYNC`) counts it, and writes go through; the replica is
/// refused as read-only, and once promoted names its former primary as its lineage's parent.
#[test]
fn writes_need_a_semi_synchronous_replica_while_the_namespace_requires_one() {
    let db = MariaDb::start();
    let mut c = open(&db);
    c.settle_layout(NS, "l").unwrap();
    assert!(c.acquire(NS, 2, "tok", 10_000).unwrap());
    c.require(Arc::new(Replicas::new(1)));
    for e in [
        c.renew(NS, 2, "tok", 10_000).unwrap_err(),
        c.save(NS, 2, "tok", 0, &v(1, "s1")).unwrap_err(),
        c.acquire(NS, 3, "tok", 10_000).unwrap_err(),
    ] {
        assert_eq!(e.kind(), ErrorKind::Lease);
        assert!(
            e.message().contains("semi-synchronous replication is off"),
            "{e}"
        );
    }
    c.require(Arc::new(Replicas::new(0)));
    c.set_replicas(NS, 1).unwrap();
    let e = c.new_epoch(NS).unwrap_err();
    assert!(e.message().contains("acknowledged by 1 replica"), "{e}");

    let primary = MariaDb::start_primary(true);
    let replica = MariaDb::start_replica_of(&primary, primary.port());
    let mut p = open(&primary);
    let view = p.server().unwrap();
    assert_eq!(
        (
            view.identity.as_str(),
            view.parent.as_deref(),
            view.replicas
        ),
        ("mariadb:0-1", None, 1),
        "{view:?}"
    );
    p.require(Arc::new(Replicas::new(1)));
    p.settle_layout(NS, "l").unwrap();
    assert!(p.acquire(NS, 1, "tok", 10_000).unwrap());
    assert_eq!(p.save(NS, 1, "tok", 0, &v(1, "s1")).unwrap(), Saved::Yes);
    replica.wait_until(
        "SELECT COUNT(*) FROM rimeflake_workers WHERE version = 1",
        |n| n == "1",
        30,
    );
    let e = open(&replica).server().unwrap_err();
    assert!(e.message().contains("read-only"), "{e}");
    replica.promote();
    let promoted = open(&replica).server().unwrap();
    assert_eq!(
        (promoted.identity.as_str(), promoted.parent.as_deref()),
        ("mariadb:0-2", Some("mariadb:0-1")),
        "{promoted:?}"
    );
}
