//! A forked child never continues its parent's counter: `fork()` with a live generator, in a test
//! binary of its own with a single test, so no other test thread runs while the process forks (a
//! child gets only the forking thread; the generators' reservation threads do not hold the
//! allocator lock for long, and glibc's `fork` takes its malloc locks around the fork).

#![cfg(unix)]

mod forking;
use forking::{fork_with, state_of};
use rimeflake_testkit::support;
use support::TempDir;

use rimeflake::{ErrorKind, Generator, Layout};
use std::collections::HashSet;
use std::time::Duration;

/// A leased worker ID: the child takes a new one; the parent keeps its lease and state. With
/// `random_sequence_start` too: the child's generator draws offsets of its own, and no ID of
/// either is the other's.
fn leased_child_takes_a_new_worker_id(random_sequence_start: bool) {
    let dir = TempDir::new("leased");
    let parent = Generator::builder()
        .state_dir(&dir.0)
        .random_sequence_start(random_sequence_start)
        .build()
        .unwrap();
    let layout = Layout::default();
    let me = parent.worker_id();
    let state_path = dir.0.join(format!("default/worker-{me:05}.state"));
    let mut ids = parent.next_ids(1000).unwrap();
    let (_, cid_before, reserved_before) = state_of(&state_path);

    let (child_words, code) = fork_with(|| {
        let mut out = parent.next_ids(1000).expect("the child's IDs");
        out.push(parent.worker_id());
        parent.close().expect("the child closes its own generator");
        out
    });
    assert_eq!(code, 0, "the child failed (exit status {code})");
    let (child_worker, child_ids) = child_words.split_last().expect("the child's words");
    assert_ne!(*child_worker, me, "the child kept the parent's worker ID");
    for &id in child_ids {
        assert_eq!(layout.decode(id).unwrap().worker_id, *child_worker);
    }

    // The parent goes on, under its own lease, after the child has exited.
    ids.extend(parent.next_ids(1000).unwrap());
    assert!(ids
        .iter()
        .all(|&id| layout.decode(id).unwrap().worker_id == me));
    let third = Generator::builder().state_dir(&dir.0).build().unwrap();
    assert_ne!(
        third.worker_id(),
        me,
        "the parent's lease was freed by the child"
    );
    let (_, cid_after, reserved_after) = state_of(&state_path);
    assert!(
        cid_after != cid_before || reserved_after >= reserved_before,
        "the parent's reservation went down from {reserved_before} to {reserved_after}"
    );
    let mut all: HashSet<u64> = ids.iter().copied().collect();
    all.extend(third.next_ids(1000).unwrap());
    for &id in child_ids {
        assert!(all.insert(id), "ID {id} of the child was issued twice");
    }
    assert_eq!(all.len(), 4000);
}

/// A fixed worker ID: the child is refused, and its exit leaves the parent's lease and state
/// untouched.
fn fixed_worker_child_is_refused() {
    let dir = TempDir::new("fixed");
    // A long refresh: the parent itself writes nothing while the child runs, so any change to
    // the state file would be the child's.
    let parent = Generator::builder()
        .state_dir(&dir.0)
        .worker_id(5)
        .refresh_every(Duration::from_secs(3600))
        .build()
        .unwrap();
    let state_path = dir.0.join("default/worker-00005.state");
    let mut ids = parent.next_ids(100).unwrap();
    let (bytes_before, _, _) = state_of(&state_path);

    // The child takes the generator out and drops it; the parent's copy of `slot` (its memory
    // is not the child's) still holds it.
    let mut slot = Some(parent);
    let (words, code) = fork_with(|| {
        let parent = slot.take().expect("the generator");
        let refused = parent.next_id().map_err(|e| e.kind());
        let closed = parent.close().map_err(|e| e.kind());
        drop(parent); // the child's drop must not unlock or write anything of the parent's
        vec![
            refused.map_or_else(|k| k.code() as u64, |_| u64::MAX),
            closed.map_or_else(|k| k.code() as u64, |_| 0),
        ]
    });
    assert_eq!(code, 0, "the child failed (exit status {code})");
    assert_eq!(
        words[0],
        ErrorKind::Lease.code() as u64,
        "the child's next_id with the parent's fixed worker ID must fail with a Lease error"
    );
    assert_eq!(
        words[1], 0,
        "the child's close must succeed without touching the parent"
    );
    let (bytes_after, _, _) = state_of(&state_path);
    assert!(
        bytes_after == bytes_before,
        "the child wrote the parent's state file"
    );

    let parent = slot.take().expect("the parent still has its generator");
    ids.extend(parent.next_ids(100).unwrap());
    let again = Generator::builder().state_dir(&dir.0).worker_id(5).build();
    assert_eq!(
        again.map(|g| g.worker_id()).map_err(|e| e.kind()),
        Err(ErrorKind::Lease),
        "the child's exit freed the parent's lease on worker ID 5"
    );
    let unique: HashSet<u64> = ids.iter().copied().collect();
    assert_eq!(unique.len(), ids.len());
}

/// A leased generator closed before the fork stays closed in the child: the child does not
/// restart it with a new lease.
fn closed_stays_closed_in_the_child() {
    let dir = TempDir::new("closed");
    let parent = Generator::builder().state_dir(&dir.0).build().unwrap();
    parent.next_id().unwrap();
    parent.close().unwrap();
    let (words, code) = fork_with(|| {
        let kind = parent.next_id().map_err(|e| e.kind());
        vec![kind.map_or_else(|k| k.code() as u64, |_| u64::MAX)]
    });
    assert_eq!(code, 0, "the child failed (exit status {code})");
    assert_eq!(
        words[0],
        ErrorKind::Closed.code() as u64,
        "a generator closed before the fork must be closed in the child"
    );
}

#[test]
fn forked_children_never_share_the_parents_worker_id_lease_or_state() {
    leased_child_takes_a_new_worker_id(false);
    leased_child_takes_a_new_worker_id(true);
    fixed_worker_child_is_refused();
    closed_stays_closed_in_the_child();
}
