//! The peer crates (snowflaked, rs-snowflake, sonyflake, ulid, uuid) and the floors.

use crate::report::Row;
use crate::timing::*;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::Instant;

/// Calls per burst of the "raw ns/call below cap" column, for 4,096-per-ms generators.
pub const K_4096: u64 = 2048;

fn raw_clock_gettime() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    ts.tv_sec as u64 * 1000 + ts.tv_nsec as u64 / 1_000_000
}

/// The floors, and the one the targets name: SystemTime -> Unix ms plus one atomic add.
pub fn floors() -> (Vec<Row>, f64) {
    let mut rows = Vec::new();
    let mut row = |name: &str, note: &str, ns_1t: f64, ns_2t: Option<f64>| {
        let mut r = Row::new(name, "std");
        r.ns_1t = Some(ns_1t);
        r.ns_2t = ns_2t;
        r.notes = note.to_string();
        rows.push(r);
    };
    row(
        "floor SystemTime::now() -> unix ms",
        "what a snowflake needs per call",
        one_thread(N, unix_ms),
        Some(two_threads(N, unix_ms)),
    );
    row(
        "floor raw clock_gettime(REALTIME) -> ms",
        "vDSO, no u128 arithmetic (what rimeflake's SystemClock reads)",
        one_thread(N, raw_clock_gettime),
        Some(two_threads(N, raw_clock_gettime)),
    );
    row(
        "floor Instant::now()",
        "vDSO clock_gettime(MONOTONIC)",
        one_thread(N, Instant::now),
        Some(two_threads(N, Instant::now)),
    );
    let a = AtomicU64::new(0);
    row(
        "floor AtomicU64::fetch_add (2T = contended)",
        "uncontended 1T; 2T = both threads on one cache line",
        one_thread(N, || a.fetch_add(1, Relaxed)),
        Some(two_threads(N, || a.fetch_add(1, Relaxed))),
    );
    let floor_op = || unix_ms() + a.fetch_add(1, Relaxed);
    let floor = one_thread(N, floor_op);
    row(
        "**the floor**: SystemTime -> ms + one atomic add",
        "the target's reference (2T: one shared atomic)",
        floor,
        Some(two_threads(N, floor_op)),
    );
    (rows, floor)
}

/// snowflaked's sync generator, shared by the 2T threads.
pub fn snowflaked() -> Row {
    let g = snowflaked::sync::Generator::new(1);
    let gen = || g.generate::<u64>();
    let mut r = Row::new("snowflaked sync::Generator", "1.0.4");
    r.ns_1t = Some(one_thread(N, gen));
    r.ns_2t = Some(two_threads(N, gen));
    r.burst = Some(burst_1s(gen));
    r.raw_below_cap = Some(raw_below_cap(K_4096, 1, gen));
    r.unique = unique_column(N as usize, gen);
    r.notes = format!("lock-free CAS; spins at 4096/ms; raw: K={K_4096} after a ms boundary");
    r
}

/// rs-snowflake's `real_time_generate` (2T through a Mutex).
pub fn rs_snowflake() -> Row {
    let g = Mutex::new(snowflake::SnowflakeIdGenerator::new(1, 1));
    let gen = || g.lock().unwrap().real_time_generate();
    let mut local = snowflake::SnowflakeIdGenerator::new(1, 2);
    let mut r = Row::new("rs-snowflake real_time_generate (2T via Mutex)", "0.6.0");
    r.ns_1t = Some(one_thread(N, || local.real_time_generate()));
    r.ns_2t = Some(two_threads(N, gen));
    r.burst = Some(burst_1s(|| local.real_time_generate()));
    r.raw_below_cap = Some(raw_below_cap(K_4096, 1, || local.real_time_generate()));
    r.unique = unique_column(N as usize, gen);
    r.notes =
        format!("clock read every call; spins at 4096/ms; raw: K={K_4096} after a ms boundary");
    r
}

/// sonyflake with a fixed machine ID (default feature `pnet` off).
pub fn sonyflake() -> Row {
    let machine = || Ok(1u16);
    let g = sonyflake::Sonyflake::builder()
        .machine_id(&machine)
        .finalize()
        .expect("sonyflake");
    let gen = || g.next_id().map(|id| id.to_u64()).unwrap_or(0);
    const CAPPED: u64 = 25_600;
    let mut r = Row::new("sonyflake Sonyflake::next_id (shared)", "0.5.1");
    r.ns_1t = Some(one_thread(CAPPED, gen));
    r.ns_2t = Some(two_threads(CAPPED / 2, gen));
    r.burst = Some(burst_1s(gen));
    r.raw_below_cap = Some(raw_below_cap(128, 10, gen));
    r.unique = unique_column(CAPPED as usize / 2, gen);
    r.notes = "8-bit seq per 10 ms => cap 25,600/s, sleeps; N=25,600 (2T 2x12,800); raw: K=128 after a 10-ms boundary".to_string();
    r
}

/// ulid (thread-local rand) and its monotonic generator (2T via Mutex).
pub fn ulid() -> Vec<Row> {
    let gen = || ulid::Ulid::generate().0;
    let mut a = Row::new("ulid Ulid::generate", "3.0.0");
    a.ns_1t = Some(one_thread(N, gen));
    a.ns_2t = Some(two_threads(N, gen));
    a.burst = Some(burst_1s(gen));
    a.unique = unique_column(N as usize, gen);
    a.notes = "48-bit ms + 80 random bits; not monotonic within a ms".to_string();

    let g = Mutex::new(ulid::Generator::new());
    let gen = || g.lock().unwrap().generate().map(|u| u.0).unwrap_or(0);
    let mut b = Row::new("ulid Generator::generate (2T via Mutex)", "3.0.0");
    b.ns_1t = Some(one_thread(N, gen));
    b.ns_2t = Some(two_threads(N, gen));
    b.burst = Some(burst_1s(gen));
    b.unique = unique_column(N as usize, gen);
    b.notes = "monotonic: +1 within a ms".to_string();
    vec![a, b]
}

/// uuid v7 and v4 with default features (getrandom per call).
pub fn uuid() -> Vec<Row> {
    let v7 = || uuid::Uuid::now_v7().as_u128();
    let mut a = Row::new("uuid Uuid::now_v7 [default]", "1");
    a.ns_1t = Some(one_thread(N, v7));
    a.ns_2t = Some(two_threads(N, v7));
    a.burst = Some(burst_1s(v7));
    a.unique = unique_column(N as usize, v7);
    a.notes = "default features: getrandom per call; 128-bit".to_string();

    let v4 = || uuid::Uuid::new_v4().as_u128();
    let mut b = Row::new("uuid Uuid::new_v4 [default]", "1");
    b.ns_1t = Some(one_thread(N, v4));
    b.ns_2t = Some(two_threads(N, v4));
    b.burst = Some(burst_1s(v4));
    b.unique = unique_column(N as usize, v4);
    b.notes = "default features: getrandom per call; 128-bit".to_string();
    vec![a, b]
}
