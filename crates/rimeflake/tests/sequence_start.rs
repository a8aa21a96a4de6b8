//! `random_sequence_start`, through the public API: what it costs (exactly the documented
//! capacity, never a call that would not have failed at 0), that restarts and clock-id switches
//! stay above every issued value, which layouts refuse it, and how `id % N` spreads with the
//! keys real generators draw. The table of `id % N` before and after, at 1, 100 and 10,000
//! IDs/s, is tested with fixed keys in the core's unit tests (tests/internal/shards.rs).

use rimeflake::frontend::{Setting, SettingValue};
use rimeflake::{ErrorKind, Frontend, Generator, Layout, ManualClock};
use rimeflake_testkit::support::TempDir;
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

const START_MS: u64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z

fn manual(layout: Layout) -> (Arc<ManualClock>, Generator<Arc<ManualClock>>) {
    let clock = Arc::new(ManualClock::new(START_MS));
    let g = Generator::builder()
        .layout(layout)
        .worker_id(1)
        .in_memory()
        .clock(clock.clone())
        .random_sequence_start(true)
        .build()
        .unwrap();
    (clock, g)
}

#[test]
fn a_layout_with_the_worker_below_the_sequence_is_refused_in_each_front_ends_words() {
    for (frontend, name) in [
        (Frontend::Rust, "random_sequence_start"),
        (Frontend::Cli, "--random-sequence-start"),
        (Frontend::Node, "randomSequenceStart"),
    ] {
        let e = Generator::builder()
            .frontend(frontend)
            .layout(Layout::sonyflake())
            .worker_id(1)
            .in_memory()
            .random_sequence_start(true)
            .build()
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Config);
        assert_eq!(
            e.message(),
            format!(
                "{name}: layout sonyflake puts the worker ID below the sequence, so id % N is \
                 the worker's (for any N up to 65536) whatever the sequence does: spread shards \
                 by worker ID there, or use a layout with the sequence below the worker"
            )
        );
    }
    // Off, the same layout builds.
    let g = Generator::builder()
        .layout(Layout::sonyflake())
        .worker_id(1)
        .in_memory()
        .build();
    assert!(g.is_ok());
}

/// With `max_drift` 0 (nothing borrowed), the first unit of a burst holds exactly
/// `512 - offset` IDs of `default`'s 512; the calls then wait for the clock, and the units
/// entered while busy hold all 512, from sequence 0.
#[test]
fn without_borrowing_only_the_first_unit_of_a_burst_pays_its_offset() {
    let clock = Arc::new(ManualClock::new(START_MS));
    let g = Generator::builder()
        .worker_id(1)
        .in_memory()
        .clock(clock.clone())
        .max_drift(Duration::ZERO)
        .random_sequence_start(true)
        .build()
        .unwrap();
    clock.set_ms(START_MS + 5); // an idle spell since the start
    let layout = g.layout().clone();
    let parts: Vec<_> = (0..1500)
        .map(|_| layout.decode(g.next_id().unwrap()).unwrap())
        .collect();
    let first = parts[0];
    assert_eq!(first.timestamp_ms, START_MS + 5);
    let in_unit = |ms| parts.iter().filter(|p| p.timestamp_ms == ms).count() as u64;
    assert_eq!(in_unit(START_MS + 5), 512 - first.sequence);
    assert_eq!(in_unit(START_MS + 6), 512);
    let second = parts
        .iter()
        .find(|p| p.timestamp_ms == START_MS + 6)
        .unwrap();
    assert_eq!(second.sequence, 0);
    assert!(g.stats().waits >= 2);
}

/// The offset is cut to the room a call has: a batch that fits a unit stays in it, and the
/// largest batch a call takes (`max_drift` worth) still goes through at once.
#[test]
fn an_offset_never_fails_a_call_that_would_not_fail_at_zero() {
    let (clock, g) = manual(Layout::default());
    let layout = g.layout().clone();
    for unit in 1..200 {
        clock.set_ms(START_MS + 10 * unit);
        let ids = g.next_ids(512).unwrap();
        let first = layout.decode(ids[0]).unwrap();
        let last = layout.decode(ids[511]).unwrap();
        assert_eq!(
            (first.sequence, last.sequence),
            (0, 511),
            "a unit's worth fits only from 0"
        );
        let ids = g.next_ids(100).unwrap();
        assert_eq!(
            layout.decode(ids[99]).unwrap().timestamp_ms,
            START_MS + 10 * unit + 1
        );
    }
    // 2 s of lead at 512 per ms, from a fresh unit: one chunk, no wait.
    clock.set_ms(START_MS + 10_000);
    let mut batch = vec![0u64; 2001 * 512];
    g.fill(&mut batch).unwrap();
    assert!(batch.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(g.stats().waits, 0);
}

/// A restart resumes above the durable reservation, or above the last ID after a clean close
/// in the same unit: an offset never lands below either. (Crashes, torn writes and disk faults
/// with the option on are the simulation's: tests/internal/simulation.rs.)
#[test]
fn restarts_stay_above_every_id_issued_before() {
    let dir = TempDir::new("sequence-start");
    let clock = Arc::new(ManualClock::new(START_MS));
    let mut seen = HashSet::new();
    let mut last = 0;
    for life in 0..40u64 {
        // The same unit as the last life's last ID, the next one, or far ahead.
        clock.advance(Duration::from_millis([0, 1, 1500][life as usize % 3]));
        let g = Generator::builder()
            .state_dir(&dir.0)
            .worker_id(3)
            .clock(clock.clone())
            .random_sequence_start(true)
            .build()
            .unwrap();
        for step in 0..5 {
            clock.advance(Duration::from_millis(step % 2));
            let id = g.next_id().unwrap();
            assert!(id > last, "life {life}: {id} after {last}");
            assert!(seen.insert(id));
            last = id;
        }
        g.close().unwrap();
    }
}

/// A large step back of the clock moves to another clock-id; the switch's first unit takes an
/// offset as a start does, and no value of any clock-id repeats.
#[test]
fn clock_id_switches_never_repeat_an_id() {
    let (clock, g) = manual(Layout::default());
    let layout = g.layout().clone();
    let mut seen = HashSet::new();
    let mut switched_firsts = Vec::new();
    for round in 0..6u64 {
        // 5 s behind the round before: beyond max_drift, so BumpClock moves to a clock-id whose
        // IDs all lie before the reading.
        clock.set_ms(START_MS + 60_000 - round * 5_000);
        for i in 0..50 {
            let id = g.next_id().unwrap();
            assert!(seen.insert(id), "round {round}: {id} twice");
            if i == 0 && round > 0 {
                switched_firsts.push(layout.decode(id).unwrap());
            }
        }
    }
    assert_eq!(g.stats().clock_id_bumps, 5, "{:?}", g.stats());
    assert!(switched_firsts.iter().all(|p| p.clock_id > 0));
    // The switches' first IDs start at their units' offsets, not all at 0 (512^-5 by chance).
    assert!(
        switched_firsts.iter().any(|p| p.sequence != 0),
        "{switched_firsts:?}"
    );
}

/// Threads racing over unit changes get unique IDs, increasing within each thread.
#[test]
fn threads_entering_units_together_never_share_an_id() {
    let (clock, g) = manual(Layout::default());
    let g = Arc::new(g);
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let (g, clock) = (g.clone(), clock.clone());
            std::thread::spawn(move || {
                let mut ids = Vec::new();
                for i in 0..20_000u64 {
                    if t == 0 && i % 7 == 0 {
                        clock.advance(Duration::from_millis(1));
                    }
                    ids.push(g.next_id().unwrap());
                }
                assert!(ids.windows(2).all(|w| w[0] < w[1]));
                ids
            })
        })
        .collect();
    let mut all = HashSet::new();
    for t in threads {
        for id in t.join().unwrap() {
            assert!(all.insert(id));
        }
    }
}

/// `IDS` IDs of worker 5 on `default`, one per second (each opens a unit after an idle spell),
/// the option set through the front ends' table as a front end sets it.
fn one_per_second(on: bool) -> Vec<u64> {
    const IDS: u64 = 100_000;
    let clock = Arc::new(ManualClock::new(START_MS));
    let g = Generator::builder()
        .worker_id(5)
        .in_memory()
        .clock(clock.clone())
        .set(Setting::RandomSequenceStart, SettingValue::Flag(on))
        .unwrap()
        .build()
        .unwrap();
    let layout = g.layout().clone();
    let ids: Vec<u64> = (0..IDS)
        .map(|i| {
            clock.set_ms(START_MS + 1000 * i);
            let id = g.next_id().unwrap();
            // Decoding is untouched: the time and the worker read as they were made.
            let parts = layout.decode(id).unwrap();
            assert_eq!(
                (parts.timestamp_ms, parts.worker_id),
                (START_MS + 1000 * i, 5)
            );
            id
        })
        .collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    ids
}

/// With the key a generator draws from the operating system: off, every ID of a low rate is
/// its unit's sequence 0 and `id % 16` sends all to shard 0; on, each of the 16 shards holds
/// within 15% of its fair share. A shard's count is then Binomial(100,000, 1/16), outside 15%
/// of its mean with a chance below 1e-20 (Chernoff; tests/internal/shards.rs gives the bound).
/// Two generators draw different keys, so their offsets differ.
#[test]
fn with_the_key_a_generator_draws_id_mod_16_spreads_evenly() {
    let before = one_per_second(false);
    assert!(before.iter().all(|id| id % 16 == 0));
    let after = one_per_second(true);
    let mut shards = [0u64; 16];
    for id in &after {
        shards[(id % 16) as usize] += 1;
    }
    let fair = after.len() as f64 / 16.0;
    for (shard, &c) in shards.iter().enumerate() {
        assert!(
            (c as f64 - fair).abs() <= 0.15 * fair,
            "shard {shard} holds {c}: {shards:?}"
        );
    }
    // Another generator, another key: the same units start elsewhere (512^-200 by chance).
    let other = one_per_second(true);
    assert_ne!(after[..200], other[..200]);
}
