//! The tests of the [`Conn`] contract, the same for every server: each takes connections (and
//! the [`Server`] behind them where it must act on it), and [`contract_tests!`] runs them all
//! from the test module of a server's connection (redis.rs, postgres.rs). What the servers do
//! differently on purpose is said by [`Expired`]; tests of one server alone stay in its file.

use crate::error::{ErrorKind, Result};
use crate::lease::remote::{decode_state, encode_state, Conn, Saved, Versioned};
use crate::state::WorkerState;
use std::time::Duration;

pub(crate) const NS: &str = "test-ns";

/// What a server does with a lease past its expiry that nobody has taken yet: the servers
/// differ here on purpose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Expired {
    /// Redis: the lease's key expires with it, so its holder is fenced at once. ZooKeeper: the
    /// session's ephemeral node goes with the session.
    #[cfg_attr(not(any(feature = "redis", feature = "zookeeper")), allow(dead_code))]
    Gone,
    /// PostgreSQL and MySQL: the row keeps its owner until another token takes it, and the
    /// holder may still write (nobody else can have written meanwhile).
    #[cfg_attr(not(any(feature = "postgres", feature = "mysql")), allow(dead_code))]
    KeepsOwner,
}

/// A running server, as the contract's tests act on it.
pub(crate) trait Server: Sync {
    /// The URL of the server, for a connection that needs no password.
    fn url(&self) -> String;
    /// A connection to `url` whose calls time out after `op`.
    fn connect(&self, url: &str, op: Duration) -> Result<Box<dyn Conn>>;
    /// The timeout of the connections [`Server::open`] makes.
    fn op(&self) -> Duration;
    /// The longest a call to a paused or stopped server may take.
    fn slow(&self) -> Duration;
    /// What the error of a call that had to reconnect to a paused server says, if the server's
    /// connection says something of its own.
    fn unreachable(&self) -> Option<&'static str>;
    fn expired(&self) -> Expired;
    /// Makes the lease of `worker_id` vanish behind its holder's back (an operator's doing).
    fn drop_lease(&self, namespace: &str, worker_id: u64);
    /// Makes the lease and the state of `worker_id` vanish (its key or row deleted).
    fn forget_worker(&self, namespace: &str, worker_id: u64);
    /// Makes the server forget everything rimeflake stored (`FLUSHALL`, the tables emptied).
    fn forget_all(&self);
    fn pause(&self);
    fn resume(&self);
    fn stop(&mut self);
    fn restart(&mut self);

    /// A connection with the test timeout.
    fn open(&self) -> Box<dyn Conn> {
        let url = self.url();
        self.connect(&url, self.op())
            .unwrap_or_else(|e| panic!("open {url}: {e}"))
    }
}

/// `#[test]`s running every test of this module on the server `$start` starts, in a module
/// `contract` of the test module that invokes it (which must see `$start`'s type and the trait
/// [`Server`], implemented for that type).
macro_rules! contract_tests {
    ($start:expr) => {
        /// The [`Conn`] contract on this server (testing/remote_contract.rs).
        mod contract {
            use super::*;
            use crate::testing::remote_contract as c;

            #[test]
            fn leases_and_states_round_trip() {
                c::leases_and_states_round_trip(&mut *$start.open());
            }

            #[test]
            fn only_one_of_two_racing_tokens_wins() {
                c::only_one_of_two_racing_tokens_wins(&$start);
            }

            #[test]
            fn the_first_free_of_many_worker_ids_is_taken() {
                c::the_first_free_of_many_worker_ids_is_taken(&mut *$start.open());
            }

            #[test]
            fn racers_for_one_range_each_take_a_worker_id_of_their_own() {
                c::racers_for_one_range_each_take_a_worker_id_of_their_own(&$start);
            }

            #[test]
            fn every_namespace_is_listed_in_order_within_the_limit() {
                c::every_namespace_is_listed_in_order_within_the_limit(&mut *$start.open());
            }

            #[test]
            fn saves_need_the_token_and_the_version() {
                c::saves_need_the_token_and_the_version(&mut *$start.open());
            }

            #[test]
            fn an_expired_lease_goes_to_the_next_holder_and_fences_the_old() {
                let server = $start;
                let (mut a, mut b) = (server.open(), server.open());
                c::an_expired_lease_goes_to_the_next_holder(&mut *a, &mut *b, server.expired());
            }

            #[test]
            fn a_lease_dropped_on_the_server_is_no_longer_held() {
                let server = $start;
                c::a_lease_dropped_on_the_server_is_no_longer_held(&mut *server.open(), &server);
            }

            #[test]
            fn reset_waits_for_no_live_lease_and_the_expected_version() {
                let server = $start;
                let expired = server.expired();
                c::reset_waits_for_no_live_lease_and_the_expected_version(
                    &mut *server.open(),
                    expired,
                );
            }

            #[test]
            fn numbers_above_2_pow_53_stay_exact() {
                c::numbers_above_2_pow_53_stay_exact(&mut *$start.open());
            }

            #[test]
            fn marks_remember_worker_ids_and_the_record_age_until_the_record_is_lost() {
                let server = $start;
                c::marks_remember_worker_ids_and_the_record_age_until_the_record_is_lost(
                    &mut *server.open(),
                    &server,
                );
            }

            #[test]
            fn settings_are_settled_once_and_follow_the_servers_lineage() {
                let server = $start;
                crate::testing::remote_settings_contract::settings_follow_the_lineage(
                    &mut *server.open(),
                    &|| server.forget_all(),
                );
            }

            #[test]
            fn a_server_says_who_it_is_and_a_standalone_one_has_no_replicas() {
                crate::testing::remote_settings_contract::a_standalone_server_view(
                    &mut *$start.open(),
                );
            }

            #[test]
            fn a_paused_server_fails_calls_in_time_and_works_after_resume() {
                let server = $start;
                c::a_paused_server_fails_calls_in_time_and_works_after_resume(
                    &mut *server.open(),
                    &server,
                );
            }

            #[test]
            fn a_stopped_server_fails_calls_and_its_state_survives_restarts() {
                let mut server = $start;
                let mut conn = server.open();
                c::a_stopped_server_fails_calls_and_its_state_survives_restarts(
                    &mut *conn,
                    &mut server,
                );
            }
        }
    };
}
pub(crate) use contract_tests;

pub(crate) fn v(version: u64, text: &str) -> Versioned {
    Versioned {
        version,
        text: text.to_string(),
    }
}

/// The text of a state of four clock-ids, on `clock_id`.
fn state_text(clock_id: u64) -> String {
    let mut s = WorkerState::fresh(4);
    s.clock_id = clock_id;
    encode_state(&s)
}

/// The first call that works on a server back from SIGSTOP or a restart. A resumed server first
/// answers the connections left waiting while it was paused, a restarted one loads its data;
/// on a loaded machine either can outlast one call's timeout. What counts is that calls on the
/// same connection object work again by themselves, soon: lease errors are retried for 10 s.
pub(crate) fn once_back<T>(mut call: impl FnMut() -> Result<T>) -> T {
    let resumed = crate::clock::monotonic_ns();
    loop {
        match call() {
            Ok(out) => return out,
            Err(e) if crate::clock::monotonic_ns() - resumed < 10_000_000_000 => {
                assert_eq!(e.kind(), ErrorKind::Lease, "server back: {e}");
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(e) => panic!("no answer 10 s after the server was back: {e}"),
        }
    }
}

/// Runs `f` and returns its result and how long it took.
pub(crate) fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let start = crate::clock::monotonic_ns();
    let out = f();
    (
        out,
        Duration::from_nanos(crate::clock::monotonic_ns() - start),
    )
}

pub(crate) fn leases_and_states_round_trip(c: &mut dyn Conn) {
    // The first layout record stays; a later, different one gets the stored one back.
    assert_eq!(c.layout(NS).unwrap(), None);
    assert_eq!(c.settle_layout(NS, "layout-a").unwrap(), "layout-a");
    assert_eq!(c.settle_layout(NS, "layout-b").unwrap(), "layout-a");
    assert_eq!(c.settle_layout("other", "layout-b").unwrap(), "layout-b");
    assert_eq!(c.layout(NS).unwrap().as_deref(), Some("layout-a"));

    assert!(c.acquire(NS, 7, "tok-a", 10_000).unwrap());
    assert!(
        c.acquire(NS, 7, "tok-a", 10_000).unwrap(),
        "taking one's own lease again"
    );
    assert!(!c.acquire(NS, 7, "tok-b", 10_000).unwrap());
    assert!(c.renew(NS, 7, "tok-a", 10_000).unwrap());
    assert!(!c.renew(NS, 7, "tok-b", 10_000).unwrap());
    assert_eq!(c.load(NS, 7).unwrap(), None);

    let one = v(1, &state_text(1));
    assert_eq!(c.save(NS, 7, "tok-a", 0, &one).unwrap(), Saved::Yes);
    assert_eq!(c.load(NS, 7).unwrap(), Some(one.clone()));
    let two = v(2, &state_text(2));
    assert_eq!(c.save(NS, 7, "tok-a", 1, &two).unwrap(), Saved::Yes);
    assert_eq!(c.load(NS, 7).unwrap(), Some(two.clone()));

    let workers = c.workers(NS).unwrap();
    assert_eq!(workers.len(), 1);
    let w = &workers[0];
    assert_eq!(
        (w.worker_id, w.holder.as_deref(), w.version),
        (7, Some("tok-a"), 2)
    );
    assert_eq!(w.state, decode_state(&two.text));
    let left = w.expires_in_ms.expect("an expiry");
    assert!(left > 0 && left <= 10_000, "{left}");

    // A release from another token does nothing; the holder's frees the ID, the state stays.
    c.release(NS, 7, "tok-b").unwrap();
    assert!(!c.acquire(NS, 7, "tok-b", 10_000).unwrap());
    c.release(NS, 7, "tok-a").unwrap();
    assert_eq!(c.load(NS, 7).unwrap(), Some(two.clone()));
    let w = &c.workers(NS).unwrap()[0];
    assert_eq!((w.holder.as_deref(), w.expires_in_ms), (None, None));
    assert!(!c.renew(NS, 7, "tok-a", 10_000).unwrap());

    // The next holder finds the state that travelled with the worker ID, and continues from
    // its version.
    assert!(c.acquire(NS, 7, "tok-b", 10_000).unwrap());
    assert_eq!(c.load(NS, 7).unwrap(), Some(two));
    assert_eq!(c.save(NS, 7, "tok-b", 2, &v(3, "x")).unwrap(), Saved::Yes);
    // Another namespace sees none of it.
    assert!(c.workers("nobody-here").unwrap().is_empty());

    // The server's clock is this host's (same machine), within a generous margin.
    let host = crate::clock::system_now_ms();
    let server = c.server_time_ms().unwrap();
    assert!(
        server.abs_diff(host) < 5_000,
        "server {server}, host {host}"
    );
    // A server as the tests start it loses nothing.
    assert_eq!(c.check_settings().unwrap(), Vec::<String>::new());
}

pub(crate) fn every_namespace_is_listed_in_order_within_the_limit(c: &mut dyn Conn) {
    let listed = |c: &mut dyn Conn, limit| {
        let l = c.namespaces(limit).unwrap();
        (l.names, l.complete)
    };
    assert_eq!(listed(c, 10), (vec![], true));
    // Names as namespaces may be: braces, spaces, colons and the words of the key scheme.
    let names = [
        "default",
        "twitter",
        "a{b}:c",
        "with space",
        "x}:layout",
        "y:1",
    ];
    for ns in names {
        assert_eq!(c.settle_layout(ns, "layout").unwrap(), "layout");
    }
    // Worker IDs of their own (leased, reset) add no namespace and hide none.
    assert!(c.acquire("twitter", 3, "tok", 10_000).unwrap());
    assert_eq!(
        c.reset("y:1", 9, 0, &v(1, &state_text(0))).unwrap(),
        Saved::Yes
    );
    let mut sorted: Vec<String> = names.iter().map(|s| s.to_string()).collect();
    sorted.sort();
    assert_eq!(listed(c, 10), (sorted.clone(), true));
    assert_eq!(listed(c, 6), (sorted.clone(), true));
    assert_eq!(listed(c, 4), (sorted[..4].to_vec(), false));
    assert_eq!(listed(c, 0), (vec![], false));
}

pub(crate) fn only_one_of_two_racing_tokens_wins(server: &dyn Server) {
    // A first connection sets the server up (PostgreSQL's tables), so the racers race only for
    // the lease.
    drop(server.open());
    for id in 0..20u64 {
        let barrier = std::sync::Barrier::new(2);
        let won: Vec<bool> = std::thread::scope(|scope| {
            let racers: Vec<_> = ["tok-x", "tok-y"]
                .into_iter()
                .map(|token| {
                    let barrier = &barrier;
                    scope.spawn(move || {
                        let mut c = server
                            .connect(&server.url(), Duration::from_secs(10))
                            .expect("open");
                        barrier.wait();
                        c.acquire(NS, id, token, 10_000).expect("acquire")
                    })
                })
                .collect();
            racers.into_iter().map(|t| t.join().unwrap()).collect()
        });
        assert_eq!(
            won.iter().filter(|w| **w).count(),
            1,
            "worker ID {id}: {won:?}"
        );
    }
}

pub(crate) fn the_first_free_of_many_worker_ids_is_taken(c: &mut dyn Conn) {
    let first = |c: &mut dyn Conn, ids: &[u64], token: &str| {
        c.acquire_first(NS, ids, token, 10_000)
            .unwrap()
            .map(|t| t.worker_id)
    };
    for id in [5, 3] {
        assert!(c.acquire(NS, id, "tok-a", 10_000).unwrap());
    }
    // In the order given, past the held ones; a missing row and a released lease are free alike.
    assert_eq!(first(c, &[5, 3, 9, 1], "tok-b"), Some(9));
    assert_eq!(first(c, &[5, 3, 9, 1], "tok-c"), Some(1));
    c.release(NS, 3, "tok-a").unwrap();
    assert_eq!(first(c, &[5, 9, 3, 1], "tok-d"), Some(3));
    // Every one held: none, and nothing changed hands.
    assert_eq!(first(c, &[1, 3, 5, 9], "tok-e"), None);
    let holders: Vec<_> = c
        .workers(NS)
        .unwrap()
        .into_iter()
        .map(|w| (w.worker_id, w.holder))
        .collect();
    let h = |t: &str| Some(t.to_string());
    assert_eq!(
        holders,
        [
            (1, h("tok-c")),
            (3, h("tok-d")),
            (5, h("tok-a")),
            (9, h("tok-b"))
        ]
    );
    // A token's own lease is taken again (and extended), as by `acquire`.
    assert_eq!(first(c, &[5, 9], "tok-b"), Some(9));
    assert_eq!(first(c, &[], "tok-b"), None);
}

/// Eight connections take worker IDs of one range at once, every one from the same first
/// candidate, as hosts starting together from one random start would: each gets its own.
pub(crate) fn racers_for_one_range_each_take_a_worker_id_of_their_own(server: &dyn Server) {
    drop(server.open());
    let ids: Vec<u64> = (100..110).collect();
    for round in 0..5 {
        let ns = format!("{NS}-race-{round}");
        let barrier = std::sync::Barrier::new(8);
        let taken: Vec<Option<u64>> = std::thread::scope(|scope| {
            let racers: Vec<_> = (0..8)
                .map(|i| {
                    let (barrier, ids, ns) = (&barrier, &ids, &ns);
                    scope.spawn(move || {
                        let mut c = server
                            .connect(&server.url(), Duration::from_secs(10))
                            .expect("open");
                        barrier.wait();
                        c.acquire_first(ns, ids, &format!("tok-{i}"), 10_000)
                            .expect("acquire")
                            .map(|t| t.worker_id)
                    })
                })
                .collect();
            racers.into_iter().map(|t| t.join().unwrap()).collect()
        });
        let mut got: Vec<u64> = taken.iter().map(|t| t.expect("a free one")).collect();
        got.sort_unstable();
        got.dedup();
        assert_eq!(got.len(), 8, "round {round}: {taken:?}");
        // Each holds what it was given: the server agrees.
        let held = server.open().workers(&ns).unwrap();
        assert_eq!(held.iter().filter(|w| w.holder.is_some()).count(), 8);
    }
}

pub(crate) fn saves_need_the_token_and_the_version(c: &mut dyn Conn) {
    assert!(c.acquire(NS, 1, "tok-a", 10_000).unwrap());
    assert_eq!(
        c.save(NS, 1, "tok-b", 0, &v(1, "b")).unwrap(),
        Saved::NotHolder
    );
    // No lease at all: nobody holds it.
    assert_eq!(
        c.save(NS, 2, "tok-a", 0, &v(1, "a")).unwrap(),
        Saved::NotHolder
    );
    assert_eq!(c.save(NS, 1, "tok-a", 0, &v(1, "a1")).unwrap(), Saved::Yes);
    assert_eq!(
        c.save(NS, 1, "tok-b", 1, &v(2, "b2")).unwrap(),
        Saved::NotHolder
    );
    for expected in [0, 2, 5] {
        let next = v(expected + 1, "a?");
        let saved = c.save(NS, 1, "tok-a", expected, &next).unwrap();
        assert_eq!(saved, Saved::Moved, "over version {expected}");
    }
    // Nothing of those was written.
    assert_eq!(c.load(NS, 1).unwrap(), Some(v(1, "a1")));
    // A released lease is nobody's.
    c.release(NS, 1, "tok-a").unwrap();
    assert_eq!(
        c.save(NS, 1, "tok-a", 1, &v(2, "a2")).unwrap(),
        Saved::NotHolder
    );
    assert_eq!(c.load(NS, 1).unwrap(), Some(v(1, "a1")));
}

/// `a` and `b`: two connections to one server.
pub(crate) fn an_expired_lease_goes_to_the_next_holder(
    a: &mut dyn Conn,
    b: &mut dyn Conn,
    expired: Expired,
) {
    // Worker ID 3 with a state, 4 without. Held long enough to be seen held (a loaded machine
    // can take 50 ms between two calls), then taken again for 50 ms, which shortens it.
    assert!(a.acquire(NS, 3, "tok-a", 10_000).unwrap());
    assert_eq!(a.save(NS, 3, "tok-a", 0, &v(1, "a1")).unwrap(), Saved::Yes);
    assert!(!b.acquire(NS, 3, "tok-b", 10_000).unwrap());
    assert!(a.acquire(NS, 3, "tok-a", 50).unwrap());
    assert!(a.acquire(NS, 4, "tok-a", 50).unwrap());
    std::thread::sleep(Duration::from_millis(100));

    assert!(b.acquire(NS, 4, "tok-b", 10_000).unwrap());
    assert_eq!(
        a.save(NS, 4, "tok-a", 0, &v(1, "0;-;-")).unwrap(),
        Saved::NotHolder
    );
    assert!(!a.renew(NS, 4, "tok-a", 10_000).unwrap());
    assert_eq!(
        b.save(NS, 4, "tok-b", 0, &v(1, "0;1;-")).unwrap(),
        Saved::Yes
    );

    // Expired by the server's clock, but nobody took it yet.
    let stored = match expired {
        Expired::KeepsOwner => {
            assert_eq!(a.save(NS, 3, "tok-a", 1, &v(2, "a2")).unwrap(), Saved::Yes);
            v(2, "a2")
        }
        Expired::Gone => {
            let saved = a.save(NS, 3, "tok-a", 1, &v(2, "a2")).unwrap();
            assert_eq!(saved, Saved::NotHolder);
            v(1, "a1")
        }
    };
    let w = &b.workers(NS).unwrap()[0];
    assert_eq!(w.worker_id, 3);
    assert!(w.holder.is_none(), "{w:?}");

    assert!(b.acquire(NS, 3, "tok-b", 10_000).unwrap());
    assert_eq!(b.load(NS, 3).unwrap(), Some(stored.clone()));
    let (version, next) = (stored.version, stored.version + 1);
    assert_eq!(
        a.save(NS, 3, "tok-a", version, &v(next, "a3")).unwrap(),
        Saved::NotHolder
    );
    assert!(!a.renew(NS, 3, "tok-a", 10_000).unwrap());
    // Its release does not free the new holder's lease.
    a.release(NS, 3, "tok-a").unwrap();
    assert!(!a.acquire(NS, 3, "tok-a", 10_000).unwrap());
    assert_eq!(
        b.save(NS, 3, "tok-b", version, &v(next, "b3")).unwrap(),
        Saved::Yes
    );
}

pub(crate) fn a_lease_dropped_on_the_server_is_no_longer_held(
    c: &mut dyn Conn,
    server: &dyn Server,
) {
    assert!(c.acquire(NS, 6, "tok-a", 10_000).unwrap());
    server.drop_lease(NS, 6);
    assert_eq!(
        c.save(NS, 6, "tok-a", 0, &v(1, "0;-;-")).unwrap(),
        Saved::NotHolder
    );
    assert!(!c.renew(NS, 6, "tok-a", 10_000).unwrap());
}

pub(crate) fn reset_waits_for_no_live_lease_and_the_expected_version(
    c: &mut dyn Conn,
    expired: Expired,
) {
    // Refused while the lease is held; then over the stored version only.
    assert!(c.acquire(NS, 2, "tok-a", 10_000).unwrap());
    assert_eq!(
        c.save(NS, 2, "tok-a", 0, &v(1, "0;5;-")).unwrap(),
        Saved::Yes
    );
    assert_eq!(c.reset(NS, 2, 1, &v(2, "0;9;-")).unwrap(), Saved::NotHolder);
    c.release(NS, 2, "tok-a").unwrap();
    assert_eq!(c.reset(NS, 2, 0, &v(2, "0;9;-")).unwrap(), Saved::Moved);
    assert_eq!(c.reset(NS, 2, 1, &v(2, "0;9;-")).unwrap(), Saved::Yes);
    assert_eq!(c.load(NS, 2).unwrap(), Some(v(2, "0;9;-")));
    // A worker ID never leased can be reset too, and is then listed.
    assert_eq!(c.reset(NS, 8, 0, &v(1, "0;1;-")).unwrap(), Saved::Yes);
    let ids: Vec<u64> = c.workers(NS).unwrap().iter().map(|w| w.worker_id).collect();
    assert_eq!(ids, [2, 8]);

    // A worker ID never seen: reset over version 0 stores, over any other is moved.
    assert_eq!(c.reset(NS, 9, 4, &v(5, "r")).unwrap(), Saved::Moved);
    assert_eq!(c.reset(NS, 9, 0, &v(1, "r1")).unwrap(), Saved::Yes);
    assert_eq!(c.load(NS, 9).unwrap(), Some(v(1, "r1")));
    assert_eq!(c.reset(NS, 9, 0, &v(1, "again")).unwrap(), Saved::Moved);

    assert!(c.acquire(NS, 9, "tok-a", 10_000).unwrap());
    assert_eq!(c.reset(NS, 9, 1, &v(2, "r2")).unwrap(), Saved::NotHolder);
    // A held worker ID that never stored a state: reset over 0 is refused too.
    assert!(c.acquire(NS, 10, "tok-a", 10_000).unwrap());
    assert_eq!(c.reset(NS, 10, 0, &v(1, "r1")).unwrap(), Saved::NotHolder);
    assert_eq!(c.load(NS, 10).unwrap(), None);

    c.release(NS, 9, "tok-a").unwrap();
    assert_eq!(c.reset(NS, 9, 7, &v(8, "r8")).unwrap(), Saved::Moved);
    assert_eq!(c.reset(NS, 9, 1, &v(2, "r2")).unwrap(), Saved::Yes);
    assert_eq!(c.load(NS, 9).unwrap(), Some(v(2, "r2")));

    // An expired lease does not hold a reset back, and its old holder's save is then refused:
    // as moved where the lease keeps its owner, as not held where it is gone.
    assert!(c.acquire(NS, 9, "tok-b", 50).unwrap());
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(c.reset(NS, 9, 2, &v(3, "r3")).unwrap(), Saved::Yes);
    let refused = match expired {
        Expired::KeepsOwner => Saved::Moved,
        Expired::Gone => Saved::NotHolder,
    };
    assert_eq!(c.save(NS, 9, "tok-b", 2, &v(3, "b3")).unwrap(), refused);
}

pub(crate) fn numbers_above_2_pow_53_stay_exact(c: &mut dyn Conn) {
    let mut ws = WorkerState::fresh(3);
    ws.raise(1, u64::MAX - 1);
    ws.raise(2, (1 << 53) + 1);
    ws.clock_id = 2;
    ws.closed_at = Some(u64::MAX);
    let text = encode_state(&ws);
    let big = (1u64 << 53) + 1;
    // Reset puts the version above 2^53 directly.
    assert_eq!(c.reset(NS, 1, 0, &v(big, &text)).unwrap(), Saved::Yes);
    assert!(c.acquire(NS, 1, "tok-a", 10_000).unwrap());
    // 2^53 and 2^53 + 1 are one double: a numeric comparison would take this one.
    assert_eq!(
        c.save(NS, 1, "tok-a", 1 << 53, &v(big + 1, &text)).unwrap(),
        Saved::Moved
    );
    assert_eq!(
        c.save(NS, 1, "tok-a", big, &v(big + 1, &text)).unwrap(),
        Saved::Yes
    );
    let loaded = c.load(NS, 1).unwrap().expect("a state");
    assert_eq!(loaded.version, big + 1);
    assert_eq!(decode_state(&loaded.text), Some(ws));
    assert_eq!(c.workers(NS).unwrap()[0].version, big + 1);
}

pub(crate) fn a_paused_server_fails_calls_in_time_and_works_after_resume(
    c: &mut dyn Conn,
    server: &dyn Server,
) {
    let within = format!("within {} ms", server.op().as_millis());
    // Enough workers that reading every reply of one call, each with its own timeout, would
    // show.
    for id in 0..40 {
        assert!(c.acquire(NS, id, "tok-a", 60_000).unwrap());
    }
    server.pause();
    // The first call on the open connection, the others on reconnects (the kernel still
    // accepts connections; nothing answers).
    for (i, call) in ["renew", "workers", "load", "renew"]
        .into_iter()
        .enumerate()
    {
        let (out, took) = timed(|| match call {
            "renew" => c.renew(NS, 1, "tok-a", 60_000).map(drop),
            "workers" => c.workers(NS).map(drop),
            _ => c.load(NS, 1).map(drop),
        });
        let e = out.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Lease, "{call}: {e}");
        assert!(e.message().contains(&within), "{call}: {e}");
        if let Some(words) = server.unreachable().filter(|_| i > 0) {
            assert!(e.message().contains(words), "{call}: {e}");
        }
        assert!(took < server.slow(), "{call} took {took:?}");
    }
    let (out, took) = timed(|| server.connect(&server.url(), server.op()));
    assert_eq!(out.err().expect("no answer").kind(), ErrorKind::Lease);
    assert!(took < server.slow(), "open took {took:?}");

    server.resume();
    assert!(once_back(|| c.renew(NS, 1, "tok-a", 60_000)));
    assert_eq!(c.workers(NS).unwrap().len(), 40);
    assert!(c.load(NS, 1).unwrap().is_none());
}

pub(crate) fn marks_remember_worker_ids_and_the_record_age_until_the_record_is_lost(
    c: &mut dyn Conn,
    server: &dyn Server,
) {
    c.settle_layout(NS, "layout-record").unwrap();
    let first = c.mark_used(NS, 3, 2_000).unwrap();
    assert!(!first.used_before, "{first:?}");
    assert_eq!(first.reach_ms, 2_000);
    assert!(first.age_ms < 1_000, "{first:?}");
    std::thread::sleep(Duration::from_millis(60));
    // The largest reach is kept; the record ages by the server's clock.
    let again = c.mark_used(NS, 3, 1_500).unwrap();
    assert!(again.used_before, "{again:?}");
    assert_eq!(again.reach_ms, 2_000);
    assert!(
        again.age_ms >= 50 && again.age_ms >= first.age_ms,
        "{again:?}"
    );
    let wider = c.mark_used(NS, 3, 2_500).unwrap();
    assert_eq!((wider.used_before, wider.reach_ms), (true, 2_500));
    assert_eq!(c.mark_used(NS, 3, 1).unwrap().reach_ms, 2_500);
    let other = c.mark_used(NS, 4, 700).unwrap();
    assert_eq!((other.used_before, other.reach_ms), (false, 700));
    // Numbers a double would round stay exact.
    let big = (1u64 << 53) + 1;
    c.mark_used(NS, big, big).unwrap();
    let back = c.mark_used(NS, big, 1).unwrap();
    assert_eq!((back.used_before, back.reach_ms), (true, big));
    // Another namespace has marks of its own.
    c.settle_layout("other-ns", "layout-record").unwrap();
    assert!(!c.mark_used("other-ns", 3, 2_000).unwrap().used_before);
    // The worker's lease and state deleted: its mark stays with the namespace's record.
    assert!(c.acquire(NS, 3, "tok-a", 60_000).unwrap());
    assert_eq!(
        c.save(NS, 3, "tok-a", 0, &v(1, "0;42;-")).unwrap(),
        Saved::Yes
    );
    server.forget_worker(NS, 3);
    assert_eq!(c.load(NS, 3).unwrap(), None);
    assert!(c.mark_used(NS, 3, 2_000).unwrap().used_before);
    // Everything lost: the marks with it, and the record made again is young again.
    let aged = c.mark_used(NS, 4, 700).unwrap().age_ms;
    server.forget_all();
    c.settle_layout(NS, "layout-record").unwrap();
    let fresh = c.mark_used(NS, 3, 2_000).unwrap();
    assert!(!fresh.used_before, "{fresh:?}");
    assert!(fresh.age_ms < aged, "{fresh:?} after {aged} ms");
    assert!(!c.mark_used(NS, 4, 700).unwrap().used_before);
}

pub(crate) fn a_stopped_server_fails_calls_and_its_state_survives_restarts(
    c: &mut dyn Conn,
    server: &mut dyn Server,
) {
    assert!(c.acquire(NS, 1, "tok-a", 60_000).unwrap());
    assert_eq!(
        c.save(NS, 1, "tok-a", 0, &v(1, "0;42;-")).unwrap(),
        Saved::Yes
    );
    server.stop();
    for _ in 0..2 {
        let (out, took) = timed(|| c.load(NS, 1));
        let e = out.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Lease, "{e}");
        assert!(took < server.slow(), "load took {took:?}");
        let (out, took) = timed(|| c.renew(NS, 1, "tok-a", 60_000));
        let e = out.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Lease, "{e}");
        assert!(took < server.slow(), "renew took {took:?}");
    }
    server.restart();
    assert_eq!(once_back(|| c.load(NS, 1)), Some(v(1, "0;42;-")));
    assert!(
        c.renew(NS, 1, "tok-a", 60_000).unwrap(),
        "the lease survived too"
    );
}
