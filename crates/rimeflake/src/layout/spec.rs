//! The textual layout spec: [`Layout::from_spec`] reads it, [`Layout::describe`] writes it, so
//! every front end (CLI flag, Python, Node, C, `RIMEFLAKE_LAYOUT`) takes the same string.

use super::{FieldOrder, Layout};
use crate::error::{Error, Result};

/// The keys of a layout spec, in the order [`Layout::describe`] writes them.
const KEYS: [&str; 9] = [
    "clock_id",
    "time",
    "worker",
    "sequence",
    "datacenter",
    "unit_ms",
    "epoch_ms",
    "epoch",
    "order",
];

impl Layout {
    /// A layout from a preset name or a layout spec.
    ///
    /// A spec is comma-separated `key=value` pairs: `clock_id`, `time`, `worker`, `sequence`
    /// (bit widths; `clock_id` defaults to 0), `unit_ms` (default 1), `epoch_ms` or an ISO 8601
    /// `epoch` (`2025-01-01T00:00:00Z`, `2016-05-20T00:00:00+08:00`), `order` (`worker_first`,
    /// the default, or `sequence_first`) and `datacenter` (how many of the worker bits are a
    /// datacenter part, default 0). Widths add up to 63, or 53 for a JavaScript-safe layout. A
    /// spec may start with a preset name whose fields the pairs then change:
    /// `baidu,epoch=2025-01-01T00:00:00Z`. A spec whose fields are a preset's gets its name.
    ///
    /// Only the arithmetic is checked: a layout whose epoch is in the future or whose time
    /// field has run out still decodes; building a generator on it fails.
    ///
    /// # Example
    /// ```
    /// use rimeflake::Layout;
    ///
    /// // Discord's IDs.
    /// let discord = Layout::from_spec("clock_id=0,time=41,worker=10,sequence=12,epoch_ms=1420070400000")?;
    /// let parts = discord.decode(175_928_847_299_117_063)?;
    /// assert_eq!((parts.timestamp_ms, parts.worker_id, parts.sequence), (1_462_015_105_796, 1 << 5, 7));
    /// assert_eq!(Layout::from_spec(&discord.describe())?, discord);
    /// assert_eq!(Layout::from_spec("twitter")?, Layout::twitter());
    /// # Ok::<(), rimeflake::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::Config`](crate::ErrorKind::Config), naming the key and why: an unknown,
    /// repeated or missing key, a value that is not a number (or an instant, or an order), widths
    /// that do not add up, a datacenter part wider than the worker field, and the checks of
    /// [`LayoutBuilder::build`](super::LayoutBuilder::build).
    pub fn from_spec(spec: &str) -> Result<Layout> {
        let spec = spec.trim();
        if spec.is_empty() {
            return Err(Error::config(format!(
                "layout: empty; give a preset ({}) or a layout spec such as \
                 clock_id=0,time=41,worker=10,sequence=12,epoch_ms=1420070400000",
                Layout::PRESETS.join(", ")
            )));
        }
        let mut items = spec.split(',').map(str::trim).peekable();
        let base = match items.peek() {
            Some(first) if !first.contains('=') => {
                let name = items.next().unwrap_or_default();
                Some(Layout::preset(name)?)
            }
            _ => None,
        };
        let mut seen: Vec<&str> = Vec::new();
        let mut b = Layout::builder();
        if let Some(base) = &base {
            b = b
                .clock_id_bits(base.clock_id_bits)
                .time_bits(base.time_bits)
                .worker_bits(base.worker_bits)
                .sequence_bits(base.sequence_bits)
                .datacenter_bits(base.datacenter_bits)
                .order(base.order)
                .unit_ms(base.unit_ms)
                .epoch_ms(base.epoch_ms);
        } else {
            b = b.clock_id_bits(0).datacenter_bits(0).unit_ms(1);
        }
        for item in items {
            let Some((key, value)) = item.split_once('=') else {
                return Err(Error::config(format!(
                    "layout spec: {item:?} is not key=value (a preset name may only come first)"
                )));
            };
            let (key, value) = (key.trim(), value.trim());
            let Some(&key) = KEYS.iter().find(|k| **k == key) else {
                let near = crate::contract::nearest(key, &KEYS)
                    .map(|k| format!(" did you mean {k:?}?"))
                    .unwrap_or_default();
                return Err(Error::config(format!(
                    "layout spec: unknown key {key:?};{near} the keys are {}",
                    KEYS.join(", ")
                )));
            };
            if seen.contains(&key) {
                return Err(Error::config(format!("layout spec: {key} is given twice")));
            }
            if (key == "epoch" && seen.contains(&"epoch_ms"))
                || (key == "epoch_ms" && seen.contains(&"epoch"))
            {
                return Err(Error::config(
                    "layout spec: give epoch or epoch_ms, not both",
                ));
            }
            seen.push(key);
            b = match key {
                "clock_id" => b.clock_id_bits(bits(key, value)?),
                "time" => b.time_bits(bits(key, value)?),
                "worker" => b.worker_bits(bits(key, value)?),
                "sequence" => b.sequence_bits(bits(key, value)?),
                "datacenter" => b.datacenter_bits(bits(key, value)?),
                "unit_ms" => b.unit_ms(number(key, value)?),
                "epoch_ms" => b.epoch_ms(number(key, value)?),
                "epoch" => b.epoch_ms(
                    crate::utc::parse_iso8601(value)
                        .map_err(|why| Error::config(format!("layout spec: epoch: {why}")))?,
                ),
                _ => b.order(
                    FieldOrder::from_name(value)
                        .map_err(|e| Error::config(format!("layout spec: {}", e.message())))?,
                ),
            };
        }
        if base.is_none() {
            let missing: Vec<&str> = ["time", "worker", "sequence"]
                .into_iter()
                .filter(|k| !seen.contains(k))
                .chain(
                    (!seen.contains(&"epoch") && !seen.contains(&"epoch_ms")).then_some("epoch_ms"),
                )
                .collect();
            if !missing.is_empty() {
                return Err(Error::config(format!(
                    "layout spec: missing {} (a spec gives time, worker, sequence and epoch_ms \
                     or epoch; or starts with a preset name)",
                    missing.join(", ")
                )));
            }
        }
        // The spec has no key for it: 53 bits in all is what asks for JavaScript-safe IDs.
        let sum = b.layout.clock_id_bits as u32
            + b.layout.time_bits as u32
            + b.layout.worker_bits as u32
            + b.layout.sequence_bits as u32;
        b.js_safe(sum == 53).build()
    }

    /// The layout as a spec, such as
    /// `clock_id=3,time=41,worker=10,sequence=9,unit_ms=1,epoch_ms=1704067200000,order=worker_first`
    /// (with `datacenter=` where the layout has one): [`Layout::from_spec`] reads it back to an
    /// equal layout (a preset's fields get the preset's name back).
    pub fn describe(&self) -> String {
        let datacenter = match self.datacenter_bits {
            0 => String::new(),
            d => format!(",datacenter={d}"),
        };
        format!(
            "clock_id={},time={},worker={},sequence={}{datacenter},unit_ms={},epoch_ms={},order={}",
            self.clock_id_bits,
            self.time_bits,
            self.worker_bits,
            self.sequence_bits,
            self.unit_ms,
            self.epoch_ms,
            self.order.spec_name()
        )
    }
}

fn number(key: &str, value: &str) -> Result<u64> {
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Error::config(format!(
            "layout spec: {key}={value:?} is not a non-negative integer"
        )));
    }
    value
        .parse()
        .map_err(|_| Error::config(format!("layout spec: {key}={value} is too large")))
}

fn bits(key: &str, value: &str) -> Result<u8> {
    match number(key, value)? {
        n @ 0..=63 => Ok(n as u8),
        n => Err(Error::config(format!(
            "layout spec: {key}={n} is not a bit width (0 to 63)"
        ))),
    }
}
