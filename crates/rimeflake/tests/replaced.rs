//! A holder whose stored state someone else replaced (an operator, a restore, another process
//! writing where it should not) while its lease is still its own: it cannot know what the new
//! state promises anyone, so it stops issuing IDs as soon as a write of its own finds it, and
//! says why, rather than issuing on from its reservation until `max_wait` runs out.

use rimeflake::{Backend, ErrorKind, Generator};
use rimeflake_testkit::servers::{Postgres, Redis};
use rimeflake_testkit::support::Since;
use std::time::Duration;

const WORKER: u64 = 3;
const NAMESPACE: &str = "replaced";

/// A state in the servers' text form, stored by a token that is not the holder's.
const FOREIGN: &str = "0;1,-,-,-,-,-,-,-;-#intruder/1/00";

fn replaced_state_stops_the_holder(url: &str, replace: &dyn Fn()) {
    let g = Generator::builder()
        .backend(Backend::parse(url).unwrap())
        .namespace(NAMESPACE)
        .worker_id(WORKER)
        .lease_ttl(Duration::from_millis(1_000))
        .build()
        .unwrap();
    g.next_id().unwrap();
    let failures = g.stats().reservation_write_failures;
    replace();
    // Until a write of the holder's finds it (the reservation is moved twice a second).
    let since = Since::now();
    while g.stats().reservation_write_failures == failures {
        assert!(
            since.elapsed() < Duration::from_secs(10),
            "{url}: no write failed after the state was replaced"
        );
        let _ = g.next_id();
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(g.try_next_id(), None, "{url}: the fence is still open");
    let e = g.next_id().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Lease, "{url}: {e}");
    assert!(
        e.message().contains("another process stored its state"),
        "{url}: {e}"
    );
    assert_eq!(g.stats().lease, rimeflake::LeaseState::Lost, "{url}");
    let _ = g.close();
}

#[test]
fn a_holder_whose_state_was_replaced_stops_as_soon_as_it_sees_it() {
    let redis = Redis::start();
    replaced_state_stops_the_holder(&redis.url(), &|| {
        let key = format!("rimeflake:{{{NAMESPACE}:{WORKER}}}:state");
        let reply = redis.command(&["HSET", &key, "v", "999999999", "s", FOREIGN]);
        assert!(reply.starts_with(':'), "{reply}");
    });
    let postgres = Postgres::start();
    replaced_state_stops_the_holder(&postgres.url(), &|| {
        postgres.psql(&format!(
            "UPDATE rimeflake_workers SET state = '{FOREIGN}', version = 999999999 \
             WHERE namespace = '{NAMESPACE}' AND worker_id = {WORKER}"
        ));
    });
}
