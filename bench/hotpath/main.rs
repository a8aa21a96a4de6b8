//! `next_id` on one thread, for comparing two builds of the core in one run
//! (bench/hotpath/run.sh builds this same file against each and runs them in turns).
//!
//! Prints one line per kind of generator: `<kind> <ns per ID> <CPU ns per ID>`, each the median of `REPS`
//! repetitions of `LOOPS` timed loops of `LOOP` calls on the `twitter` layout, each loop followed
//! by a pause until the clock has passed its last ID (bench/METHOD.md), so the sequence cap never
//! throttles a loop. The second figure counts the thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`)
//! rather than the wall clock's, so time the thread spent descheduled on a busy machine is not in
//! it. Kinds: `memory` (a fixed worker ID, no state), `embedded` (a state
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

/// The calling thread's CPU time, in ns.
fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the call's whole duration.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// (wall ns per ID, CPU ns per ID), each the median of the repetitions.
fn ns_per_id(g: &Generator) -> (f64, f64) {
    let timed_loop = || {
        let (t, cpu) = (Instant::now(), thread_cpu_ns());
        let mut last = 0;
        for _ in 0..LOOP {
            last = black_box(g.next_id().expect("an ID"));
        }
        let cpu = (thread_cpu_ns() - cpu) as f64;
        let ns = t.elapsed().as_nanos() as f64;
        settle(g, last);
        (ns, cpu)
    };
    timed_loop(); // warm-up
    let per_id = (LOOPS as u64 * LOOP) as f64;
    let (mut wall, mut cpu): (Vec<f64>, Vec<f64>) = (0..REPS)
        .map(|_| {
            let (w, c) = (0..LOOPS)
                .map(|_| timed_loop())
                .fold((0.0, 0.0), |(w, c), (a, b)| (w + a, c + b));
            (w / per_id, c / per_id)
        })
        .unzip();
    wall.sort_by(f64::total_cmp);
    cpu.sort_by(f64::total_cmp);
    (wall[REPS / 2], cpu[REPS / 2])
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
        let (wall, cpu) = ns_per_id(&g);
        println!("{kind} {wall:.3} {cpu:.3}");
        g.close().expect("close");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
