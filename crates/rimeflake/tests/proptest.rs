//! Property tests: compose/decode round-trip for random valid layouts, and random schedules of
//! clock readings (jumps back and forth, leap-second steps, stalls) that must never yield a
//! duplicate or a decrease, under each rollback policy, with and without
//! `random_sequence_start`.
//!
//! Cases per property: 48 by default (a debug `cargo test` stays fast); set `PROPTEST_CASES`
//! for more, e.g. `PROPTEST_CASES=2000 cargo test --release -p rimeflake --test proptest`.

use proptest::prelude::*;
use proptest::test_runner::Config;
use rimeflake::{
    Clock, ErrorKind, FieldOrder, Generator, Layout, ManualClock, Parts, RollbackPolicy,
};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

fn config() -> Config {
    scaled_config(1)
}

/// `factor` times the default case count (or `PROPTEST_CASES`).
fn scaled_config(factor: u32) -> Config {
    let cases: u32 = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(48);
    Config {
        cases: cases * factor,
        // Shrunk failures are printed; no regression files are written into the crate.
        failure_persistence: None,
        ..Config::default()
    }
}

fn system_now_ms() -> u64 {
    rimeflake::SystemClock.now_ms()
}

/// A valid layout: widths adding up to 63 (53 when JavaScript-safe), either field order, a
/// unit of 1 ms to 1 s, and an epoch in the past whose time field has at least a day left.
fn valid_layout() -> impl Strategy<Value = Layout> {
    (any::<bool>(), 0u8..=8, 28u8..=44)
        .prop_flat_map(|(js_safe, cid, time)| {
            let total: u8 = if js_safe { 53 } else { 63 };
            let room = total - cid - time; // at least 1, since 8 + 44 < 53
            (
                Just((js_safe, cid, time, total)),
                0..room, // worker bits; the sequence takes the rest (at least 1)
                prop_oneof![
                    Just(FieldOrder::SequenceBelowWorker),
                    Just(FieldOrder::SequenceAboveWorker)
                ],
                prop_oneof![Just(1u64), Just(2), Just(10), Just(100), Just(1000)],
                0.0f64..1.0,
            )
        })
        .prop_filter_map(
            "the time field must reach a day past now",
            |((js_safe, cid, time, total), worker, order, unit, frac)| {
                let now = system_now_ms();
                let span = (1u64 << time).saturating_mul(unit);
                let room = span.checked_sub(86_400_000)?.min(now);
                let epoch = now - (room as f64 * frac) as u64;
                Layout::builder()
                    .clock_id_bits(cid)
                    .time_bits(time)
                    .worker_bits(worker)
                    .sequence_bits(total - cid - time - worker)
                    .order(order)
                    .unit_ms(unit)
                    .epoch_ms(epoch)
                    .js_safe(js_safe)
                    .build()
                    .ok()
            },
        )
}

/// A layout and random parts that fit it (any time inside its time field).
fn layout_and_parts() -> impl Strategy<Value = (Layout, Parts)> {
    valid_layout().prop_flat_map(|l| {
        let parts = (
            0..=l.max_clock_id(),
            l.epoch_ms()..l.expires_at_ms(),
            0..=l.max_worker_id(),
            0..=l.max_sequence(),
        )
            .prop_map(|(clock_id, timestamp_ms, worker_id, sequence)| Parts {
                clock_id,
                timestamp_ms,
                datacenter_id: None,
                worker_id,
                sequence,
            });
        (Just(l), parts)
    })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn a_layout_spec_reads_back_to_the_same_layout(layout in valid_layout(), dc in 0u8..=16) {
        // With a datacenter part, too, where the worker field is wide enough.
        let layout = match dc <= layout.worker_bits() {
            true => Layout::from_spec(&format!("{},datacenter={dc}", layout.describe())).unwrap(),
            false => layout,
        };
        let spec = layout.describe();
        prop_assert_eq!(Layout::from_spec(&spec).unwrap(), layout.clone(), "{}", spec);
        prop_assert_eq!(Layout::from_spec(&spec).unwrap().name(), layout.name());
    }

    #[test]
    fn any_text_is_a_layout_or_a_config_error(text in "[a-z_=,0-9:TZ+. -]{0,80}") {
        // Never a panic, and never another kind of error.
        if let Err(e) = Layout::from_spec(&text) {
            prop_assert_eq!(e.kind(), ErrorKind::Config);
        }
    }

    #[test]
    fn specs_of_edge_values_are_layouts_that_decode_or_config_errors(
        items in proptest::collection::vec(
            (
                prop_oneof![
                    Just("clock_id"), Just("time"), Just("worker"), Just("sequence"),
                    Just("datacenter"), Just("unit_ms"), Just("epoch_ms"), Just("order"),
                ],
                prop_oneof![
                    Just("0".to_string()), Just("1".to_string()), Just("63".to_string()),
                    Just("64".to_string()), Just(u64::MAX.to_string()),
                    Just("18446744073709551616".to_string()), Just("sequence_first".to_string()),
                    (0u64..70).prop_map(|n| n.to_string()),
                ],
            ),
            0..9,
        ),
        id in any::<u64>(),
    ) {
        let spec: Vec<String> = items.iter().map(|(k, v)| format!("{k}={v}")).collect();
        match Layout::from_spec(&spec.join(",")) {
            // A layout of any epoch and unit decodes any ID without panicking.
            Ok(l) => {
                let _ = l.decode(id);
                let _ = l.summary();
                prop_assert_eq!(Layout::from_spec(&l.describe()).unwrap(), l);
            }
            Err(e) => prop_assert_eq!(e.kind(), ErrorKind::Config),
        }
    }

    #[test]
    fn compose_then_decode_round_trips((layout, parts) in layout_and_parts()) {
        let id = layout.compose(&parts).unwrap();
        prop_assert_eq!(id >> layout.total_bits(), 0, "sign bit or bits above the layout set");
        let back = layout.decode(id).unwrap();
        let unit = layout.unit_ms();
        // Time units are Unix-aligned, whatever the epoch (as sony/sonyflake and Baidu count).
        let rounded = parts.timestamp_ms / unit * unit;
        prop_assert_eq!(back, Parts { timestamp_ms: rounded, ..parts });
        prop_assert_eq!(layout.compose(&back).unwrap(), id);
        // Bits the layout cannot have set are an error, not garbage.
        prop_assert_eq!(
            layout.decode(id | 1 << 63).unwrap_err().kind(),
            ErrorKind::InvalidId
        );
    }

    #[test]
    fn ids_order_as_their_parts((layout, a) in layout_and_parts(), b in any::<(u64, u64, u64, u64)>()) {
        // A second ID of the same layout: the larger counter (clock-id, time, sequence) with the
        // same worker gives the larger ID.
        let b = Parts {
            clock_id: b.0 % (layout.max_clock_id() + 1),
            timestamp_ms: layout.epoch_ms() + b.1 % (layout.expires_at_ms() - layout.epoch_ms()),
            datacenter_id: None,
            worker_id: a.worker_id,
            sequence: b.3 % (layout.max_sequence() + 1),
        };
        let (ia, ib) = (layout.compose(&a).unwrap(), layout.compose(&b).unwrap());
        let (pa, pb) = (layout.decode(ia).unwrap(), layout.decode(ib).unwrap());
        let key = |p: &Parts| (p.clock_id, p.timestamp_ms, p.sequence);
        prop_assert_eq!(ia.cmp(&ib), key(&pa).cmp(&key(&pb)));
    }
}

const START: u64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z

/// One step of a schedule.
#[derive(Clone, Debug)]
enum Op {
    /// `next_id` this many times without moving the clock (a stall when it runs past a unit's
    /// sequence).
    Ids(u32),
    /// One `next_ids(k)`.
    Batch(usize),
    /// The clock moves forward, as time passing would.
    Advance(u64),
    /// The clock is stepped back (an NTP step; exactly 1000 ms is a leap second).
    Back(u64),
}

/// A step, with large jumps (an hour or more, beyond any `max_drift`) weighted `large`.
fn op(large: u32) -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (1u32..64).prop_map(Op::Ids),
        1 => (600u32..3000).prop_map(Op::Ids),
        2 => (1usize..3000).prop_map(Op::Batch),
        3 => (0u64..5).prop_map(Op::Advance),
        1 => (5u64..5_000).prop_map(Op::Advance),
        large => (3_600_000u64..10_800_000).prop_map(Op::Advance),
        2 => (1u64..5).prop_map(Op::Back),
        1 => Just(Op::Back(1000)),
        1 => (5u64..3_000).prop_map(Op::Back),
        large => (3_600_000u64..7_200_000).prop_map(Op::Back),
    ]
}

/// What the generator under test may do.
#[derive(Clone, Copy, Debug)]
struct Setup {
    policy: RollbackPolicy,
    strict: bool,
    /// `max_drift` in ms: 2 s (the default) or a few ms, so that leads and 1-s steps count as
    /// large too.
    drift_ms: u64,
    /// `random_sequence_start`: units entered after an idle spell start at an offset, also
    /// after each switch of clock-id.
    random_start: bool,
}

/// Runs `ops` and checks every ID returned: unique always; above the previous one unless a
/// clock-id was reused (BumpClock without `strict_monotonic`: the one allowed non-increase).
fn run(layout: Layout, setup: Setup, ops: &[Op]) -> Result<(), TestCaseError> {
    let clock = Arc::new(ManualClock::new(START));
    let g = Generator::builder()
        .layout(layout)
        .worker_id(3)
        .in_memory()
        .rollback_policy(setup.policy)
        .strict_monotonic(setup.strict)
        .max_drift(Duration::from_millis(setup.drift_ms))
        .random_sequence_start(setup.random_start)
        .max_wait(Duration::from_millis(20))
        .clock(clock.clone())
        .build()
        .unwrap();
    let mut seen = HashSet::new();
    let mut last = 0u64;
    let mut reuses = 0u64;
    let mut accept = |ids: &[u64], g: &Generator<Arc<ManualClock>>| -> Result<(), TestCaseError> {
        let now_reuses = g.stats().clock_id_reuses;
        let reused = now_reuses != reuses;
        prop_assert!(
            !reused || (setup.policy == RollbackPolicy::BumpClock && !setup.strict),
            "a clock-id reuse under {setup:?}"
        );
        reuses = now_reuses;
        for (j, &id) in ids.iter().enumerate() {
            prop_assert!(seen.insert(id), "duplicate ID {id}");
            // A reuse can only come before the first ID of this call.
            prop_assert!(
                id > last || (j == 0 && reused),
                "{id} after {last} under {setup:?}"
            );
            last = id;
        }
        Ok(())
    };
    let allowed =
        |kind: ErrorKind| matches!(kind, ErrorKind::ClockRollback | ErrorKind::Overloaded);
    for op in ops {
        match *op {
            Op::Ids(n) => {
                for _ in 0..n {
                    match g.next_id() {
                        Ok(id) => accept(&[id], &g)?,
                        Err(e) => prop_assert!(allowed(e.kind()), "{e}"),
                    }
                }
            }
            Op::Batch(k) => match g.next_ids(k) {
                Ok(ids) => {
                    prop_assert_eq!(ids.len(), k);
                    accept(&ids, &g)?
                }
                Err(e) => prop_assert!(allowed(e.kind()), "{e}"),
            },
            Op::Advance(ms) => clock.advance(Duration::from_millis(ms)),
            // Keep the clock within a day of the start: far from every epoch and field end.
            Op::Back(ms) => clock.set_ms((clock.now_ms() - ms).max(START - 86_400_000)),
        }
    }
    Ok(())
}

fn drift() -> impl Strategy<Value = u64> {
    prop_oneof![Just(2000u64), 3u64..40]
}

proptest! {
    // Four times the cases: a clock-id reuse needs a back-forward-back pattern of large jumps,
    // which about one case in twenty draws.
    #![proptest_config(scaled_config(4))]

    /// BumpClock on `default` (3 clock-id bits) and, more often, on a 1-bit layout that runs
    /// out of clock-ids quickly and reuses them, with and without `strict_monotonic`.
    #[test]
    fn bump_clock_schedules_never_repeat_or_decrease(
        one_bit in prop::bool::weighted(0.75),
        strict in any::<bool>(),
        drift_ms in drift(),
        random_start in any::<bool>(),
        ops in prop::collection::vec(op(5), 1..40),
    ) {
        let layout = if one_bit {
            Layout::builder().clock_id_bits(1).time_bits(43).build().unwrap()
        } else {
            Layout::default()
        };
        let setup = Setup { policy: RollbackPolicy::BumpClock, strict, drift_ms, random_start };
        run(layout, setup, &ops)?;
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn wait_schedules_on_twitter_never_repeat_or_decrease(
        drift_ms in drift(),
        random_start in any::<bool>(),
        ops in prop::collection::vec(op(2), 1..40),
    ) {
        let setup = Setup { policy: RollbackPolicy::Wait, strict: false, drift_ms, random_start };
        run(Layout::twitter(), setup, &ops)?;
    }

    #[test]
    fn error_schedules_on_twitter_never_repeat_or_decrease(
        drift_ms in drift(),
        random_start in any::<bool>(),
        ops in prop::collection::vec(op(2), 1..40),
    ) {
        let setup = Setup { policy: RollbackPolicy::Error, strict: false, drift_ms, random_start };
        run(Layout::twitter(), setup, &ops)?;
    }
}
