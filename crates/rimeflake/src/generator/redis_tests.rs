//! A generator on a real Redis server (the `redis` feature): what a start-up that fails after
//! taking a worker ID leaves on the server.

use super::Generator;
use crate::backend::Backend;
use crate::lease::remote::redis::{lease_key, workers_key};
use crate::lease::remote::servers::Redis;
use std::time::Duration;

#[test]
fn a_start_up_that_fails_after_taking_a_worker_id_gives_it_back() {
    let redis = Redis::start();
    // A user that may do everything but read the server's clock, which start-up does last.
    let made = redis.command(&[
        "ACL", "SETUSER", "no-time", "on", ">pw-nt", "~*", "+@all", "-time",
    ]);
    assert_eq!(made, "+OK\r\n");
    let url = format!("redis://no-time:pw-nt@127.0.0.1:{}/0", redis.port());
    let e = Generator::builder()
        .backend(Backend::parse(&url).unwrap())
        .namespace("give-back")
        .lease_ttl(Duration::from_secs(3600))
        .build()
        .expect_err("TIME is refused");
    assert!(
        e.message().contains("TIME") || e.message().contains("time"),
        "{e}"
    );
    // The worker ID it took was given back: no lease is left for its hour.
    let state = redis.command(&["SMEMBERS", &workers_key("give-back")]);
    let id: u64 = state
        .lines()
        .find_map(|l| l.parse().ok())
        .unwrap_or_else(|| panic!("a worker ID was taken: {state:?}"));
    assert_eq!(
        redis.command(&["EXISTS", &lease_key("give-back", id)]),
        ":0\r\n"
    );
}
