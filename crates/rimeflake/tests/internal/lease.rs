//! Local leases with real files, real processes (SIGKILL) and a real fork.

use rimeflake_testkit::support;
use support::TempDir;

use rimeflake::admin::{inspect, render, StateHealth};
use rimeflake::lease::{LeaseRequest, LocalLease};
use rimeflake::{ErrorKind, Layout, StateStore, WorkerState};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};

fn any(dir: &Path, range: std::ops::RangeInclusive<u64>) -> rimeflake::Result<LocalLease> {
    LocalLease::acquire(dir, "ns", &Layout::default(), LeaseRequest::Any { range })
}

fn exact(dir: &Path, id: u64) -> rimeflake::Result<LocalLease> {
    LocalLease::acquire(dir, "ns", &Layout::default(), LeaseRequest::Exact(id))
}

fn err_of(r: rimeflake::Result<LocalLease>, kind: ErrorKind, needles: &[&str]) {
    let e = r.unwrap_err();
    assert_eq!(e.kind(), kind, "{e}");
    for n in needles {
        assert!(e.message().contains(n), "{n:?} not in: {e}");
    }
}

#[test]
fn leases_take_the_lowest_free_id_and_free_it_on_release() {
    let dir = TempDir::new("lowest");
    let a = any(&dir.0, 0..=1023).unwrap();
    let b = any(&dir.0, 0..=1023).unwrap();
    assert_eq!((a.worker_id(), b.worker_id()), (0, 1));
    assert_eq!(a.path(), dir.0.join("ns/worker-00000.lock"));
    assert_eq!(a.state_path(), dir.0.join("ns/worker-00000.state"));
    a.release();
    assert_eq!(any(&dir.0, 0..=1023).unwrap().worker_id(), 0);
    // Lock files are never deleted.
    assert!(dir.0.join("ns/worker-00000.lock").exists());
    let ranged = any(&dir.0, 7..=9).unwrap();
    assert_eq!(ranged.worker_id(), 7);
    // Missing directories are created (and their entries synced).
    let deep = any(&dir.0.join("a/b"), 0..=3).unwrap();
    assert_eq!(deep.path(), dir.0.join("a/b/ns/worker-00000.lock"));
}

#[test]
fn a_held_exact_id_and_a_full_range_are_refused_clearly() {
    let dir = TempDir::new("held");
    let _five = exact(&dir.0, 5).unwrap();
    let pid = std::process::id().to_string();
    err_of(
        exact(&dir.0, 5),
        ErrorKind::Lease,
        &[
            "worker ID 5 of namespace ns",
            "held by another process",
            &pid,
        ],
    );
    let _four = exact(&dir.0, 4).unwrap();
    let dir_text = dir.0.display().to_string();
    err_of(
        any(&dir.0, 4..=5),
        ErrorKind::NoFreeWorker,
        &["all 2 worker IDs 4..=5", &dir_text],
    );
    err_of(exact(&dir.0, 1024), ErrorKind::Config, &["0..=1023"]);
    for bad in ["", ".", "..", "a/b", "a\0b"] {
        let r = LocalLease::acquire(&dir.0, bad, &Layout::default(), LeaseRequest::Exact(1));
        err_of(r, ErrorKind::Config, &["namespace"]);
    }
}

#[test]
fn a_namespace_keeps_its_first_layout() {
    let dir = TempDir::new("layout");
    drop(exact(&dir.0, 1).unwrap());
    let text = std::fs::read_to_string(dir.0.join("ns/layout")).unwrap();
    assert!(
        text.contains(&format!("{:016x}", Layout::default().fingerprint())),
        "{text}"
    );
    let r = LocalLease::acquire(&dir.0, "ns", &Layout::twitter(), LeaseRequest::Exact(1));
    err_of(
        r,
        ErrorKind::Config,
        &[
            "namespace ns",
            "created with layout default (",
            "this generator uses twitter (",
        ],
    );
    // Another namespace may have another layout.
    LocalLease::acquire(&dir.0, "tw", &Layout::twitter(), LeaseRequest::Exact(1)).unwrap();
}

#[test]
fn of_racing_creators_with_different_layouts_only_one_layout_wins() {
    for round in 0..5 {
        let dir = TempDir::new(&format!("race{round}"));
        let results: Vec<(bool, bool)> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..6u64)
                .map(|i| {
                    let dir = dir.0.clone();
                    s.spawn(move || {
                        let twitter = i % 2 == 0;
                        let layout = if twitter {
                            Layout::twitter()
                        } else {
                            Layout::default()
                        };
                        let r = LocalLease::acquire(&dir, "ns", &layout, LeaseRequest::Exact(i));
                        (twitter, r.is_ok())
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let winners: Vec<bool> = results.iter().filter(|r| r.1).map(|r| r.0).collect();
        assert_eq!(winners.len(), 3, "round {round}: {results:?}");
        assert!(
            winners.iter().all(|&w| w == winners[0]),
            "round {round}: {results:?}"
        );
    }
}

#[test]
fn the_state_lives_beside_the_lock_and_follows_the_worker_id() {
    let dir = TempDir::new("state");
    let lease = exact(&dir.0, 2).unwrap();
    let store = lease.state_store(8).unwrap();
    let mut st = WorkerState::fresh(8);
    st.raise(0, 1_000);
    store.save(&st).unwrap();
    assert!(store.describe().ends_with("ns/worker-00002.state"));
    lease.release();
    let again = exact(&dir.0, 2).unwrap();
    assert_eq!(again.state_store(8).unwrap().load().unwrap(), Some(st));
}

#[test]
fn inspect_shows_holders_layouts_reservations_and_corruption() {
    let dir = TempDir::new("inspect");
    let a = exact(&dir.0, 0).unwrap();
    let b = exact(&dir.0, 1).unwrap();
    let mut st = WorkerState::fresh(8);
    st.clock_id = 1;
    st.raise(1, 2_000); // 2 s after the default epoch
    a.state_store(8).unwrap().save(&st).unwrap();
    b.state_store(8).unwrap().save(&st).unwrap();
    b.release();
    let mut bytes = std::fs::read(dir.0.join("ns/worker-00001.state")).unwrap();
    bytes[10] ^= 0xff; // both copies of the record: one alone would be read from the other
    bytes[rimeflake::state::file::SLOT_SIZE + 10] ^= 0xff;
    std::fs::write(dir.0.join("ns/worker-00001.state"), bytes).unwrap();
    let _c = exact(&dir.0, 2).unwrap();

    let infos = inspect(&dir.0).unwrap();
    assert_eq!(infos.len(), 3);
    let (i0, i1, i2) = (&infos[0], &infos[1], &infos[2]);
    assert!(i0.held && !i1.held && i2.held);
    assert_eq!(i0.holder.pid, Some(std::process::id()));
    assert!(i0
        .layout
        .as_deref()
        .unwrap()
        .starts_with("default (clock_id=3,time=41,"));
    match &i0.state {
        StateHealth::Ok {
            clock_id,
            reserved,
            reserved_ms,
            ..
        } => {
            assert_eq!(*clock_id, 1);
            assert_eq!(reserved[1], Some(2_000));
            assert_eq!(reserved_ms[1], Some(1_704_067_202_000));
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(&i1.state, StateHealth::Corrupt(why) if why.contains("checksum")));
    assert_eq!(i2.state, StateHealth::Missing);
    let text = render(&dir.0, &infos);
    assert!(text.contains("2024-01-01T00:00:02.000Z"), "{text}");
    assert!(text.contains("CORRUPT"), "{text}");
    // Inspecting never disturbs a holder.
    err_of(exact(&dir.0, 0), ErrorKind::Lease, &["held"]);
}

/// The name libtest knows `test` of this file by (the path of this module within the crate).
fn full_name(test: &str) -> String {
    let module = module_path!().split_once("::").map_or("", |(_, rest)| rest);
    format!("{module}::{test}")
}

/// Runs one test of this binary in a child process.
fn spawn_self(test: &str, dir: &Path) -> KillOnDrop {
    let child = Command::new(std::env::current_exe().unwrap())
        .args([
            &full_name(test),
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("RIMEFLAKE_TEST_LEASE_CHILD", dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    KillOnDrop(child)
}

/// The worker ID a child reports ("LOCKED n"; libtest prints its own text before it), and the
/// rest of its output (kept open, so the child's last words do not meet a broken pipe).
fn locked_id(child: &mut KillOnDrop) -> (Option<u64>, impl Iterator<Item = String>) {
    let mut lines = BufReader::new(child.0.stdout.take().unwrap())
        .lines()
        .map(|l| l.unwrap());
    let id = lines.by_ref().find_map(|l| {
        l.split_once("LOCKED ")
            .and_then(|(_, id)| id.trim().parse().ok())
    });
    (id, lines)
}

/// The child's side of the many-processes test: lease any worker ID, say which, and hold it
/// until the parent closes our stdin.
#[test]
fn child_leases_any() {
    let Some(dir) = std::env::var_os("RIMEFLAKE_TEST_LEASE_CHILD") else {
        return; // only meaningful as a child of `processes_starting_at_once_get_distinct_ids`
    };
    let lease = any(Path::new(&dir), 0..=1023).unwrap();
    println!("LOCKED {}", lease.worker_id());
    std::io::stdout().flush().unwrap();
    let _ = std::io::Read::read_to_end(&mut std::io::stdin(), &mut Vec::new());
}

#[test]
fn processes_starting_at_once_get_distinct_ids() {
    let dir = TempDir::new("many");
    let mut children: Vec<KillOnDrop> = (0..8)
        .map(|_| spawn_self("child_leases_any", &dir.0))
        .collect();
    let (ids, rests): (Vec<_>, Vec<_>) = children.iter_mut().map(locked_id).unzip();
    let mut ids: Vec<u64> = ids
        .into_iter()
        .map(|id| id.expect("a child failed"))
        .collect();
    ids.sort_unstable();
    // All hold their lease at once (none has been told to exit): the IDs are distinct and,
    // since each takes the lowest free one, exactly 0..8.
    assert_eq!(ids, (0..8).collect::<Vec<_>>());
    for (c, rest) in children.iter_mut().zip(rests) {
        drop(c.0.stdin.take());
        rest.for_each(drop);
        assert!(c.0.wait().unwrap().success());
    }
}

struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The child's side of the SIGKILL test: lease worker ID 3, say so, and wait to be killed.
#[test]
fn child_holds_a_lease() {
    let Some(dir) = std::env::var_os("RIMEFLAKE_TEST_LEASE_CHILD") else {
        return; // only meaningful as a child of `a_sigkilled_holder_frees_its_lease_at_once`
    };
    let lease = exact(Path::new(&dir), 3).unwrap();
    println!("LOCKED {}", lease.worker_id());
    std::io::stdout().flush().unwrap();
    std::thread::sleep(std::time::Duration::from_secs(120));
}

#[test]
fn a_sigkilled_holder_frees_its_lease_at_once() {
    let dir = TempDir::new("sigkill");
    let mut child = spawn_self("child_holds_a_lease", &dir.0);
    let pid = child.0.id();
    let lines = BufReader::new(child.0.stdout.take().unwrap()).lines();
    // libtest prints "test child_holds_a_lease ... " before the child's own output.
    let locked = lines
        .map(|l| l.unwrap())
        .find_map(|l| l.split_once("LOCKED ").map(|(_, id)| id.to_string()));
    assert_eq!(
        locked.as_deref(),
        Some("3"),
        "the child did not take its lease"
    );

    err_of(exact(&dir.0, 3), ErrorKind::Lease, &[&format!("pid {pid}")]);
    let info = inspect(&dir.0).unwrap();
    assert!(info[0].held && info[0].holder.pid == Some(pid));

    child.0.kill().unwrap(); // SIGKILL: no destructor, no unlock by the child
    child.0.wait().unwrap();
    // The kernel dropped the lock with the process: no waiting, no stale lock to clean.
    let lease = exact(&dir.0, 3).unwrap();
    assert_eq!(lease.worker_id(), 3);
}

#[test]
fn a_forked_child_abandons_the_lease_without_unlocking_the_parents() {
    let dir = TempDir::new("fork");
    for child_unlocks in [false, true] {
        let mut lease = exact(&dir.0, 6).unwrap();
        // SAFETY: the child only calls async-signal-safe functions (close, flock, _exit).
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            if child_unlocks {
                // What abandon_after_fork must not do: the flock is shared with the parent.
                // SAFETY: flock on the lease's open descriptor touches no Rust memory.
                unsafe { libc::flock(lease.lock_fd().unwrap(), libc::LOCK_UN) };
            } else {
                lease.abandon_after_fork();
            }
            // SAFETY: _exit has no preconditions; the child leaves without running the
            // parent's destructors (which would release what the parent holds).
            unsafe { libc::_exit(0) };
        }
        let mut status = 0;
        // SAFETY: waits for this test's own child; `status` is a local to write.
        assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
        let probe = exact(&dir.0, 6);
        if child_unlocks {
            // The control case: shows this test would catch an abandon that unlocks.
            assert!(
                probe.is_ok(),
                "an unlock in the child frees the parent's lease"
            );
        } else {
            err_of(probe, ErrorKind::Lease, &["held"]);
        }
        drop(lease);
    }
}

#[test]
fn an_abandoned_lease_gives_no_state_store() {
    let dir = TempDir::new("abandon");
    let mut lease = exact(&dir.0, 1).unwrap();
    lease.abandon_after_fork();
    assert!(lease.is_abandoned());
    err_of(
        lease.state_store(8).map(|_| unreachable!()),
        ErrorKind::Lease,
        &["fork"],
    );
}

/// A lost lock file stops the holder, in the core: the store a lease hands out refuses to save once
/// the lock file was deleted, moved over or replaced by a symlink, with a lease error that says so.
#[test]
fn a_save_fails_closed_once_the_lock_file_is_deleted_or_replaced() {
    for tamper in ["delete", "move over", "symlink"] {
        let dir = TempDir::new("guard");
        let lease = exact(&dir.0, 2).unwrap();
        let store = lease.state_store(8).unwrap();
        let mut state = WorkerState::fresh(8);
        state.raise(0, 100);
        store.save(&state).unwrap();
        let lock = lease.path().to_path_buf();
        let other = dir.0.join("ns/other");
        std::fs::write(&other, "").unwrap();
        match tamper {
            "delete" => std::fs::remove_file(&lock).unwrap(),
            "move over" => std::fs::rename(&other, &lock).unwrap(),
            _ => {
                std::fs::remove_file(&lock).unwrap();
                std::os::unix::fs::symlink(&other, &lock).unwrap();
            }
        }
        state.raise(0, 200);
        let e = store.save(&state).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Lease, "{tamper}: {e}");
        assert!(e.message().contains("stops issuing IDs"), "{tamper}: {e}");
        assert!(
            e.message().contains(&lock.display().to_string()),
            "{tamper}: {e}"
        );
    }
}

/// Runs `f` on the path after making it a FIFO.
fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
}

/// Special files never hang a start: a state, lock or layout file replaced by a FIFO hung forever;
/// one replaced by a link to /dev/zero read without bound. Each is now a clear error naming the
/// path, at once (the test would hang, or run out of memory, without the fix).
#[test]
fn fifos_and_links_to_devices_in_place_of_state_files_are_refused_at_once() {
    let layout = Layout::default();
    for (name, kind) in [
        ("worker-00001.state", ErrorKind::State),
        ("worker-00001.lock", ErrorKind::Lease),
        ("layout", ErrorKind::State),
    ] {
        for special in ["fifo", "/dev/zero link"] {
            let dir = TempDir::new("special");
            exact(&dir.0, 1).unwrap().release(); // the namespace, its layout and lock file
            let path = dir.0.join("ns").join(name);
            let _ = std::fs::remove_file(&path);
            if special == "fifo" {
                mkfifo(&path);
            } else {
                std::os::unix::fs::symlink("/dev/zero", &path).unwrap();
            }
            let r = LocalLease::acquire(&dir.0, "ns", &layout, LeaseRequest::Exact(1))
                .and_then(|l| l.state_store(8))
                .and_then(|s| s.load());
            let e = r.unwrap_err();
            assert_eq!(e.kind(), kind, "{name} as {special}: {e}");
            assert!(
                e.message().contains(&path.display().to_string()),
                "{name} as {special}: {e}"
            );
            let why = if special == "fifo" {
                "a FIFO"
            } else {
                "symbolic link"
            };
            assert!(e.message().contains(why), "{name} as {special}: {e}");
        }
    }
}

/// No write through a planted link: a symlink planted as a lock file made root truncate and
/// overwrite its target (any root-owned file). Now the link is refused and the target is untouched.
#[test]
fn a_planted_symlink_never_makes_rimeflake_write_through_it() {
    let dir = TempDir::new("planted");
    exact(&dir.0, 0).unwrap().release();
    let victim = dir.0.join("victim");
    std::fs::write(&victim, "root's secret\n").unwrap();
    std::fs::set_permissions(&victim, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    for name in ["worker-00003.lock", "worker-00003.state", "worker-00003.hw"] {
        let link = dir.0.join("ns").join(name);
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let r = exact(&dir.0, 3).and_then(|l| {
            let s = l.state_store(8)?;
            let mut state = WorkerState::fresh(8);
            state.raise(0, 5);
            s.save(&state)
        });
        if name.ends_with(".hw") {
            // Read refused, then replaced whole by a rename: the link itself is replaced.
            r.unwrap();
            assert!(
                std::fs::symlink_metadata(&link).unwrap().is_file(),
                "{name}"
            );
        } else {
            let e = r.unwrap_err();
            assert!(e.message().contains("symbolic link"), "{name}: {e}");
        }
        assert_eq!(
            std::fs::read_to_string(&victim).unwrap(),
            "root's secret\n",
            "{name}: the link's target was written"
        );
        std::fs::remove_file(&link).unwrap();
    }
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(mode)).unwrap();
}

/// Directories others can write to are refused: a state or namespace directory that another user
/// can write to, or that another user owns, is refused with the command that fixes it; directories
/// rimeflake creates are 0700 and its files 0600.
#[test]
fn untrusted_directories_are_refused_and_new_ones_are_private() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = TempDir::new("perms");
    let state = dir.0.join("state");
    let lease = exact(&state, 1).unwrap();
    let store = lease.state_store(8).unwrap();
    let mut s = WorkerState::fresh(8);
    s.raise(0, 5);
    store.save(&s).unwrap();
    for (path, mode) in [
        (state.clone(), 0o700),
        (state.join("ns"), 0o700),
        (state.join("ns/worker-00001.lock"), 0o600),
        (state.join("ns/worker-00001.state"), 0o600),
        (state.join("ns/worker-00001.hw"), 0o600),
        (state.join("ns/layout"), 0o600),
    ] {
        let m = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(m, mode, "{}: {m:o}", path.display());
    }
    lease.release();
    for (what, path) in [("state", state.clone()), ("namespace", state.join("ns"))] {
        chmod(&path, 0o777);
        err_of(
            exact(&state, 1),
            ErrorKind::Config,
            &[
                "writable by",
                "another user could plant links or take worker IDs there",
                "chmod go-w",
                &path.display().to_string(),
            ],
        );
        chmod(&path, 0o770);
        err_of(exact(&state, 1), ErrorKind::Config, &["its group"]);
        chmod(&path, 0o700);
        // SAFETY: geteuid cannot fail.
        if unsafe { libc::geteuid() } == 0 {
            let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
            // SAFETY: a NUL-terminated path; uid 65534 is nobody.
            assert_eq!(unsafe { libc::chown(c.as_ptr(), 65534, u32::MAX) }, 0);
            assert_eq!(std::fs::metadata(&path).unwrap().uid(), 65534);
            err_of(
                exact(&state, 1),
                ErrorKind::Config,
                &[
                    "owned by uid 65534",
                    "another user could plant links or take worker IDs there",
                    "chown 0",
                    &path.display().to_string(),
                ],
            );
            // SAFETY: as above.
            assert_eq!(unsafe { libc::chown(c.as_ptr(), 0, u32::MAX) }, 0);
        } else {
            eprintln!("{what}: not root: the owner check is tested as root (CI)");
        }
        exact(&state, 1).unwrap().release();
    }
    // A directory above the state directory that others can write to (and not sticky).
    chmod(&dir.0, 0o777);
    err_of(
        exact(&state, 1),
        ErrorKind::Config,
        &["another user can change", &dir.0.display().to_string()],
    );
    chmod(&dir.0, 0o1777); // sticky, as /tmp
    exact(&state, 1).unwrap().release();
    chmod(&dir.0, 0o755);
}

/// Namespaces name one directory: a namespace with a '/', a newline or a NUL is a config error
/// whose length limit names its unit.
#[test]
fn namespaces_that_cannot_name_a_directory_are_config_errors() {
    let dir = TempDir::new("ns-names");
    for bad in ["a/b", "a\nb", "a\0b", "..", ""] {
        let r = LocalLease::acquire(&dir.0, bad, &Layout::default(), LeaseRequest::Exact(0));
        err_of(r, ErrorKind::Config, &["200 bytes"]);
    }
    let long = "é".repeat(101); // 101 characters, 202 bytes
    let r = LocalLease::acquire(&dir.0, &long, &Layout::default(), LeaseRequest::Exact(0));
    err_of(r, ErrorKind::Config, &["202 bytes", "200 bytes"]);
}

/// Special files never hang `state show`: a FIFO or a /dev/zero link in place of a state or lock
/// file is reported, never waited on or read without bound.
#[test]
fn inspect_reports_special_files_without_hanging() {
    let dir = TempDir::new("inspect-special");
    exact(&dir.0, 1).unwrap().release();
    exact(&dir.0, 2).unwrap().release();
    let ns = dir.0.join("ns");
    mkfifo(&ns.join("worker-00001.state"));
    std::os::unix::fs::symlink("/dev/zero", ns.join("worker-00002.state")).unwrap();
    let infos = inspect(&dir.0).unwrap();
    assert_eq!(infos.len(), 2);
    for (info, why) in infos.iter().zip(["a FIFO", "symbolic link"]) {
        match &info.state {
            StateHealth::Corrupt(msg) => assert!(msg.contains(why), "{msg}"),
            other => panic!("worker {}: {other:?}", info.worker_id),
        }
    }
    std::fs::remove_file(ns.join("worker-00002.lock")).unwrap();
    mkfifo(&ns.join("worker-00002.lock"));
    // A lock file that is not a regular file is not a lease: not listed, and not waited on.
    let infos = inspect(&dir.0).unwrap();
    assert_eq!(infos.iter().map(|i| i.worker_id).collect::<Vec<_>>(), [1]);
}
