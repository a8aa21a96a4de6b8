//! Model check of the generator's atomic step with loom: every interleaving (up to a preemption
//! bound) of threads sharing one generator gives unique IDs, increasing within each thread.
//!
//! `RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test -p rimeflake-loom --test loom --release`
//! (`make test-loom`). The preemption bound is 3 unless `LOOM_MAX_PREEMPTIONS` says otherwise.
#![cfg(loom)]

use loom::sync::atomic::{AtomicU64, Ordering::SeqCst};
// std's Arc: rimeflake implements `Clock` for it; loom models the atomics inside, not the Arc.
use rimeflake::{Clock, Generator, Layout};
use std::sync::Arc;
use std::time::Duration;

const START: u64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z
const HOUR: u64 = 3_600_000;

/// A wall clock whose readings loom can interleave with the generator's atomics, so a step
/// back can land between any two of them. Clones share the clock.
#[derive(Clone)]
struct LoomClock(Arc<Readings>);

struct Readings {
    wall_ms: AtomicU64,
    mono_ns: AtomicU64,
}

impl LoomClock {
    fn new(ms: u64) -> Self {
        LoomClock(Arc::new(Readings {
            wall_ms: AtomicU64::new(ms),
            mono_ns: AtomicU64::new(0),
        }))
    }
    fn set_ms(&self, ms: u64) {
        self.0.wall_ms.store(ms, SeqCst);
    }
    fn tick(&self) {
        self.0.wall_ms.fetch_add(1, SeqCst);
    }
}

impl Clock for LoomClock {
    fn now_ms(&self) -> u64 {
        self.0.wall_ms.load(SeqCst)
    }
    fn monotonic_ns(&self) -> u64 {
        self.0.mono_ns.load(SeqCst)
    }
    fn sleep(&self, d: Duration) {
        let d = d.max(Duration::from_millis(1));
        self.0.wall_ms.fetch_add(d.as_millis() as u64, SeqCst);
        self.0.mono_ns.fetch_add(d.as_nanos() as u64, SeqCst);
        loom::thread::yield_now();
    }
}

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    if b.preemption_bound.is_none() {
        // Three preemptions explore about 15,000 interleavings of the two models in ~1 s.
        b.preemption_bound = Some(3);
    }
    b.check(f);
}

fn generator(layout: Layout, clock: LoomClock) -> Arc<Generator<LoomClock>> {
    spread_generator(layout, clock, false)
}

/// A generator whose units, with `random_sequence_start`, start at random offsets.
fn spread_generator(
    layout: Layout,
    clock: LoomClock,
    random_sequence_start: bool,
) -> Arc<Generator<LoomClock>> {
    Arc::new(
        Generator::builder()
            .layout(layout)
            .worker_id(1)
            .in_memory()
            .max_wait(Duration::from_millis(3))
            .random_sequence_start(random_sequence_start)
            .clock(clock)
            .build()
            .unwrap(),
    )
}

fn assert_unique(all: &mut Vec<u64>) {
    let n = all.len();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), n, "an ID was issued twice");
}

/// Two threads call `next_id` on one generator while the clock stands still (the counter
/// carries the sequence) or ticks once.
#[test]
fn two_threads_next_id() {
    two_threads_next_id_with(false);
}

/// As `two_threads_next_id`, with `random_sequence_start`: the tick opens a unit that both
/// threads may enter from behind, each drawing its offset, racing on the counter.
#[test]
fn two_threads_enter_a_unit_at_its_random_offset() {
    two_threads_next_id_with(true);
}

fn two_threads_next_id_with(random_sequence_start: bool) {
    model(move || {
        let clock = LoomClock::new(START);
        let g = spread_generator(Layout::twitter(), clock.clone(), random_sequence_start);
        let handles: Vec<_> = (0..2)
            .map(|t| {
                let (g, clock) = (g.clone(), clock.clone());
                loom::thread::spawn(move || {
                    let a = g.next_id().unwrap();
                    if t == 0 {
                        clock.tick(); // a tick between the two calls
                    }
                    let b = g.next_id().unwrap();
                    assert!(a < b, "thread {t}: {a} then {b}");
                    vec![a, b]
                })
            })
            .collect();
        let mut all: Vec<u64> = handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect();
        assert_unique(&mut all);
        // A generator that has issued IDs keeps increasing after the threads are done.
        let last = g.next_id().unwrap();
        assert!(all.iter().all(|&id| id < last));
    });
}

/// One thread steps the clock back an hour (beyond max_drift) and calls `next_id`, which must
/// switch clock-ids in the slow path, while another thread calls `next_id` on the hot path.
#[test]
fn large_rollback_while_another_thread_issues() {
    model(|| {
        let clock = LoomClock::new(START);
        let g = generator(Layout::default(), clock.clone());
        let before = g.next_id().unwrap();

        let crosser = {
            let (g, clock) = (g.clone(), clock.clone());
            loom::thread::spawn(move || {
                clock.set_ms(START - HOUR);
                let id = g.next_id().unwrap();
                assert!(id > before);
                id
            })
        };
        let other = {
            let g = g.clone();
            loom::thread::spawn(move || {
                let a = g.next_id().unwrap();
                let b = g.next_id().unwrap();
                assert!(before < a && a < b, "{before}, {a}, {b}");
                vec![a, b]
            })
        };
        let mut all = other.join().unwrap();
        all.push(crosser.join().unwrap());
        all.push(before);
        assert_unique(&mut all);
        let s = g.stats();
        assert_eq!(s.clock_id_bumps, 1, "{s:?}");
        assert_eq!(s.clock_id, 1);
        // Every later ID is on the new clock-id, above all of the old one's.
        let last = g.next_id().unwrap();
        assert!(all.iter().all(|&id| id < last));
        assert_eq!(g.layout().decode(last).unwrap().clock_id, 1);
    });
}
