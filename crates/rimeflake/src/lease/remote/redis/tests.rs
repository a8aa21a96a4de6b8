use super::*;
use crate::clock::monotonic_ns;
use crate::lease::remote::encode_state;
use crate::lease::remote::servers::Redis;
use crate::state::WorkerState;
use crate::testing::remote_contract::{once_back, Expired, Server, NS};

const OP: Duration = Duration::from_millis(300);

impl Server for Redis {
    fn url(&self) -> String {
        Redis::url(self)
    }
    fn connect(&self, url: &str, op: Duration) -> Result<Box<dyn Conn>> {
        Ok(Box::new(RedisConn::open(url, op)?))
    }
    fn op(&self) -> Duration {
        OP
    }
    fn slow(&self) -> Duration {
        OP * 10
    }
    fn unreachable(&self) -> Option<&'static str> {
        None
    }
    fn expired(&self) -> Expired {
        Expired::Gone
    }
    fn drop_lease(&self, namespace: &str, worker_id: u64) {
        let key = lease_key(namespace, worker_id);
        assert_eq!(self.command(&["DEL", &key]), ":1\r\n");
    }
    fn forget_worker(&self, namespace: &str, worker_id: u64) {
        let (lease, state) = (
            lease_key(namespace, worker_id),
            state_key(namespace, worker_id),
        );
        self.command(&["DEL", &lease, &state]);
    }
    fn forget_all(&self) {
        assert_eq!(self.command(&["FLUSHALL"]), "+OK\r\n");
    }
    fn pause(&self) {
        Redis::pause(self)
    }
    fn resume(&self) {
        Redis::resume(self)
    }
    fn stop(&mut self) {
        Redis::stop(self)
    }
    fn restart(&mut self) {
        Redis::restart(self)
    }
}

crate::testing::remote_contract::contract_tests!(Redis::start());

fn open(redis: &Redis) -> RedisConn {
    RedisConn::open(&redis.url(), OP).unwrap_or_else(|e| panic!("open: {e}"))
}

fn state(version: u64, text: &str) -> Versioned {
    Versioned {
        version,
        text: text.to_string(),
    }
}

fn ms_since(start_ns: u64) -> u64 {
    (monotonic_ns() - start_ns) / 1_000_000
}

/// A port nobody listens on (bound, then let go).
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("address").port()
}

#[test]
fn keys_share_a_hash_tag() {
    assert_eq!(lease_key("a:b", 7), "rimeflake:{a:b:7}:lease");
    assert_eq!(state_key("a:b", 7), "rimeflake:{a:b:7}:state");
    assert_eq!(layout_key("a:b"), "rimeflake:{a:b}:layout");
    assert_eq!(workers_key("a:b"), "rimeflake:{a:b}:workers");
}

#[test]
fn workers_skips_ids_with_nothing_and_lists_corrupt_states() {
    let redis = Redis::start();
    let mut c = open(&redis);
    let s1 = encode_state(&WorkerState::fresh(2));
    let mut ws = WorkerState::fresh(2);
    ws.raise(0, 12_345);
    let s2 = encode_state(&ws);
    assert!(c.acquire(NS, 1, "tok-b", 10_000).unwrap());
    assert_eq!(
        c.save(NS, 1, "tok-b", 0, &state(1, &s1)).unwrap(),
        Saved::Yes
    );
    assert_eq!(
        c.save(NS, 1, "tok-b", 1, &state(2, &s2)).unwrap(),
        Saved::Yes
    );

    // workers(): a held one, a released one with state, a corrupt one, an empty one.
    assert!(c.acquire(NS, 2, "tok-c", 10_000).unwrap());
    c.release(NS, 2, "tok-c").unwrap(); // indexed, but neither lease nor state: skipped
    assert!(c.acquire(NS, 3, "tok-c", 10_000).unwrap());
    assert_eq!(
        c.save(NS, 3, "tok-c", 0, &state(1, &s1)).unwrap(),
        Saved::Yes
    );
    c.release(NS, 3, "tok-c").unwrap();
    redis.command(&["SADD", &workers_key(NS), "4", "not-a-number"]);
    redis.command(&["HSET", &state_key(NS, 4), "v", "7", "s", "garbage"]);
    let ws_list = c.workers(NS).unwrap();
    let ids: Vec<u64> = ws_list.iter().map(|w| w.worker_id).collect();
    assert_eq!(ids, [1, 3, 4]);
    assert_eq!(ws_list[0].holder.as_deref(), Some("tok-b"));
    let left = ws_list[0].expires_in_ms.expect("an expiry");
    assert!(left > 0 && left <= 10_000, "{left}");
    assert_eq!(ws_list[0].state, Some(ws));
    assert_eq!(ws_list[0].version, 2);
    assert_eq!(ws_list[1].holder, None);
    assert_eq!(ws_list[1].expires_in_ms, None);
    assert_eq!(ws_list[1].state, Some(WorkerState::fresh(2)));
    assert_eq!((ws_list[2].state.clone(), ws_list[2].version), (None, 7));
    // load refuses the corrupt version rather than guessing.
    redis.command(&["HSET", &state_key(NS, 5), "v", "x", "s", "0;-;-"]);
    assert_eq!(c.load(NS, 5).unwrap_err().kind(), ErrorKind::State);

    // Another namespace sees none of it.
    assert!(c.workers("other").unwrap().is_empty());
}

#[test]
fn scripts_are_sent_again_after_a_flush_and_errors_keep_the_connection_in_step() {
    let redis = Redis::start();
    let mut c = open(&redis);
    assert!(c.acquire(NS, 1, "tok-a", 10_000).unwrap());
    // The server forgets its scripts (as after a restart): EVALSHA fails, EVAL follows.
    assert_eq!(redis.command(&["SCRIPT", "FLUSH"]), "+OK\r\n");
    assert!(c.acquire(NS, 1, "tok-a", 10_000).unwrap());
    assert!(c.renew(NS, 1, "tok-a", 10_000).unwrap());

    // The index's SADD fails in the same round trip as the script: an error, and the
    // script's reply is still read off the connection.
    redis.command(&["SET", &workers_key("odd"), "not a set"]);
    let e = c.acquire("odd", 1, "tok-a", 10_000).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::State, "{e}");
    assert!(c.renew(NS, 1, "tok-a", 10_000).unwrap());
    assert_eq!(c.load(NS, 1).unwrap(), None);
}

#[test]
fn resp3_works_too() {
    let redis = Redis::start();
    let url = format!("redis://127.0.0.1:{}/0?protocol=resp3", redis.port());
    let mut c = RedisConn::open(&url, OP).unwrap();
    assert!(c.acquire(NS, 1, "tok-a", 10_000).unwrap());
    assert_eq!(
        c.save(NS, 1, "tok-a", 0, &state(1, "0;1;-")).unwrap(),
        Saved::Yes
    );
    assert_eq!(c.load(NS, 1).unwrap(), Some(state(1, "0;1;-")));
    assert_eq!(c.workers(NS).unwrap()[0].holder.as_deref(), Some("tok-a"));
    assert!(c.server_time_ms().unwrap() > 0);
    // CONFIG GET answers with a map in RESP3.
    assert_eq!(c.check_settings().unwrap(), Vec::<String>::new());
    redis.command(&["CONFIG", "SET", "maxmemory-policy", "allkeys-lru"]);
    assert_eq!(c.check_settings().unwrap().len(), 1);
}

#[test]
fn a_paused_server_fails_a_pipeline_on_its_first_reply() {
    let redis = Redis::start();
    let mut c = open(&redis);
    // A pipeline fails on its first reply, not after one timeout per command (as the
    // crate's Pipeline::query would).
    let mut pipe = redis::pipe();
    for _ in 0..50 {
        pipe.cmd("PING");
    }
    redis.pause();
    let start = monotonic_ns();
    let e = c
        .run("ping", |conn| pipelined(conn, &pipe, 50))
        .unwrap_err();
    let took = ms_since(start);
    assert_eq!(e.kind(), ErrorKind::Lease, "{e}");
    assert!(
        took < 5 * OP.as_millis() as u64,
        "the pipeline took {took} ms"
    );
    redis.resume();
    let pongs = once_back(|| c.run("ping", |conn| pipelined(conn, &pipe, 50)));
    assert_eq!(pongs.len(), 50);
}

#[test]
fn credentials_are_config_errors_without_the_password() {
    let redis = Redis::start_with_password("s3cret-Pw");
    let port = redis.port();
    let wrong = format!("redis://:wrong-Pw-123@127.0.0.1:{port}/0");
    let e = RedisConn::open(&wrong, OP)
        .err()
        .expect("a wrong password fails");
    assert_eq!(e.kind(), ErrorKind::Config, "{e}");
    assert!(!e.message().contains("wrong-Pw-123"), "{e}");
    assert!(e.message().contains(":***@127.0.0.1"), "{e}");
    assert!(e.message().contains("password"), "{e}");

    let none = format!("redis://127.0.0.1:{port}/0");
    let e = RedisConn::open(&none, OP)
        .err()
        .expect("a missing password fails");
    assert_eq!(e.kind(), ErrorKind::Config, "{e}");
    assert!(e.message().contains("requires a password"), "{e}");

    let mut c = open(&redis);
    assert!(c.acquire(NS, 1, "tok-a", 10_000).unwrap());

    // A database the server lacks.
    let db = format!("redis://:s3cret-Pw@127.0.0.1:{port}/99");
    let e = RedisConn::open(&db, OP).err().expect("no database 99");
    assert_eq!(e.kind(), ErrorKind::Config, "{e}");
    assert!(!e.message().contains("s3cret-Pw"), "{e}");
}

#[test]
fn an_unreachable_server_is_a_lease_error_in_time() {
    let port = closed_port();
    let start = monotonic_ns();
    let e = RedisConn::open(&format!("redis://:pw-xyz@127.0.0.1:{port}"), OP)
        .err()
        .expect("nothing listens");
    assert!(ms_since(start) < 10 * OP.as_millis() as u64);
    assert_eq!(e.kind(), ErrorKind::Lease, "{e}");
    assert!(e.message().contains(&format!("127.0.0.1:{port}")), "{e}");
    assert!(e.message().contains("within 300 ms"), "{e}");
    assert!(!e.message().contains("pw-xyz"), "{e}");
}

#[test]
fn a_url_typo_is_a_config_error() {
    for url in [
        "redis://127.0.0.1:notaport",
        "redis://:hunter22@127.0.0.1:notaport/0",
    ] {
        let e = RedisConn::open(url, OP).err().expect("a typo");
        assert_eq!(e.kind(), ErrorKind::Config, "{e}");
        assert!(!e.message().contains("hunter22"), "{e}");
        assert!(e.message().contains("notaport"), "{e}");
    }
}

#[test]
fn settings_that_may_lose_state_are_warned_about() {
    let redis = Redis::start();
    let mut c = open(&redis);
    assert_eq!(c.check_settings().unwrap(), Vec::<String>::new());

    redis.command(&["CONFIG", "SET", "maxmemory-policy", "allkeys-lru"]);
    let w = c.check_settings().unwrap();
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].contains("maxmemory-policy is allkeys-lru"), "{w:?}");
    redis.command(&["CONFIG", "SET", "maxmemory-policy", "volatile-lru"]);
    assert_eq!(c.check_settings().unwrap(), Vec::<String>::new());
    redis.command(&["CONFIG", "SET", "maxmemory-policy", "noeviction"]);

    redis.command(&["CONFIG", "SET", "appendfsync", "everysec"]);
    let w = c.check_settings().unwrap();
    assert!(
        w.len() == 1 && w[0].contains("appendfsync is everysec"),
        "{w:?}"
    );
    redis.command(&["CONFIG", "SET", "appendonly", "no"]);
    let w = c.check_settings().unwrap();
    assert!(w.len() == 1 && w[0].contains("appendonly is no"), "{w:?}");
    redis.command(&["CONFIG", "SET", "appendonly", "yes"]);
    redis.command(&["CONFIG", "SET", "appendfsync", "always"]);

    // A user without CONFIG (as managed Redis has): one warning, not an error.
    let acl = [
        "ACL",
        "SETUSER",
        "limited",
        "on",
        ">limited-pw",
        "~*",
        "+@all",
        "-config",
    ];
    assert_eq!(redis.command(&acl), "+OK\r\n");
    let url = format!("redis://limited:limited-pw@127.0.0.1:{}/0", redis.port());
    let mut limited = RedisConn::open(&url, OP).unwrap();
    let w = limited.check_settings().unwrap();
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].contains("could not be checked"), "{w:?}");
    assert!(!w[0].contains("limited-pw"), "{w:?}");
    // The rest works for that user.
    assert!(limited.acquire(NS, 1, "tok-a", 10_000).unwrap());
}

#[test]
fn namespaces_are_found_among_many_other_keys_with_scan() {
    let redis = Redis::start();
    let mut c = open(&redis);
    // Another program's keys, some under rimeflake's prefix, spread over several SCAN rounds.
    let fill = "for i = 1, tonumber(ARGV[1]) do redis.call('SET', 'app:' .. i, 'x') end \
                redis.call('SET', 'rimeflake:{bad/ns}:layout', 'x') \
                redis.call('SET', 'rimeflake:{junk}:other', 'x') \
                redis.call('SET', 'rimeflake:{', 'x') return 1";
    let n = (3 * SCAN_COUNT).to_string();
    assert_eq!(redis.command(&["EVAL", fill, "0", &n]), ":1\r\n");
    for ns in ["late", "early"] {
        c.settle_layout(ns, "layout").unwrap();
    }
    assert!(c.acquire("workers-only", 1, "tok", 10_000).unwrap());
    let listed = c.namespaces(10).unwrap();
    assert_eq!(listed.names, ["early", "late", "workers-only"]);
    assert!(listed.complete);
    assert_eq!(
        namespace_of("rimeflake:{a}:layout}:workers"),
        Some("a}:layout")
    );
    assert_eq!(namespace_of("rimeflake:{a:3}:lease"), None);
}

#[test]
fn tls_to_a_plain_text_port_says_the_server_does_not_speak_tls() {
    for redis in [Redis::start(), Redis::start_with_password("pw")] {
        let port = redis.port();
        // The handshake's bytes are random in part: every try must give the same words.
        for _ in 0..4 {
            let url = format!("rediss://127.0.0.1:{port}/0");
            let e = RedisConn::open(&url, OP)
                .err()
                .expect("TLS to a plain port connected");
            assert_eq!(e.kind(), ErrorKind::Config, "{e}");
            assert!(
                e.message().contains(&format!(
                    "TLS handshake with 127.0.0.1:{port} failed: the server does not speak TLS?"
                )),
                "{e}"
            );
        }
        // Without TLS the same port works, and a closed port is no TLS failure.
        RedisConn::open(&redis.url(), OP).unwrap();
    }
    let e = RedisConn::open(&format!("rediss://127.0.0.1:{}/0", closed_port()), OP)
        .err()
        .expect("a closed port connected");
    assert_eq!(e.kind(), ErrorKind::Lease, "{e}");
    assert!(!e.message().contains("TLS"), "{e}");
}

/// How often [`silent_resolver`] was asked, and what ends its silence.
static LOOKUPS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
static ANSWER: std::sync::Mutex<Option<u16>> = std::sync::Mutex::new(None);

/// A resolver that does not answer until a port is put in [`ANSWER`] (as a DNS server that
/// drops queries), then resolves to 127.0.0.1 on that port.
fn silent_resolver(_host: &str, _port: u16) -> std::io::Result<Vec<std::net::SocketAddr>> {
    LOOKUPS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    loop {
        if let Some(port) = *ANSWER.lock().unwrap() {
            return Ok(vec![std::net::SocketAddr::from(([127, 0, 0, 1], port))]);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_resolver_that_does_not_answer_fails_the_call_in_time_and_is_asked_once() {
    let redis = Redis::start();
    let url = "redis://:pw-xyz@db.example:6379/0";
    let start = monotonic_ns();
    let e = RedisConn::open_with(url, OP, silent_resolver)
        .err()
        .expect("no address");
    let took = ms_since(start);
    assert!(took < 2 * OP.as_millis() as u64, "{took} ms: {e}");
    assert_eq!(e.kind(), ErrorKind::Lease, "{e}");
    assert!(e.message().contains("within 300 ms"), "{e}");
    assert!(e.message().contains("host name did not resolve"), "{e}");
    assert!(e.message().contains("db.example:6379"), "{e}");
    assert!(!e.message().contains("pw-xyz"), "{e}");
    assert_eq!(LOOKUPS.load(std::sync::atomic::Ordering::SeqCst), 1);

    let lookups = || LOOKUPS.load(std::sync::atomic::Ordering::SeqCst);

    // Once it answers, a connection opens (by the address it gave: the name is not real).
    *ANSWER.lock().unwrap() = Some(redis.port());
    let mut c = RedisConn::open_with("redis://db.example:6379/0", OP, silent_resolver)
        .unwrap_or_else(|e| panic!("resolves now: {e}"));
    assert_eq!(lookups(), 2);
    // Silent again, with the connection gone: each call fails in time, and the calls share
    // the one lookup still waiting rather than starting one each.
    *ANSWER.lock().unwrap() = None;
    c.conn = None;
    for _ in 0..3 {
        let start = monotonic_ns();
        let e = c.server_time_ms().expect_err("no address");
        assert!(ms_since(start) < 2 * OP.as_millis() as u64, "{e}");
        assert!(e.message().contains("did not resolve"), "{e}");
    }
    assert_eq!(lookups(), 3);
    // The lookup answers: the next call uses the connection it made.
    *ANSWER.lock().unwrap() = Some(redis.port());
    std::thread::sleep(Duration::from_millis(100));
    assert!(c.server_time_ms().unwrap() > 0);
    assert_eq!(lookups(), 3);
}

#[test]
fn every_namespace_keeps_a_workers_lease_and_state_in_one_cluster_slot() {
    // A namespace starting with `}` gets the tag `/`; others keep their keys.
    assert_eq!(lease_key("}team", 7), "rimeflake:{/}{}team:7}:lease");
    assert_eq!(state_key("}team", 7), "rimeflake:{/}{}team:7}:state");
    assert_eq!(layout_key("}team"), "rimeflake:{/}{}team}:layout");
    assert_eq!(lease_key("a}b", 7), "rimeflake:{a}b:7}:lease");
    assert_eq!(namespace_of(&layout_key("}team")), Some("}team"));
    assert_eq!(namespace_of(&workers_key("}")), Some("}"));
    let redis = Redis::start_cluster();
    let mut c = open(&redis);
    for ns in ["}team", "}", "a}b", "{x}", "x{", "plain"] {
        let record = c.settle_layout(ns, "layout record").unwrap();
        assert_eq!(record, "layout record", "{ns}");
        assert_eq!(c.layout(ns).unwrap().as_deref(), Some("layout record"));
        let taken = c
            .acquire_first(ns, &[3, 4], "tok-a", 10_000)
            .unwrap_or_else(|e| panic!("{ns:?}: {e}"))
            .expect("free");
        let s = encode_state(&WorkerState::fresh(2));
        assert_eq!(
            c.save(ns, taken.worker_id, "tok-a", 0, &state(1, &s))
                .unwrap_or_else(|e| panic!("{ns:?}: {e}")),
            Saved::Yes
        );
        assert!(c.renew(ns, taken.worker_id, "tok-a", 10_000).unwrap());
        assert_eq!(c.load(ns, taken.worker_id).unwrap().unwrap().version, 1);
        let workers = c.workers(ns).unwrap_or_else(|e| panic!("{ns:?}: {e}"));
        assert_eq!(workers.len(), 1, "{ns:?}");
        c.release(ns, taken.worker_id, "tok-a").unwrap();
        // `state show` of the whole server finds it by its keys.
        let listed = c.namespaces(100).unwrap();
        assert!(
            listed.names.iter().any(|n| n == ns),
            "{ns:?}: {:?}",
            listed.names
        );
        // The lease and the state of a worker are in one slot.
        let slot = |key: String| redis.command(&["CLUSTER", "KEYSLOT", &key]);
        assert_eq!(
            slot(lease_key(ns, taken.worker_id)),
            slot(state_key(ns, taken.worker_id)),
            "{ns:?}"
        );
    }
}

/// A write fewer replicas acknowledge than required fails, though it may have landed on the
/// primary (as a write whose answer was lost may have); with the requirement met, writes go on.
#[test]
fn a_write_too_few_replicas_acknowledge_fails_and_says_why() {
    let redis = Redis::start();
    let mut c = open(&redis);
    c.require(Arc::new(Replicas::new(1)));
    let e = c.acquire(NS, 1, "tok", 10_000).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Lease);
    assert!(
        e.message()
            .contains("0 of the 1 replicas its namespace requires"),
        "{e}"
    );
    assert_eq!(redis.command(&["GET", &lease_key(NS, 1)]), "$3\r\ntok\r\n");
    let e = c.renew(NS, 1, "tok", 10_000).unwrap_err();
    assert!(e.message().contains("renew"), "{e}");
    c.require(Arc::new(Replicas::new(0)));
    assert!(c.renew(NS, 1, "tok", 10_000).unwrap());
}

/// A Sentinel URL whose Sentinels cannot be reached fails in time with a lease error that
/// shows no password.
#[test]
fn a_sentinel_url_with_no_sentinel_answering_fails_in_time() {
    let url = "redis+sentinel://:s3cret@127.0.0.1:1/primary/0?sentinel_password=s3cret";
    let Err(e) = RedisConn::open(url, OP) else {
        panic!("no Sentinel answers, yet it opened")
    };
    assert_eq!(e.kind(), ErrorKind::Lease, "{e}");
    assert!(!e.message().contains("s3cret"), "{e}");
    assert!(
        e.message()
            .contains("redis+sentinel://:***@127.0.0.1:1/primary/0?sentinel_password=***"),
        "{e}"
    );
}
