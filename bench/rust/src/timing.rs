//! The method of bench/METHOD.md: timed loops with `black_box`, medians, two threads on one shared
//! generator, a 1-s burst, raw cost right after a tick boundary, and CPU time.

use std::hint::black_box;
use std::sync::Barrier;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Repetitions whose median is reported.
pub const REPS: usize = 7;
/// Calls per timed loop for uncapped generators and the floors.
pub const N: u64 = 1_000_000;

/// The median of `v` (the mean of the middle two for an even count).
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

/// Unix milliseconds, as a snowflake needs them (the "SystemTime -> ms" floor).
#[inline]
pub fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// ns per call of `n` calls of `f`.
#[inline(never)]
pub fn time_calls<R>(n: u64, f: &mut impl FnMut() -> R) -> f64 {
    let t = Instant::now();
    for _ in 0..n {
        black_box(f());
    }
    t.elapsed().as_nanos() as f64 / n as f64
}

/// 1T: a warm-up of `n / 10` calls, then the median of [`REPS`] loops of `n` calls.
pub fn one_thread<R>(n: u64, mut f: impl FnMut() -> R) -> f64 {
    time_calls(n / 10, &mut f);
    median((0..REPS).map(|_| time_calls(n, &mut f)).collect())
}

/// 2T: `n` calls from each of two threads at once; wall time (earliest start to latest end)
/// over `2n`, median of [`REPS`].
pub fn two_threads<R>(n: u64, f: impl Fn() -> R + Sync) -> f64 {
    let run = || {
        let barrier = Barrier::new(2);
        let spans: Vec<(Instant, Instant)> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..2)
                .map(|_| {
                    s.spawn(|| {
                        barrier.wait();
                        let t = Instant::now();
                        for _ in 0..n {
                            black_box(f());
                        }
                        (t, Instant::now())
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        wall_over(&spans, 2 * n)
    };
    run(); // warm-up
    median((0..REPS).map(|_| run()).collect())
}

/// Wall time from the earliest start to the latest end, in ns per ID over `ids`.
pub fn wall_over(spans: &[(Instant, Instant)], ids: u64) -> f64 {
    let start = spans.iter().map(|s| s.0).min().unwrap();
    let end = spans.iter().map(|s| s.1).max().unwrap();
    (end - start).as_nanos() as f64 / ids as f64
}

/// IDs per second over a 1-s burst, the clock checked every 256 calls.
pub fn burst_1s<R>(mut f: impl FnMut() -> R) -> f64 {
    let t = Instant::now();
    let mut calls = 0u64;
    loop {
        for _ in 0..256 {
            black_box(f());
        }
        calls += 256;
        if t.elapsed() >= Duration::from_secs(1) {
            break;
        }
    }
    calls as f64 / t.elapsed().as_secs_f64()
}

/// Raw ns per call below the cap: `k` calls timed right after a tick boundary (a tick of
/// `tick_ms` Unix ms), median of 101 bursts.
pub fn raw_below_cap<R>(k: u64, tick_ms: u64, mut f: impl FnMut() -> R) -> f64 {
    let bursts = (0..101)
        .map(|_| {
            let tick = unix_ms() / tick_ms;
            while unix_ms() / tick_ms == tick {
                std::hint::spin_loop();
            }
            time_calls(k, &mut f)
        })
        .collect();
    median(bursts)
}

/// CPU time of this process (user + system), from `getrusage(RUSAGE_SELF)`.
pub fn process_cpu() -> Duration {
    // SAFETY: `usage` is a valid, writable rusage; RUSAGE_SELF is always accepted.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// Uniqueness of IDs collected untimed: `(duplicates, strictly increasing)`.
pub fn check_unique<T: Ord + Copy>(ids: &[T]) -> (usize, bool) {
    let mono = ids.windows(2).all(|w| w[0] < w[1]);
    let mut sorted = ids.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    (ids.len() - sorted.len(), mono)
}

/// The `unique` column: 1T of `n` IDs (with monotonicity), 2T of `2n` from two threads.
pub fn unique_column<T: Ord + Copy + Send>(n: usize, f: impl Fn() -> T + Sync) -> String {
    let one: Vec<T> = (0..n).map(|_| f()).collect();
    let (d1, mono) = check_unique(&one);
    let mut two: Vec<T> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..2)
            .map(|_| s.spawn(|| (0..n).map(|_| f()).collect::<Vec<T>>()))
            .collect();
        hs.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    let (d2, _) = check_unique(&std::mem::take(&mut two));
    let yes = |d: usize| match d {
        0 => "yes".to_string(),
        d => format!("NO ({d} dups)"),
    };
    format!(
        "1T {} {} / 2T {}",
        yes(d1),
        if mono { "mono" } else { "not mono" },
        yes(d2)
    )
}
