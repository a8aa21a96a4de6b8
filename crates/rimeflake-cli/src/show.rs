//! How IDs and layouts are written out: the JSON objects of `gen --format json` and
//! `decode --json`, and the layout line of `decode`.

use rimeflake::frontend::iso8601;
use rimeflake::{Layout, Parts};
use std::io::{self, Write};

/// Writes `{"id":"<decimal>","clock_id":..,"timestamp_ms":..,"time":"..",["datacenter_id":..,]
/// "worker_id":..,"sequence":..` without the closing brace, so callers can add fields. The ID is
/// a string: JavaScript's `JSON.parse` would round a 64-bit number.
pub fn write_parts_json(out: &mut impl Write, id: u64, parts: &Parts) -> io::Result<()> {
    write!(
        out,
        "{{\"id\":\"{id}\",\"clock_id\":{},\"timestamp_ms\":{},\"time\":\"{}\"",
        parts.clock_id,
        parts.timestamp_ms,
        iso8601(parts.timestamp_ms),
    )?;
    if let Some(dc) = parts.datacenter_id {
        write!(out, ",\"datacenter_id\":{dc}")?;
    }
    write!(
        out,
        ",\"worker_id\":{},\"sequence\":{}",
        parts.worker_id, parts.sequence
    )
}

/// One line that says what a layout is (its spec, which `--layout` takes back) and when it runs
/// out.
pub fn describe_layout(layout: &Layout) -> String {
    format!("layout {}", layout.summary())
}

/// `n` with a comma every three digits: `4,096,000`.
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_digits() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1000), "1,000");
        assert_eq!(grouped(4_096_000), "4,096,000");
    }

    #[test]
    fn json_parts_are_exact() {
        let mut out = Vec::new();
        let parts = Parts {
            clock_id: 1,
            timestamp_ms: 1_704_067_200_000,
            datacenter_id: None,
            worker_id: 2,
            sequence: 3,
        };
        write_parts_json(&mut out, u64::MAX >> 1, &parts).unwrap();
        out.push(b'}');
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "{\"id\":\"9223372036854775807\",\"clock_id\":1,\"timestamp_ms\":1704067200000,\
             \"time\":\"2024-01-01T00:00:00.000Z\",\"worker_id\":2,\"sequence\":3}"
        );
    }

    #[test]
    fn layout_line_names_the_expiry() {
        let line = describe_layout(&Layout::twitter());
        assert!(
            line.starts_with(
                "layout twitter (clock_id=0,time=41,worker=10,sequence=12,datacenter=5,"
            ),
            "{line}"
        );
        assert!(
            line.ends_with("expires_at 2080-07-10T17:30:30.209Z"),
            "{line}"
        );
    }
}
