//! Durable state: restarts, rollbacks across restarts, leases, and a store that fails.

use rimeflake_testkit::support;
use support::TempDir;

use rimeflake::state::{StateStore, WorkerState};
use rimeflake::{Error, ErrorKind, Generator, Layout, ManualClock, Result};
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const START: u64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z

/// A store in memory that can be told to fail, and records what was saved.
#[derive(Debug, Default)]
struct FlakyStore {
    state: Mutex<Option<WorkerState>>,
    failing: AtomicBool,
    saves: Mutex<Vec<WorkerState>>,
}

impl StateStore for FlakyStore {
    fn load(&self) -> Result<Option<WorkerState>> {
        Ok(self.state.lock().unwrap().clone())
    }
    fn save(&self, state: &WorkerState) -> Result<()> {
        if self.failing.load(Ordering::SeqCst) {
            return Err(Error::new(ErrorKind::State, "flaky store: disk full"));
        }
        *self.state.lock().unwrap() = Some(state.clone());
        self.saves.lock().unwrap().push(state.clone());
        Ok(())
    }
    fn describe(&self) -> String {
        "the flaky store".into()
    }
}

fn on_store(store: &Arc<FlakyStore>, clock: &ManualClock) -> Generator<ManualClock> {
    Generator::builder()
        .worker_id(3)
        .state_store(store.clone())
        .refresh_every(Duration::ZERO)
        .reserve_ahead(Duration::from_millis(100))
        .max_wait(Duration::from_millis(30))
        .clock(clock.clone())
        .build()
        .unwrap()
}

#[test]
fn a_restart_continues_above_everything_issued_before() {
    let tmp = TempDir::new("restart");
    let dir = tmp.0.clone();
    let mut seen = HashSet::new();
    let mut last = 0;
    for _ in 0..3 {
        let g = Generator::builder()
            .layout(Layout::twitter())
            .worker_id(7)
            .state_dir(&dir)
            .build()
            .unwrap();
        for id in g.next_ids(10_000).unwrap() {
            assert!(id > last && seen.insert(id));
            last = id;
        }
        g.close().unwrap();
        assert_eq!(g.next_id().unwrap_err().kind(), ErrorKind::Closed);
    }
}

#[test]
fn a_crash_and_a_restart_with_the_clock_set_back_an_hour_switch_clock_ids() {
    let store = Arc::new(FlakyStore::default());
    let clock = ManualClock::new(START);
    let g = on_store(&store, &clock);
    let before: Vec<u64> = g.next_ids(5000).unwrap();
    std::mem::forget(g); // a crash: no close, nothing more written
    clock.set_back(Duration::from_secs(3600));
    let g = on_store(&store, &clock);
    let after = g.next_ids(5000).unwrap();
    let all: HashSet<u64> = before.iter().chain(&after).copied().collect();
    assert_eq!(all.len(), 10_000);
    assert_eq!(g.stats().clock_id, 1);
    assert!(
        after[0] > *before.last().unwrap(),
        "the new clock-id sorts above the old one"
    );
    assert_eq!(store.state.lock().unwrap().as_ref().unwrap().clock_id, 1);
}

#[test]
fn a_quick_restart_after_a_burst_does_not_cost_a_clock_id() {
    let store = Arc::new(FlakyStore::default());
    let clock = ManualClock::new(START);
    let g = on_store(&store, &clock);
    let burst = g.next_ids(512 * 1500).unwrap(); // 1.5 s of IDs lent ahead of a stalled clock
    std::mem::forget(g);
    let g = on_store(&store, &clock);
    let next = g.next_id().unwrap();
    assert!(next > *burst.last().unwrap());
    assert_eq!(g.stats().clock_id, 0);
    assert_eq!(g.stats().clock_id_bumps, 0);
}

#[test]
fn no_id_is_issued_past_the_durable_reservation() {
    let store = Arc::new(FlakyStore::default());
    let clock = ManualClock::new(START);
    let g = on_store(&store, &clock);
    let layout = Layout::default();
    for round in 0..50 {
        let ids = g.next_ids(3000).unwrap();
        let reserved = store
            .state
            .lock()
            .unwrap()
            .as_ref()
            .unwrap()
            .reserved_of(0)
            .unwrap();
        let reserved_ms = layout.epoch_ms() + reserved * layout.unit_ms();
        for id in ids {
            assert!(
                layout.decode(id).unwrap().timestamp_ms <= reserved_ms,
                "round {round}"
            );
        }
        clock.advance(Duration::from_millis(7));
    }
    // Reservations only rise.
    let saves = store.saves.lock().unwrap();
    assert!(saves
        .windows(2)
        .all(|w| w[0].reserved_of(0) <= w[1].reserved_of(0)));
}

#[test]
fn a_failing_store_fails_closed_at_the_reservation_and_recovers_by_itself() {
    let store = Arc::new(FlakyStore::default());
    let clock = ManualClock::new(START);
    let g = on_store(&store, &clock);
    g.next_id().unwrap();
    store.failing.store(true, Ordering::SeqCst);
    clock.advance(Duration::from_secs(1)); // past the 100 ms reservation
    let e = g.next_id().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::State);
    assert!(e.message().contains("disk full"), "{e}");
    store.failing.store(false, Ordering::SeqCst);
    g.next_id().unwrap();
}

#[test]
fn stats_count_every_state_write_and_its_failures() {
    let store = Arc::new(FlakyStore::default());
    let clock = ManualClock::new(START);
    let g = on_store(&store, &clock);
    let s = g.stats();
    assert_eq!(
        (s.reservation_writes, s.reservation_write_failures),
        (1, 0),
        "{s:?}"
    );
    assert_eq!(s.lease, rimeflake::LeaseState::None);
    g.next_id().unwrap();
    clock.advance(Duration::from_secs(1)); // past the 100 ms reservation: one more write
    g.next_id().unwrap();
    let s = g.stats();
    assert_eq!(
        s.reservation_writes as usize,
        store.saves.lock().unwrap().len()
    );
    assert!(
        s.reservation_writes >= 2 && s.reservation_write_failures == 0,
        "{s:?}"
    );
    store.failing.store(true, Ordering::SeqCst);
    clock.advance(Duration::from_secs(1));
    g.next_id().unwrap_err();
    let failed = g.stats();
    assert!(failed.reservation_write_failures >= 1, "{failed:?}");
    assert_eq!(
        failed.reservation_writes - failed.reservation_write_failures,
        s.reservation_writes
    );
    assert!(failed.reservation_write_ns > 0);
}

#[test]
fn ready_says_whether_an_id_can_be_issued_without_issuing_one() {
    let store = Arc::new(FlakyStore::default());
    let clock = ManualClock::new(START);
    let g = on_store(&store, &clock);
    for _ in 0..3 {
        g.ready().unwrap();
    }
    assert_eq!(g.stats().ids_issued, 0);
    g.next_id().unwrap();
    store.failing.store(true, Ordering::SeqCst);
    clock.advance(Duration::from_secs(1));
    g.next_id().unwrap_err();
    let e = g.ready().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::State);
    assert!(e.message().contains("disk full"), "{e}");
    store.failing.store(false, Ordering::SeqCst);
    g.next_id().unwrap();
    g.ready().unwrap();
    assert_eq!(g.stats().ids_issued, 2);
    g.close().unwrap();
    assert_eq!(g.ready().unwrap_err().kind(), ErrorKind::Closed);
}

#[test]
fn leases_give_processes_distinct_worker_ids_and_fixed_ones_are_exclusive() {
    let tmp = TempDir::new("leases");
    let dir = tmp.0.clone();
    let a = Generator::builder().state_dir(&dir).build().unwrap();
    let b = Generator::builder().state_dir(&dir).build().unwrap();
    assert_ne!(a.worker_id(), b.worker_id());
    let e = Generator::builder()
        .state_dir(&dir)
        .worker_id(a.worker_id())
        .build()
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Lease);
    let freed = a.worker_id();
    a.close().unwrap();
    let c = Generator::builder().state_dir(&dir).build().unwrap();
    assert_eq!(
        c.worker_id(),
        freed,
        "the lowest free worker ID is leased first"
    );
    // The default namespace follows the layout: a twitter generator beside them takes its own
    // namespace, while one layout per namespace is still enforced.
    let t = Generator::builder()
        .layout(Layout::twitter())
        .state_dir(&dir)
        .build()
        .unwrap();
    assert_eq!(t.worker_id(), 0);
    let e = Generator::builder()
        .layout(Layout::twitter())
        .namespace("default")
        .state_dir(&dir)
        .build()
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Config, "{e}");
    drop((b, c, t));
}

#[test]
fn after_a_clean_close_a_restart_continues_right_above_the_last_id() {
    let store = Arc::new(FlakyStore::default());
    let clock = ManualClock::new(START);
    let layout = Layout::default();
    let g = on_store(&store, &clock);
    let last = *g.next_ids(1000).unwrap().last().unwrap(); // 2 ms lent ahead
    g.close().unwrap();
    let saved = store.state.lock().unwrap().clone().unwrap();
    let reserved = saved.reserved_of(0).unwrap(); // 100 ms ahead
    assert!(saved.closed_at.is_some());
    let g = on_store(&store, &clock);
    let next = g.next_id().unwrap();
    assert!(next > last);
    let (t_last, t_next) = (
        layout.decode(last).unwrap().timestamp_ms,
        layout.decode(next).unwrap().timestamp_ms,
    );
    assert!(
        t_next <= t_last + 1,
        "continued at {t_next}, last ID at {t_last}"
    );
    assert!(
        t_next < layout.epoch_ms() + reserved,
        "not above the reservation ({reserved})"
    );
    // A running generator clears the mark, so a crash now falls back to the reservation.
    assert_eq!(
        store.state.lock().unwrap().as_ref().unwrap().closed_at,
        None
    );
}

fn reset(
    dir: &std::path::Path,
    layout: Option<&Layout>,
    worker: u64,
) -> Result<rimeflake::admin::ResetReport> {
    rimeflake::admin::reset(
        dir,
        "default",
        layout,
        worker,
        &rimeflake::admin::ResetOptions::default(),
    )
}

/// Flips a byte in both slots of a state file: no valid record is left.
fn rot_both_slots(file: &std::path::Path) {
    let mut bytes = std::fs::read(file).unwrap();
    for slot in [0, rimeflake::state::file::SLOT_SIZE] {
        bytes[slot + 20] ^= 0x5a;
    }
    std::fs::write(file, bytes).unwrap();
}

/// A reset bounded by the high-water record, across a clock-id switch: worker 3 issues IDs on
/// clock-id 0 while the clock is 8 s ahead; the clock is corrected and a restart moves to clock-id
/// 1; both slots rot; a reset. The old reset reserved every clock-id only to max(now, mtime) + 4 s,
/// so a run with the clock ahead again repeated clock-id 0's IDs. The high-water file bounds
/// clock-id 0 past its lost reservation.
#[test]
fn reset_after_the_clock_ran_ahead_never_repeats_an_id() {
    let tmp = TempDir::new("reset-ahead");
    let dir = tmp.0.clone();
    let now = rimeflake::clock::system_now_ms();
    let clock = ManualClock::new(now + 8_000);
    let build = |clock: &ManualClock| {
        Generator::builder()
            .worker_id(3)
            .state_dir(&dir)
            .clock(clock.clone())
            .refresh_every(Duration::ZERO)
            .max_wait(Duration::from_millis(50))
            .build()
            .unwrap()
    };
    let mut seen = HashSet::new();
    let g = build(&clock);
    let ahead = g.next_ids(5_000).unwrap();
    assert!(ahead
        .iter()
        .all(|&id| Layout::default().decode(id).unwrap().clock_id == 0));
    seen.extend(ahead);
    drop(g); // a crash, not a clean close: no "last ID" mark
    clock.set_ms(now);
    let g = build(&clock);
    let back = g.next_ids(5_000).unwrap();
    assert!(back
        .iter()
        .all(|&id| Layout::default().decode(id).unwrap().clock_id == 1));
    seen.extend(back);
    drop(g);
    rot_both_slots(&dir.join("default/worker-00003.state"));
    reset(&dir, None, 3).unwrap();
    // The clock runs ahead again, to where clock-id 0 was.
    clock.set_ms(now + 8_000);
    let g = build(&clock);
    for id in g.next_ids(5_000).unwrap() {
        assert!(seen.insert(id), "ID {id} repeated after the reset");
    }
}

/// Without the high-water file nothing bounds the lost state: reset refuses and says what it
/// needs, and takes the operator's evidence instead.
#[test]
fn reset_without_a_high_water_file_needs_evidence() {
    let tmp = TempDir::new("reset-evidence");
    let dir = tmp.0.clone();
    let layout = Layout::default();
    let g = Generator::builder()
        .worker_id(6)
        .state_dir(&dir)
        .build()
        .unwrap();
    let ids = g.next_ids(100).unwrap();
    drop(g);
    let file = dir.join("default/worker-00006.state");
    rot_both_slots(&file);
    std::fs::remove_file(dir.join("default/worker-00006.hw")).unwrap();
    let e = rimeflake::admin::reset(&dir, "default", None, 6, &Default::default()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::State);
    for needle in [
        "high-water",
        "does not exist",
        "--above-id",
        "--reserve-until",
    ] {
        assert!(e.message().contains(needle), "{needle}: {e}");
    }
    let options = rimeflake::admin::ResetOptions {
        above_id: Some(*ids.last().unwrap()),
        reserve_until_ms: None,
    };
    let report = rimeflake::admin::reset(&dir, "default", Some(&layout), 6, &options).unwrap();
    assert!(report.basis.contains("no ID above"), "{report:?}");
    let g = Generator::builder()
        .worker_id(6)
        .state_dir(&dir)
        .build()
        .unwrap();
    assert!(g.next_id().unwrap() > *ids.last().unwrap());
}

#[test]
fn a_corrupt_state_is_refused_and_reset_reserves_every_clock_id_past_it() {
    let tmp = TempDir::new("reset");
    let dir = tmp.0.clone();
    let layout = Layout::default();
    let g = Generator::builder()
        .worker_id(4)
        .state_dir(&dir)
        .build()
        .unwrap();
    let before = g.next_ids(1000).unwrap();
    g.close().unwrap();
    let file = dir.join("default/worker-00004.state");
    let mut bytes = std::fs::read(&file).unwrap();
    for slot in [0, rimeflake::state::file::SLOT_SIZE] {
        bytes[slot + 20] ^= 0x5a;
    }
    std::fs::write(&file, bytes).unwrap();

    let e = Generator::builder()
        .worker_id(4)
        .state_dir(&dir)
        .build()
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::State);
    assert!(e.message().contains("rimeflake state reset"), "{e}");
    // Not while a process holds the worker ID.
    let holder = rimeflake::lease::LocalLease::acquire(
        &dir,
        "default",
        &layout,
        rimeflake::lease::LeaseRequest::Exact(4),
    )
    .unwrap();
    let e = reset(&dir, Some(&layout), 4).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Lease);
    holder.release();

    let report = reset(&dir, None, 4).unwrap();
    assert!(report.aside.exists());
    assert!(report.basis.contains("high-water"), "{report:?}");
    let state = rimeflake::state::FileStore::open(file.clone(), 8)
        .unwrap()
        .load()
        .unwrap()
        .unwrap();
    let now = layout.time_of(rimeflake::clock::system_now_ms()).unwrap();
    // Clock-id 0 (the one used) is reserved past its high-water mark, above now; the new
    // clock-id is one above it, never used before.
    assert!(state.reserved[0].unwrap() > now, "{state:?}");
    assert!(state.clock_id > 0, "{state:?}");
    assert!(
        state.reserved_of(state.clock_id).unwrap() + 5_000 >= now,
        "{state:?}"
    );
    assert_eq!(
        reset(&dir, Some(&layout), 4).unwrap_err().kind(),
        ErrorKind::Config,
        "a readable state is not reset"
    );

    let g = Generator::builder()
        .worker_id(4)
        .state_dir(&dir)
        .build()
        .unwrap();
    let after = g.next_ids(1000).unwrap();
    assert!(after[0] > *before.last().unwrap());
}

#[test]
fn an_empty_state_dir_is_a_config_error_not_the_current_directory() {
    let e = Generator::builder().state_dir("").build().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Config);
    assert!(e.message().starts_with("state_dir: empty"), "{e}");
}
