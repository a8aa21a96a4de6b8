//! `random_sequence_start` and shards: how `id % N` spreads over N = 2, 8 and 16 shards at 1, 100
//! and 10,000 IDs per second, with each time unit's sequence starting at 0 (before) and at a
//! random offset (after). The clock is a `ManualClock` set before each ID, so the rates cost no
//! real time. `cargo test -p rimeflake --lib internal_tests::shards -- --nocapture` prints the
//! table docs/layouts.md ("Shard-balanced sequences") shows.
//!
//! **The bound, and why the test cannot flake.** After, every shard must hold within 15% of its
//! fair share, `IDS / N`. At 1 and 100 IDs/s each ID opens a unit of its own (1 ms units), so its
//! sequence is that unit's offset: uniform over the 512 sequence numbers of `default`, drawn
//! independently per unit (splitmix64 of the unit and the key), and `id % N` is the sequence's
//! (N divides 512, and the sequence is the ID's lowest field). A shard's count is then
//! Binomial(100,000, 1/N), and Chernoff's bound puts it outside 15% of its mean with
//! probability at most `2 exp(-0.15^2 * mean / 3)`: 9e-21 for N = 16 (mean 6,250), less for
//! fewer shards. At 10,000 IDs/s a unit holds a run of 10 consecutive values from its offset, and
//! one that starts within 9 of its end lends its last IDs to the next unit, which then takes no
//! offset: runs of 10 or 20 values, each drawn once, each adding 0 or 1 to a shard (N = 16), 1
//! or 2 (N = 8, or 2 or 3 for a run of 20), exactly 5 or 10 to each of 2. So a shard's count is
//! a sum of at most 10,000 independent draws of range 1 (Hoeffding: more than 376 off its
//! expectation with probability below 1e-12), and the lending runs, which start only at the
//! last 9 of the 512 offsets, move that expectation by at most one ID each (176 of 10,000
//! draws lend on average, more than 300 with probability below 1e-13): at most 676 in all,
//! 10.8% of 6,250. Over the 78 shards of the 9 cases, a key fails the test with a chance below
//! 1e-10. And the keys are fixed (`test_spread_key`), so every run draws the same offsets: the
//! test passes or fails the same way every time.

use rimeflake::{Generator, Layout, ManualClock};
use std::sync::Arc;

/// IDs per case.
const IDS: u64 = 100_000;
/// IDs per second.
const RATES: [u64; 3] = [1, 100, 10_000];
const SHARDS: [u64; 3] = [2, 8, 16];
/// The keys the offsets are drawn from: fixed, so that the test runs the same every time.
const KEYS: [u64; 3] = [0x5eed_0001, 0x0123_4567_89ab_cdef, u64::MAX];
/// How far a shard may stray from its fair share, after: see the module's doc.
const TOLERANCE: f64 = 0.15;
const START_MS: u64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z

/// `IDS` IDs of worker 1 on the `default` layout at `rate` per second, the sequence starting at
/// 0 (`key` None) or at offsets drawn from `key`. Checks that they strictly increase.
fn ids(rate: u64, key: Option<u64>) -> Vec<u64> {
    let clock = Arc::new(ManualClock::new(START_MS));
    let mut b = Generator::builder()
        .layout(Layout::default())
        .worker_id(1)
        .in_memory()
        .clock(clock.clone());
    if let Some(key) = key {
        b = b.random_sequence_start(true).test_spread_key(key);
    }
    let g = b.build().unwrap();
    let ids: Vec<u64> = (0..IDS)
        .map(|i| {
            clock.set_ms(START_MS + i * 1000 / rate);
            g.next_id().unwrap()
        })
        .collect();
    g.close().unwrap();
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    ids
}

/// How many of `ids` each of `n` shards gets (`id % n`).
fn shards(ids: &[u64], n: u64) -> Vec<u64> {
    let mut counts = vec![0; n as usize];
    for id in ids {
        counts[(id % n) as usize] += 1;
    }
    counts
}

/// The smallest and the largest shard, in % of the IDs.
fn range(counts: &[u64]) -> String {
    let pct = |c: &u64| 100.0 * *c as f64 / IDS as f64;
    let (lo, hi) = (counts.iter().min().unwrap(), counts.iter().max().unwrap());
    format!("{:.1}–{:.1}", pct(lo), pct(hi))
}

#[test]
fn ids_spread_over_shards_at_every_rate_only_with_a_random_sequence_start() {
    let mut table = String::from(
        "| IDs/s | N | fair share | sequence from 0: smallest–largest shard | random start (3 keys): smallest–largest |\n\
         |---:|---:|---:|---|---|\n",
    );
    for rate in RATES {
        let before = ids(rate, None);
        let after: Vec<Vec<u64>> = KEYS.iter().map(|&k| ids(rate, Some(k))).collect();
        for n in SHARDS {
            let fair = IDS / n;
            let counts = shards(&before, n);
            // Before: at 1 and 100 IDs/s every ID has sequence 0, and worker 1's IDs all land on
            // shard 0; at 10,000 (10 per unit, sequences 0 to 9) shards 10 to 15 of 16 get
            // nothing and shards 0 and 1 of 8 twice their share; 2 shards split evenly.
            match (rate, n) {
                (1 | 100, _) => assert_eq!(counts[0], IDS, "{rate}/s, {n} shards: {counts:?}"),
                (_, 16) => assert!(counts[10..].iter().all(|&c| c == 0), "{counts:?}"),
                (_, 8) => assert_eq!(counts[0], 2 * counts[2], "{counts:?}"),
                _ => assert_eq!(counts, [IDS / 2, IDS / 2]),
            }
            let mut spread = Vec::new();
            for (key, ids) in KEYS.iter().zip(&after) {
                let counts = shards(ids, n);
                for (shard, &c) in counts.iter().enumerate() {
                    let off = (c as f64 - fair as f64).abs() / fair as f64;
                    assert!(
                        off <= TOLERANCE,
                        "{rate}/s, key {key:#x}: shard {shard} of {n} holds {c} IDs, {:.1}% off \
                         its fair share {fair}: {counts:?}",
                        100.0 * off
                    );
                }
                spread.extend(counts);
            }
            table.push_str(&format!(
                "| {rate} | {n} | {:.2}% | {} | {} |\n",
                100.0 / n as f64,
                range(&counts),
                range(&spread)
            ));
        }
    }
    println!("{table}");
}

/// A unit the counter enters after an idle spell starts at its offset; the next IDs of the unit
/// follow it, and a unit entered while busy (the counter at its start) takes none.
#[test]
fn only_a_unit_entered_after_an_idle_spell_takes_an_offset() {
    let clock = Arc::new(ManualClock::new(START_MS));
    let g = Generator::builder()
        .layout(Layout::twitter())
        .worker_id(1)
        .in_memory()
        .clock(clock.clone())
        .random_sequence_start(true)
        .test_spread_key(KEYS[1])
        .build()
        .unwrap();
    let layout = g.layout().clone();
    let seqs = |ids: &[u64]| -> Vec<u64> {
        ids.iter()
            .map(|&id| layout.decode(id).unwrap().sequence)
            .collect()
    };
    // Idle units: each first ID at an offset of its own (the key fixes them), the next ones
    // counting on from it.
    let mut firsts = Vec::new();
    for unit in 1..=20 {
        clock.set_ms(START_MS + unit * 10);
        let s = seqs(&g.next_ids(3).unwrap());
        assert_eq!(s, [s[0], s[0] + 1, s[0] + 2]);
        firsts.push(s[0]);
    }
    firsts.sort_unstable();
    firsts.dedup();
    // 20 draws of 4096 values: few can coincide.
    assert!(firsts.len() > 15, "{firsts:?}");
    // A burst that fills its unit borrows the next; when the clock gets there, the counter is
    // already inside it, and IDs go on from it with no offset.
    clock.set_ms(START_MS + 1000);
    let burst = g.next_ids(5000).unwrap();
    let last = layout.decode(*burst.last().unwrap()).unwrap();
    assert_eq!(
        last.timestamp_ms,
        START_MS + 1001,
        "the burst borrowed the next unit"
    );
    clock.set_ms(START_MS + 1001);
    let next = layout.decode(g.next_id().unwrap()).unwrap();
    assert_eq!(
        (next.timestamp_ms, next.sequence),
        (START_MS + 1001, last.sequence + 1)
    );
    g.close().unwrap();
}
