use super::*;
use crate::lease::remote::servers::ZooKeeper;
use crate::lease::remote::Replicas;
use crate::testing::remote_contract::{timed, v, Expired, Server, NS};
use std::sync::Arc;

const OP: Duration = Duration::from_millis(500);
const TTL: Duration = Duration::from_secs(10);

/// Deletes `path` and everything under it, as an operator's `deleteall` would.
fn delete_tree(zk: &ZooKeeper, path: &str) {
    let mut ens = Ensemble::new(
        vec![("127.0.0.1".into(), zk.port())],
        None,
        Lookup::new(net::system_resolver),
    );
    let d = Deadline::after(Duration::from_secs(10));
    let mut s = Session::open(&mut ens, 10_000, d).expect("a session");
    fn walk(s: &mut Session, ens: &mut Ensemble, path: &str, d: Deadline) {
        let children = match s.call(ens, &[Op::GetChildren(path)], d).unwrap().remove(0) {
            Reply::Children(c) => c,
            _ => return,
        };
        for c in children {
            walk(s, ens, &format!("{path}/{c}"), d);
        }
        let del = Op::Delete { path, version: -1 };
        s.call(ens, &[del], d).unwrap();
    }
    walk(&mut s, &mut ens, path, d);
}

impl Server for ZooKeeper {
    fn url(&self) -> String {
        ZooKeeper::url(self)
    }
    fn connect(&self, url: &str, op: Duration) -> Result<Box<dyn Conn>> {
        Ok(Box::new(ZkConn::open(url, op, TTL)?))
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
        Expired::Gone
    }
    fn drop_lease(&self, namespace: &str, worker_id: u64) {
        delete_tree(
            self,
            &format!(
                "/rimeflake/workers/{}/{worker_id}/lease",
                encode_name(namespace)
            ),
        );
    }
    fn forget_worker(&self, namespace: &str, worker_id: u64) {
        delete_tree(
            self,
            &format!("/rimeflake/workers/{}/{worker_id}", encode_name(namespace)),
        );
    }
    fn forget_all(&self) {
        delete_tree(self, "/rimeflake");
    }
    fn pause(&self) {
        ZooKeeper::pause(self)
    }
    fn resume(&self) {
        ZooKeeper::resume(self)
    }
    fn stop(&mut self) {
        ZooKeeper::stop(self)
    }
    fn restart(&mut self) {
        ZooKeeper::restart(self)
    }
}

crate::testing::remote_contract::contract_tests!(ZooKeeper::start());

#[test]
fn names_are_one_path_component_and_read_back() {
    for name in [
        "default",
        "a{b}:c",
        "with space",
        ".hidden",
        "x.y",
        "é/",
        "%41",
    ] {
        let enc = encode_name(name);
        assert!(!enc.contains('/') && enc != "." && enc != "..", "{enc}");
        assert!(!enc.starts_with('.'), "{enc}");
        assert_eq!(decode_name(&enc).as_deref(), Some(name));
    }
}

#[test]
fn a_lease_lives_with_the_session_that_renews_it() {
    // The keeper renews through a connection of its own: the lease moves to its session, and
    // the session of the store's connection may then lapse without ending the lease.
    let zk = ZooKeeper::start();
    let ttl = 300;
    let mut store = ZkConn::open(&zk.url(), OP, Duration::from_millis(ttl)).unwrap();
    let mut keeper = ZkConn::open(&zk.url(), OP, Duration::from_millis(ttl)).unwrap();
    let mut other = ZkConn::open(&zk.url(), OP, TTL).unwrap();
    assert!(store.acquire(NS, 1, "tok", ttl).unwrap());
    assert!(keeper.renew(NS, 1, "tok", ttl).unwrap());
    for _ in 0..10 {
        std::thread::sleep(Duration::from_millis(ttl / 4));
        assert!(keeper.renew(NS, 1, "tok", ttl).unwrap());
    }
    // The store's session has lapsed (no call for 2.5 TTLs): it writes through a new one.
    assert!(!other
        .acquire(NS, 1, "tok-b", TTL.as_millis() as u64)
        .unwrap());
    assert_eq!(
        store.save(NS, 1, "tok", 0, &v(1, "s1")).unwrap(),
        Saved::Yes
    );
    // Nobody renews: the ensemble ends the session and the lease with it.
    std::thread::sleep(Duration::from_millis(ttl * 3));
    assert!(other
        .acquire(NS, 1, "tok-b", TTL.as_millis() as u64)
        .unwrap());
    assert!(!keeper.renew(NS, 1, "tok", ttl).unwrap());
    assert_eq!(
        store.save(NS, 1, "tok", 1, &v(2, "s2")).unwrap(),
        Saved::NotHolder
    );
    assert_eq!(other.load(NS, 1).unwrap(), Some(v(1, "s1")));
}

#[test]
fn a_ttl_longer_than_the_ensemble_grants_is_refused_before_anything_is_taken() {
    let zk = ZooKeeper::start();
    let mut c = ZkConn::open(&zk.url(), OP, TTL).unwrap();
    // The test server grants at most a day.
    let e = c.acquire(NS, 1, "tok", 2 * 86_400_000).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Config, "{e}");
    assert!(e.message().contains("maxSessionTimeout"), "{e}");
    assert!(c.workers(NS).unwrap().is_empty());
}

#[test]
fn a_state_node_not_ours_is_a_state_error() {
    let zk = ZooKeeper::start();
    let mut c = ZkConn::open(&zk.url(), OP, TTL).unwrap();
    assert_eq!(c.reset(NS, 4, 0, &v(1, "0;1;-")).unwrap(), Saved::Yes);
    zk.cli(&format!("set /rimeflake/workers/{NS}/4/state hello"));
    let e = c.load(NS, 4).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::State, "{e}");
    assert!(e.message().contains("corrupt"), "{e}");
}

#[test]
fn digest_credentials_guard_the_nodes() {
    let zk = ZooKeeper::start();
    let url = zk.url().replace("://", "://app:s3cret@");
    let mut c = ZkConn::open(&url, OP, TTL).unwrap();
    assert_eq!(c.settle_layout(NS, "l").unwrap(), "l");
    // Without them, or with others, the nodes cannot be read.
    for url in [zk.url(), zk.url().replace("://", "://app:wrong-pw@")] {
        let e = ZkConn::open(&url, OP, TTL)
            .and_then(|mut c| c.layout(NS))
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Config, "{e}");
        assert!(!e.message().contains("wrong-pw"), "{e}");
    }
}

#[test]
fn an_unreachable_or_silent_ensemble_fails_within_the_timeout() {
    let free = |_| {
        std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .unwrap()
            .port()
    };
    let ports: Vec<u16> = (0..2).map(free).collect();
    let url = format!(
        "zookeeper://u:pw-xyz@127.0.0.1:{},127.0.0.1:{}/x",
        ports[0], ports[1]
    );
    let (out, took) = timed(|| ZkConn::open(&url, OP, TTL));
    let e = out.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Lease, "{e}");
    assert!(e.message().contains("could not be reached"), "{e}");
    assert!(!e.message().contains("pw-xyz"), "{e}");
    assert!(took < OP * 3, "{took:?}");

    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "zookeeper://127.0.0.1:{}/x",
        silent.local_addr().unwrap().port()
    );
    let (out, took) = timed(|| ZkConn::open(&url, OP, TTL));
    assert!(out.unwrap_err().message().contains("within 500 ms"));
    assert!(took < OP * 3, "{took:?}");

    fn hangs(_: &str, _: u16) -> std::io::Result<Vec<std::net::SocketAddr>> {
        std::thread::sleep(Duration::from_secs(30));
        Ok(Vec::new())
    }
    let (out, took) = timed(|| ZkConn::open_with("zookeeper://zk.invalid/x", OP, TTL, hangs));
    let e = out.unwrap_err();
    assert!(e.message().contains("did not resolve in time"), "{e}");
    assert!(took < OP * 3, "{took:?}");
}

/// A standalone server has no follower to log a write: while the namespace requires a replica,
/// lease and state writes are refused, saying why. A three-server ensemble's quorum has one
/// follower log every write: the ensemble counts it, and the writes go through.
#[test]
fn writes_need_the_quorum_to_give_the_replicas_the_namespace_requires() {
    let zk = ZooKeeper::start();
    let mut c = ZkConn::open(&zk.url(), OP, TTL).unwrap();
    assert_eq!(c.server().unwrap().replicas, 0);
    c.settle_layout(NS, "l").unwrap();
    assert!(c.acquire(NS, 2, "tok", TTL.as_millis() as u64).unwrap());
    c.require(Arc::new(Replicas::new(1)));
    for e in [
        c.renew(NS, 2, "tok", TTL.as_millis() as u64).unwrap_err(),
        c.save(NS, 2, "tok", 0, &v(1, "s1")).unwrap_err(),
    ] {
        assert_eq!(e.kind(), ErrorKind::Lease);
        assert!(e.message().contains("0 follower(s)"), "{e}");
    }

    let three = crate::lease::remote::servers::Ensemble::start();
    three.wait_for_leader();
    let mut e = ZkConn::open(&three.url(), Duration::from_secs(2), TTL).unwrap();
    let view = e.server().unwrap();
    assert_eq!(view.replicas, 1, "{view:?}");
    e.require(Arc::new(Replicas::new(1)));
    e.settle_layout(NS, "l").unwrap();
    assert!(e.acquire(NS, 2, "tok", TTL.as_millis() as u64).unwrap());
    assert_eq!(e.save(NS, 2, "tok", 0, &v(1, "s1")).unwrap(), Saved::Yes);
}
