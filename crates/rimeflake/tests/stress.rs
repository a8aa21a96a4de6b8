//! Stress: 4 threads x 1e6 IDs from one generator (twitter layout, in memory), all unique.
//!
//! Each thread's IDs are strictly increasing, so uniqueness across threads is checked by
//! merging the four sorted runs (linear, fast even in a debug build) instead of sorting 4e6.
//! `make test-stress` runs it in release.

use rimeflake::{Generator, Layout};
use std::sync::Barrier;

const THREADS: usize = 4;
const PER_THREAD: usize = 1_000_000;

#[test]
fn four_threads_share_one_generator_and_never_repeat_an_id() {
    let g = Generator::builder()
        .layout(Layout::twitter())
        .worker_id(1)
        .in_memory()
        .build()
        .unwrap();
    let barrier = Barrier::new(THREADS);
    let runs: Vec<Vec<u64>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let (g, barrier) = (&g, &barrier);
                s.spawn(move || {
                    let mut ids = Vec::with_capacity(PER_THREAD);
                    barrier.wait();
                    if t == THREADS - 1 {
                        // One thread takes its IDs in batches, interleaved with the others'
                        // single IDs: a batch is one atomic step and must not overlap them.
                        let mut buf = [0u64; 100];
                        while ids.len() < PER_THREAD {
                            g.fill(&mut buf).unwrap();
                            ids.extend_from_slice(&buf);
                        }
                    } else {
                        for _ in 0..PER_THREAD {
                            ids.push(g.next_id().unwrap());
                        }
                    }
                    ids
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });

    for (t, run) in runs.iter().enumerate() {
        assert_eq!(run.len(), PER_THREAD);
        if let Some(w) = run.windows(2).find(|w| w[0] >= w[1]) {
            panic!("thread {t}: {} then {}", w[0], w[1]);
        }
        for &id in [run[0], run[PER_THREAD - 1]].iter() {
            assert_eq!(g.layout().decode(id).unwrap().worker_id, 1);
        }
    }
    // Merge the sorted runs: every ID must be above the one before it.
    let mut heads = [0usize; THREADS];
    let mut last: Option<u64> = None;
    for _ in 0..THREADS * PER_THREAD {
        let (t, id) = (0..THREADS)
            .filter(|&t| heads[t] < PER_THREAD)
            .map(|t| (t, runs[t][heads[t]]))
            .min_by_key(|&(_, id)| id)
            .unwrap();
        if let Some(prev) = last {
            assert!(id > prev, "ID {id} issued twice (thread {t})");
        }
        last = Some(id);
        heads[t] += 1;
    }
    assert_eq!(g.stats().ids_issued, (THREADS * PER_THREAD) as u64);
}
