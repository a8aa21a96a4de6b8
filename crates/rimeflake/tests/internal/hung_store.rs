//! Bounded waits on a store that hangs: no call waits on a hung store past `max_wait`, interrupts
//! get through, a forked child never waits on a lock its parent held, in-memory `close` is bounded,
//! and a seeded run with a live I/O thread, a disk that stalls, fails and crashes, never repeats an
//! ID.
//!
//! The store here is a [`FileStore`] on a [`SimDisk`], whose `stall` blocks every operation as a
//! hung disk or NFS server would, until `resume` (or a crash). Each call under test runs on a
//! thread of its own and the test waits for its answer at most [`HUNG`]: far above any
//! `max_wait` used here, so only a call that blocks on the store itself runs into it.

use rimeflake_testkit::support;
use support::Rng;

use rimeflake::state::FileStore;
use rimeflake::testing::SimDisk;
use rimeflake::{
    Clock, ErrorKind, Generator, Layout, ManualClock, RollbackPolicy, StateStore, SystemClock,
};
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

const START_MS: u64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z
/// A call that has not answered after this blocks on the store: the bug under test.
const HUNG: Duration = Duration::from_secs(20);

fn store(disk: &SimDisk, clock_ids: usize) -> Arc<dyn StateStore> {
    Arc::new(
        FileStore::with_disk(
            disk.clone(),
            PathBuf::from("/sim/worker-1.state"),
            clock_ids,
        )
        .unwrap(),
    )
}

fn live<C: Clock>(
    disk: &SimDisk,
    clock: C,
    layout: Layout,
    max_wait: Duration,
) -> Arc<Generator<C>> {
    let clock_ids = layout.max_clock_id() as usize + 1;
    Arc::new(
        Generator::builder()
            .layout(layout)
            .worker_id(1)
            .clock(clock)
            .state_store(store(disk, clock_ids))
            .refresh_every(Duration::from_millis(5))
            .reserve_ahead(Duration::from_millis(40))
            .max_wait(max_wait)
            .build()
            .unwrap(),
    )
}

/// Runs `f` on a thread of its own; its answer, or a panic naming `what` if none comes within
/// [`HUNG`] (the disk is resumed first, so the stuck thread can finish).
fn answer<T: Send + 'static>(
    disk: &SimDisk,
    what: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(HUNG) {
        Ok(v) => v,
        Err(_) => {
            disk.resume();
            panic!("{what} still blocked after {HUNG:?} on a hung store (max_wait is far shorter)");
        }
    }
}

#[test]
fn next_id_fails_with_a_state_error_within_max_wait_while_the_disk_hangs() {
    let disk = SimDisk::new(1);
    let g = live(
        &disk,
        SystemClock,
        Layout::twitter(),
        Duration::from_millis(300),
    );
    let mut seen = HashSet::new();
    for _ in 0..100 {
        assert!(seen.insert(g.next_id().unwrap()));
    }
    disk.stall();
    let g2 = Arc::clone(&g);
    let (ids, err) = answer(&disk, "next_id", move || {
        let mut ids = Vec::new();
        loop {
            match g2.next_id() {
                Ok(id) => ids.push(id),
                Err(e) => return (ids, e),
            }
        }
    });
    assert_eq!(err.kind(), ErrorKind::State, "{err}");
    assert!(err.message().contains("max_wait"), "{err}");
    for id in ids {
        assert!(seen.insert(id), "duplicate {id}");
    }
    // A second call while it still hangs: the same bound.
    let g3 = Arc::clone(&g);
    let err = answer(&disk, "next_id again", move || g3.next_id()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::State);
    // The store answers again: the generator recovers by itself.
    disk.resume();
    let id = answer(&disk, "next_id after resume", {
        let g = Arc::clone(&g);
        move || g.next_id()
    })
    .unwrap();
    assert!(seen.insert(id));
}

#[test]
fn an_interrupt_gets_through_while_the_disk_hangs() {
    let disk = SimDisk::new(2);
    // max_wait of a minute: only the interrupt can end this call within HUNG.
    let g = live(
        &disk,
        SystemClock,
        Layout::twitter(),
        Duration::from_secs(60),
    );
    g.next_id().unwrap();
    disk.stall();
    let stop = Arc::new(AtomicBool::new(false));
    let (g2, stop2) = (Arc::clone(&g), Arc::clone(&stop));
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        stop2.store(true, Ordering::SeqCst);
    });
    let err = answer(&disk, "next_id_with", move || loop {
        if let Err(e) = g2.next_id_with(&mut || stop.load(Ordering::SeqCst)) {
            return e;
        }
    });
    assert_eq!(err.kind(), ErrorKind::Interrupted, "{err}");
    disk.resume();
}

#[test]
fn a_clock_id_switch_waits_at_most_max_wait_for_a_hung_store_then_completes() {
    let disk = SimDisk::new(3);
    let clock = ManualClock::new(START_MS);
    let g = live(
        &disk,
        clock.clone(),
        Layout::default(),
        Duration::from_millis(300),
    );
    let before = g.next_id().unwrap();
    disk.stall();
    clock.set_back(Duration::from_secs(30)); // a large rollback: a switch must be stored
    let g2 = Arc::clone(&g);
    let err = answer(&disk, "next_id across a rollback", move || g2.next_id()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::State, "{err}");
    assert!(err.message().contains("clock-id"), "{err}");
    disk.resume();
    let g3 = Arc::clone(&g);
    let after = answer(&disk, "next_id after resume", move || g3.next_id()).unwrap();
    assert!(
        after > before,
        "the next clock-id sorts above: {after} vs {before}"
    );
    assert_eq!(g.stats().clock_id, 1);
}

#[test]
fn close_is_bounded_while_the_disk_hangs_and_the_last_write_lands_later() {
    let disk = SimDisk::new(4);
    let g = live(
        &disk,
        SystemClock,
        Layout::twitter(),
        Duration::from_millis(300),
    );
    let last = g.next_id().unwrap();
    disk.stall();
    let g2 = Arc::clone(&g);
    let err = answer(&disk, "close", move || g2.close()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::State, "{err}");
    assert!(g.is_closed());
    assert_eq!(g.next_id().unwrap_err().kind(), ErrorKind::Closed);
    disk.resume();
    // The I/O thread finishes the final write once the store answers.
    let path = PathBuf::from("/sim/worker-1.state");
    let mut closed_at = None;
    for _ in 0..500 {
        let bytes = disk.contents(&path).unwrap();
        closed_at = rimeflake::state::file::decode_file(&bytes)
            .unwrap()
            .1
            .state
            .closed_at;
        if closed_at.is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let parts = Layout::twitter().decode(last).unwrap();
    let closed = closed_at.expect("the final write landed after the disk resumed");
    assert_eq!(
        closed & 0xfff,
        parts.sequence,
        "closed_at is the last ID's counter"
    );
}

/// Item 5: with `refresh_every(ZERO)` a call that reaches the reservation writes it itself,
/// inside the generator's slow path. A fork at that moment must leave the child able to read
/// `stats()` (it used to take the slow path's lock, held forever by a thread the child lacks).
#[test]
fn stats_in_a_child_forked_while_a_parent_thread_is_stuck_in_the_store() {
    let disk = SimDisk::new(5);
    let clock_ids = Layout::twitter().max_clock_id() as usize + 1;
    let g = Arc::new(
        Generator::builder()
            .layout(Layout::twitter())
            .worker_id(1)
            .state_store(store(&disk, clock_ids))
            .refresh_every(Duration::ZERO)
            .reserve_ahead(Duration::from_millis(1))
            .max_wait(Duration::from_secs(30))
            .build()
            .unwrap(),
    );
    g.next_id().unwrap();
    disk.stall();
    let g2 = Arc::clone(&g);
    let done = Arc::new(AtomicBool::new(false));
    let done2 = Arc::clone(&done);
    let stuck = std::thread::spawn(move || {
        // Reaches the reservation within a few ms and blocks in the store.
        while !done2.load(Ordering::SeqCst) && g2.next_id().is_ok() {}
    });
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: the child only reads atomics and exits; nothing in it allocates or locks.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        // SAFETY: alarm has no preconditions (async-signal-safe, fine in a forked child).
        unsafe { libc::alarm(10) }; // a hang ends the child with SIGALRM
        let s = g.stats();
        // SAFETY: _exit has no preconditions; it skips the atexit handlers and destructors
        // that belong to the parent's threads.
        unsafe { libc::_exit(if s.ids_issued > 0 { 0 } else { 3 }) };
    }
    let mut status = 0;
    // SAFETY: waiting for our own child.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    done.store(true, Ordering::SeqCst);
    disk.resume();
    let _ = stuck.join();
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "the child's stats() hung or failed (status {status:#x})"
    );
}

#[test]
fn in_memory_close_waits_at_most_max_wait_even_with_an_hour_long_unit() {
    let clock = ManualClock::new(START_MS);
    let hourly = Layout::builder()
        .unit_ms(3_600_000)
        .time_bits(30)
        .sequence_bits(20)
        .build();
    let hourly = hourly.unwrap();
    let g = Generator::builder()
        .layout(hourly)
        .worker_id(1)
        .in_memory()
        .clock(clock.clone())
        .max_wait(Duration::from_secs(2))
        .build()
        .unwrap();
    g.next_id().unwrap();
    let before = clock.monotonic_ns();
    let err = g.close().unwrap_err();
    let waited = Duration::from_nanos(clock.monotonic_ns() - before);
    assert_eq!(err.kind(), ErrorKind::ClockRollback, "{err}");
    assert!(
        waited <= Duration::from_secs(2),
        "waited {waited:?} of the manual clock"
    );
}

#[test]
fn a_unit_longer_than_a_day_is_a_config_error() {
    for unit in [86_400_001, u64::MAX] {
        let err = Layout::builder().unit_ms(unit).build().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Config);
        assert!(err.message().contains("unit_ms"), "{err}");
    }
}

#[test]
fn in_memory_close_after_the_time_field_ran_out_returns_at_once() {
    // 12 time bits of 1 ms: the field ends 4,096 ms after the epoch, 96 ms after `now`.
    let now = rimeflake::clock::system_now_ms();
    let layout = Layout::builder()
        .clock_id_bits(0)
        .time_bits(12)
        .worker_bits(26)
        .sequence_bits(25)
        .epoch_ms(now - 4_000)
        .build()
        .unwrap();
    let clock = ManualClock::new(now);
    let g = Generator::builder()
        .layout(layout)
        .worker_id(1)
        .in_memory()
        .clock(clock.clone())
        .build()
        .unwrap();
    g.next_id().unwrap();
    clock.set_ms(now + 1_000); // past the end of the field: past every ID
    let before = clock.monotonic_ns();
    g.close().unwrap();
    assert_eq!(clock.monotonic_ns(), before, "no wait");
}

/// A seeded run with a live I/O thread: bursts, clock steps both ways, stalls, write and sync
/// errors, clean restarts and crashes on one [`SimDisk`]; every ID of every life is checked.
/// Unlike `simulation.rs` it does not replay exactly (a thread runs beside it), but each
/// seed's choices are its own, and it prints the seed that failed.
#[test]
fn live_io_thread_with_stalls_faults_and_crashes_never_repeats_an_id() {
    let seeds = std::env::var("RIMEFLAKE_LIVE_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(12u64);
    for seed in 0..seeds {
        if let Err(e) = std::panic::catch_unwind(|| live_run(seed)) {
            panic!("seed {seed} failed: {:?}", e.downcast_ref::<String>());
        }
    }
}

fn live_run(seed: u64) {
    let mut rng = Rng(seed);
    let disk = SimDisk::new(seed);
    let clock = ManualClock::new(START_MS);
    let layout = if rng.next() % 2 == 0 {
        Layout::default()
    } else {
        Layout::twitter()
    };
    let mut seen: HashSet<u64> = HashSet::new();
    let build = |disk: &SimDisk| {
        let clock_ids = layout.max_clock_id() as usize + 1;
        Generator::builder()
            .layout(layout.clone())
            .worker_id(1)
            .clock(clock.clone())
            .state_store(store(disk, clock_ids))
            .refresh_every(Duration::from_millis(2))
            .reserve_ahead(Duration::from_millis(20))
            .max_drift(Duration::from_millis(50))
            .max_wait(Duration::from_millis(60))
            .rollback_policy(if layout.clock_id_bits() > 0 {
                RollbackPolicy::BumpClock
            } else {
                RollbackPolicy::Wait
            })
            .build()
    };
    let mut g = Arc::new(build(&disk).unwrap());
    for _ in 0..60 {
        match rng.next() % 10 {
            0..=3 => {
                let n = 1 + rng.next() % 500;
                let g2 = Arc::clone(&g);
                let got = answer(&disk, "a burst", move || {
                    (0..n).map(|_| g2.next_id()).collect::<Vec<_>>()
                });
                for r in got {
                    match r {
                        Ok(id) => assert!(seen.insert(id), "duplicate {id}"),
                        Err(e) => assert!(
                            matches!(
                                e.kind(),
                                ErrorKind::State
                                    | ErrorKind::ClockRollback
                                    | ErrorKind::Overloaded
                                    | ErrorKind::Closed
                            ),
                            "{e}"
                        ),
                    }
                }
            }
            4 => clock.advance(Duration::from_millis(rng.next() % 200)),
            5 => clock.set_back(Duration::from_millis(rng.next() % 3_000)),
            6 => {
                disk.stall();
                let g2 = Arc::clone(&g);
                // Calls go on inside the reservation, then each fails after max_wait.
                let got = answer(&disk, "calls on a stalled disk", move || {
                    (0..200)
                        .map_while(|_| g2.next_id().ok())
                        .collect::<Vec<_>>()
                });
                for id in got {
                    assert!(seen.insert(id), "duplicate {id} while stalled");
                }
                disk.resume();
            }
            7 => disk.fail_next(if rng.next() % 2 == 0 {
                rimeflake::testing::Fault::WriteError
            } else {
                rimeflake::testing::Fault::SyncError
            }),
            8 => {
                let _ = answer(&disk, "close", {
                    let g = Arc::clone(&g);
                    move || g.close()
                });
                g = Arc::new(restart(&build, &disk, &clock));
            }
            _ => {
                // A crash: the power goes, the process dies (its close can write nothing),
                // unsynced writes are lost or torn.
                disk.cut_power_after(0);
                let _ = answer(&disk, "close at a crash", {
                    let g = Arc::clone(&g);
                    move || g.close()
                });
                disk.crash();
                g = Arc::new(restart(&build, &disk, &clock));
            }
        }
    }
    let _ = g.close();
}

/// A restart; when the clock is too far behind the reservation for the policy, the operator
/// waits: the clock moves on a second and it tries again (after a one-shot disk fault, at once).
fn restart<G>(
    build: &impl Fn(&SimDisk) -> rimeflake::Result<G>,
    disk: &SimDisk,
    clock: &ManualClock,
) -> G {
    for _ in 0..10 {
        match build(disk) {
            Ok(g) => return g,
            Err(e) if e.kind() == ErrorKind::ClockRollback => clock.advance(Duration::from_secs(1)),
            Err(e) if e.kind() == ErrorKind::State => {} // an injected one-shot fault: retry
            Err(e) => panic!("restart failed: {e}"),
        }
    }
    panic!("restart failed ten times");
}
