//! Unit tests of layouts: presets, compose/decode, validation.

use super::*;
use crate::clock::system_now_ms;
use crate::ErrorKind;

fn presets() -> Vec<Layout> {
    vec![
        Layout::default(),
        Layout::twitter(),
        Layout::discord(),
        Layout::sonyflake(),
        Layout::sonyflake_v2(),
        Layout::baidu(1_735_689_600_000).unwrap(), // 2025-01-01
        Layout::js_safe(),
    ]
}

#[test]
fn presets_add_up_and_are_valid_now() {
    for l in presets() {
        let want = if l.is_js_safe() { 53 } else { 63 };
        assert_eq!(l.total_bits(), want, "{}", l.name());
        l.check_epoch(system_now_ms()).unwrap();
    }
}

#[test]
fn compose_decode_round_trip_on_every_preset() {
    for l in presets() {
        let parts = Parts {
            clock_id: l.max_clock_id(),
            timestamp_ms: l.epoch_ms() + 12_345 * l.unit_ms(),
            datacenter_id: (l.datacenter_bits() > 0).then(|| mask(l.datacenter_bits())),
            worker_id: mask(l.worker_bits() - l.datacenter_bits()),
            sequence: l.max_sequence(),
        };
        let id = l.compose(&parts).unwrap();
        assert_eq!(l.decode(id).unwrap(), parts, "{}", l.name());
        assert_eq!(id >> l.total_bits(), 0);
    }
}

#[test]
fn sonyflake_puts_the_sequence_above_the_worker() {
    let l = Layout::sonyflake();
    let parts = Parts {
        clock_id: 0,
        timestamp_ms: l.epoch_ms() + 10,
        datacenter_id: None,
        worker_id: 1,
        sequence: 1,
    };
    let id = l.compose(&parts).unwrap();
    assert_eq!(id, (1 << 24) | (1 << 16) | 1);
}

#[test]
fn twitter_matches_the_classic_bit_positions() {
    let l = Layout::twitter();
    let parts = Parts {
        clock_id: 0,
        timestamp_ms: EPOCH_TWITTER + 1,
        datacenter_id: None,
        worker_id: 1,
        sequence: 1,
    };
    assert_eq!(l.compose(&parts).unwrap(), (1 << 22) | (1 << 12) | 1);
}

#[test]
fn invalid_ids_are_errors() {
    let e = Layout::default().decode(1 << 63).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidId);
    assert!(e.message().contains("sign bit"), "{e}");
    let e = Layout::js_safe().decode(1 << 53).unwrap_err();
    assert!(e.message().contains("above the layout's 53"), "{e}");
}

#[test]
fn validation_names_the_field() {
    let e = Layout::builder().worker_bits(11).build().unwrap_err();
    assert!(e.message().contains("must add up to 63"), "{e}");
    let e = Layout::builder()
        .clock_id_bits(9)
        .time_bits(35)
        .build()
        .unwrap_err();
    assert!(e.message().starts_with("clock_id_bits"), "{e}");
    let e = Layout::builder().unit_ms(0).build().unwrap_err();
    assert!(e.message().starts_with("unit_ms"), "{e}");
    let e = Layout::builder().datacenter_bits(11).build().unwrap_err();
    assert!(e.message().starts_with("datacenter_bits"), "{e}");
    assert!(Layout::preset("nope")
        .unwrap_err()
        .message()
        .contains("unknown preset"));
}

#[test]
fn compose_refuses_parts_that_do_not_fit() {
    let l = Layout::twitter();
    let ok = Parts {
        clock_id: 0,
        timestamp_ms: EPOCH_TWITTER,
        datacenter_id: None,
        worker_id: 0,
        sequence: 0,
    };
    let e = l
        .compose(&Parts {
            worker_id: 1024,
            ..ok
        })
        .unwrap_err();
    assert!(e.message().starts_with("worker_id"), "{e}");
    let e = l
        .compose(&Parts {
            timestamp_ms: EPOCH_TWITTER - 1,
            ..ok
        })
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TimeRange);
    let e = l
        .compose(&Parts {
            timestamp_ms: l.expires_at_ms(),
            ..ok
        })
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TimeRange);
    assert!(l
        .compose(&Parts {
            timestamp_ms: l.expires_at_ms() - 1,
            ..ok
        })
        .is_ok());
}

#[test]
fn baidu_default_epoch_expired_in_november_2024() {
    let l = Layout::trusted(
        "baidu",
        [0, 28, 22, 13],
        FieldOrder::SequenceBelowWorker,
        1000,
        1_463_673_600_000,
    );
    // 2024-11-20T13:24:16Z: 2^28 s after 2016-05-19T16:00:00Z.
    assert_eq!(l.expires_at_ms(), 1_732_109_056_000);
}

#[test]
fn fingerprint_tracks_fields_not_names() {
    let custom = Layout::builder().build().unwrap();
    assert_eq!(custom.fingerprint(), Layout::default().fingerprint());
    assert_ne!(
        Layout::twitter().fingerprint(),
        Layout::default().fingerprint()
    );
}

#[test]
fn layouts_check_arithmetic_only_generators_check_the_epoch() {
    let now = system_now_ms();
    // An epoch in the future, and one whose time field ran out (20 time bits of 1 ms from 2024
    // ran out after 17 minutes), still make layouts that decode.
    let future = Layout::builder().epoch_ms(now + 3_600_000).build().unwrap();
    let e = future.check_epoch(now).unwrap_err();
    assert!(e.message().contains("future"), "{e}");
    let spent = Layout::builder()
        .time_bits(20)
        .worker_bits(31)
        .build()
        .unwrap();
    let e = spent.check_epoch(now).unwrap_err();
    assert!(e.message().contains("ran out"), "{e}");
    let baidu = Layout::preset("baidu").unwrap();
    assert_eq!(baidu.epoch_ms(), EPOCH_BAIDU);
    assert!(baidu
        .check_epoch(now)
        .unwrap_err()
        .message()
        .contains("ran out"));
    assert_eq!(Layout::baidu(EPOCH_BAIDU).unwrap(), baidu);
}

#[test]
fn baidu_ids_of_its_own_2016_epoch_decode() {
    // An ID as Baidu's DefaultUidGenerator makes it: seconds since 2016-05-20 (Beijing) << 35 |
    // worker << 13 | sequence. 2020-01-01T00:00:00Z is 1577836800 s; the epoch is 1463673600 s.
    let l = Layout::preset("baidu").unwrap();
    let delta = 1_577_836_800 - 1_463_673_600u64;
    let id = delta << 35 | 123_456 << 13 | 42;
    let p = l.decode(id).unwrap();
    assert_eq!(
        (p.timestamp_ms, p.worker_id, p.sequence),
        (1_577_836_800_000, 123_456, 42)
    );
}

#[test]
fn time_units_are_unix_aligned() {
    // An epoch 7 ms into a 10 ms unit: the time field counts whole Unix-aligned units, so the
    // unit holding the epoch is unit 0 and 1_000_000_003 ms is in unit (100_000_000 - 10).
    let l = Layout::builder()
        .clock_id_bits(0)
        .time_bits(39)
        .worker_bits(16)
        .sequence_bits(8)
        .unit_ms(10)
        .epoch_ms(1_000_000_007 - 100)
        .build()
        .unwrap();
    assert_eq!(l.unit_start_of_epoch_ms(), 999_999_900);
    assert_eq!(l.time_of(1_000_000_003).unwrap(), 10);
    assert_eq!(l.time_of(999_999_900).unwrap(), 0); // before the epoch, inside its unit
    assert!(l.time_of(999_999_899).is_err());
    let id = l
        .compose(&Parts {
            clock_id: 0,
            timestamp_ms: 1_000_000_003,
            datacenter_id: None,
            worker_id: 1,
            sequence: 2,
        })
        .unwrap();
    assert_eq!(l.decode(id).unwrap().timestamp_ms, 1_000_000_000);
    assert_eq!(l.expires_at_ms(), 999_999_900 + (1u64 << 39) * 10);
}

#[test]
fn twitter_shows_a_datacenter_part() {
    let l = Layout::twitter();
    assert_eq!(l.datacenter_bits(), 5);
    // Worker field 0b00011_00101: datacenter 3, worker 5.
    let id = (1u64 << 22) | (3 << 17) | (5 << 12) | 9;
    let p = l.decode(id).unwrap();
    assert_eq!((p.datacenter_id, p.worker_id, p.sequence), (Some(3), 5, 9));
    assert_eq!(l.compose(&p).unwrap(), id);
    // Without a datacenter part, worker_id is the whole field.
    let whole = Parts {
        datacenter_id: None,
        worker_id: 3 << 5 | 5,
        ..p
    };
    assert_eq!(l.compose(&whole).unwrap(), id);
    let e = l.compose(&Parts { worker_id: 32, ..p }).unwrap_err();
    assert!(e.message().starts_with("worker_id"), "{e}");
    let e = l
        .compose(&Parts {
            datacenter_id: Some(32),
            ..p
        })
        .unwrap_err();
    assert!(e.message().starts_with("datacenter_id"), "{e}");
    let e = Layout::default()
        .compose(&Parts {
            datacenter_id: Some(0),
            timestamp_ms: EPOCH_2024,
            ..p
        })
        .unwrap_err();
    assert!(e.message().starts_with("datacenter_id"), "{e}");
    assert_eq!(Layout::default().decode(id).unwrap().datacenter_id, None);
}

#[test]
fn specs_round_trip_and_presets_keep_their_names() {
    for l in presets()
        .into_iter()
        .chain([Layout::preset("baidu").unwrap()])
    {
        let spec = l.describe();
        let back = Layout::from_spec(&spec).unwrap();
        assert_eq!(back, l, "{spec}");
        assert_eq!(back.name(), l.name(), "{spec}");
        assert_eq!(Layout::from_spec(l.name()).map(|p| p.name()), Ok(l.name()));
    }
    assert_eq!(
        Layout::default().describe(),
        "clock_id=3,time=41,worker=10,sequence=9,unit_ms=1,epoch_ms=1704067200000,order=worker_first"
    );
    assert_eq!(
        Layout::twitter().describe(),
        "clock_id=0,time=41,worker=10,sequence=12,datacenter=5,unit_ms=1,epoch_ms=1288834974657,order=worker_first"
    );
    // Discord's fields, written out, are the `discord` preset; without the datacenter split
    // they make the same IDs, read with one 10-bit worker field: another layout, of the same
    // fingerprint.
    let discord = Layout::from_spec(
        "clock_id=0,time=41,worker=10,sequence=12,datacenter=5,epoch_ms=1420070400000",
    )
    .unwrap();
    assert_eq!(discord, Layout::discord());
    assert_eq!(discord.name(), "discord");
    let whole =
        Layout::from_spec("clock_id=0,time=41,worker=10,sequence=12,epoch_ms=1420070400000")
            .unwrap();
    assert_eq!(whole.name(), "custom");
    assert_eq!(whole.fingerprint(), discord.fingerprint());
    assert_eq!(Layout::from_spec(&whole.describe()).unwrap(), whole);
    let custom = Layout::from_spec(
        "time=39, worker=16, sequence=8, unit_ms=10, epoch=2020-01-01T00:00:00Z, order=sequence_first, datacenter=4",
    )
    .unwrap();
    assert_eq!(custom.epoch_ms(), 1_577_836_800_000);
    assert_eq!(custom.order(), FieldOrder::SequenceAboveWorker);
    assert_eq!(Layout::from_spec(&custom.describe()).unwrap(), custom);
    // A preset's fields, written out, are that preset; a preset with changed fields is not.
    let sony = Layout::from_spec(
        "time=39,worker=16,sequence=8,unit_ms=10,epoch=2025-01-01T00:00:00Z,order=sequence_first",
    )
    .unwrap();
    assert_eq!(sony.name(), "sonyflake_v2");
    let baidu = Layout::from_spec("baidu,epoch=2016-05-20T00:00:00+08:00").unwrap();
    assert_eq!(baidu, Layout::preset("baidu").unwrap());
    assert_eq!(
        Layout::from_spec("twitter,epoch_ms=0").unwrap().name(),
        "custom"
    );
    // 53 bits in all: JavaScript-safe.
    let js = Layout::from_spec("time=41,worker=3,sequence=9,epoch_ms=1704067200000").unwrap();
    assert_eq!(js, Layout::js_safe());
}

#[test]
fn spec_errors_name_the_key_and_why() {
    let err = |spec: &str, needle: &str| {
        let e = Layout::from_spec(spec).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Config, "{spec}");
        assert!(
            e.message().contains(needle),
            "{spec}: {needle:?} not in {e}"
        );
    };
    let ok = "time=41,worker=10,sequence=12,epoch_ms=1420070400000";
    assert!(Layout::from_spec(ok).is_ok());
    err("", "empty");
    err("twiter", "unknown preset");
    err(
        &format!("{ok},wroker=3"),
        "unknown key \"wroker\"; did you mean \"worker\"? the keys are",
    );
    err(&format!("{ok},time=41"), "time is given twice");
    err("time=41,worker=10,epoch_ms=0", "missing sequence");
    err("time=41,worker=10,sequence=12", "missing epoch_ms");
    err(&format!("{ok},epoch=2020-01-01"), "not both");
    err(
        "time=41,worker=10,sequence=11,epoch_ms=0",
        "must add up to 63",
    );
    err("time=41,worker=10,sequence=x,epoch_ms=0", "sequence=\"x\"");
    err("time=41,worker=-1,sequence=12,epoch_ms=0", "worker=\"-1\"");
    err(
        "time=41,worker=64,sequence=12,epoch_ms=0",
        "worker=64 is not a bit width",
    );
    err(
        "time=41,worker=10,sequence=12,epoch=2020-13-01T00:00Z",
        "epoch",
    );
    err(
        "time=41,worker=10,sequence=12,epoch=2020-01-01T00:00",
        "time zone",
    );
    err(&format!("{ok},order=up"), "order");
    err(&format!("{ok},datacenter=11"), "datacenter_bits: 11");
    err(&format!("{ok},unit_ms=0"), "unit_ms");
    err(&format!("{ok},twitter"), "key=value");
    err("time", "unknown preset");
}

#[test]
fn a_wrong_case_or_misspelt_preset_gets_the_nearest() {
    for (typed, meant) in [
        ("Twitter", "twitter"),
        ("TWITTER", "twitter"),
        ("twiter", "twitter"),
        ("sonyflake-V2", "sonyflake_v2"),
        ("jssafe", "js_safe"),
    ] {
        let e = Layout::from_spec(typed).unwrap_err();
        assert!(
            e.message().starts_with(&format!(
                "layout: unknown preset {typed:?}; did you mean {meant:?}? the presets are"
            )),
            "{e}"
        );
    }
    let far = Layout::preset("snowflake-ish").unwrap_err();
    assert!(!far.message().contains("did you mean"), "{far}");
}

#[test]
fn every_preset_of_the_list_is_its_layout() {
    for p in Layout::PRESET_LIST {
        assert_eq!(Layout::preset(p.name).unwrap(), p.layout());
        assert_eq!(p.layout().name(), p.name);
        for alias in p.aliases {
            assert_eq!(Layout::preset(alias).unwrap(), p.layout());
        }
    }
    assert_eq!(Layout::PRESETS.len(), Layout::PRESET_LIST.len());
}

#[test]
fn default_namespaces() {
    assert_eq!(Layout::default().default_namespace(), "default");
    assert_eq!(Layout::twitter().default_namespace(), "twitter");
    let a = Layout::from_spec("baidu,epoch_ms=1735689600000").unwrap();
    let b = Layout::from_spec("baidu,epoch_ms=1735689601000").unwrap();
    assert_ne!(a.default_namespace(), b.default_namespace());
    let c = Layout::from_spec("time=41,worker=10,sequence=12,epoch_ms=1420070400000").unwrap();
    assert_eq!(
        c.default_namespace(),
        format!("custom-{:016x}", c.fingerprint())
    );
}
