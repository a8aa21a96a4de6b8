//! The [`Conn`] contract of a namespace's settings and a server's view of itself (see the
//! `replication` module), run on each server by `contract_tests!` (remote_contract.rs).

use crate::lease::remote::{Conn, Proposal, ServerView, Settings};

/// The namespace these tests settle (the contract's own is theirs).
const NS: &str = "settings-ns";

fn view(lineage: &str, parent: Option<&str>, replicas: u32) -> ServerView {
    ServerView {
        identity: format!("id-{lineage}"),
        lineage: lineage.to_string(),
        parent: parent.map(str::to_string),
        replicas,
    }
}

fn settle(c: &mut dyn Conn, drift: u64, v: &ServerView) -> Settings {
    let ours = Proposal {
        max_drift_ms: drift,
        view: v,
    };
    c.settle_settings(NS, &ours).unwrap()
}

fn settings(max_drift_ms: u64, replicas: u32, epoch: u64) -> Settings {
    Settings {
        max_drift_ms,
        replicas,
        epoch,
    }
}

/// The first generator's `max_drift` stays; the replicas required rise with those online,
/// never fall on the same lineage nor on another that is not its child (a restart, a restore),
/// and fall by one on a promoted replica's lineage; an operator sets them; the restore epoch
/// rises; a server that forgets everything (`forget_all`) forgets the settings too.
pub(crate) fn settings_follow_the_lineage(c: &mut dyn Conn, forget_all: &dyn Fn()) {
    let layout = "layout-record";
    c.settle_layout(NS, layout).unwrap();
    assert_eq!(settle(c, 2_000, &view("a", None, 0)), settings(2_000, 0, 0));
    assert_eq!(settle(c, 9_000, &view("a", None, 0)), settings(2_000, 0, 0));
    assert_eq!(settle(c, 2_000, &view("a", None, 2)), settings(2_000, 2, 0));
    // An old primary cut off from a replica: the requirement stays.
    assert_eq!(settle(c, 2_000, &view("a", None, 1)), settings(2_000, 2, 0));
    // Restarted (another lineage, not a child of the stored one): it stays.
    assert_eq!(settle(c, 2_000, &view("b", None, 0)), settings(2_000, 2, 0));
    // A replica of "b" promoted: one less; settled again on it, no less again.
    assert_eq!(
        settle(c, 2_000, &view("c", Some("b"), 0)),
        settings(2_000, 1, 0)
    );
    assert_eq!(
        settle(c, 2_000, &view("c", Some("b"), 0)),
        settings(2_000, 1, 0)
    );
    c.set_replicas(NS, 0).unwrap();
    assert_eq!(
        settle(c, 2_000, &view("c", Some("b"), 0)),
        settings(2_000, 0, 0)
    );
    assert_eq!(c.new_epoch(NS).unwrap(), 1);
    assert_eq!(c.new_epoch(NS).unwrap(), 2);
    assert_eq!(settle(c, 2_000, &view("c", None, 0)), settings(2_000, 0, 2));
    forget_all();
    c.settle_layout(NS, layout).unwrap();
    assert_eq!(settle(c, 500, &view("c", None, 0)), settings(500, 0, 0));
}

/// A standalone server (the test kit's) says it has no replicas, and names itself the same at
/// each look.
pub(crate) fn a_standalone_server_view(c: &mut dyn Conn) {
    let a = c.server().unwrap();
    assert_eq!(a.replicas, 0, "{a:?}");
    assert!(
        !a.identity.is_empty() && !a.identity.contains(['#', ';', '/']),
        "{a:?}"
    );
    assert_eq!(c.server().unwrap(), a);
}
