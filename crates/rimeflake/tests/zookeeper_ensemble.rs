//! A generator on a three-server ZooKeeper ensemble (real servers on loopback, started by the
//! test kit) while the ensemble loses its leader (SIGKILL) and then its quorum: it goes on
//! through a new leader (its session resumed on another server), stops issuing while no quorum
//! takes writes, goes on when the quorum is back, and a successor on its worker ID repeats none
//! of its IDs.

mod driver;
use driver::Driver;
use rimeflake_testkit::servers::Ensemble;

use rimeflake::{Backend, ErrorKind, Generator, Layout};
use std::collections::HashSet;
use std::time::Duration;

const TTL: Duration = Duration::from_secs(3);

fn generator(url: &str) -> Generator {
    Generator::builder()
        .layout(Layout::default())
        .backend(Backend::parse(url).unwrap())
        .namespace("ensemble")
        .worker_id(3)
        .lease_ttl(TTL)
        .max_wait(Duration::from_millis(300))
        .build()
        .unwrap()
}

#[test]
fn an_ensemble_losing_its_leader_then_its_quorum_repeats_no_id() {
    let mut ensemble = Ensemble::start();
    let url = ensemble.url();
    let holder = Driver::flat_out(generator(&url));
    holder.wait_for(20, "IDs", |i, _| i > 100_000);

    // The leader killed: a new one is elected among the other two, and the holder's session
    // goes on through it (it may stop for the election if that outlasts its deadline).
    let leader = ensemble.wait_for_leader();
    ensemble.servers[leader].kill();
    let (before, _) = holder.counts();
    let new_leader = ensemble.wait_for_leader();
    assert_ne!(new_leader, leader);
    holder.wait_for(30, "IDs after the new leader", |i, _| i > before + 100_000);
    eprintln!("leader {leader} killed, {new_leader} elected: IDs go on");
    ensemble.servers[leader].restart();
    ensemble.wait_for_leader();

    // Two of three down: no quorum takes a write, the lease cannot be renewed, and the holder
    // stops before it could have expired.
    let (_, errors) = holder.counts();
    let down: Vec<usize> = (0..3).filter(|&i| i != new_leader).collect();
    for &i in &down {
        ensemble.servers[i].kill();
    }
    holder.wait_for(30, "lease errors without a quorum", |_, e| e > errors + 10);
    std::thread::sleep(Duration::from_millis(500));
    let (stopped, _) = holder.counts();
    std::thread::sleep(Duration::from_millis(1_000));
    assert_eq!(holder.counts().0, stopped, "IDs issued without a quorum");
    for &i in &down {
        ensemble.servers[i].restart();
    }
    ensemble.wait_for_leader();
    holder.wait_for(60, "IDs with the quorum back", |i, _| i > stopped + 100_000);

    let (ours, errors, g) = holder.finish();
    assert!(errors.iter().all(|k| *k == ErrorKind::Lease), "{errors:?}");
    assert!(ours.windows(2).all(|w| w[0] < w[1]), "IDs not increasing");
    g.close().unwrap();
    let successor = generator(&url);
    let theirs: Vec<u64> = (0..100_000).map(|_| successor.next_id().unwrap()).collect();
    successor.close().unwrap();
    let ours: HashSet<u64> = ours.into_iter().collect();
    let repeated = theirs.iter().filter(|id| ours.contains(id)).count();
    eprintln!(
        "holder {} IDs, {} lease errors; successor {} IDs, repeated {repeated}",
        ours.len(),
        errors.len(),
        theirs.len()
    );
    assert_eq!(repeated, 0);
}
