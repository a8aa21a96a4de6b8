//! [`Layout`]: how the 64 bits of an ID are shared between clock-id, time, worker and sequence,
//! the presets, and `compose` / `decode`.
//!
//! From the most significant bit down an ID is `0 | clock_id | time | worker | sequence`, or
//! `0 | clock_id | time | sequence | worker` for [`FieldOrder::SequenceAboveWorker`] (Sonyflake's
//! order). The generator counts in a packed *counter* `clock_id:time:sequence`; the worker bits
//! are inserted when an ID is composed, which is what [`Layout::compose_counter`] does.

use crate::clock::system_now_ms;
use crate::error::{Error, Result};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// 2024-01-01T00:00:00Z, the epoch of the `default` and `js_safe` presets, in Unix ms.
pub const EPOCH_2024: u64 = 1_704_067_200_000;
/// Twitter's epoch (2010-11-04T01:42:54.657Z) in Unix ms.
pub const EPOCH_TWITTER: u64 = 1_288_834_974_657;
/// Sonyflake's epoch, 2014-09-01T00:00:00Z, in Unix ms.
pub const EPOCH_SONYFLAKE: u64 = 1_409_529_600_000;

/// The most clock-id bits a layout may have (256 clock-ids).
pub const MAX_CLOCK_ID_BITS: u8 = 8;

/// Where the sequence sits relative to the worker bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FieldOrder {
    /// `clock_id | time | worker | sequence`: Twitter's order, and rimeflake's default.
    SequenceBelowWorker,
    /// `clock_id | time | sequence | worker`: Sonyflake's order.
    SequenceAboveWorker,
}

impl FieldOrder {
    /// The order for a name: `sequence_below_worker` or `sequence_above_worker` (the names the
    /// bindings use).
    ///
    /// # Errors
    /// [`ErrorKind::Config`](crate::ErrorKind::Config) for any other name.
    pub fn from_name(name: &str) -> Result<Self> {
        match name {
            "sequence_below_worker" => Ok(FieldOrder::SequenceBelowWorker),
            "sequence_above_worker" => Ok(FieldOrder::SequenceAboveWorker),
            other => Err(Error::config(format!(
                "order: unknown {other:?}; use \"sequence_below_worker\" or \"sequence_above_worker\""
            ))),
        }
    }

    /// The order's name, as [`FieldOrder::from_name`] reads it.
    pub fn name(self) -> &'static str {
        match self {
            FieldOrder::SequenceBelowWorker => "sequence_below_worker",
            FieldOrder::SequenceAboveWorker => "sequence_above_worker",
        }
    }
}

/// The parts of a decoded ID.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Parts {
    /// Which clock-id the generator was on (0 for layouts without clock-id bits).
    pub clock_id: u64,
    /// The start of the ID's time unit, in Unix milliseconds.
    pub timestamp_ms: u64,
    /// The worker ID.
    pub worker_id: u64,
    /// The sequence number within the time unit.
    pub sequence: u64,
}

/// A validated bit layout. Build one with a preset ([`Layout::default`], [`Layout::twitter`],
/// [`Layout::sonyflake`], [`Layout::baidu`], [`Layout::js_safe`], [`Layout::preset`]) or with
/// [`Layout::builder`].
///
/// # Example
/// ```
/// use rimeflake::{Layout, Parts};
///
/// let layout = Layout::twitter();
/// let id = layout.compose(&Parts { clock_id: 0, timestamp_ms: 1_767_225_600_000, worker_id: 7, sequence: 3 })?;
/// assert_eq!(layout.decode(id)?.worker_id, 7);
/// # Ok::<(), rimeflake::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Layout {
    name: &'static str,
    clock_id_bits: u8,
    time_bits: u8,
    worker_bits: u8,
    sequence_bits: u8,
    order: FieldOrder,
    unit_ms: u64,
    epoch_ms: u64,
    js_safe: bool,
}

impl Default for Layout {
    /// The `default` preset: 3 clock-id, 41 time, 10 worker and 9 sequence bits, 1 ms units,
    /// epoch 2024-01-01T00:00:00Z.
    fn default() -> Self {
        Layout::trusted(
            "default",
            [3, 41, 10, 9],
            FieldOrder::SequenceBelowWorker,
            1,
            EPOCH_2024,
        )
    }
}

impl Layout {
    /// The names accepted by [`Layout::preset`].
    pub const PRESETS: [&'static str; 5] = ["default", "twitter", "sonyflake", "baidu", "js_safe"];

    fn trusted(
        name: &'static str,
        bits: [u8; 4],
        order: FieldOrder,
        unit_ms: u64,
        epoch_ms: u64,
    ) -> Self {
        Layout {
            name,
            clock_id_bits: bits[0],
            time_bits: bits[1],
            worker_bits: bits[2],
            sequence_bits: bits[3],
            order,
            unit_ms,
            epoch_ms,
            js_safe: name == "js_safe",
        }
    }

    /// Twitter's layout: 41 time bits, 10 worker bits (5 datacenter + 5 worker), 12 sequence
    /// bits, 1 ms units, Twitter's epoch. No clock-id bits, so large rollbacks wait by default.
    pub fn twitter() -> Self {
        Layout::trusted(
            "twitter",
            [0, 41, 10, 12],
            FieldOrder::SequenceBelowWorker,
            1,
            EPOCH_TWITTER,
        )
    }

    /// Sonyflake's layout: 39 time bits in 10 ms units, 8 sequence bits above 16 worker bits,
    /// epoch 2014-09-01.
    pub fn sonyflake() -> Self {
        Layout::trusted(
            "sonyflake",
            [0, 39, 16, 8],
            FieldOrder::SequenceAboveWorker,
            10,
            EPOCH_SONYFLAKE,
        )
    }

    /// Baidu uid-generator's layout: 28 time bits in seconds, 22 worker bits, 13 sequence bits.
    ///
    /// The epoch is required: Baidu's own default (2016-05-20) ran out in November 2024, since
    /// 2^28 seconds is 8.5 years.
    ///
    /// # Errors
    /// [`ErrorKind::Config`](crate::ErrorKind::Config) if the epoch lies in the future or its
    /// 8.5 years have run out.
    pub fn baidu(epoch_ms: u64) -> Result<Self> {
        let layout = Layout::trusted(
            "baidu",
            [0, 28, 22, 13],
            FieldOrder::SequenceBelowWorker,
            1000,
            epoch_ms,
        );
        layout.check_epoch(system_now_ms())?;
        Ok(layout)
    }

    /// A layout whose IDs fit in 53 bits, exact as a JavaScript `Number`: 41 time bits, 3 worker
    /// bits, 9 sequence bits, 1 ms units, epoch 2024-01-01.
    pub fn js_safe() -> Self {
        Layout::trusted(
            "js_safe",
            [0, 41, 3, 9],
            FieldOrder::SequenceBelowWorker,
            1,
            EPOCH_2024,
        )
    }

    /// A preset by name: `default`, `twitter`, `sonyflake`, `js_safe`. (`baidu` needs an epoch:
    /// use [`Layout::baidu`].)
    ///
    /// # Errors
    /// [`ErrorKind::Config`](crate::ErrorKind::Config) for an unknown name, or for `baidu`.
    pub fn preset(name: &str) -> Result<Self> {
        match name {
            "default" => Ok(Layout::default()),
            "twitter" => Ok(Layout::twitter()),
            "sonyflake" => Ok(Layout::sonyflake()),
            "js_safe" | "js-safe" => Ok(Layout::js_safe()),
            "baidu" => Err(Error::config(
                "layout: the baidu preset needs an epoch (its own default, 2016-05-20, ran out in \
                 November 2024): give one with Layout::baidu(epoch_ms)",
            )),
            other => Err(Error::config(format!(
                "layout: unknown preset {other:?}; the presets are default, twitter, sonyflake, \
                 baidu (with an epoch) and js_safe"
            ))),
        }
    }

    /// A builder for a custom layout, starting from the `default` preset's fields.
    pub fn builder() -> LayoutBuilder {
        LayoutBuilder {
            layout: Layout {
                name: "custom",
                ..Layout::default()
            },
        }
    }

    /// The preset's name, or `custom`.
    pub fn name(&self) -> &'static str {
        self.name
    }
    /// Bits of the clock-id field (0 to 8).
    pub fn clock_id_bits(&self) -> u8 {
        self.clock_id_bits
    }
    /// Bits of the time field.
    pub fn time_bits(&self) -> u8 {
        self.time_bits
    }
    /// Bits of the worker field.
    pub fn worker_bits(&self) -> u8 {
        self.worker_bits
    }
    /// Bits of the sequence field.
    pub fn sequence_bits(&self) -> u8 {
        self.sequence_bits
    }
    /// Where the sequence sits relative to the worker.
    pub fn order(&self) -> FieldOrder {
        self.order
    }
    /// Milliseconds per time unit.
    pub fn unit_ms(&self) -> u64 {
        self.unit_ms
    }
    /// The epoch in Unix milliseconds.
    pub fn epoch_ms(&self) -> u64 {
        self.epoch_ms
    }
    /// Whether IDs fit in 53 bits (exact as a JavaScript `Number`).
    pub fn is_js_safe(&self) -> bool {
        self.js_safe
    }
    /// How many bits an ID uses: 63, or 53 for a JavaScript-safe layout.
    pub fn total_bits(&self) -> u8 {
        self.clock_id_bits + self.time_bits + self.worker_bits + self.sequence_bits
    }
    /// The largest worker ID.
    pub fn max_worker_id(&self) -> u64 {
        mask(self.worker_bits)
    }
    /// The largest clock-id (0 without clock-id bits).
    pub fn max_clock_id(&self) -> u64 {
        mask(self.clock_id_bits)
    }
    /// The largest sequence number.
    pub fn max_sequence(&self) -> u64 {
        mask(self.sequence_bits)
    }
    /// The largest value of the time field.
    pub fn max_time(&self) -> u64 {
        mask(self.time_bits)
    }

    /// When the time field runs out, in Unix ms: the first instant no ID can carry.
    pub fn expires_at_ms(&self) -> u64 {
        self.epoch_ms
            .saturating_add((self.max_time() + 1).saturating_mul(self.unit_ms))
    }

    /// When the time field runs out: the first instant no ID can carry.
    pub fn expires_at(&self) -> SystemTime {
        UNIX_EPOCH + Duration::from_millis(self.expires_at_ms())
    }

    /// One line that says what the layout is and when it runs out, such as `default: clock-id
    /// 3, time 41, worker 10, sequence 9 bits, 1 ms units, epoch 2024-01-01T00:00:00.000Z,
    /// expires_at 2093-09-06T15:47:35.552Z`.
    pub fn describe(&self) -> String {
        let order = match self.order {
            FieldOrder::SequenceBelowWorker => "",
            FieldOrder::SequenceAboveWorker => " (sequence above worker)",
        };
        format!(
            "{}: clock-id {}, time {}, worker {}, sequence {} bits{order}, {} ms units, epoch {}, \
             expires_at {}",
            self.name,
            self.clock_id_bits,
            self.time_bits,
            self.worker_bits,
            self.sequence_bits,
            self.unit_ms,
            crate::utc::iso8601(self.epoch_ms),
            crate::utc::iso8601(self.expires_at_ms()),
        )
    }

    /// A stable 64-bit fingerprint of the fields (not the name): a namespace keeps one layout,
    /// and a generator whose fingerprint differs is refused.
    pub fn fingerprint(&self) -> u64 {
        // FNV-1a over a fixed encoding of the fields: stable across versions and platforms.
        let mut bytes = vec![
            1, // encoding version
            self.clock_id_bits,
            self.time_bits,
            self.worker_bits,
            self.sequence_bits,
            (self.order == FieldOrder::SequenceAboveWorker) as u8,
            self.js_safe as u8,
        ];
        bytes.extend_from_slice(&self.unit_ms.to_le_bytes());
        bytes.extend_from_slice(&self.epoch_ms.to_le_bytes());
        bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
            (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
        })
    }

    /// Converts Unix ms to this layout's time field, rounding down to the unit.
    ///
    /// # Errors
    /// [`ErrorKind::TimeRange`](crate::ErrorKind::TimeRange) before the epoch or past the end
    /// of the time field.
    pub fn time_of(&self, unix_ms: u64) -> Result<u64> {
        if unix_ms < self.epoch_ms {
            return Err(Error::new(
                crate::ErrorKind::TimeRange,
                format!(
                    "the clock reads {unix_ms} ms, before the layout's epoch {} ms: set the clock \
                     or choose an earlier epoch",
                    self.epoch_ms
                ),
            ));
        }
        let time = (unix_ms - self.epoch_ms) / self.unit_ms;
        if time > self.max_time() {
            return Err(self.exhausted(unix_ms));
        }
        Ok(time)
    }

    pub(crate) fn exhausted(&self, unix_ms: u64) -> Error {
        Error::new(
            crate::ErrorKind::TimeRange,
            format!(
                "the time field of layout {} ran out at {} ms (Unix), and the clock reads {unix_ms} \
                 ms: move to a layout with a later epoch or more time bits",
                self.name,
                self.expires_at_ms()
            ),
        )
    }

    /// The ID for `parts`; `timestamp_ms` is rounded down to the time unit.
    ///
    /// # Errors
    /// [`ErrorKind::Config`](crate::ErrorKind::Config) when a part does not fit its field, and
    /// [`ErrorKind::TimeRange`](crate::ErrorKind::TimeRange) for a time outside the layout's.
    pub fn compose(&self, parts: &Parts) -> Result<u64> {
        let time = self.time_of(parts.timestamp_ms)?;
        self.check_part("clock_id", parts.clock_id, self.max_clock_id())?;
        self.check_part("worker_id", parts.worker_id, self.max_worker_id())?;
        self.check_part("sequence", parts.sequence, self.max_sequence())?;
        let counter = self.counter(parts.clock_id, time, parts.sequence);
        Ok(self.compose_counter(counter, self.worker_part(parts.worker_id)))
    }

    fn check_part(&self, field: &str, value: u64, max: u64) -> Result<()> {
        if value > max {
            return Err(Error::config(format!(
                "{field}: {value} does not fit layout {} (at most {max})",
                self.name
            )));
        }
        Ok(())
    }

    /// Reads the parts of `id`.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidId`](crate::ErrorKind::InvalidId) when `id` cannot come from this
    /// layout: the sign bit is set, or bits above a JavaScript-safe layout's 53 are.
    pub fn decode(&self, id: u64) -> Result<Parts> {
        let total = self.total_bits();
        if id >> total != 0 {
            let why = if id >> 63 != 0 {
                "its sign bit is set".to_string()
            } else {
                format!("it uses bits above the layout's {total}")
            };
            return Err(Error::invalid_id(format!(
                "{id} is not an ID of layout {}: {why}",
                self.name
            )));
        }
        let low_bits = self.low_bits();
        let low = id & mask(low_bits);
        let worker_id = (id >> low_bits) & mask(self.worker_bits);
        let counter = ((id >> (low_bits + self.worker_bits)) << low_bits) | low;
        let time = (counter >> self.sequence_bits) & self.max_time();
        Ok(Parts {
            clock_id: counter >> (self.time_bits + self.sequence_bits),
            timestamp_ms: self.epoch_ms + time * self.unit_ms,
            worker_id,
            sequence: counter & self.max_sequence(),
        })
    }

    /// Bits that stay below the worker field when a counter becomes an ID.
    fn low_bits(&self) -> u8 {
        match self.order {
            FieldOrder::SequenceBelowWorker => self.sequence_bits,
            FieldOrder::SequenceAboveWorker => 0,
        }
    }

    /// The packed counter `clock_id:time:sequence` the generator counts in.
    pub(crate) fn counter(&self, clock_id: u64, time: u64, sequence: u64) -> u64 {
        (clock_id << (self.time_bits + self.sequence_bits))
            | (time << self.sequence_bits)
            | sequence
    }

    /// The counter value just below `clock_id:time:0`, so the next ID gets sequence 0 (at the
    /// epoch's first unit, where there is none below, the first ID gets sequence 1).
    pub(crate) fn counter_before(&self, clock_id: u64, time: u64) -> u64 {
        match time {
            0 => self.counter(clock_id, 0, 0),
            t => self.counter(clock_id, t - 1, self.max_sequence()),
        }
    }

    /// The worker ID shifted into its place, ready for [`Layout::compose_counter`].
    pub(crate) fn worker_part(&self, worker_id: u64) -> u64 {
        worker_id << self.low_bits()
    }

    /// An ID from a packed counter and a worker part: the hot path's only arithmetic.
    #[inline]
    pub(crate) fn compose_counter(&self, counter: u64, worker_part: u64) -> u64 {
        let low = mask(self.low_bits());
        ((counter & !low) << self.worker_bits) | worker_part | (counter & low)
    }

    /// Checks the epoch against `now_ms`: not in the future, time field not used up.
    pub(crate) fn check_epoch(&self, now_ms: u64) -> Result<()> {
        if self.epoch_ms > now_ms {
            return Err(Error::config(format!(
                "epoch_ms: {} lies in the future (the clock reads {now_ms}); IDs would be refused \
                 until then",
                self.epoch_ms
            )));
        }
        if now_ms >= self.expires_at_ms() {
            return Err(Error::config(format!(
                "epoch_ms: the {} time bits of {} ms units from epoch {} ran out at {} ms (Unix); \
                 choose a later epoch or more time bits",
                self.time_bits,
                self.unit_ms,
                self.epoch_ms,
                self.expires_at_ms()
            )));
        }
        Ok(())
    }
}

#[inline]
pub(crate) const fn mask(bits: u8) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

mod builder;
#[cfg(test)]
mod tests;

pub use builder::LayoutBuilder;
