//! The shared test vectors, `testdata/vectors.json`, checked against the core.
//!
//! Every language's tests read the same file; this one is the Rust side. Two tests:
//! - `every_vector_holds_in_the_core`: compose, decode, format, parse and every listed error.
//! - `the_file_is_what_the_generator_writes`: the file equals what [`generate`] makes, so a
//!   change to the cases is made here and written with
//!   `RIMEFLAKE_WRITE_VECTORS=1 cargo test -p rimeflake --test vectors`.
//!
//! [`generate`] works IDs and encodings out with its own arithmetic (shifts and divisions), not
//! with the core's `compose` or `format`, so the file is a second opinion, not an echo.

use rimeflake::{format, parse, Encoding, ErrorKind, FieldOrder, Layout, Parts};
use serde_json::{json, Value};
use std::path::PathBuf;

/// 2025-01-01T00:00:00Z: the epoch given to the `baidu` preset (its own default ran out in 2024).
const BAIDU_EPOCH_MS: u64 = 1_735_689_600_000;
/// 2026-01-01T00:00:00Z: an ordinary instant inside every preset's range.
const Y2026_MS: u64 = 1_767_225_600_000;

const ENCODINGS: [(&str, Encoding); 4] = [
    ("dec", Encoding::Decimal),
    ("hex", Encoding::Hex),
    ("base62", Encoding::Base62),
    ("base32", Encoding::Base32),
];

fn vectors_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/vectors.json")
}

fn read_vectors() -> Value {
    let path = vectors_path();
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).expect("vectors.json is valid JSON")
}

// ----------------------------------------------------------------------------------------------
// Reading the file and checking it against the core.

/// A 64-bit number, written as a decimal string.
fn num(v: &Value) -> u64 {
    v.as_str()
        .unwrap_or_else(|| panic!("{v} must be a decimal string"))
        .parse()
        .unwrap_or_else(|e| panic!("{v}: {e}"))
}

fn small(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("{v} must be a number"))
}

fn parts_of(v: &Value) -> Parts {
    Parts {
        clock_id: num(&v["clock_id"]),
        timestamp_ms: num(&v["timestamp_ms"]),
        datacenter_id: v.get("datacenter_id").map(num),
        worker_id: num(&v["worker_id"]),
        sequence: num(&v["sequence"]),
    }
}

fn layout_of(v: &Value) -> Layout {
    let preset = v["preset"].as_str().unwrap();
    match preset {
        "baidu" => Layout::baidu(num(&v["epoch_ms"])).unwrap(),
        name => Layout::preset(name).unwrap(),
    }
}

fn kind_named(name: &str) -> ErrorKind {
    *ErrorKind::ALL
        .iter()
        .find(|k| k.name() == name)
        .unwrap_or_else(|| panic!("no error kind is named {name}"))
}

fn encoding_named(name: &str) -> Encoding {
    ENCODINGS.iter().find(|(n, _)| *n == name).unwrap().1
}

#[test]
fn every_vector_holds_in_the_core() {
    // While the file is being rewritten, check what is being written.
    let v = match std::env::var_os("RIMEFLAKE_WRITE_VECTORS") {
        Some(_) => generate(),
        None => read_vectors(),
    };
    let layouts = v["layouts"].as_array().unwrap();
    let presets: Vec<&str> = layouts
        .iter()
        .map(|l| l["preset"].as_str().unwrap())
        .collect();
    assert_eq!(presets, Layout::PRESETS, "one entry per preset, in order");

    for lv in layouts {
        let layout = layout_of(lv);
        let name = layout.name();
        let f = &lv["fields"];
        assert_eq!(
            small(&f["clock_id_bits"]),
            layout.clock_id_bits() as u64,
            "{name}"
        );
        assert_eq!(small(&f["time_bits"]), layout.time_bits() as u64, "{name}");
        assert_eq!(
            small(&f["worker_bits"]),
            layout.worker_bits() as u64,
            "{name}"
        );
        assert_eq!(
            small(&f["sequence_bits"]),
            layout.sequence_bits() as u64,
            "{name}"
        );
        assert_eq!(
            small(&f["total_bits"]),
            layout.total_bits() as u64,
            "{name}"
        );
        assert_eq!(small(&f["unit_ms"]), layout.unit_ms(), "{name}");
        assert_eq!(
            small(&f["datacenter_bits"]),
            layout.datacenter_bits() as u64,
            "{name}"
        );
        assert_eq!(lv["spec"], layout.describe(), "{name}");
        assert_eq!(
            Layout::from_spec(lv["spec"].as_str().unwrap()).unwrap(),
            layout,
            "{name}"
        );
        assert_eq!(
            f["js_safe"].as_bool().unwrap(),
            layout.is_js_safe(),
            "{name}"
        );
        let order = match layout.order() {
            FieldOrder::SequenceBelowWorker => "sequence_below_worker",
            FieldOrder::SequenceAboveWorker => "sequence_above_worker",
        };
        assert_eq!(f["order"], order, "{name}");
        assert_eq!(num(&lv["epoch_ms"]), layout.epoch_ms(), "{name}");
        assert_eq!(num(&lv["expires_at_ms"]), layout.expires_at_ms(), "{name}");
        assert_eq!(num(&lv["fingerprint"]), layout.fingerprint(), "{name}");
        let m = &lv["max"];
        assert_eq!(num(&m["clock_id"]), layout.max_clock_id(), "{name}");
        assert_eq!(num(&m["time"]), layout.max_time(), "{name}");
        assert_eq!(num(&m["worker_id"]), layout.max_worker_id(), "{name}");
        assert_eq!(num(&m["sequence"]), layout.max_sequence(), "{name}");

        for case in lv["cases"].as_array().unwrap() {
            let what = format!("{name}: {}", case["name"]);
            let parts = parts_of(&case["parts"]);
            let id = num(&case["id"]);
            assert_eq!(layout.compose(&parts).unwrap(), id, "compose, {what}");
            assert_eq!(layout.decode(id).unwrap(), parts, "decode, {what}");
            for (enc_name, enc) in ENCODINGS {
                let text = case["encodings"][enc_name].as_str().unwrap();
                assert_eq!(format(id, enc), text, "format {enc_name}, {what}");
                assert_eq!(parse(text, enc).unwrap(), id, "parse {enc_name}, {what}");
            }
        }
        for case in lv["invalid_ids"].as_array().unwrap() {
            let e = layout.decode(num(&case["id"])).unwrap_err();
            assert_eq!(e.kind().name(), case["error"], "{name}: {case}: {e}");
        }
        for case in lv["invalid_parts"].as_array().unwrap() {
            let e = layout.compose(&parts_of(&case["parts"])).unwrap_err();
            assert_eq!(e.kind().name(), case["error"], "{name}: {case}: {e}");
        }
    }

    for case in v["invalid_layouts"].as_array().unwrap() {
        let preset = case["preset"].as_str().unwrap();
        let made = match (preset, case["epoch_ms"].as_str()) {
            ("baidu", Some(epoch)) => Layout::baidu(epoch.parse().unwrap()),
            (name, _) => Layout::preset(name),
        };
        let e = made.unwrap_err();
        assert_eq!(e.kind().name(), case["error"], "{case}: {e}");
    }
    for case in v["layout_specs"].as_array().unwrap() {
        let spec = case["spec"].as_str().unwrap();
        match Layout::from_spec(spec) {
            Ok(l) => {
                assert_eq!(l.describe(), case["describe"], "{case}");
                assert_eq!(l.name(), case["name"], "{case}");
            }
            Err(e) => assert_eq!(e.kind().name(), case["error"], "{case}: {e}"),
        }
    }

    let enc = &v["encodings"];
    let mut previous: Option<(u64, Vec<String>)> = None;
    for case in enc["round_trip"].as_array().unwrap() {
        let id = num(&case["id"]);
        let texts: Vec<String> = ENCODINGS
            .iter()
            .map(|(n, e)| {
                let text = case[*n].as_str().unwrap();
                assert_eq!(format(id, *e), text, "{n} of {id}");
                assert_eq!(parse(text, *e).unwrap(), id, "{n} of {id}");
                text.to_string()
            })
            .collect();
        // The fixed-width forms sort as the numbers do: the cases are listed in increasing order.
        if let Some((prev_id, prev_texts)) = &previous {
            assert!(*prev_id < id, "round_trip cases must increase");
            for i in 1..ENCODINGS.len() {
                assert!(prev_texts[i] < texts[i], "{} order at {id}", ENCODINGS[i].0);
            }
        }
        previous = Some((id, texts));
    }
    for case in enc["aliases"].as_array().unwrap() {
        let e = encoding_named(case["encoding"].as_str().unwrap());
        let text = case["text"].as_str().unwrap();
        assert_eq!(parse(text, e).unwrap(), num(&case["id"]), "{case}");
    }
    for case in enc["invalid"].as_array().unwrap() {
        let e = encoding_named(case["encoding"].as_str().unwrap());
        let err = parse(case["text"].as_str().unwrap(), e).unwrap_err();
        assert_eq!(
            err.kind(),
            kind_named(case["error"].as_str().unwrap()),
            "{case}: {err}"
        );
    }
}

#[test]
fn the_file_is_what_the_generator_writes() {
    let generated = generate();
    if std::env::var_os("RIMEFLAKE_WRITE_VECTORS").is_some() {
        let text = serde_json::to_string_pretty(&generated).unwrap() + "\n";
        // Written whole and renamed, so the other test never reads half a file.
        let tmp = vectors_path().with_extension("json.tmp");
        std::fs::write(&tmp, text).unwrap();
        std::fs::rename(&tmp, vectors_path()).unwrap();
    }
    assert!(
        read_vectors() == generated,
        "testdata/vectors.json is stale: regenerate it with \
         RIMEFLAKE_WRITE_VECTORS=1 cargo test -p rimeflake --test vectors"
    );
}

// ----------------------------------------------------------------------------------------------
// Making the file: the cases and their expected values, by independent arithmetic.

const SCHEMA: &str = "Shared test vectors of rimeflake, read by the Rust, Python, Node and C tests. \
Made by crates/rimeflake/tests/vectors.rs (RIMEFLAKE_WRITE_VECTORS=1 cargo test -p rimeflake --test vectors); \
do not edit by hand. Every 64-bit quantity (ids, parts, epochs, maxima, expiry, fingerprint) is a decimal \
STRING, because JavaScript's JSON.parse rounds numbers above 2^53; only bit widths, unit_ms and \
total_bits are JSON numbers. layouts[]: one per preset, in Layout::PRESETS order; build it with \
preset(name), except baidu: Layout::baidu(epoch_ms); spec: Layout::describe(), which \
Layout::from_spec reads back to the same layout. fields: widths, order (sequence_below_worker | \
sequence_above_worker), unit_ms, js_safe, total_bits, datacenter_bits (how many upper worker bits are a \
datacenter part; where it is not 0, parts carry datacenter_id and worker_id is the part below it). \
Time units are Unix-aligned: time field = floor(ms / unit_ms) - floor(epoch_ms / unit_ms). max: largest clock_id, time field value, worker_id, \
sequence. expires_at_ms: first Unix ms no ID can carry. fingerprint: Layout::fingerprint(). cases[]: \
compose(parts) == id and decode(id) == parts, and encodings.{dec,hex,base62,base32} == format(id, enc) \
and parse back to id (twitter's and discord's include an ID their users published, with the parts \
their documentation gives). invalid_ids[]: decode(id) fails with error kind `error` (ErrorKind::name()). \
invalid_parts[]: compose(parts) fails with `error`. invalid_layouts[]: preset(name) (or \
Layout::baidu(epoch_ms) when epoch_ms is a string) fails with `error`. layout_specs[]: \
Layout::from_spec(spec) gives a layout named `name` whose describe() is `describe`, or fails with `error`. encodings.round_trip[]: ids (increasing) and \
their four forms (the fixed-width forms sort like the numbers); encodings.aliases[]: other \
spellings that parse to id; encodings.invalid[]: strings that parse must refuse with `error`.";

fn s(n: u64) -> Value {
    Value::String(n.to_string())
}

/// `p` as the file writes it; `p.worker_id` is the whole worker field, split here into a
/// datacenter part and a worker part where the layout has one.
fn parts_json(l: &Layout, p: &Parts) -> Value {
    let mut v = json!({
        "clock_id": s(p.clock_id),
        "timestamp_ms": s(p.timestamp_ms),
        "worker_id": s(p.worker_id),
        "sequence": s(p.sequence),
    });
    let d = l.datacenter_bits();
    if d > 0 {
        let below = l.worker_bits() - d;
        v["datacenter_id"] = s(p.worker_id >> below);
        v["worker_id"] = s(p.worker_id & ones(below));
    }
    v
}

/// `digits` of `alphabet`, zero-padded to `width`: the fixed-width forms, worked out here.
fn fixed(mut n: u64, alphabet: &[u8], width: usize) -> String {
    let base = alphabet.len() as u64;
    let mut out = vec![alphabet[0]; width];
    for slot in out.iter_mut().rev() {
        *slot = alphabet[(n % base) as usize];
        n /= base;
    }
    String::from_utf8(out).unwrap()
}

const BASE62: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const CROCKFORD: &[u8] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

fn encodings_json(id: u64) -> Value {
    json!({
        "dec": id.to_string(),
        "hex": format!("{id:016x}"),
        "base62": fixed(id, BASE62, 11),
        "base32": fixed(id, CROCKFORD, 13),
    })
}

fn ones(bits: u8) -> u64 {
    (1u64 << bits) - 1
}

/// The ID of `p`, by shifting each field into its place (not with the core's `compose`).
fn id_by_hand(l: &Layout, p: &Parts) -> u64 {
    let (t, w, q) = (
        l.time_bits() as u32,
        l.worker_bits() as u32,
        l.sequence_bits() as u32,
    );
    // Unix-aligned units, as sony/sonyflake and Baidu count them.
    let time = p.timestamp_ms / l.unit_ms() - l.epoch_ms() / l.unit_ms();
    let low = match l.order() {
        // clock_id | time | worker | sequence
        FieldOrder::SequenceBelowWorker => (p.worker_id << q) | p.sequence,
        // clock_id | time | sequence | worker
        FieldOrder::SequenceAboveWorker => (p.sequence << w) | p.worker_id,
    };
    (p.clock_id << (t + w + q)) | (time << (w + q)) | low
}

fn layout_json(l: &Layout) -> Value {
    let unit = l.unit_ms();
    let (max_c, max_w, max_q) = (
        ones(l.clock_id_bits()),
        ones(l.worker_bits()),
        ones(l.sequence_bits()),
    );
    let max_t = ones(l.time_bits());
    let at = |units: u64| (l.epoch_ms() / unit + units) * unit;
    let last = at(max_t); // the start of the last time unit
    let expires = at(max_t + 1);
    let y2026 = at(Y2026_MS.max(l.epoch_ms()) / unit - l.epoch_ms() / unit);
    let p = |clock_id, timestamp_ms, worker_id, sequence| Parts {
        clock_id,
        timestamp_ms,
        datacenter_id: None,
        worker_id,
        sequence,
    };
    let mut cases = vec![
        ("zero: the epoch, every field 0", p(0, at(0), 0, 0)),
        (
            "one unit after the epoch, worker 1, sequence 1",
            p(0, at(1), 1, 1),
        ),
        (
            "2026-01-01, worker 7, sequence 3",
            p(0, y2026, 7.min(max_w), 3),
        ),
        ("max sequence only", p(0, at(0), 0, max_q)),
        ("max worker_id only", p(0, at(0), max_w, 0)),
        (
            "max time only: the last unit before expiry",
            p(0, last, 0, 0),
        ),
        ("max of every field", p(max_c, last, max_w, max_q)),
    ];
    // IDs their users published, with the parts their documentation gives (the whole worker
    // field here; the file splits it into datacenter and worker).
    let published: Option<(&str, u64, Parts)> = match l.name() {
        "discord" => Some((
            "Discord's documentation's example (discord.com/developers/docs/reference#snowflakes): \
             2016-04-30T11:18:25.796Z, internal worker 1, process 0, increment 7",
            175_928_847_299_117_063,
            p(0, 1_462_015_105_796, 1 << 5, 7),
        )),
        "twitter" => Some((
            "a Tweet of Twitter's API v2 documentation (developer.twitter.com/en/docs/twitter-api/\
             data-dictionary/object-model/tweet), created_at 2019-12-31T19:26:16.000Z",
            1_212_092_628_029_698_048,
            p(0, 1_577_820_376_771, 327, 0),
        )),
        _ => None,
    };
    if let Some((name, id, parts)) = published {
        assert_eq!(id_by_hand(l, &parts), id, "{name}");
        cases.push((name, parts));
    }
    if max_c > 0 {
        cases.push(("max clock_id only", p(max_c, at(0), 0, 0)));
        cases.push(("clock_id 1 at 2026-01-01", p(1, y2026, 5, 9)));
    }
    let cases: Vec<Value> = cases
        .iter()
        .map(|(name, parts)| {
            let id = id_by_hand(l, parts);
            json!({
                "name": name,
                "parts": parts_json(l, parts),
                "id": s(id),
                "encodings": encodings_json(id),
            })
        })
        .collect();

    let total = l.total_bits();
    let mut invalid_ids = vec![
        json!({"id": s(1 << 63), "error": "INVALID_ID", "why": "sign bit set"}),
        json!({"id": s(u64::MAX), "error": "INVALID_ID", "why": "every bit set, the sign bit too"}),
    ];
    if total < 63 {
        invalid_ids.push(json!({"id": s(1 << total), "error": "INVALID_ID",
            "why": format!("bit {total} set: above the layout's {total} bits")}));
        invalid_ids.push(json!({"id": s((1 << 63) - 1), "error": "INVALID_ID",
            "why": format!("all 63 low bits set: above the layout's {total} bits")}));
    }
    let mut invalid_parts = vec![
        json!({"parts": parts_json(l, &p(0, at(0), max_w + 1, 0)), "error": "CONFIG",
               "why": "worker_id one above its max"}),
        json!({"parts": parts_json(l, &p(0, at(0), 0, max_q + 1)), "error": "CONFIG",
               "why": "sequence one above its max"}),
        json!({"parts": parts_json(l, &p(max_c + 1, at(0), 0, 0)), "error": "CONFIG",
               "why": "clock_id one above its max"}),
        json!({"parts": parts_json(l, &p(0, at(0) - 1, 0, 0)), "error": "TIME_RANGE",
               "why": "1 ms before the epoch's time unit"}),
        json!({"parts": parts_json(l, &p(0, expires, 0, 0)), "error": "TIME_RANGE",
               "why": "the expiry: past the last time unit"}),
    ];
    invalid_parts.sort_by_key(|v| v["error"].as_str().unwrap().to_string());
    let order = match l.order() {
        FieldOrder::SequenceBelowWorker => "sequence_below_worker",
        FieldOrder::SequenceAboveWorker => "sequence_above_worker",
    };
    json!({
        "preset": l.name(),
        "spec": l.describe(),
        "epoch_ms": s(l.epoch_ms()),
        "fields": {
            "clock_id_bits": l.clock_id_bits(),
            "time_bits": l.time_bits(),
            "worker_bits": l.worker_bits(),
            "sequence_bits": l.sequence_bits(),
            "order": order,
            "unit_ms": unit,
            "js_safe": l.is_js_safe(),
            "total_bits": total,
            "datacenter_bits": l.datacenter_bits(),
        },
        "max": {"clock_id": s(max_c), "time": s(max_t), "worker_id": s(max_w), "sequence": s(max_q)},
        "expires_at_ms": s(expires),
        "fingerprint": s(l.fingerprint()),
        "cases": cases,
        "invalid_ids": invalid_ids,
        "invalid_parts": invalid_parts,
    })
}

fn encodings_section() -> Value {
    let ids = [
        0,
        1,
        9,
        10,
        31,
        32,
        61,
        62,
        1 << 32,
        (1 << 53) - 1,
        1 << 53,
        (1 << 63) - 1,
        1 << 63,
        u64::MAX,
    ];
    let round_trip: Vec<Value> = ids
        .iter()
        .map(|&id| {
            let mut e = encodings_json(id);
            e["id"] = s(id);
            e
        })
        .collect();
    let alias = |encoding: &str, text: &str, id: u64, why: &str| json!({"encoding": encoding, "text": text, "id": s(id), "why": why});
    // Crockford base32 reads lower case, I and L as 1, O as 0; hex reads either case.
    let aliases = vec![
        alias("dec", "007", 7, "leading zeros"),
        alias("hex", "00000000000000FF", 255, "upper-case hex"),
        alias("hex", "7FFFFFFFFFFFFFFF", (1 << 63) - 1, "upper-case hex"),
        alias("base32", "00000000000zz", 32 * 31 + 31, "lower case"),
        alias(
            "base32",
            "0000000000OIL",
            32 + 1,
            "O reads as 0, I and L as 1",
        ),
        alias("base32", "000000000000i", 1, "lower-case i reads as 1"),
        alias("base32", "000000000000o", 0, "lower-case o reads as 0"),
    ];
    let bad = |encoding: &str, text: &str, why: &str| json!({"encoding": encoding, "text": text, "error": "INVALID_ID", "why": why});
    let invalid = vec![
        bad("dec", "", "empty"),
        bad("dec", "12a", "not a digit"),
        bad("dec", "-1", "a sign"),
        bad("dec", "+1", "a sign"),
        bad("dec", " 1", "a space"),
        bad("dec", "1.0", "a decimal point"),
        bad("dec", "18446744073709551616", "2^64: one above the largest"),
        bad("dec", "99999999999999999999", "above 2^64 - 1"),
        bad("hex", "", "empty"),
        bad("hex", "ff", "too short: hex IDs have 16 digits"),
        bad("hex", "10000000000000000", "17 digits"),
        bad("hex", "000000000000000g", "not a hex digit"),
        bad("hex", "0x00000000000000", "a 0x prefix"),
        bad("base62", "", "empty"),
        bad("base62", "0000000000", "10 characters: base62 IDs have 11"),
        bad("base62", "000000000000", "12 characters"),
        bad("base62", "0000000000-", "not in 0-9A-Za-z"),
        bad("base62", "LygHa16AHYG", "2^64: one above the largest"),
        bad("base62", "zzzzzzzzzzz", "above 2^64 - 1"),
        bad("base32", "", "empty"),
        bad(
            "base32",
            "000000000000",
            "12 characters: base32 IDs have 13",
        ),
        bad("base32", "00000000000000", "14 characters"),
        bad(
            "base32",
            "000000000000U",
            "U is not in Crockford's alphabet",
        ),
        bad("base32", "000000000000*", "not in the alphabet"),
        bad("base32", "G000000000000", "2^64: one above the largest"),
        bad("base32", "ZZZZZZZZZZZZZ", "above 2^64 - 1"),
    ];
    json!({"round_trip": round_trip, "aliases": aliases, "invalid": invalid})
}

/// The whole file.
fn generate() -> Value {
    let layouts: Vec<Value> = Layout::PRESETS
        .iter()
        .map(|name| match *name {
            "baidu" => Layout::baidu(BAIDU_EPOCH_MS).unwrap(),
            other => Layout::preset(other).unwrap(),
        })
        .map(|l| layout_json(&l))
        .collect();
    let bad_layout = |preset: &str, epoch_ms: Option<u64>, why: &str| json!({"preset": preset, "epoch_ms": epoch_ms.map(s), "error": "CONFIG", "why": why});
    // Only arithmetic makes a layout invalid: Baidu's own 2016 epoch, whose time field ran out,
    // and an epoch in the future make layouts that decode (a generator refuses them).
    let invalid_layouts = vec![
        bad_layout("nope", None, "no such preset"),
        bad_layout("Twitter", None, "preset names are lower case"),
    ];
    let spec_ok = |spec: &str, name: &str, describe: &str, why: &str| json!({"spec": spec, "name": name, "describe": describe, "why": why});
    let spec_bad = |spec: &str, why: &str| json!({"spec": spec, "error": "CONFIG", "why": why});
    let layout_specs = vec![
        spec_ok("twitter", "twitter",
            "clock_id=0,time=41,worker=10,sequence=12,datacenter=5,unit_ms=1,epoch_ms=1288834974657,order=worker_first",
            "a preset name"),
        spec_ok("baidu", "baidu",
            "clock_id=0,time=28,worker=22,sequence=13,unit_ms=1000,epoch_ms=1463673600000,order=worker_first",
            "Baidu's own default epoch: decodes its old IDs"),
        spec_ok("baidu,epoch=2016-05-20T00:00:00+08:00", "baidu",
            "clock_id=0,time=28,worker=22,sequence=13,unit_ms=1000,epoch_ms=1463673600000,order=worker_first",
            "a preset changed by pairs; an ISO 8601 epoch with an offset"),
        spec_ok("clock_id=0,time=41,worker=10,sequence=12,epoch_ms=1420070400000", "custom",
            "clock_id=0,time=41,worker=10,sequence=12,unit_ms=1,epoch_ms=1420070400000,order=worker_first",
            "Discord's IDs"),
        spec_ok("time=39,worker=16,sequence=8,unit_ms=10,epoch=2025-01-01T00:00:00Z,order=sequence_first", "sonyflake_v2",
            "clock_id=0,time=39,worker=16,sequence=8,unit_ms=10,epoch_ms=1735689600000,order=sequence_first",
            "a preset's fields written out are the preset"),
        spec_ok("time=41,worker=3,sequence=9,epoch_ms=1704067200000", "js_safe",
            "clock_id=0,time=41,worker=3,sequence=9,unit_ms=1,epoch_ms=1704067200000,order=worker_first",
            "53 bits in all: JavaScript-safe"),
        spec_bad("", "empty"),
        spec_bad("twiter", "unknown preset"),
        spec_bad("time=41,worker=10,sequence=12,epoch_ms=0,wroker=1", "unknown key"),
        spec_bad("time=41,time=41,worker=10,sequence=12,epoch_ms=0", "a key twice"),
        spec_bad("time=41,worker=10,sequence=12", "no epoch"),
        spec_bad("time=41,worker=10,sequence=11,epoch_ms=0", "widths add up to 62"),
        spec_bad("time=41,worker=10,sequence=12,epoch_ms=0,datacenter=11", "datacenter wider than worker"),
        spec_bad("time=41,worker=10,sequence=12,epoch=2020-01-01T00:00", "an epoch without a time zone"),
        spec_bad("time=41,worker=10,sequence=12,epoch_ms=-1", "a negative epoch"),
        spec_bad("time=41,worker=10,sequence=12,epoch_ms=0,order=up", "no such order"),
    ];
    json!({
        "$comment": SCHEMA,
        "version": 1,
        "layouts": layouts,
        "invalid_layouts": invalid_layouts,
        "layout_specs": layout_specs,
        "encodings": encodings_section(),
    })
}
