//! rimeflake's rows. Per-call figures use the `twitter` layout in timed loops of at most
//! 100,000 IDs, with a pause after each until the clock has passed the last ID, so the
//! 4,096-per-ms sequence cap never throttles them (nor does the lead borrowed within a loop
//! outlive it).

use crate::peers::K_4096;
use crate::report::Row;
use crate::timing::*;
use rimeflake::{Clock, CoarseClock, ErrorKind, Generator, Layout};
use std::hint::black_box;
use std::sync::Barrier;
use std::time::{Duration, Instant};

/// IDs per timed loop: at most 100,000 (about 24 ms of the twitter layout's sequence).
pub const LOOP: u64 = 100_000;
/// Timed loops per repetition (so each repetition times 1e6 IDs, as bench/METHOD.md's N).
pub const LOOPS: usize = 10;

pub fn twitter() -> Generator {
    Generator::builder()
        .layout(Layout::twitter())
        .worker_id(1)
        .in_memory()
        .build()
        .expect("twitter generator")
}

/// Sleeps until the clock has passed the time unit of `last`, plus a millisecond of slack:
/// the counter's lead over the clock is then gone.
pub fn settle<C: Clock>(g: &Generator<C>, last: u64) {
    let until = g.layout().decode(last).map(|p| p.timestamp_ms).unwrap_or(0) + 1;
    while unix_ms() <= until {
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// ns per ID of `next_id` on one thread: median over [`REPS`] of [`LOOPS`] timed loops.
pub fn next_id_1t<C: Clock>(g: &Generator<C>) -> f64 {
    let timed_loop = || {
        let t = Instant::now();
        let mut last = 0;
        for _ in 0..LOOP {
            last = black_box(g.next_id().unwrap_or(0));
        }
        let ns = t.elapsed().as_nanos() as f64;
        settle(g, last);
        ns
    };
    timed_loop(); // warm-up
    median(
        (0..REPS)
            .map(|_| (0..LOOPS).map(|_| timed_loop()).sum::<f64>() / (LOOPS as u64 * LOOP) as f64)
            .collect(),
    )
}

/// ns per ID (wall over total) of two threads sharing `g`, each calling `next_id`
/// `LOOP / 2` times per loop.
pub fn next_id_2t<C: Clock>(g: &Generator<C>) -> f64 {
    let per_thread = LOOP / 2;
    let timed_loop = || {
        let barrier = Barrier::new(2);
        let spans: Vec<(Instant, Instant, u64)> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..2)
                .map(|_| {
                    s.spawn(|| {
                        barrier.wait();
                        let t = Instant::now();
                        let mut last = 0;
                        for _ in 0..per_thread {
                            last = black_box(g.next_id().unwrap_or(0));
                        }
                        (t, Instant::now(), last)
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let start = spans.iter().map(|s| s.0).min().unwrap();
        let end = spans.iter().map(|s| s.1).max().unwrap();
        settle(g, spans.iter().map(|s| s.2).max().unwrap());
        (end - start).as_nanos() as f64
    };
    timed_loop();
    median(
        (0..REPS)
            .map(|_| (0..LOOPS).map(|_| timed_loop()).sum::<f64>() / (LOOPS as u64 * LOOP) as f64)
            .collect(),
    )
}

/// ns per ID of `fill` with a 4,096-ID buffer: 24 fills (98,304 IDs) per timed loop.
pub fn fill_4096<C: Clock>(g: &Generator<C>) -> f64 {
    const FILLS: usize = 24;
    let mut buf = vec![0u64; 4096];
    let mut timed_loop = || {
        let t = Instant::now();
        for _ in 0..FILLS {
            g.fill(black_box(&mut buf[..])).expect("fill");
        }
        let ns = t.elapsed().as_nanos() as f64;
        settle(g, buf[4095]);
        ns
    };
    timed_loop();
    median(
        (0..REPS)
            .map(|_| (0..LOOPS).map(|_| timed_loop()).sum::<f64>() / (LOOPS * FILLS * 4096) as f64)
            .collect(),
    )
}

/// The main rimeflake row (twitter, in memory) and its fill row.
pub fn rows() -> (Row, Row) {
    let g = twitter();
    let mut r = Row::new("**rimeflake next_id** (twitter, in_memory)", "0.1.0");
    r.ns_1t = Some(next_id_1t(&g));
    r.ns_2t = Some(next_id_2t(&g));
    r.raw_below_cap = Some(raw_below_cap(K_4096, 1, || g.next_id().unwrap_or(0)));
    r.unique = unique_column(N as usize, || g.next_id().expect("next_id"));
    settle(&g, g.next_id().unwrap());
    let burst_gen = twitter();
    r.burst = Some(burst_1s(|| burst_gen.next_id().unwrap_or(0)));
    let pct = r.ns_1t.unwrap() / r.ns_2t.unwrap() * 100.0;
    r.notes = format!(
        "lock-free CAS, borrows up to max_drift 2 s instead of spinning (the burst includes \
         that lead); 1T/2T: loops of {LOOP} IDs with pauses; 2T = one generator, 2 threads: \
         {pct:.0}% of 1T throughput; raw: K={K_4096} after a ms boundary"
    );
    let mut f = Row::new("**rimeflake fill(4096)** per ID (twitter)", "0.1.0");
    f.ns_1t = Some(fill_4096(&g));
    f.notes = "one atomic step per 4,096 IDs; loops of 24 fills with pauses".to_string();
    (r, f)
}

/// What a 5-s saturated run did.
pub struct Saturated {
    pub issued: u64,
    pub errors: u64,
    pub wall: Duration,
    pub cpu: Duration,
    pub cap: f64,
    pub waits: u64,
    pub waited_ms: u64,
    pub borrowed_ms: u64,
}

impl Saturated {
    pub fn pct_of_cap(&self) -> f64 {
        self.issued as f64 / self.cap * 100.0
    }
    pub fn cpu_pct(&self) -> f64 {
        self.cpu.as_secs_f64() / self.wall.as_secs_f64() * 100.0
    }
}

/// One thread calls `next_id` flat out for 5 s on a fresh twitter generator. The cap is
/// 4,096 IDs per ms of wall time plus what `max_drift` (2 s) lets it borrow.
pub fn saturated() -> Saturated {
    let g = twitter();
    settle(&g, g.next_id().unwrap());
    let (mut issued, mut errors) = (0u64, 0u64);
    let cpu0 = process_cpu();
    let t = Instant::now();
    loop {
        for _ in 0..256 {
            match g.next_id() {
                Ok(id) => {
                    black_box(id);
                    issued += 1;
                }
                Err(e) => {
                    black_box(e.kind() == ErrorKind::Overloaded);
                    errors += 1;
                }
            }
        }
        if t.elapsed() >= Duration::from_secs(5) {
            break;
        }
    }
    let wall = t.elapsed();
    let cpu = process_cpu() - cpu0;
    let s = g.stats();
    let cap = 4096.0 * wall.as_secs_f64() * 1000.0 + 2000.0 * 4096.0;
    // Dropping the generator closes it, which waits until the clock has passed its lead (~2 s):
    // outside the measured span.
    drop(g);
    Saturated {
        issued,
        errors,
        wall,
        cpu,
        cap,
        waits: s.waits,
        waited_ms: s.waited_ms,
        borrowed_ms: s.borrowed_ms,
    }
}

/// `next_id` reading the coarse clock (`CoarseClock`): cheaper than the floor, with timestamps
/// that lag by about one kernel tick.
pub fn coarse_row() -> Row {
    let g = Generator::builder()
        .layout(Layout::twitter())
        .worker_id(1)
        .in_memory()
        .clock(CoarseClock)
        .build()
        .expect("coarse generator");
    let mut r = Row::new(
        "rimeflake next_id (twitter, in_memory, CoarseClock)",
        "0.1.0",
    );
    r.ns_1t = Some(next_id_1t(&g));
    r.ns_2t = Some(next_id_2t(&g));
    r.raw_below_cap = Some(raw_below_cap(K_4096, 1, || g.next_id().unwrap_or(0)));
    r.unique = unique_column(N as usize, || g.next_id().expect("next_id"));
    r.notes = format!(
        "opt-in: CLOCK_REALTIME_COARSE; timestamps lag the clock by about one tick ({} ms)",
        CoarseClock::resolution().as_secs_f64() * 1000.0
    );
    r
}

/// Rounds of [`spread_row`]: each measures a generator without the option and one with it, in
/// turns, the first of each round alternating.
const SPREAD_ROUNDS: usize = 5;

/// `next_id` with `random_sequence_start`, beside the same generator without it measured in
/// turns with it ([`SPREAD_ROUNDS`] rounds: the other rows run minutes apart, and the machine's
/// load moves more than this option costs). What it adds: a branch on the hot path, and a
/// splitmix64 draw in each unit entered after an idle spell (after each loop's pause, and in
/// `raw_below_cap`, whose calls follow a unit boundary).
pub fn spread_row() -> Row {
    let make = |on| {
        Generator::builder()
            .layout(Layout::twitter())
            .worker_id(1)
            .in_memory()
            .random_sequence_start(on)
            .build()
            .expect("twitter generator")
    };
    let (plain, spread) = (make(false), make(true));
    // Per round: [1T, 2T, raw] of each.
    let measure = |g: &Generator| {
        [
            next_id_1t(g),
            next_id_2t(g),
            raw_below_cap(K_4096, 1, || g.next_id().unwrap_or(0)),
        ]
    };
    let (mut off, mut on) = (Vec::new(), Vec::new());
    for round in 0..SPREAD_ROUNDS {
        if round % 2 == 0 {
            off.push(measure(&plain));
            on.push(measure(&spread));
        } else {
            on.push(measure(&spread));
            off.push(measure(&plain));
        }
    }
    let med = |rounds: &[[f64; 3]], i: usize| median(rounds.iter().map(|r| r[i]).collect());
    let mut r = Row::new(
        "rimeflake next_id (twitter, in_memory, random_sequence_start)",
        "0.1.0",
    );
    r.ns_1t = Some(med(&on, 0));
    r.ns_2t = Some(med(&on, 1));
    r.raw_below_cap = Some(med(&on, 2));
    r.unique = unique_column(N as usize, || spread.next_id().expect("next_id"));
    r.notes = format!(
        "opt-in; / the same generator without it, {SPREAD_ROUNDS} rounds in turns (medians): \
         1T {:.2}x ({:.1} ns without), 2T {:.2}x ({:.1}), raw {:.2}x ({:.1})",
        med(&on, 0) / med(&off, 0),
        med(&off, 0),
        med(&on, 1) / med(&off, 1),
        med(&off, 1),
        med(&on, 2) / med(&off, 2),
        med(&off, 2),
    );
    r
}

/// `next_id` with the file store (durable state, local worker lease): `Ok(row)`, or the error
/// that `build()` gave (a Config error until durable state is integrated).
pub fn file_store_row() -> Result<Row, String> {
    let dir = std::env::temp_dir().join(format!("rimeflake-bench-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let built = Generator::builder()
        .layout(Layout::twitter())
        .worker_id(1)
        .state_dir(&dir)
        .build();
    let out = match built {
        Ok(g) => {
            let mut r = Row::new("rimeflake next_id (twitter, file store)", "0.1.0");
            r.ns_1t = Some(next_id_1t(&g));
            r.ns_2t = Some(next_id_2t(&g));
            r.raw_below_cap = Some(raw_below_cap(K_4096, 1, || g.next_id().unwrap_or(0)));
            r.unique = unique_column(N as usize, || g.next_id().expect("next_id"));
            r.notes = format!("state_dir in {}", std::env::temp_dir().display());
            drop(g);
            Ok(r)
        }
        Err(e) => Err(format!("{:?}: {}", e.kind(), e.message())),
    };
    let _ = std::fs::remove_dir_all(&dir);
    out
}
