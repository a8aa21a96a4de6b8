//! Criterion benches of the core: `next_id` and `fill(4096)` on the twitter layout, `decode`,
//! and base62 `format`. `cargo bench -p rimeflake --bench generator`.
//!
//! The generator rows time loops of at most 100,000 IDs and pause after each until the clock has
//! passed the last ID, so neither the 4,096-per-ms sequence cap nor the `max_drift` lead ever
//! throttles them: they measure the call, not the cap. bench/rust compares them with peers.

// Benches read the clock directly: the ban guards the core's own code.
#![allow(clippy::disallowed_methods)]

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use rimeflake::{format, Clock, Encoding, Generator, Layout, SystemClock};
use std::time::{Duration, Instant};

const LOOP: u64 = 100_000;

fn twitter() -> Generator {
    Generator::builder()
        .layout(Layout::twitter())
        .worker_id(1)
        .in_memory()
        .build()
        .expect("twitter generator")
}

/// Sleeps until the clock has passed the time unit of `last`: the generator's lead is gone.
fn settle(g: &Generator, last: u64) {
    let until = g.layout().decode(last).map(|p| p.timestamp_ms).unwrap_or(0) + 1;
    while SystemClock.now_ms() <= until {
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Runs `iters` calls of `step` (each issuing `per_step` IDs) in timed loops of at most
/// [`LOOP`] IDs, pausing between loops; returns the time spent inside the loops.
fn paced(g: &Generator, iters: u64, per_step: u64, mut step: impl FnMut() -> u64) -> Duration {
    let steps_per_loop = (LOOP / per_step).max(1);
    let (mut left, mut total) = (iters, Duration::ZERO);
    while left > 0 {
        let n = left.min(steps_per_loop);
        let t = Instant::now();
        let mut last = 0;
        for _ in 0..n {
            last = step();
        }
        total += t.elapsed();
        left -= n;
        settle(g, last);
    }
    total
}

fn generator(c: &mut Criterion) {
    let g = twitter();
    let mut group = c.benchmark_group("generator");
    group.sample_size(30); // each sample includes pauses: keep the run short
    group.throughput(Throughput::Elements(1));
    group.bench_function("next_id twitter", |b| {
        b.iter_custom(|iters| paced(&g, iters, 1, || black_box(g.next_id().unwrap_or(0))))
    });
    let mut buf = vec![0u64; 4096];
    group.throughput(Throughput::Elements(4096));
    group.bench_function("fill 4096 twitter", |b| {
        b.iter_custom(|iters| {
            paced(&g, iters, 4096, || {
                g.fill(black_box(&mut buf[..])).expect("fill");
                buf[4095]
            })
        })
    });
    group.finish();
}

fn codec(c: &mut Criterion) {
    let g = twitter();
    let layout = Layout::twitter();
    let id = g.next_id().unwrap();
    c.bench_function("decode twitter", |b| {
        b.iter(|| layout.decode(black_box(id)))
    });
    c.bench_function("format base62", |b| {
        b.iter(|| format(black_box(id), Encoding::Base62))
    });
}

criterion_group!(benches, generator, codec);
criterion_main!(benches);
