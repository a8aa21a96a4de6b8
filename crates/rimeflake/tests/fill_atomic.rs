//! `fill_atomic_with` (for memory others may touch, such as a Python buffer) gives exactly the
//! IDs `fill` gives, across its internal chunks and reservation steps.

use rimeflake::{Generator, Layout, ManualClock};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

const START: u64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z

fn twin() -> Generator<ManualClock> {
    Generator::builder()
        .layout(Layout::default()) // 512 IDs per unit: batches borrow ahead
        .worker_id(5)
        .in_memory()
        .max_drift(Duration::from_millis(50))
        .clock(ManualClock::new(START))
        .build()
        .unwrap()
}

#[test]
fn atomic_fill_writes_what_fill_writes() {
    let (a, b) = (twin(), twin());
    for len in [0usize, 1, 63, 64, 65, 4100, 25_000] {
        let mut plain = vec![0u64; len];
        a.fill(&mut plain).unwrap();
        let atomic: Vec<AtomicU64> = (0..len).map(|_| AtomicU64::new(0)).collect();
        b.fill_atomic_with(&atomic, &mut || false).unwrap();
        let atomic: Vec<u64> = atomic.iter().map(|x| x.load(Ordering::Relaxed)).collect();
        assert_eq!(plain, atomic, "len {len}");
    }
}
