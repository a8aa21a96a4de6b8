//! `next_id` on one thread, for comparing two builds of the core in one run
//! (bench/hotpath/run.sh builds this same file against each and runs them in turns).
//!
//! Prints one line per kind of generator: `<kind> <ns per ID>`, the median of `REPS`
//! repetitions of `LOOPS` timed loops of `LOOP` calls on the `twitter` layout, each loop followed
//! by a pause until the clock has passed its last ID (bench/METHOD.md), so the sequence cap never
//! throttles a loop. Kinds: `memory` (a fixed worker ID, no state), `embedded` (a state
//! directory: the default), and `redis` when `RIMEFLAKE_HOTPATH_REDIS` gives a server's URL.
//! Only the public API that both builds share is used.

// A benchmark reads the clocks directly.
#![allow(clippy::disallowed_methods)]

use rimeflake::{Backend, Builder, Generator, Layout};
use std::hint::black_box;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const LOOP: u64 = 100_000;
const LOOPS: usize = 10;
const REPS: usize = 5;

fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Sleeps until the clock has passed the time unit of `last`, and a millisecond more.
fn settle(g: &Generator, last: u64) {
    let until = g.layout().decode(last).map_or(0, |p| p.timestamp_ms) + 1;
    while unix_ms() <= until {
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn ns_per_id(g: &Generator) -> f64 {
    let timed_loop = || {
        let t = Instant::now();
        let mut last = 0;
        for _ in 0..LOOP {
            last = black_box(g.next_id().expect("an ID"));
        }
        let ns = t.elapsed().as_nanos() as f64;
        settle(g, last);
        ns
    };
    timed_loop(); // warm-up
    let mut reps: Vec<f64> = (0..REPS)
        .map(|_| (0..LOOPS).map(|_| timed_loop()).sum::<f64>() / (LOOPS as u64 * LOOP) as f64)
        .collect();
    reps.sort_by(f64::total_cmp);
    reps[REPS / 2]
}

fn main() {
    let base = || Generator::builder().layout(Layout::twitter());
    let dir = std::env::temp_dir().join(format!("rimeflake-hotpath-{}", std::process::id()));
    let mut kinds: Vec<(&str, Builder)> = vec![
        ("memory", base().worker_id(1).in_memory()),
        ("embedded", base().state_dir(&dir).namespace("hotpath")),
    ];
    if let Ok(url) = std::env::var("RIMEFLAKE_HOTPATH_REDIS") {
        let backend = Backend::parse(&url).expect("a Redis URL");
        // A namespace of its own per run: each run's lease is free at once.
        let namespace = format!("hotpath-{}", std::process::id());
        kinds.push(("redis", base().backend(backend).namespace(namespace)));
    }
    for (kind, builder) in kinds {
        let g = builder.build().expect("a generator");
        println!("{kind} {:.3}", ns_per_id(&g));
        g.close().expect("close");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
