//! The Rust side of bench/c: loops over the core's `Generator::next_id` and `fill`, timed in
//! Rust exactly as bench/rust does, so the C benchmark can put them beside the C API's calls in
//! one process. Only the loop's result crosses to C; no call of the core goes through the C ABI.
// A benchmark times with the wall clock itself, not through the core's Clock.
#![allow(clippy::missing_safety_doc, clippy::disallowed_methods)]

use rimeflake::{Generator, Layout};
use std::hint::black_box;
use std::time::Instant;

/// The benchmark's generator: `twitter`, worker 1, in memory (as bench/rust's).
#[no_mangle]
pub extern "C" fn bench_core_new() -> *mut Generator {
    let g = Generator::builder()
        .layout(Layout::twitter())
        .worker_id(1)
        .in_memory()
        .build()
        .expect("twitter generator");
    Box::into_raw(Box::new(g))
}

#[no_mangle]
pub unsafe extern "C" fn bench_core_free(g: *mut Generator) {
    // SAFETY: the benchmark passes a pointer from bench_core_new's Box::into_raw, once.
    drop(unsafe { Box::from_raw(g) });
}

/// ns for `n` calls of `next_id`; the last ID into `*last`.
#[no_mangle]
pub unsafe extern "C" fn bench_core_next_id(g: *const Generator, n: u64, last: *mut u64) -> f64 {
    // SAFETY: the benchmark passes a live generator from bench_core_new, not yet freed.
    let g = unsafe { &*g };
    let t = Instant::now();
    let mut id = 0;
    for _ in 0..n {
        id = black_box(g.next_id().unwrap_or(0));
    }
    let ns = t.elapsed().as_nanos() as f64;
    // SAFETY: the benchmark passes a writable u64 for the last ID.
    unsafe { *last = id };
    ns
}

/// ns for `calls` calls of `fill` into `buf[0..n]`; the last ID into `*last`.
#[no_mangle]
pub unsafe extern "C" fn bench_core_fill(
    g: *const Generator,
    buf: *mut u64,
    n: usize,
    calls: u64,
    last: *mut u64,
) -> f64 {
    // SAFETY: the benchmark passes a live generator from bench_core_new, not yet freed.
    let g = unsafe { &*g };
    // SAFETY: the benchmark passes a buffer of `n` u64s that only this call uses meanwhile.
    let ids = unsafe { std::slice::from_raw_parts_mut(buf, n) };
    let t = Instant::now();
    for _ in 0..calls {
        let _ = black_box(g.fill(black_box(&mut *ids)));
    }
    let ns = t.elapsed().as_nanos() as f64;
    // SAFETY: as in bench_core_next_id.
    unsafe { *last = ids[n - 1] };
    ns
}
