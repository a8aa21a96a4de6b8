use super::*;
use crate::clock::monotonic_ns;
use crate::lease::remote::servers::{Postgres, PG_PASSWORD};
use crate::state::WorkerState;
use crate::testing::remote_contract::{Expired, Server, NS};
use std::sync::{Arc, Barrier};

const OP: Duration = Duration::from_millis(500);
/// For the tests of what an error says, not of when it comes: a password login (SCRAM's key
/// stretching in a debug build) and a first `CREATE TABLE` took longer than 500 ms on a loaded
/// 2-core machine (a CI run failed there).
const ROOMY: Duration = Duration::from_secs(5);

impl Server for Postgres {
    fn url(&self) -> String {
        Postgres::url(self)
    }
    fn connect(&self, url: &str, op: Duration) -> Result<Box<dyn Conn>> {
        Ok(Box::new(PgConn::open(url, op)?))
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
             WHERE namespace = '{namespace}' AND worker_id = {worker_id} RETURNING worker_id"
        );
        assert_eq!(
            self.psql(&sql).lines().next(),
            Some(&*worker_id.to_string())
        );
    }
    fn forget_worker(&self, namespace: &str, worker_id: u64) {
        self.psql(&format!(
            "DELETE FROM rimeflake_workers WHERE namespace = '{namespace}' \
             AND worker_id = {worker_id}"
        ));
    }
    fn forget_all(&self) {
        self.psql("DELETE FROM rimeflake_workers; DELETE FROM rimeflake_namespaces");
    }
    fn pause(&self) {
        Postgres::pause(self)
    }
    fn resume(&self) {
        Postgres::resume(self)
    }
    fn stop(&mut self) {
        Postgres::stop(self)
    }
    fn restart(&mut self) {
        Postgres::restart(self)
    }
}

crate::testing::remote_contract::contract_tests!(Postgres::start());

fn open(pg: &Postgres) -> PgConn {
    PgConn::open(&pg.url(), OP).unwrap_or_else(|e| panic!("open {}: {e}", pg.url()))
}

fn state_text(clock_id: u64) -> String {
    let mut s = WorkerState::fresh(4);
    s.clock_id = clock_id;
    super::super::encode_state(&s)
}

fn v(version: u64, text: &str) -> Versioned {
    Versioned {
        version,
        text: text.to_string(),
    }
}

/// Runs `f` and returns its result and how long it took.
fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let start = monotonic_ns();
    let out = f();
    (out, Duration::from_nanos(monotonic_ns() - start))
}

#[test]
fn the_tables_match_the_schema_and_first_connections_may_race() {
    let pg = Postgres::start();
    let barrier = Arc::new(Barrier::new(8));
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let (url, barrier) = (pg.url(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                PgConn::open(&url, Duration::from_secs(10)).map(|_| ())
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap().unwrap();
    }
    let columns = pg.psql(
        "SELECT table_name || '.' || column_name || ':' || data_type FROM \
         information_schema.columns WHERE table_name LIKE 'rimeflake_%' \
         ORDER BY table_name, ordinal_position",
    );
    assert_eq!(
        columns.lines().collect::<Vec<_>>(),
        [
            "rimeflake_namespaces.namespace:text",
            "rimeflake_namespaces.layout:text",
            "rimeflake_namespaces.created:timestamp with time zone",
            "rimeflake_namespaces.used:jsonb",
            "rimeflake_namespaces.settings:jsonb",
            "rimeflake_workers.namespace:text",
            "rimeflake_workers.worker_id:bigint",
            "rimeflake_workers.owner:text",
            "rimeflake_workers.lease_expires:timestamp with time zone",
            "rimeflake_workers.state:text",
            "rimeflake_workers.version:bigint",
        ]
    );
}

#[test]
fn workers_lists_an_undecodable_state_as_none() {
    let pg = Postgres::start();
    let mut c = open(&pg);
    assert!(c.acquire(NS, 4, "tok", 10_000).unwrap());
    let good = state_text(0);
    assert_eq!(c.save(NS, 4, "tok", 0, &v(1, &good)).unwrap(), Saved::Yes);
    assert_eq!(c.reset(NS, 5, 0, &v(1, "garbage;;")).unwrap(), Saved::Yes);
    pg.psql("UPDATE rimeflake_workers SET version = 6 WHERE worker_id = 5");
    let w = c.workers(NS).unwrap();
    assert_eq!(w.iter().map(|w| w.worker_id).collect::<Vec<_>>(), [4, 5]);
    assert_eq!(w[0].state, decode_state(&good));
    assert!(w[0].state.is_some());
    assert_eq!(
        (w[1].state.clone(), w[1].version, w[1].holder.clone()),
        (None, 6, None)
    );
    // A value no generator writes (a negative version) is an error, not a panic.
    pg.psql("UPDATE rimeflake_workers SET version = -1 WHERE worker_id = 5");
    let e = c.workers(NS).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::State, "{e}");
    assert_eq!(c.load(NS, 5).unwrap_err().kind(), ErrorKind::State);
    assert!(c.load(NS, 4).unwrap().is_some());
}

/// A database that commits without waiting (`synchronous_commit = off`, or `local`, which
/// waits for no synchronous standby) does not lose rimeflake's writes: its sessions commit with
/// `synchronous_commit = on`, so nothing is left to warn about.
#[test]
fn a_database_that_commits_without_waiting_does_not_for_rimeflake() {
    let pg = Postgres::start();
    for setting in ["off", "local"] {
        pg.psql(&format!(
            "ALTER DATABASE rimeflake SET synchronous_commit = {setting}"
        ));
        let mut c = open(&pg);
        assert_eq!(c.check_settings().unwrap(), Vec::<String>::new());
        let on = c
            .call("read", |mut s| async move {
                let out = s
                    .query("SELECT current_setting('synchronous_commit')", &[])
                    .await
                    .map(|rows| rows[0].get::<_, String>(0));
                (s, out)
            })
            .unwrap();
        assert_eq!(on, "on", "{setting}");
    }
}

#[test]
fn a_restart_between_calls_costs_no_failed_call() {
    // The stop and restart themselves: the contract's
    // a_stopped_server_fails_calls_and_its_state_survives_restarts. Here, PostgreSQL's
    // connection alone: restarted with no call in between, the server closed the idle
    // connection, and the next call opens a new one rather than failing on the old one
    // (Redis's fails that call, and the one after it reconnects).
    let mut pg = Postgres::start();
    let mut c = open(&pg);
    assert!(c.acquire(NS, 1, "tok", 60_000).unwrap());
    assert_eq!(c.save(NS, 1, "tok", 0, &v(1, "s1")).unwrap(), Saved::Yes);
    pg.restart();
    assert!(c.renew(NS, 1, "tok", 60_000).unwrap());
    pg.restart();
    assert_eq!(c.save(NS, 1, "tok", 1, &v(2, "s2")).unwrap(), Saved::Yes);
}

#[test]
fn a_wrong_password_is_a_config_error_that_hides_it() {
    let pg = Postgres::start();
    let mut c = PgConn::open(&pg.url_with_password(PG_PASSWORD), ROOMY).unwrap();
    assert!(c.acquire(NS, 1, "tok", 10_000).unwrap());

    let wrong = "hunter2-wrong";
    let e = PgConn::open(&pg.url_with_password(wrong), ROOMY).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Config, "{e}");
    assert!(e.message().contains("wrong password"), "{e}");
    assert!(e.message().contains("rimeflake_pw:***@127.0.0.1"), "{e}");
    assert!(
        !e.message().contains(wrong) && !format!("{e:?}").contains(wrong),
        "{e:?}"
    );

    // The server asks for a password and the URL has none.
    let url = pg.url().replace("postgres@", "rimeflake_pw@");
    let e = PgConn::open(&url, ROOMY).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Config, "{e}");
}

#[test]
fn a_user_that_may_not_create_tables_uses_tables_made_beforehand() {
    let pg = Postgres::start();
    pg.psql("REVOKE CREATE ON SCHEMA public FROM rimeflake_pw");
    let url = pg.url_with_password(PG_PASSWORD);
    let e = PgConn::open(&url, ROOMY).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Config, "{e}");
    assert!(e.message().contains("permission denied"), "{e}");
    assert!(e.message().contains("tables"), "{e}");

    pg.psql(SCHEMA);
    pg.psql(
        "GRANT SELECT, INSERT, UPDATE ON rimeflake_namespaces, rimeflake_workers TO rimeflake_pw",
    );
    let mut c = PgConn::open(&url, ROOMY).unwrap();
    assert_eq!(c.settle_layout(NS, "l").unwrap(), "l");
    assert!(c.acquire(NS, 1, "tok", 10_000).unwrap());
}

#[test]
fn an_unknown_database_is_a_config_error() {
    let pg = Postgres::start();
    let url = pg.url().replace("/rimeflake", "/no_such_db");
    let e = PgConn::open(&url, ROOMY).unwrap_err();
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
    let url = format!("postgresql://postgres:pw-xyz@127.0.0.1:{port}/rimeflake");
    let (out, took) = timed(|| PgConn::open(&url, OP));
    let e = out.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Lease, "{e}");
    assert!(e.message().contains(&format!("127.0.0.1:{port}")), "{e}");
    assert!(!e.message().contains("pw-xyz"), "{e}");
    assert!(took < OP * 5, "{took:?}");
}

#[test]
fn calls_from_inside_an_async_runtime_work() {
    let pg = Postgres::start();
    let theirs = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // An application that builds its generator in async code: our runtime must not nest
    // in theirs (tokio panics on that).
    let mut c = theirs.block_on(async { open(&pg) });
    theirs.block_on(async {
        assert!(c.acquire(NS, 1, "tok", 10_000).unwrap());
        assert_eq!(c.save(NS, 1, "tok", 0, &v(1, "s")).unwrap(), Saved::Yes);
    });
    assert_eq!(c.load(NS, 1).unwrap(), Some(v(1, "s")));
    theirs.block_on(async { drop(c) });
}

#[test]
fn a_url_typo_is_a_config_error() {
    for url in [
        "postgresql://127.0.0.1:notaport/x",
        "postgresql://u:pw-xyz@127.0.0.1:notaport/x",
        "postgresql://127.0.0.1/x?nosuchoption=1",
    ] {
        let e = PgConn::open(url, OP).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Config, "{url}: {e}");
        assert!(!e.message().contains("pw-xyz"), "{e}");
    }
}

/// While the namespace requires commits through a synchronous standby, a server that has none
/// configured (an old primary set to commit alone) refuses lease and state writes, saying why;
/// once one is configured, they go through it.
#[test]
fn writes_need_a_synchronous_standby_while_the_namespace_requires_one() {
    let pg = Postgres::start();
    let mut c = open(&pg);
    assert!(c.acquire(NS, 2, "tok", 10_000).unwrap());
    c.require(Arc::new(Replicas::new(1)));
    for e in [
        c.renew(NS, 2, "tok", 10_000).unwrap_err(),
        c.save(NS, 2, "tok", 0, &v(1, &state_text(0))).unwrap_err(),
        c.acquire(NS, 3, "tok", 10_000).unwrap_err(),
    ] {
        assert_eq!(e.kind(), ErrorKind::Lease);
        assert!(
            e.message().contains("synchronous_standby_names is empty"),
            "{e}"
        );
    }
    assert_eq!(c.load(NS, 2).unwrap(), None);
    c.require(Arc::new(Replicas::new(0)));
    assert_eq!(
        c.save(NS, 2, "tok", 0, &v(1, &state_text(0))).unwrap(),
        Saved::Yes
    );
}
