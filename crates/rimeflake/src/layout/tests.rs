//! Unit tests of layouts: presets, compose/decode, validation.

use super::*;
use crate::ErrorKind;

fn presets() -> Vec<Layout> {
    vec![
        Layout::default(),
        Layout::twitter(),
        Layout::sonyflake(),
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
            worker_id: l.max_worker_id(),
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
    assert!(e.message().contains("must be 63"), "{e}");
    let e = Layout::builder()
        .clock_id_bits(9)
        .time_bits(35)
        .build()
        .unwrap_err();
    assert!(e.message().starts_with("clock_id_bits"), "{e}");
    let e = Layout::builder().unit_ms(0).build().unwrap_err();
    assert!(e.message().starts_with("unit_ms"), "{e}");
    let e = Layout::builder()
        .epoch_ms(system_now_ms() + 3_600_000)
        .build()
        .unwrap_err();
    assert!(e.message().contains("future"), "{e}");
    // 20 time bits of 1 ms from 2024 ran out after 17 minutes.
    let e = Layout::builder()
        .time_bits(20)
        .worker_bits(31)
        .build()
        .unwrap_err();
    assert!(e.message().contains("ran out"), "{e}");
    let e = Layout::baidu(1_463_673_600_000).unwrap_err();
    assert!(e.message().contains("ran out"), "{e}");
    assert_eq!(
        Layout::preset("baidu").unwrap_err().kind(),
        ErrorKind::Config
    );
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
