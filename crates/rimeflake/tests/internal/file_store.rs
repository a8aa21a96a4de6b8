//! The file store under every disk fault (on the simulated disk) and on the real file system.

use rimeflake_testkit::support;
use support::TempDir;

use rimeflake::state::file::{decode, SLOT_SIZE};
use rimeflake::state::FileStore;
use rimeflake::testing::{Fault, SimDisk};
use rimeflake::{ErrorKind, StateStore, WorkerState};
use std::path::{Path, PathBuf};

const CLOCK_IDS: usize = 4;

fn state(clock_id: u64, r0: u64) -> WorkerState {
    let mut s = WorkerState::fresh(CLOCK_IDS);
    s.clock_id = clock_id;
    s.raise(0, r0);
    if clock_id > 0 {
        s.raise(clock_id, r0 / 2);
    }
    s
}

fn path() -> PathBuf {
    PathBuf::from("/ns/worker-00001.state")
}

fn store(disk: &SimDisk) -> FileStore<SimDisk> {
    FileStore::with_disk(disk.clone(), path(), CLOCK_IDS).unwrap()
}

/// What a process started after a crash would read.
fn after_crash(disk: &SimDisk) -> Option<WorkerState> {
    disk.crash();
    store(disk).load().unwrap()
}

fn slot_seq(bytes: &[u8], slot: usize) -> Option<u64> {
    let start = (slot * SLOT_SIZE).min(bytes.len());
    let end = ((slot + 1) * SLOT_SIZE).min(bytes.len());
    decode(&bytes[start..end]).ok().map(|r| r.seq)
}

fn state_err(r: rimeflake::Result<impl std::fmt::Debug>, needle: &str) -> String {
    let e = r.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::State, "{e}");
    assert!(e.message().contains(needle), "{needle:?} not in: {e}");
    e.message().to_string()
}

#[test]
fn a_missing_file_loads_as_none_and_saves_round_trip() {
    let disk = SimDisk::new(1);
    let s = store(&disk);
    assert_eq!(s.load().unwrap(), None);
    s.save(&state(0, 100)).unwrap();
    assert_eq!(store(&disk).load().unwrap(), Some(state(0, 100)));
    assert_eq!(after_crash(&disk), Some(state(0, 100)));
    assert_eq!(s.describe(), path().display().to_string());
}

#[test]
fn saves_alternate_slots_and_the_newest_wins() {
    let disk = SimDisk::new(2);
    let s = store(&disk);
    for (i, r) in [10, 20, 30, 40].into_iter().enumerate() {
        s.save(&state(1, r)).unwrap();
        let bytes = disk.durable_contents(&path()).unwrap();
        assert_eq!(slot_seq(&bytes, i % 2), Some(i as u64 + 1), "save {i}");
        assert_eq!(store(&disk).load().unwrap(), Some(state(1, r)));
    }
}

#[test]
fn a_write_error_keeps_the_old_record_and_the_next_save_rewrites() {
    let disk = SimDisk::new(3);
    let s = store(&disk);
    s.save(&state(0, 10)).unwrap();
    s.save(&state(0, 20)).unwrap();
    disk.fail_next(Fault::WriteError);
    state_err(s.save(&state(0, 30)), "not durable");
    assert_eq!(store(&disk).load().unwrap(), Some(state(0, 20)));
    s.save(&state(0, 30)).unwrap();
    assert_eq!(after_crash(&disk), Some(state(0, 30)));
}

#[test]
fn after_a_sync_error_the_same_slot_is_rewritten_and_the_good_one_kept() {
    let disk = SimDisk::new(4);
    let s = store(&disk);
    s.save(&state(0, 10)).unwrap(); // both slots (created)
    s.save(&state(0, 20)).unwrap(); // slot 1, then slot 0
    disk.fail_next(Fault::SyncError);
    state_err(s.save(&state(0, 30)), "sync"); // slot 1 first: not trusted
                                              // The failed record is never trusted: the newest good record is still whole in slot 0, and
                                              // the next write goes to slot 1 again, so slot 0 survives whatever happens to it.
    let bytes = disk.durable_contents(&path()).unwrap();
    assert_eq!(slot_seq(&bytes, 0), Some(2));
    s.save(&state(0, 40)).unwrap();
    let bytes = disk.durable_contents(&path()).unwrap();
    assert_eq!(
        slot_seq(&bytes, 0),
        slot_seq(&bytes, 1),
        "a finished save leaves two copies"
    );
    assert_eq!(after_crash(&disk), Some(state(0, 40)));
}

#[test]
fn an_unchanged_state_is_rewritten_after_a_failure() {
    let disk = SimDisk::new(5);
    let s = store(&disk);
    s.save(&state(0, 10)).unwrap();
    let ops = disk.ops();
    s.save(&state(0, 10)).unwrap();
    assert_eq!(
        disk.ops(),
        ops,
        "an unchanged, durable state needs no write"
    );
    disk.fail_next(Fault::SyncError);
    state_err(s.save(&state(0, 20)), "sync");
    s.save(&state(0, 20)).unwrap();
    assert!(disk.ops() > ops + 2, "the failed state was written again");
    assert_eq!(after_crash(&disk), Some(state(0, 20)));
}

#[test]
fn a_full_disk_fails_closed_and_recovers() {
    let disk = SimDisk::new(6);
    let s = store(&disk);
    s.save(&state(0, 10)).unwrap();
    disk.set_full(true);
    let msg = state_err(s.save(&state(0, 20)), "write");
    assert!(msg.contains(&path().display().to_string()), "{msg}");
    state_err(s.save(&state(0, 20)), "write");
    disk.set_full(false);
    s.save(&state(0, 20)).unwrap();
    assert_eq!(after_crash(&disk), Some(state(0, 20)));
    // Full before the file exists: nothing is created, and a later save creates it.
    let fresh = SimDisk::new(7);
    fresh.set_full(true);
    // (The high-water file is written first: it fails first.)
    state_err(store(&fresh).save(&state(0, 1)), "high-water");
    assert_eq!(after_crash(&fresh), None);
}

#[test]
fn torn_writes_of_any_length_never_lose_the_newest_good_record() {
    let len = rimeflake::state::file::encode(1, &state(0, 1)).len();
    for keep in 0..=len {
        let disk = SimDisk::new(keep as u64);
        let s = store(&disk);
        s.save(&state(0, 10)).unwrap();
        s.save(&state(0, 20)).unwrap();
        disk.fail_next(Fault::TornWrite { keep });
        state_err(s.save(&state(0, 30)), "torn");
        let loaded = after_crash(&disk).unwrap();
        // A tear that kept every byte is a whole record, just not synced.
        assert!(
            loaded == state(0, 20) || (keep == len && loaded == state(0, 30)),
            "keep {keep}: {loaded:?}"
        );
    }
}

#[test]
fn a_corrupt_slot_loses_nothing_and_two_are_an_error_that_names_the_way_out() {
    let disk = SimDisk::new(8);
    let s = store(&disk);
    s.save(&state(0, 10)).unwrap();
    s.save(&state(0, 20)).unwrap(); // in both slots
    disk.corrupt(&path(), SLOT_SIZE + 30, 0x40);
    // Rot of one slot loses nothing: the other holds the same, newest record.
    assert_eq!(store(&disk).load().unwrap(), Some(state(0, 20)));
    disk.corrupt(&path(), 30, 0x01);
    let msg = state_err(
        store(&disk).load(),
        "corrupt state file /ns/worker-00001.state",
    );
    assert!(msg.contains("rimeflake state reset"), "{msg}");
    // Never silently reset: a save on a corrupt file is refused too.
    state_err(store(&disk).save(&state(0, 30)), "corrupt");
}

#[test]
fn a_crash_before_the_sync_keeps_either_record_and_after_it_the_new_one() {
    for seed in 0..64 {
        let disk = SimDisk::new(seed);
        let s = store(&disk);
        s.save(&state(0, 10)).unwrap();
        // open and read happened at the first save; the next save checks that the path still
        // names its file (1 op), writes (1 op), then syncs.
        disk.cut_power_after(2);
        state_err(s.save(&state(0, 20)), "sync");
        let loaded = after_crash(&disk).unwrap();
        assert!(
            loaded == state(0, 10) || loaded == state(0, 20),
            "seed {seed}"
        );
        let s = store(&disk);
        s.load().unwrap();
        s.save(&state(0, 30)).unwrap();
        assert_eq!(after_crash(&disk), Some(state(0, 30)), "seed {seed}");
    }
}

#[test]
fn a_failed_write_followed_by_another_keeps_the_newest_good_record() {
    let disk = SimDisk::new(9);
    let s = store(&disk);
    s.save(&state(0, 10)).unwrap();
    s.save(&state(0, 20)).unwrap();
    disk.fail_next(Fault::TornWrite { keep: 12 });
    state_err(s.save(&state(0, 30)), "write");
    disk.fail_next(Fault::SyncError);
    state_err(s.save(&state(0, 40)), "sync");
    disk.fail_next(Fault::WriteError);
    state_err(s.save(&state(0, 50)), "write");
    let loaded = after_crash(&disk).unwrap();
    assert!(
        loaded == state(0, 20) || loaded == state(0, 40),
        "{loaded:?}"
    );
}

#[test]
fn a_crash_at_every_step_of_every_save_loses_nothing_acknowledged() {
    // Saves with rising reservations; the power is cut after `cut` operations; then the disk
    // crashes. What loads must be the last acknowledged state or one attempted after it.
    let states: Vec<WorkerState> = (1..=6)
        .map(|i| state(i % CLOCK_IDS as u64, i * 100))
        .collect();
    for seed in 0..40u64 {
        for cut in 0..24 {
            let disk = SimDisk::new(seed * 1000 + cut);
            disk.cut_power_after(cut);
            let s = store(&disk);
            let mut acked = None;
            let mut attempted = Vec::new();
            for st in &states {
                attempted.push(st.clone());
                if s.save(st).is_ok() {
                    acked = Some(st.clone());
                    attempted.clear();
                }
            }
            disk.crash();
            let loaded = store(&disk)
                .load()
                .unwrap_or_else(|e| panic!("seed {seed} cut {cut}: {e}"));
            let ok = loaded == acked || loaded.as_ref().is_some_and(|l| attempted.contains(l));
            assert!(
                ok,
                "seed {seed} cut {cut}: loaded {loaded:?}, acked {acked:?}"
            );
        }
    }
}

#[test]
fn a_failed_directory_sync_is_retried_by_the_next_save() {
    let disk = SimDisk::new(10);
    let s = store(&disk);
    disk.fail_next(Fault::DirSyncError);
    state_err(s.save(&state(0, 10)), "directory");
    s.save(&state(0, 20)).unwrap();
    for seed in 0..8 {
        let d = disk.clone();
        d.crash();
        assert_eq!(store(&d).load().unwrap(), Some(state(0, 20)), "seed {seed}");
    }
}

#[test]
fn reservations_never_go_down() {
    let disk = SimDisk::new(11);
    let s = store(&disk);
    s.save(&state(2, 100)).unwrap();
    state_err(s.save(&state(2, 99)), "go down");
    state_err(s.save(&WorkerState::fresh(CLOCK_IDS)), "go down");
    // Also against what a fresh store finds on disk.
    state_err(store(&disk).save(&state(2, 50)), "go down");
    // Moving to another clock-id keeps the others' reservations.
    let mut next = state(2, 100);
    next.clock_id = 3;
    next.raise(3, 7);
    s.save(&next).unwrap();
    // A state for another layout is refused.
    state_err(s.save(&WorkerState::fresh(CLOCK_IDS + 1)), "refused");
    let bad = FileStore::with_disk(disk.clone(), path(), CLOCK_IDS + 1).unwrap();
    state_err(bad.load(), "clock-ids");
    assert_eq!(
        FileStore::with_disk(disk, path(), 0).unwrap_err().kind(),
        ErrorKind::Config
    );
}

fn real(dir: &Path) -> FileStore {
    FileStore::open(dir.join("worker-00001.state"), CLOCK_IDS).unwrap()
}

#[test]
fn the_real_disk_round_trips_and_refuses_a_corrupt_file() {
    let dir = TempDir::new("real");
    assert_eq!(real(&dir.0).load().unwrap(), None);
    let s = real(&dir.0);
    for r in [5, 6, 7] {
        s.save(&state(1, r)).unwrap();
    }
    assert_eq!(real(&dir.0).load().unwrap(), Some(state(1, 7)));
    let file = dir.0.join("worker-00001.state");
    let names: Vec<_> = std::fs::read_dir(&dir.0)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    let mut names: Vec<_> = names.iter().map(|n| n.to_str().unwrap()).collect();
    names.sort();
    assert_eq!(
        names,
        ["worker-00001.hw", "worker-00001.state"],
        "no temporary file is left"
    );
    let mut bytes = std::fs::read(&file).unwrap();
    assert!(bytes.len() > SLOT_SIZE, "two slots");
    bytes[20] ^= 1;
    bytes[SLOT_SIZE + 20] ^= 1;
    std::fs::write(&file, &bytes).unwrap();
    state_err(real(&dir.0).load(), "corrupt state file");
    std::fs::write(&file, b"").unwrap();
    state_err(real(&dir.0).load(), "corrupt state file");
    // A missing directory is a state error that names the file.
    let gone = FileStore::open(dir.0.join("no/such/worker.state"), CLOCK_IDS).unwrap();
    state_err(gone.save(&state(0, 1)), "no/such/worker.state");
}

#[test]
fn a_stalled_disk_blocks_a_save_until_resumed_or_crashed() {
    let disk = SimDisk::new(12);
    let s = std::sync::Arc::new(store(&disk));
    s.save(&state(0, 10)).unwrap();
    disk.stall();
    let saver = {
        let s = s.clone();
        std::thread::spawn(move || s.save(&state(0, 20)))
    };
    // It cannot finish while the disk is stalled, however long this thread takes to look.
    assert!(!saver.is_finished());
    disk.resume();
    saver.join().unwrap().unwrap();
    assert_eq!(after_crash(&disk), Some(state(0, 20)));

    let s = std::sync::Arc::new(store(&disk));
    s.load().unwrap();
    disk.stall();
    let saver = {
        let s = s.clone();
        std::thread::spawn(move || s.save(&state(0, 30)))
    };
    disk.crash(); // the power goes while the save hangs: it fails, and nothing is lost
    state_err(saver.join().unwrap(), "crash");
    assert_eq!(store(&disk).load().unwrap(), Some(state(0, 20)));
}

/// Not a check: prints what a durable save costs here (`--ignored --nocapture` to see it).
#[test]
#[ignore]
fn save_latency_on_the_real_disk() {
    let dir = TempDir::new("latency");
    let lease = rimeflake::lease::LocalLease::acquire(
        &dir.0,
        "ns",
        &rimeflake::Layout::default(),
        rimeflake::lease::LeaseRequest::Exact(1),
    )
    .unwrap();
    let stores = [
        ("plain", real(&dir.0)),
        (
            "leased (flock + lock check)",
            lease.state_store(CLOCK_IDS).unwrap(),
        ),
    ];
    for (what, s) in stores {
        let mut times = Vec::new();
        for r in 1..=200 {
            let t = rimeflake::clock::monotonic_ns();
            s.save(&state(0, r * 10)).unwrap();
            times.push(rimeflake::clock::monotonic_ns() - t);
        }
        times.sort_unstable();
        println!(
            "{what} save (write + fsync), 200 saves: p50 {} us, p99 {} us, max {} us",
            times[100] / 1000,
            times[198] / 1000,
            times[199] / 1000
        );
    }
}
