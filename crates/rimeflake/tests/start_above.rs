//! `Builder::start_above`: a generator that replaces another service issues only IDs above the
//! largest one that service stored, on a layout with clock-id bits and on one without, across
//! a restart, and refuses an ID its layout cannot get above.

use rimeflake::{ErrorKind, Generator, Layout, ManualClock, Parts};
use rimeflake_testkit::support::TempDir;
use std::sync::Arc;
use std::time::Duration;

const NOW: u64 = 1_795_651_200_000; // 2026-11-26T00:00:00Z

fn id_at(layout: &Layout, clock_id: u64, at_ms: u64) -> u64 {
    let datacenter_id = (layout.datacenter_bits() > 0).then_some(31);
    layout
        .compose(&Parts {
            clock_id,
            timestamp_ms: at_ms,
            datacenter_id,
            worker_id: layout.max_worker_id() >> layout.datacenter_bits(),
            sequence: layout.max_sequence(),
        })
        .unwrap()
}

fn builder(layout: Layout, clock: &Arc<ManualClock>) -> rimeflake::Builder<Arc<ManualClock>> {
    Generator::builder()
        .layout(layout)
        .worker_id(0)
        .in_memory()
        .max_wait(Duration::from_millis(50))
        .clock(clock.clone())
}

#[test]
fn a_leaf_id_ahead_of_the_clock_is_exceeded_by_the_first_id() {
    // Leaf's layout is twitter's: no clock-id bits. Its host's clock ran 1.5 s ahead of ours,
    // and its largest ID has the highest worker and sequence of that millisecond.
    let layout = Layout::twitter();
    let clock = Arc::new(ManualClock::new(NOW));
    let leaf = id_at(&layout, 0, NOW + 1500);
    let g = builder(layout.clone(), &clock)
        .start_above(leaf)
        .build()
        .unwrap();
    let mut ids = vec![0u64; 10_000];
    g.fill(&mut ids).unwrap();
    assert!(ids[0] > leaf, "{} is not above {leaf}", ids[0]);
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn an_id_in_the_past_changes_nothing_but_one_time_unit() {
    let layout = Layout::twitter();
    let clock = Arc::new(ManualClock::new(NOW));
    let old = id_at(&layout, 0, NOW - 3_600_000);
    let g = builder(layout.clone(), &clock)
        .start_above(old)
        .build()
        .unwrap();
    let first = g.next_id().unwrap();
    assert!(first > old);
    let at = layout.decode(first).unwrap().timestamp_ms;
    assert!((NOW..=NOW + 1).contains(&at), "the first ID is at {at}");
}

#[test]
fn an_id_on_a_higher_clock_id_moves_the_state_there_for_good() {
    // The default layout has 3 clock-id bits: an ID of clock-id 2 is above every ID of 0 and 1,
    // whatever their time, so those are reserved for good and a restart stays above too.
    let layout = Layout::default();
    let dir = TempDir::new("start-above");
    let clock = Arc::new(ManualClock::new(NOW));
    let above = id_at(&layout, 2, NOW - 60_000);
    let start = |above: Option<u64>| {
        let mut b = Generator::builder()
            .layout(layout.clone())
            .worker_id(4)
            .state_dir(dir.path())
            .clock(clock.clone());
        if let Some(id) = above {
            b = b.start_above(id);
        }
        b.build().unwrap()
    };
    let g = start(Some(above));
    let first = g.next_id().unwrap();
    assert!(first > above);
    assert_eq!(layout.decode(first).unwrap().clock_id, 2);
    g.close().unwrap();
    // A day back, restarted without start_above: a switch to a clock-id that is free, never
    // to 0 or 1.
    clock.set_back(Duration::from_secs(86_400));
    let g = start(None);
    let id = g.next_id().unwrap();
    assert!(
        id > above,
        "{id} after a restart a day back is below {above}"
    );
    assert!(layout.decode(id).unwrap().clock_id > 2);
}

#[test]
fn an_id_far_ahead_of_the_clock_on_a_layout_without_clock_ids_is_waited_for_within_max_wait() {
    let layout = Layout::twitter();
    let clock = Arc::new(ManualClock::new(NOW));
    let ahead = id_at(&layout, 0, NOW + 60_000);
    let e = builder(layout, &clock)
        .start_above(ahead)
        .build()
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ClockRollback, "{e}");
    assert!(e.message().contains("max_wait"), "{e}");
}

#[test]
fn an_id_no_id_of_the_layout_is_above_is_refused() {
    let clock = Arc::new(ManualClock::new(NOW));
    // Twitter: one clock-id, so its largest ID leaves nothing above it.
    let last = (1u64 << 63) - 1;
    let e = builder(Layout::twitter(), &clock)
        .start_above(last)
        .build()
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Config, "{e}");
    assert!(
        e.message().contains("no ID of layout twitter lies above"),
        "{e}"
    );
    // Not an ID at all: the sign bit.
    let e = builder(Layout::twitter(), &clock)
        .start_above(1 << 63)
        .build()
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidId, "{e}");
}
