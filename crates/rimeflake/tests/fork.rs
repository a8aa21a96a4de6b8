//! Issue 4, item 9c, and issue 8, items 8, 9, 11, 12 and 13: `fork()` with a live (or closed)
//! generator, in a test binary of its own with a single test, so no other test thread runs while
//! the process forks (a child gets only the forking thread; the generators' reservation threads
//! do not hold the allocator lock for long, and glibc's `fork` takes its malloc locks around the
//! fork).
//!
//! The child reports through a pipe and leaves with `_exit`, so it never runs the test
//! harness's exit path; everything it does is inside `catch_unwind`.

#![cfg(unix)]

mod support;
use support::TempDir;

use rimeflake::state::file::decode_file;
use rimeflake::{ErrorKind, Generator, Layout};
use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

/// Forks; the child runs `child` (its words go to the parent through a pipe) and `_exit`s.
/// Returns what the child wrote and its exit status.
fn fork_with(child: impl FnOnce() -> Vec<u64>) -> (Vec<u64>, i32) {
    // SAFETY: see the module docs.
    fork_by(|| unsafe { libc::fork() }, child)
}

/// `fork(2)` through the system call itself, as a raw `clone` in a runtime does: glibc's
/// `fork()` and so every at-fork handler is skipped.
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
fn raw_fork() -> libc::pid_t {
    // SAFETY: clone with only SIGCHLD and no new stack is fork; the child runs our code only.
    (unsafe { libc::syscall(libc::SYS_clone, libc::SIGCHLD as libc::c_long, 0, 0, 0, 0) })
        as libc::pid_t
}

/// [`fork_with`], forking with `fork`.
fn fork_by(
    fork: impl FnOnce() -> libc::pid_t,
    child: impl FnOnce() -> Vec<u64>,
) -> (Vec<u64>, i32) {
    let mut fds = [0; 2];
    // SAFETY: a valid array of two descriptors.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0, "pipe");
    let (read_fd, write_fd) = (fds[0], fds[1]);
    // The child only runs our code and then `_exit`s.
    let pid = fork();
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        // SAFETY: the child's copy of the read end.
        unsafe { libc::close(read_fd) };
        let words = std::panic::catch_unwind(std::panic::AssertUnwindSafe(child));
        let code = match &words {
            Ok(words) => {
                let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
                let mut at = 0;
                while at < bytes.len() {
                    // SAFETY: writing from a live buffer to our pipe.
                    let n = unsafe {
                        libc::write(write_fd, bytes[at..].as_ptr().cast(), bytes.len() - at)
                    };
                    if n <= 0 {
                        break;
                    }
                    at += n as usize;
                }
                if at == bytes.len() {
                    0
                } else {
                    3
                }
            }
            Err(_) => 2,
        };
        // SAFETY: leave without running the harness's (or any) exit handlers.
        unsafe { libc::_exit(code) };
    }
    // SAFETY: the parent's copy of the write end: closed, so EOF comes when the child exits.
    unsafe { libc::close(write_fd) };
    let mut bytes = Vec::new();
    let mut buf = [0u8; 65536];
    loop {
        // SAFETY: reading into a live buffer from our pipe.
        let n = unsafe { libc::read(read_fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n <= 0 {
            break;
        }
        bytes.extend_from_slice(&buf[..n as usize]);
    }
    // SAFETY: our descriptor.
    unsafe { libc::close(read_fd) };
    let mut status = 0;
    // SAFETY: waiting for our own child; `status` is a valid out-parameter.
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    let words = bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    (words, code)
}

/// The state file's raw bytes and its newest record's current clock-id and reservation.
fn state_of(path: &Path) -> (Vec<u8>, u64, u64) {
    let bytes = std::fs::read(path).expect("the state file");
    let (_, rec) = decode_file(&bytes).expect("a valid record");
    let cid = rec.state.clock_id;
    let reserved = rec.state.reserved_of(cid).expect("a reservation");
    (bytes, cid, reserved)
}

/// A leased worker ID: the child takes a new one; the parent keeps its lease and state.
fn leased_child_takes_a_new_worker_id() {
    let dir = TempDir::new("leased");
    let parent = Generator::builder().state_dir(&dir.0).build().unwrap();
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
        rimeflake::fork::after_fork_in_child();
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

/// Item 10: `tracing::global_id()` in a child made by a fork that runs no at-fork handler must
/// not continue the parent's IDs: the child draws a new process part.
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
fn tracing_ids_are_fresh_after_a_fork_without_handlers() {
    use rimeflake::tracing::global_id;
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
fn forked_children_never_share_the_parents_worker_id_lease_or_state() {
    let cases: &[(&str, fn())] = &[
        (
            "leased child takes a new worker ID",
            leased_child_takes_a_new_worker_id,
        ),
        (
            "fixed worker child is refused",
            fixed_worker_child_is_refused,
        ),
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
