//! Forks never reuse a parent's slot, lease or tracing IDs: the fork registry (one owner and one
//! lifecycle per slot), closed generators across a fork, and tracing IDs after a fork that skips
//! the at-fork handlers. Real `fork()` (and a raw `clone`), from a single test in a binary of its
//! own, so no other test thread runs while the process forks.

#![cfg(unix)]

mod forking;
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
use forking::raw_fork;
use forking::{fork_by, fork_with, state_of};
use rimeflake_testkit::support;
use support::TempDir;

use rimeflake::{ErrorKind, Generator};
use std::path::Path;
use std::time::Duration;

/// The descriptors of this process open on a lock file under `dir` (from `/proc/self/fd`).
#[cfg(target_os = "linux")]
fn lock_fds(dir: &Path) -> Vec<i32> {
    let mut fds = Vec::new();
    for entry in std::fs::read_dir("/proc/self/fd").expect("/proc/self/fd") {
        let entry = entry.expect("an entry");
        let Ok(target) = std::fs::read_link(entry.path()) else {
            continue; // the descriptor read_dir itself used
        };
        if target.starts_with(dir) && target.extension().is_some_and(|e| e == "lock") {
            fds.push(entry.file_name().to_str().unwrap().parse().unwrap());
        }
    }
    fds
}

/// Item 8: `close()` frees the lease descriptor; a later fork must not close the file that
/// took its number (the application's log, say) in the child.
#[cfg(target_os = "linux")]
fn a_descriptor_reused_after_close_stays_open_in_a_child() {
    use std::os::unix::io::{AsRawFd, FromRawFd};
    let dir = TempDir::new("reused-fd");
    let g = Generator::builder().state_dir(&dir.0).build().unwrap();
    g.next_id().unwrap();
    let fds = lock_fds(&dir.0);
    assert_eq!(fds.len(), 1, "one lease descriptor: {fds:?}");
    let lease_fd = fds[0];
    g.close().unwrap();

    // The application's log takes the number the lease freed (as its next open() would).
    let log_path = dir.0.join("app.log");
    let log = std::fs::File::options()
        .create(true)
        .append(true)
        .open(&log_path)
        .unwrap();
    let log = if log.as_raw_fd() == lease_fd {
        log
    } else {
        // SAFETY: `lease_fd` is free (the lease closed it); dup2 makes it a copy of the log's.
        assert_eq!(unsafe { libc::dup2(log.as_raw_fd(), lease_fd) }, lease_fd);
        // SAFETY: the descriptor dup2 just made is ours alone.
        unsafe { std::fs::File::from_raw_fd(lease_fd) }
    };

    let (words, code) = fork_with(|| {
        // SAFETY: writing a live buffer to a descriptor that must still be open.
        let n = unsafe { libc::write(lease_fd, b"child\n".as_ptr().cast(), 6) };
        vec![n as u64]
    });
    assert_eq!(code, 0, "the child failed (exit status {code})");
    assert_eq!(
        words[0] as i64, 6,
        "the fork closed the log file's descriptor in the child"
    );
    use std::io::Write;
    (&log).write_all(b"parent\n").unwrap();
    drop(log);
    let mut lines: Vec<String> = std::fs::read_to_string(&log_path)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    lines.sort();
    assert_eq!(lines, ["child", "parent"]);
    drop(g);
}

/// Item 9: a generator closed in the parent stays closed in a child: `Closed`, no new lease.
fn closed_in_the_parent_stays_closed_in_a_child() {
    let dir = TempDir::new("closed");
    let g = Generator::builder().state_dir(&dir.0).build().unwrap();
    g.next_id().unwrap();
    g.close().unwrap();
    let state_path = dir
        .0
        .join(format!("default/worker-{:05}.state", g.worker_id()));
    let (bytes_before, _, _) = state_of(&state_path);
    let (words, code) = fork_with(|| {
        let closed = g.is_closed();
        let next = g.next_id().map_err(|e| e.kind());
        vec![
            closed as u64,
            next.map_or_else(|k| k.code() as u64, |_| u64::MAX),
        ]
    });
    assert_eq!(code, 0, "the child failed (exit status {code})");
    assert_eq!(words[0], 1, "is_closed() is false in the child");
    assert_eq!(
        words[1],
        ErrorKind::Closed.code() as u64,
        "next_id in the child of a closed generator must fail with Closed"
    );
    let (bytes_after, _, _) = state_of(&state_path);
    assert!(
        bytes_after == bytes_before,
        "the child took the worker ID's lease again and wrote its state"
    );
}

/// Item 11: two threads of a child race to restart an inherited generator; the loser's fresh
/// generator dies, and its fork slot with it, so the next fork's handler never touches its
/// (unmapped) memory. Repeated, since the race is not lost every time.
fn a_lost_restart_race_releases_its_fork_slot() {
    for round in 0..6 {
        let dir = TempDir::new("race");
        let g = Generator::builder().state_dir(&dir.0).build().unwrap();
        g.next_id().unwrap();
        let (words, code) = fork_with(|| {
            let barrier = std::sync::Barrier::new(2);
            let ids: Vec<u64> = std::thread::scope(|s| {
                let racers: Vec<_> = (0..2)
                    .map(|_| {
                        s.spawn(|| {
                            barrier.wait();
                            g.next_id().expect("an ID in the child")
                        })
                    })
                    .collect();
                racers.into_iter().map(|h| h.join().unwrap()).collect()
            });
            // Another fork: its at-fork handler walks every slot of the registry.
            let (grandchild, status) = fork_with(|| vec![g.next_id().map_or(0, |_| 1)]);
            vec![
                ids[0],
                ids[1],
                status as u64,
                grandchild.first().copied().unwrap_or(u64::MAX),
            ]
        });
        assert_eq!(
            code, 0,
            "round {round}: the child failed (exit status {code})"
        );
        assert_ne!(words[0], words[1], "round {round}: one ID twice");
        assert_eq!(
            words[2] as i32, 0,
            "round {round}: the grandchild died (exit status {}): the fork handler touched a \
             freed generator",
            words[2] as i32
        );
        assert_eq!(
            words[3], 1,
            "round {round}: the grandchild could not issue an ID"
        );
    }
}

/// Item 12: `fork::after_fork_in_child()` called in the process that made a generator (which
/// did not fork) must leave its fence and lease alone. It runs in a child of the test binary
/// (which makes the generator itself), so a failure cannot abort the test binary.
fn after_fork_in_child_does_nothing_outside_a_child() {
    let dir = TempDir::new("not-a-child");
    let (words, code) = fork_with(|| {
        let g = Generator::builder()
            .state_dir(&dir.0)
            .max_wait(Duration::from_millis(300))
            .build()
            .unwrap();
        let before = g.next_id().unwrap();
        rimeflake::frontend::after_fork_in_child();
        let after = g.next_id().map_or(0, |id| u64::from(id > before));
        let rival = Generator::builder()
            .state_dir(&dir.0)
            .worker_id(g.worker_id())
            .build();
        let refused = u64::from(matches!(
            rival.as_ref().map_err(|e| e.kind()),
            Err(ErrorKind::Lease)
        ));
        let closed = u64::from(g.is_closed());
        drop(rival);
        drop(g);
        vec![after, refused, closed]
    });
    assert_eq!(code, 0, "the process failed (exit status {code})");
    assert_eq!(words[0], 1, "the generator stopped issuing IDs");
    assert_eq!(words[2], 0, "the generator reads as closed");
    assert_eq!(
        words[1], 1,
        "the lease was freed: a second generator took the same worker ID"
    );
}

/// A state store whose saves wait while `shut` is set: the reservation thread then stays inside
/// a save (holding whatever it holds across one) while the process forks.
#[derive(Debug, Default)]
struct GatedStore {
    state: std::sync::Mutex<Option<rimeflake::WorkerState>>,
    shut: std::sync::atomic::AtomicBool,
    inside: std::sync::atomic::AtomicUsize,
}

impl rimeflake::StateStore for GatedStore {
    fn load(&self) -> rimeflake::Result<Option<rimeflake::WorkerState>> {
        Ok(self.state.lock().unwrap().clone())
    }
    fn save(&self, state: &rimeflake::WorkerState) -> rimeflake::Result<()> {
        use std::sync::atomic::Ordering::SeqCst;
        self.inside.fetch_add(1, SeqCst);
        while self.shut.load(SeqCst) {
            std::thread::sleep(Duration::from_millis(1));
        }
        self.inside.fetch_sub(1, SeqCst);
        *self.state.lock().unwrap() = Some(state.clone());
        Ok(())
    }
    fn describe(&self) -> String {
        "the gated store".into()
    }
}

/// Item 13: an inherited generator is not closed in the child before its first ID; and what a
/// child may call on it without an ID (`is_closed`, `worker_id`, `close`, drop) never waits on
/// a lock that a parent thread held at the fork.
fn a_child_sees_an_open_generator_and_takes_no_parent_lock() {
    use std::sync::atomic::Ordering::SeqCst;
    let store = std::sync::Arc::new(GatedStore::default());
    let g = Generator::builder()
        .worker_id(7)
        .state_store(store.clone())
        .reserve_ahead(Duration::from_millis(5))
        .refresh_every(Duration::from_millis(1))
        .build()
        .unwrap();
    g.next_id().unwrap();
    store.shut.store(true, SeqCst);
    for waited_ms in 0.. {
        if store.inside.load(SeqCst) > 0 {
            break;
        }
        assert!(waited_ms < 10_000, "no save started");
        std::thread::sleep(Duration::from_millis(1));
    }
    let mut slot = Some(g);
    let (words, code) = fork_with(|| {
        // A hang ends the child (SIGALRM) instead of the test.
        // SAFETY: alarm only arms a timer.
        unsafe { libc::alarm(10) };
        let g = slot.take().expect("the generator");
        let open_before = u64::from(!g.is_closed());
        let worker = g.worker_id();
        let shown_open = u64::from(format!("{g:?}").contains("closed: false"));
        let closed_ok = u64::from(g.close().is_ok());
        let closed_after = u64::from(g.is_closed());
        drop(g);
        vec![open_before, worker, shown_open, closed_ok, closed_after]
    });
    store.shut.store(false, SeqCst);
    assert_eq!(code, 0, "the child failed or hung (exit status {code})");
    assert_eq!(
        words[0], 1,
        "is_closed() reads true in the child before its first ID"
    );
    assert_eq!(words[1], 7);
    assert_eq!(words[2], 1, "Debug shows the child's generator as closed");
    assert_eq!(words[3], 1, "close() in the child failed");
    assert_eq!(
        words[4], 1,
        "is_closed() is false after close() in the child"
    );
    let g = slot.take().expect("the parent still has its generator");
    assert!(!g.is_closed());
    g.next_id().unwrap();
    g.close().unwrap();
}

/// The process part of a tracing ID, as two words.
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
fn process_words(id: &str) -> [u64; 2] {
    let hex = id.split('.').next().unwrap();
    [
        u64::from_str_radix(&hex[..16], 16).unwrap(),
        u64::from_str_radix(&hex[16..32], 16).unwrap(),
    ]
}

/// Item 10: `skywalking::global_id()` in a child made by a fork that runs no at-fork handler must
/// not continue the parent's IDs: the child draws a new process part.
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
fn tracing_ids_are_fresh_after_a_fork_without_handlers() {
    use rimeflake::skywalking::global_id;
    let before = global_id();
    let (words, code) = fork_by(raw_fork, || {
        // SAFETY: alarm only arms a timer.
        unsafe { libc::alarm(10) };
        let ids: Vec<String> = (0..1000).map(|_| global_id()).collect();
        let mut out = process_words(&ids[0]).to_vec();
        out.extend(process_words(&ids[999]));
        out
    });
    let after = global_id();
    assert_eq!(code, 0, "the child failed (exit status {code})");
    let parent = process_words(&before);
    assert_eq!(
        process_words(&after),
        parent,
        "the parent's process part changed"
    );
    assert_ne!(
        words[..2],
        parent,
        "the child continued the parent's process part: its IDs repeat the parent's"
    );
    assert_eq!(
        words[..2],
        words[2..],
        "the child's process part changed mid-way"
    );
}

/// One test, so no other test thread runs while the process forks; each case runs to its end
/// and the failures are listed together.
#[test]
fn the_fork_registry_has_one_owner_per_slot() {
    let cases: &[(&str, fn())] = &[
        #[cfg(target_os = "linux")]
        (
            "item 8: a descriptor reused after close stays open in a child",
            a_descriptor_reused_after_close_stays_open_in_a_child,
        ),
        (
            "item 9: closed in the parent stays closed in a child",
            closed_in_the_parent_stays_closed_in_a_child,
        ),
        #[cfg(all(
            target_os = "linux",
            any(target_arch = "x86_64", target_arch = "aarch64")
        ))]
        (
            "item 10: tracing IDs are fresh after a fork without handlers",
            tracing_ids_are_fresh_after_a_fork_without_handlers,
        ),
        (
            "item 11: a lost restart race releases its fork slot",
            a_lost_restart_race_releases_its_fork_slot,
        ),
        (
            "item 12: after_fork_in_child does nothing outside a child",
            after_fork_in_child_does_nothing_outside_a_child,
        ),
        (
            "item 13: a child sees an open generator and takes no parent lock",
            a_child_sees_an_open_generator_and_takes_no_parent_lock,
        ),
    ];
    // RIMEFLAKE_FORK_CASE=text runs only the cases whose name contains it.
    let only = std::env::var("RIMEFLAKE_FORK_CASE").unwrap_or_default();
    let failed: Vec<&str> = cases
        .iter()
        .filter(|(name, _)| name.contains(only.as_str()))
        .filter(|(_, case)| std::panic::catch_unwind(case).is_err())
        .map(|(name, _)| *name)
        .collect();
    assert!(failed.is_empty(), "failed cases: {failed:#?}");
}
