//! The generator under a clock that jumps: the cases of its state machine (docs/architecture.md,
//! "The generator's state machine").

use rimeflake::{Clock, ErrorKind, Generator, Layout, ManualClock, RollbackPolicy};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

const START: u64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z

fn generator(
    layout: Layout,
    policy: Option<RollbackPolicy>,
) -> (Generator<Arc<ManualClock>>, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new(START));
    let mut b = Generator::builder()
        .layout(layout)
        .worker_id(5)
        .in_memory()
        .max_wait(Duration::from_millis(50))
        .clock(clock.clone());
    if let Some(p) = policy {
        b = b.rollback_policy(p);
    }
    (b.build().unwrap(), clock)
}

/// Issues `n` IDs, checking that each is above the previous one.
fn issue(g: &Generator<Arc<ManualClock>>, n: usize, last: &mut u64, seen: &mut HashSet<u64>) {
    for _ in 0..n {
        let id = g.next_id().unwrap();
        assert!(id > *last, "{id} after {last}");
        assert!(seen.insert(id));
        *last = id;
    }
}

#[test]
fn jumps_back_of_1ms_1s_and_1h_stay_unique_and_increasing_and_only_1h_bumps() {
    let (g, clock) = generator(Layout::default(), None);
    let (mut last, mut seen) = (0, HashSet::new());
    issue(&g, 1000, &mut last, &mut seen);
    clock.advance(Duration::from_millis(10));
    issue(&g, 100, &mut last, &mut seen);

    clock.set_back(Duration::from_millis(1));
    issue(&g, 1000, &mut last, &mut seen);
    assert_eq!(g.stats().clock_id_bumps, 0);

    clock.advance(Duration::from_millis(5));
    issue(&g, 10, &mut last, &mut seen);
    clock.set_back(Duration::from_secs(1)); // a leap second: within max_drift
    issue(&g, 1000, &mut last, &mut seen);
    assert_eq!(g.stats().clock_id_bumps, 0);
    assert_eq!(g.stats().rollbacks, 2);
    assert_eq!(g.stats().largest_rollback_ms, 1000);

    clock.set_back(Duration::from_secs(3600));
    issue(&g, 1000, &mut last, &mut seen);
    let stats = g.stats();
    assert_eq!(stats.clock_id_bumps, 1);
    assert_eq!(stats.clock_id, 1);
    assert_eq!(stats.clock_id_reuses, 0);
    assert_eq!(stats.ids_issued, 4110);
    assert_eq!(g.layout().decode(last).unwrap().clock_id, 1);
}

#[test]
fn twitter_layout_waits_or_fails_on_a_large_rollback_as_configured() {
    let (g, clock) = generator(Layout::twitter(), None); // no clock-id bits: Wait by default
    g.next_id().unwrap();
    clock.set_back(Duration::from_secs(3600));
    let e = g.next_id().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ClockRollback);
    assert!(e.message().contains("3600000 ms"), "{e}");
    assert!(e.message().contains("max_wait"), "{e}");
    assert_eq!(g.stats().waits, 1);

    let (g, clock) = generator(Layout::twitter(), Some(RollbackPolicy::Error));
    g.next_id().unwrap();
    clock.set_back(Duration::from_secs(3600));
    let e = g.next_id().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ClockRollback);
    assert!(e.message().contains("policy is Error"), "{e}");
    assert_eq!(g.stats().waits, 0);
}

#[test]
fn wait_policy_resumes_when_the_clock_catches_up_within_max_wait() {
    let (g, clock) = generator(Layout::twitter(), Some(RollbackPolicy::Wait));
    let a = g.next_id().unwrap();
    clock.set_back(Duration::from_millis(2030)); // 30 ms beyond max_drift; max_wait is 50 ms
    let b = g.next_id().unwrap(); // the manual clock advances as the generator sleeps
    assert!(b > a);
    assert!(g.stats().waited_ms >= 29, "{:?}", g.stats());
}

#[test]
fn a_wait_given_up_before_it_slept_is_not_counted_and_its_retry_counts_once() {
    let (g, clock) = generator(Layout::twitter(), Some(RollbackPolicy::Wait));
    let a = g.next_id().unwrap();
    clock.set_back(Duration::from_millis(2030)); // 30 ms beyond max_drift; max_wait is 50 ms
                                                 // A caller that will not wait (a server's quick try on its own thread) gives up at once...
    let e = g.next_id_with(&mut || true).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Interrupted);
    assert_eq!(g.stats().waits, 0, "{:?}", g.stats());
    // ...and retries with a call that waits: one request, one wait.
    let b = g.next_id().unwrap();
    assert!(b > a);
    assert_eq!(g.stats().waits, 1, "{:?}", g.stats());
}

#[test]
fn bump_clock_needs_clock_id_bits() {
    let e = Generator::builder()
        .layout(Layout::twitter())
        .worker_id(1)
        .in_memory()
        .rollback_policy(RollbackPolicy::BumpClock)
        .build()
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Config);
}

#[test]
fn clock_ids_are_reused_when_their_ids_lie_in_the_past_unless_strict() {
    let layout = Layout::builder()
        .clock_id_bits(1)
        .time_bits(43)
        .build()
        .unwrap();
    let (g, clock) = generator(layout.clone(), None);
    let mut seen = HashSet::new();
    seen.insert(g.next_id().unwrap());
    clock.set_back(Duration::from_secs(3600)); // clock-id 0 -> 1
    seen.insert(g.next_id().unwrap());
    clock.advance(Duration::from_secs(7200)); // now past everything clock-id 0 issued
    seen.insert(g.next_id().unwrap());
    clock.set_back(Duration::from_secs(3000)); // 1 is used past now, 0 is free again
    let id = g.next_id().unwrap();
    assert!(seen.insert(id));
    assert_eq!(layout.decode(id).unwrap().clock_id, 0);
    assert_eq!(g.stats().clock_id_reuses, 1);

    let g = Generator::builder()
        .layout(layout)
        .worker_id(5)
        .in_memory()
        .strict_monotonic(true)
        .max_wait(Duration::from_millis(20))
        .clock(clock.clone())
        .build()
        .unwrap();
    g.next_id().unwrap();
    clock.set_back(Duration::from_secs(3600));
    g.next_id().unwrap();
    clock.set_back(Duration::from_secs(3600)); // no higher clock-id left: wait, then fail
    assert_eq!(g.next_id().unwrap_err().kind(), ErrorKind::ClockRollback);
}

#[test]
fn sequence_overflow_borrows_future_time_up_to_max_drift_then_waits() {
    let (g, clock) = generator(Layout::twitter(), None);
    // 4096 IDs per ms; max_drift 2 s lets the counter run 2000 ms ahead of a stalled clock.
    let n = 4096 * 2001;
    let ids = g.next_ids(n).unwrap();
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    let stats = g.stats();
    assert_eq!(stats.borrowed_ms, 2000);
    assert_eq!(stats.waits, 0);
    assert_eq!(clock.now_ms(), START);
    // One more must wait for the (manual) clock to move on.
    let id = g.next_id().unwrap();
    assert!(id > *ids.last().unwrap());
    assert_eq!(g.stats().waits, 1);
    assert!(clock.now_ms() > START);
}

#[test]
fn the_end_of_the_time_field_is_an_error_not_a_carry() {
    let layout = Layout::twitter();
    let clock = Arc::new(ManualClock::new(layout.expires_at_ms() - 1));
    // Building validates the epoch with the generator's own clock: the last ms is still valid.
    let g = Generator::builder()
        .layout(layout.clone())
        .worker_id(1)
        .in_memory()
        .clock(clock.clone())
        .build()
        .unwrap();
    let ids = g.next_ids(4096).unwrap(); // the last unit holds 4096 sequence values
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    let e = g.next_id().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TimeRange);
    assert!(e.message().contains("ran out"), "{e}");
    clock.advance(Duration::from_millis(1));
    assert_eq!(g.next_id().unwrap_err().kind(), ErrorKind::TimeRange);
}

#[test]
fn a_batch_larger_than_what_is_left_is_refused_before_anything_is_issued() {
    let layout = Layout::twitter();
    let clock = Arc::new(ManualClock::new(layout.expires_at_ms() - 2));
    let g = Generator::builder()
        .layout(layout)
        .worker_id(1)
        .in_memory()
        .clock(clock)
        .build()
        .unwrap();
    let e = g.next_ids(3 * 4096).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TimeRange);
    assert!(e.message().contains("nothing was issued"), "{e}");
    assert_eq!(g.stats().ids_issued, 0);
    assert_eq!(g.next_ids(2 * 4096 - 1).unwrap().len(), 8191);
}

#[test]
fn a_clock_before_the_epoch_is_an_error() {
    let clock = Arc::new(ManualClock::new(START));
    let g = Generator::builder()
        .worker_id(1)
        .in_memory()
        .clock(clock.clone())
        .build()
        .unwrap();
    g.next_id().unwrap();
    clock.set_ms(Layout::default().epoch_ms() - 1);
    let e = g.next_id().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TimeRange);
    assert!(e.message().contains("before the layout's epoch"), "{e}");
    let e = Generator::builder()
        .worker_id(1)
        .in_memory()
        .clock(clock)
        .build()
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Config);
}

#[test]
fn worker_ids_out_of_range_and_closed_generators_are_errors() {
    let e = Generator::builder()
        .layout(Layout::js_safe())
        .worker_id(8)
        .in_memory()
        .build()
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Config);
    assert!(e.message().contains("largest worker ID 7"), "{e}");

    let (g, clock) = generator(Layout::default(), None);
    let id = g.next_id().unwrap();
    clock.advance(Duration::from_millis(1));
    g.close().unwrap();
    assert!(g.is_closed());
    assert_eq!(g.next_id().unwrap_err().kind(), ErrorKind::Closed);
    assert_eq!(g.next_ids(3).unwrap_err().kind(), ErrorKind::Closed);
    g.close().unwrap();
    assert!(id > 0);
}

#[test]
fn in_memory_close_waits_until_the_clock_passes_the_last_id() {
    let (g, clock) = generator(Layout::twitter(), None);
    g.next_ids(4096 * 10).unwrap(); // 9 ms borrowed ahead of the stalled clock
    let before = clock.now_ms();
    g.close().unwrap();
    assert!(
        clock.now_ms() >= before + 10,
        "{} -> {}",
        before,
        clock.now_ms()
    );
}

#[test]
fn threads_share_one_generator() {
    let g = Arc::new(
        Generator::builder()
            .layout(Layout::twitter())
            .worker_id(1)
            .in_memory()
            .build()
            .unwrap(),
    );
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let g = g.clone();
            std::thread::spawn(move || {
                let mut ids = Vec::with_capacity(100_000);
                for _ in 0..100_000 {
                    ids.push(g.next_id().unwrap());
                }
                assert!(ids.windows(2).all(|w| w[0] < w[1]));
                ids
            })
        })
        .collect();
    let mut all: Vec<u64> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    let n = all.len();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), n);
    assert_eq!(g.stats().ids_issued, n as u64);
}

#[test]
fn a_generator_counts_unix_aligned_units_whatever_its_epoch() {
    // sony/sonyflake's layout with a start time 7 ms into a 10 ms unit: the peer (and now
    // rimeflake) counts floor(now / 10) - floor(start / 10), so an ID made at START + 5 ms
    // carries START's unit, 2026-01-01T00:00:00.000Z.
    let layout = Layout::from_spec(
        "time=39,worker=16,sequence=8,unit_ms=10,epoch=2020-01-01T00:00:00.007Z,order=sequence_first",
    )
    .unwrap();
    let (g, clock) = generator(layout.clone(), None);
    g.next_id().unwrap();
    // Later, on the hot path: the ID carries the unit of the clock's reading.
    clock.advance(Duration::from_millis(10_005));
    let id = g.next_id().unwrap();
    assert_eq!(layout.decode(id).unwrap().timestamp_ms, START + 10_000);
    assert_eq!(id >> 24, (START + 10_000) / 10 - 1_577_836_800_007 / 10);
}

#[test]
fn sonyflake_with_max_drift_zero_never_runs_ahead_of_the_clock_as_sony_does() {
    // sony/sonyflake sleeps until the clock reaches a borrowed unit, so no ID is ever ahead of
    // the clock; max_drift 0 gives that. With the default 2 s, IDs may run ahead by up to 2 s.
    let ahead = |max_drift: Duration| {
        let clock = Arc::new(ManualClock::new(START));
        let g = Generator::builder()
            .layout(Layout::sonyflake())
            .worker_id(3)
            .in_memory()
            .max_drift(max_drift)
            .clock(clock.clone())
            .build()
            .unwrap();
        let mut most = 0;
        for _ in 0..256 * 20 {
            let id = g.next_id().unwrap();
            let t = Layout::sonyflake().decode(id).unwrap().timestamp_ms;
            most = most.max(t.saturating_sub(clock.now_ms() / 10 * 10));
        }
        most
    };
    assert_eq!(ahead(Duration::ZERO), 0);
    let with_default = ahead(rimeflake::frontend::DEFAULT_MAX_DRIFT);
    assert!(with_default > 0 && with_default <= 2000, "{with_default}");
}
