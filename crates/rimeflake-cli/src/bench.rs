//! `rimeflake bench`: threads share one generator and call `next_id` for a while; a progress
//! line on stderr while it runs, then a summary on stdout.

use crate::args::BenchArgs;
use crate::fail::Failure;
use crate::show::{describe_layout, grouped};
use crate::signals;
use rimeflake::clock::monotonic_ns;
use rimeflake::Generator;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::Duration;

/// A steady rate within this share of the layout's cap (either way), with waits for the
/// clock, counts as held at the cap.
const AT_CAP: f64 = 0.95;

/// The cost of a call below the cap, measured before the timed run.
enum Uncapped {
    /// Each thread's first `calls` IDs took `ns_per_call` each, on average over the threads.
    Measured { calls: u64, ns_per_call: f64 },
    /// The generator waited during them: the figure would be the wait's, not the call's.
    Waited,
}

/// Each of `threads` threads takes its first IDs, few enough that together they stay within
/// what a generator may borrow ahead of the clock (`max_drift`, a quarter of it): so no call
/// waits for the clock, and the time per call is the call's own cost.
fn uncapped(generator: &Generator, threads: u32) -> Result<Uncapped, rimeflake::Error> {
    let layout = generator.layout();
    let budget = (rimeflake::frontend::DEFAULT_MAX_DRIFT.as_millis() as u64 / layout.unit_ms())
        .max(1)
        * (layout.max_sequence() + 1);
    let calls = (budget / (4 * threads as u64)).clamp(1, 1_000_000);
    let waits_before = generator.stats().waits;
    let took = std::thread::scope(|scope| {
        let runs: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(move || -> Result<u64, rimeflake::Error> {
                    let start = monotonic_ns();
                    for _ in 0..calls {
                        std::hint::black_box(generator.next_id()?);
                    }
                    Ok(monotonic_ns() - start)
                })
            })
            .collect();
        runs.into_iter()
            .map(|r| r.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect::<Result<Vec<u64>, _>>()
    })?;
    if generator.stats().waits > waits_before {
        return Ok(Uncapped::Waited);
    }
    let mean_ns = took.iter().sum::<u64>() as f64 / took.len() as f64;
    Ok(Uncapped::Measured {
        calls,
        ns_per_call: mean_ns / calls as f64,
    })
}

/// IDs a thread takes between two updates of its counter.
const BATCH: u64 = 256;
/// How often the progress line is redrawn.
const PROGRESS_EVERY_NS: u64 = 250_000_000;

/// One thread's count, on a cache line of its own so counting does not slow the threads down.
#[repr(align(128))]
#[derive(Default)]
struct Slot(AtomicU64);

pub fn run(args: &BenchArgs) -> Result<(), Failure> {
    signals::install();
    let generator = args.generator.build_or_die_by_signal()?;
    let uncapped = match uncapped(&generator, args.threads) {
        Ok(u) => u,
        Err(e) => {
            let _ = generator.close();
            return Err(e.into());
        }
    };
    let slots: Vec<Slot> = (0..args.threads).map(|_| Slot::default()).collect();
    let stop = AtomicBool::new(false);
    let failure: Mutex<Option<rimeflake::Error>> = Mutex::new(None);
    let duration_ns = (args.seconds * 1e9) as u64;

    let cpu_before = cpu_time_ns();
    let start = monotonic_ns();
    let (elapsed_ns, half) = std::thread::scope(|scope| {
        for slot in &slots {
            let (generator, stop, failure) = (&generator, &stop, &failure);
            scope.spawn(move || work(generator, slot, stop, failure));
        }
        let total = || slots.iter().map(|s| s.0.load(Relaxed)).sum::<u64>();
        let (mut last_ns, mut last_ids) = (0, 0);
        // (time, IDs) at half time: the second half shows the steady rate, after any burst
        // borrowed ahead of the clock at the start.
        let mut half = None;
        loop {
            std::thread::sleep(Duration::from_millis(50));
            let now = monotonic_ns() - start;
            if now >= duration_ns || stop.load(Relaxed) || signals::interrupted() {
                stop.store(true, Relaxed);
                break (now, half);
            }
            if half.is_none() && now >= duration_ns / 2 {
                half = Some((now, total()));
            }
            if now - last_ns >= PROGRESS_EVERY_NS {
                let ids = total();
                let rate = (ids - last_ids) as f64 / ((now - last_ns) as f64 / 1e9);
                progress(now, ids, rate);
                (last_ns, last_ids) = (now, ids);
            }
        }
    });
    let cpu_ns = cpu_time_ns()
        .zip(cpu_before)
        .map(|(after, before)| after - before);
    // Stopped by a signal: the generator closed (its lease released), no summary of a run cut
    // short, and the process ends by the signal.
    if let Some(sig) = signals::caught() {
        let _ = writeln!(io::stderr());
        match generator.close() {
            Ok(()) => signals::die_by(sig),
            Err(e) => signals::fail_by(e.into(), sig),
        }
    }
    let ids: u64 = slots.iter().map(|s| s.0.load(Relaxed)).sum();
    // The last progress line shows the whole run, and stays on screen.
    progress(elapsed_ns, ids, ids as f64 / (elapsed_ns as f64 / 1e9));
    eprintln!();

    if let Some(e) = failure.into_inner().unwrap_or_else(|p| p.into_inner()) {
        let _ = generator.close();
        return Err(e.into());
    }
    let stats = generator.stats();
    let layout = generator.layout().clone();
    generator.close()?;

    let wall_s = elapsed_ns as f64 / 1e9;
    let per_second = ids as f64 / wall_s;
    // The layout's cap: one time unit's worth of sequence numbers per unit of wall time.
    let cap = (layout.max_sequence() + 1) as f64 * 1000.0 / layout.unit_ms() as f64;
    let mut out = io::stdout().lock();
    writeln!(
        out,
        "rimeflake bench: {} thread(s) on one generator, {wall_s:.2} s",
        args.threads
    )?;
    writeln!(out, "  {}", describe_layout(&layout))?;
    writeln!(out, "  IDs:         {}", grouped(ids))?;
    writeln!(
        out,
        "  throughput:  {} IDs/s over the run (a saturated start borrows up to max_drift ahead)",
        grouped(per_second as u64)
    )?;
    if let Some((half_ns, half_ids)) = half.filter(|(t, _)| *t < elapsed_ns) {
        let steady = (ids - half_ids) as f64 / ((elapsed_ns - half_ns) as f64 / 1e9);
        writeln!(
            out,
            "  steady:      {} IDs/s in the second half: {:.1}% of the layout's cap of {} IDs/s",
            grouped(steady as u64),
            100.0 * steady / cap,
            grouped(cap as u64)
        )?;
    }
    // Held at the cap: the clock, not the call, sets the rate, so ns/ID is the cap's.
    let steady = match half.filter(|(t, _)| *t < elapsed_ns) {
        Some((half_ns, half_ids)) => {
            (ids - half_ids) as f64 / ((elapsed_ns - half_ns) as f64 / 1e9)
        }
        None => per_second,
    };
    // Above the cap it was still borrowing ahead of the clock, not held.
    let at_cap = stats.waits > 0 && (AT_CAP * cap..=cap / AT_CAP).contains(&steady);
    if ids > 0 {
        let ns = elapsed_ns as f64 / ids as f64;
        if at_cap {
            writeln!(
                out,
                "  ns/ID:       {ns:.2} (wall time / IDs): the run was held at the layout's cap of \
                 {} IDs/s, which sets this figure, not the cost of a call",
                grouped(cap as u64)
            )?;
        } else {
            writeln!(
                out,
                "  ns/ID:       {ns:.2} (wall time / IDs); {:.2} per call in each thread",
                ns * args.threads as f64
            )?;
        }
    }
    match uncapped {
        Uncapped::Measured { calls, ns_per_call } => writeln!(
            out,
            "  per call:    {ns_per_call:.2} ns uncapped: each thread's first {} calls, taken \
             before the cap was reached (borrowed ahead of the clock)",
            grouped(calls)
        )?,
        Uncapped::Waited => writeln!(
            out,
            "  per call:    not measured uncapped: the generator waited for the clock in the first \
             calls (it started ahead of the clock, as right after another run)"
        )?,
    }
    match cpu_ns {
        Some(cpu) => writeln!(
            out,
            "  CPU use:     {:.1}% of one core ({:.2} s CPU time / {wall_s:.2} s wall time)",
            100.0 * cpu as f64 / elapsed_ns as f64,
            cpu as f64 / 1e9
        )?,
        None => writeln!(out, "  CPU use:     not measured on this platform")?,
    }
    writeln!(
        out,
        "  generator:   {} waits ({} ms waited), {} ms borrowed ahead of the clock, {} rollbacks, {} clock-id bumps",
        stats.waits, stats.waited_ms, stats.borrowed_ms, stats.rollbacks, stats.clock_id_bumps
    )?;
    if stats.reservation_writes > 0 {
        writeln!(
            out,
            "  state:       {} writes ({} failed, {:.0} us each on average)",
            stats.reservation_writes,
            stats.reservation_write_failures,
            stats.reservation_write_ns as f64 / 1e3 / stats.reservation_writes as f64
        )?;
    }
    if stats.lease != rimeflake::LeaseState::None {
        writeln!(
            out,
            "  lease:       {} ({} ms left), {} renewals ({} failed)",
            stats.lease.as_str(),
            stats.lease_remaining_ms,
            stats.lease_renewals,
            stats.lease_renewal_failures
        )?;
    }
    out.flush()?;
    Ok(())
}

fn work(
    generator: &Generator,
    slot: &Slot,
    stop: &AtomicBool,
    failure: &Mutex<Option<rimeflake::Error>>,
) {
    while !stop.load(Relaxed) {
        for _ in 0..BATCH {
            match generator.next_id() {
                Ok(id) => {
                    std::hint::black_box(id);
                }
                Err(e) => {
                    failure
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .get_or_insert(e);
                    stop.store(true, Relaxed);
                    return;
                }
            }
        }
        slot.0.fetch_add(BATCH, Relaxed);
    }
}

fn progress(elapsed_ns: u64, ids: u64, rate: f64) {
    let mut err = io::stderr().lock();
    let _ = write!(
        err,
        "\r{:6.2} s  {:>15} IDs  {:>13} IDs/s   ",
        elapsed_ns as f64 / 1e9,
        grouped(ids),
        grouped(rate as u64)
    );
    let _ = err.flush();
}

/// CPU time (user + system) of the whole process so far, in ns.
#[cfg(unix)]
fn cpu_time_ns() -> Option<u64> {
    // SAFETY: getrusage writes one `rusage` into the zeroed struct we own.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        if libc::getrusage(libc::RUSAGE_SELF, &mut usage) != 0 {
            return None;
        }
        usage
    };
    let ns = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1000;
    Some(ns(usage.ru_utime) + ns(usage.ru_stime))
}

#[cfg(not(unix))]
fn cpu_time_ns() -> Option<u64> {
    None
}
