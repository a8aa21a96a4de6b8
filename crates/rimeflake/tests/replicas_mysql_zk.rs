//! Replicated MariaDB and restored ZooKeeper, as operators run them: a MariaDB primary with a
//! replica (asynchronous, or semi-synchronous waiting `AFTER_SYNC`) replicating by GTID through
//! a proxy the test controls, promoted by hand when the primary is lost or cut off; a dump of
//! MariaDB's tables restored; a ZooKeeper server's data directory restored from a copy. In each
//! case holders issue, the server fails over (or splits, or is restored), and a successor in
//! another process takes the same worker IDs: no ID of the successor may be one of a holder's.
//! (A ZooKeeper ensemble needs no promotion: its failover is a leader election, which
//! zookeeper_ensemble.rs covers.)
//!
//! The holders and successors are those of `replicated`.

mod issuers;
mod replicated;
use issuers::{scratch, Issuer};
use replicated::{count, holders, successors, successors_issue};
use rimeflake_testkit::servers::{MariaDb, Proxy, ZooKeeper};

use rimeflake::Backend;
use std::process::Command;
use std::time::Duration;

fn my_url(port: u16) -> String {
    format!("mysql://root@127.0.0.1:{port}/rimeflake")
}

/// A MariaDB primary and a replica that replicates from it through `link`.
struct MySet {
    primary: MariaDb,
    link: Proxy,
    replica: MariaDb,
}

fn my_set(semi_sync: bool) -> MySet {
    let primary = MariaDb::start_primary(semi_sync);
    let link = Proxy::start(primary.port());
    let replica = MariaDb::start_replica_of(&primary, link.port());
    MySet {
        primary,
        link,
        replica,
    }
}

/// MariaDB: the primary and the holders are lost at once, the replica (asynchronous, 2 s
/// behind) is promoted, and the successors take the worker IDs there. The holders' states there
/// are copies from another server (or missing), so each successor starts a reach ahead.
#[test]
fn mariadb_primary_lost_with_an_asynchronous_replica_2s_behind_promoted() {
    let mut set = my_set(false);
    let dir = scratch("my-async");
    let (ns, holders_way) = ("async", Proxy::start(set.primary.port()));
    let holders = holders(&my_url(holders_way.port()), ns, &dir);
    set.link.delay(2_000);
    std::thread::sleep(Duration::from_millis(2_000));
    holders_way.cut();
    set.link.cut();
    set.primary.kill();
    set.replica.promote();
    successors(
        "MariaDB, asynchronous replica 2 s behind promoted",
        &my_url(set.replica.port()),
        ns,
        &dir,
        holders,
    );
}

/// MariaDB: the same with semi-synchronous replication (`AFTER_SYNC`): every lease and state
/// write was acknowledged by the replica, and the promoted replica's lineage (its former
/// primary's child) needs one acknowledgement less, so the successors start there.
#[test]
fn mariadb_primary_lost_with_a_semi_synchronous_replica_promoted() {
    let mut set = my_set(true);
    let dir = scratch("my-semi");
    let (ns, holders_way) = ("semi", Proxy::start(set.primary.port()));
    let holders = holders(&my_url(holders_way.port()), ns, &dir);
    holders_way.cut();
    set.primary.kill();
    set.replica.promote();
    successors(
        "MariaDB, semi-synchronous replica promoted",
        &my_url(set.replica.port()),
        ns,
        &dir,
        holders,
    );
}

/// MariaDB split brain: the replica loses its link to the primary, which stays up with the
/// holders writing to it; the replica is promoted and the successors take the worker IDs there.
/// The old primary's commits wait for an acknowledgement that never comes, then (after its
/// `rpl_semi_sync_master_timeout`, 500 ms here) go asynchronous and are answered at once: the
/// holders' writes count as failed all the same, and they stop at their deadlines.
#[test]
fn mariadb_split_brain_with_the_old_primary_up_and_the_holders_writing_to_it() {
    let set = my_set(true);
    set.primary
        .sql("SET GLOBAL rpl_semi_sync_master_timeout = 500");
    let dir = scratch("my-split");
    let ns = "split";
    let holders = holders(&my_url(set.primary.port()), ns, &dir);
    set.link.cut();
    set.replica.promote();
    successors(
        "MariaDB, split brain",
        &my_url(set.replica.port()),
        ns,
        &dir,
        holders,
    );
}

/// The successors of a restore: without `state restored` (counted, not failed: the documented
/// limit), then, after the same restore again and `state restored`, none may repeat.
fn restored_then_declared(
    case: &str,
    url: &str,
    ns: &str,
    dir: &std::path::Path,
    holders: Vec<Issuer>,
    restore: &mut dyn FnMut(),
) {
    restore();
    let plain = successors_issue(url, ns, dir, "undeclared");
    let ours: Vec<(Vec<u64>, Vec<String>)> = holders.into_iter().map(Issuer::finish).collect();
    count(&format!("{case}, without state restored"), &ours, &plain);
    restore();
    let backend = Backend::parse(url).unwrap();
    let marked = rimeflake::admin::remote::restored(&backend, Some(ns)).unwrap();
    assert_eq!(marked.namespaces.len(), 1, "{marked:?}");
    let theirs = successors_issue(url, ns, dir, "declared");
    let failed = count(&format!("{case}, then state restored"), &ours, &theirs);
    let _ = std::fs::remove_dir_all(dir);
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

/// MariaDB: the tables are dumped (`mariadb-dump`) while the holders issue; 2 s later the
/// holders are lost and the dump is restored into the same server.
#[test]
fn mariadb_a_dump_2s_old_restored_then_declared_restored() {
    let db = MariaDb::start();
    let dir = scratch("my-restore");
    let (ns, holders_way) = ("restored", Proxy::start(db.port()));
    let holders = holders(&my_url(holders_way.port()), ns, &dir);
    let dump = db.dump(&[
        "rimeflake_namespaces",
        "rimeflake_workers",
        "rimeflake_used",
        "rimeflake_settings",
    ]);
    std::thread::sleep(Duration::from_millis(2_000));
    holders_way.cut();
    restored_then_declared(
        "MariaDB, a dump 2 s old restored",
        &my_url(db.port()),
        ns,
        &dir,
        holders,
        &mut || db.restore(&dump),
    );
}

/// ZooKeeper: the server's data directory is copied while the holders issue; 2 s later the
/// holders are lost, the server stopped, its data replaced by the copy, and started again (as
/// a snapshot restored). The copy keeps the chroot's node, so the ensemble looks the same.
#[test]
fn zookeeper_a_data_directory_2s_old_restored_then_declared_restored() {
    let mut zk = ZooKeeper::start();
    let dir = scratch("zk-restore");
    let (ns, holders_way) = ("restored", Proxy::start(zk.port()));
    let url = |port: u16| format!("zookeeper://127.0.0.1:{port}/rimeflake");
    let holders = holders(&url(holders_way.port()), ns, &dir);
    let data = zk.dir().join("data");
    let copy = zk.dir().join("data-copy");
    let cp = |from: &std::path::Path, to: &std::path::Path| {
        let out = Command::new("cp")
            .arg("-a")
            .arg(from)
            .arg(to)
            .output()
            .unwrap();
        assert!(out.status.success(), "cp: {out:?}");
    };
    cp(&data, &copy);
    std::thread::sleep(Duration::from_millis(2_000));
    holders_way.cut();
    let zk_url = url(zk.port());
    restored_then_declared(
        "ZooKeeper, a data directory 2 s old restored",
        &zk_url,
        ns,
        &dir,
        holders,
        &mut || {
            zk.stop();
            std::fs::remove_dir_all(&data).unwrap();
            cp(&copy, &data);
            zk.restart();
        },
    );
}
