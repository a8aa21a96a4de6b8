//! [`Layout`]: how the 64 bits of an ID are shared between clock-id, time, worker and sequence,
//! the presets, and `compose` / `decode`.
//!
//! From the most significant bit down an ID is `0 | clock_id | time | worker | sequence`, or
//! `0 | clock_id | time | sequence | worker` for [`FieldOrder::SequenceAboveWorker`] (Sonyflake's
//! order). The generator counts in a packed *counter* `clock_id:time:sequence`; the worker bits
//! are inserted when an ID is composed, which is what `Layout::compose_counter` does.

use crate::error::{Error, Result};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

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
    /// The order for a name: `worker_first` or `sequence_first` (the layout spec's names,
    /// read from the most significant bit down), or their long forms `sequence_below_worker`
    /// and `sequence_above_worker`.
    ///
    /// # Errors
    /// [`ErrorKind::Config`](crate::ErrorKind::Config) for any other name.
    pub fn from_name(name: &str) -> Result<Self> {
        match name {
            "worker_first" | "sequence_below_worker" => Ok(FieldOrder::SequenceBelowWorker),
            "sequence_first" | "sequence_above_worker" => Ok(FieldOrder::SequenceAboveWorker),
            other => Err(Error::config(format!(
                "order: unknown {other:?}; use \"worker_first\" (worker above sequence, as \
                 Twitter) or \"sequence_first\" (sequence above worker, as Sonyflake)"
            ))),
        }
    }

    /// The order's name in a layout spec: `worker_first` or `sequence_first`.
    pub fn spec_name(self) -> &'static str {
        match self {
            FieldOrder::SequenceBelowWorker => "worker_first",
            FieldOrder::SequenceAboveWorker => "sequence_first",
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
///
/// Where the layout names a datacenter part (`datacenter` in a layout spec, 5 bits in
/// `twitter`), the worker field is split: [`Parts::datacenter_id`] holds its upper
/// `datacenter` bits and [`Parts::worker_id`] the rest. [`Layout::decode`] always fills
/// `datacenter_id` for such a layout, and [`Layout::compose`] reads the parts back the same way,
/// so the two round-trip. `compose` also takes `datacenter_id: None` with `worker_id` as the
/// whole worker field (what a generator's worker ID is).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Parts {
    /// Which clock-id the generator was on (0 for layouts without clock-id bits).
    pub clock_id: u64,
    /// The start of the ID's time unit, in Unix milliseconds.
    pub timestamp_ms: u64,
    /// The datacenter part of the worker field, for a layout that names one; else `None`.
    pub datacenter_id: Option<u64>,
    /// The worker ID: the whole worker field, or the part below the datacenter part.
    pub worker_id: u64,
    /// The sequence number within the time unit.
    pub sequence: u64,
}

impl Parts {
    /// How far past the clock a decoded time must lie for [`Parts::is_well_in_the_future`].
    pub const FUTURE_SLACK_MS: u64 = 86_400_000;

    /// Whether the time lies more than a day past the system clock: no generator of this layout
    /// made the ID yet, so it was probably made with another layout (a `twitter` ID read as
    /// `default` decodes to 2082). Decoders show it beside the time.
    pub fn is_well_in_the_future(&self) -> bool {
        self.timestamp_ms > crate::clock::system_now_ms().saturating_add(Self::FUTURE_SLACK_MS)
    }
}

/// A validated bit layout. Build one with a preset ([`Layout::default`], [`Layout::twitter`],
/// [`Layout::discord`], [`Layout::sonyflake`], [`Layout::sonyflake_v2`], [`Layout::baidu`], [`Layout::js_safe`],
/// [`Layout::preset`]), from a layout spec ([`Layout::from_spec`], which [`Layout::describe`]
/// prints), or with [`Layout::builder`].
///
/// A layout checks only its arithmetic (widths, unit), so any ID can be decoded; whether its
/// epoch can generate IDs now (not in the future, time field not used up) is checked when a
/// generator is built.
///
/// Time units count from Unix-aligned boundaries, as sony/sonyflake and Baidu do: an ID's time
/// field is `floor(unix_ms / unit_ms) - floor(epoch_ms / unit_ms)`.
///
/// # Example
/// ```
/// use rimeflake::{Layout, Parts};
///
/// let layout = Layout::twitter();
/// let parts = Parts { clock_id: 0, timestamp_ms: 1_767_225_600_000, datacenter_id: Some(2), worker_id: 7, sequence: 3 };
/// let id = layout.compose(&parts)?;
/// assert_eq!(layout.decode(id)?, parts);
/// assert_eq!(Layout::from_spec(&layout.describe())?, layout);
/// # Ok::<(), rimeflake::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Layout {
    name: &'static str,
    clock_id_bits: u8,
    time_bits: u8,
    worker_bits: u8,
    sequence_bits: u8,
    /// How many of the worker bits (the upper ones) are a datacenter part; 0 for none.
    datacenter_bits: u8,
    order: FieldOrder,
    unit_ms: u64,
    epoch_ms: u64,
    js_safe: bool,
}

impl Layout {
    pub(super) fn trusted(
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
            datacenter_bits: 0,
            order,
            unit_ms,
            epoch_ms,
            js_safe: name == "js_safe",
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

    /// The preset's name (also for a spec or builder whose fields are a preset's), or `custom`.
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
    /// How many of the worker bits (the upper ones) are a datacenter part (0: none).
    pub fn datacenter_bits(&self) -> u8 {
        self.datacenter_bits
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
    /// The start of the epoch's time unit, in Unix ms: time units count from here (they are
    /// Unix-aligned, as the peers count them), so an epoch inside a unit starts that unit.
    pub fn unit_start_of_epoch_ms(&self) -> u64 {
        self.epoch_ms - self.epoch_ms % self.unit_ms
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
        self.unit_start_of_epoch_ms()
            .saturating_add((self.max_time() + 1).saturating_mul(self.unit_ms))
    }

    /// When the time field runs out: the first instant no ID can carry.
    pub fn expires_at(&self) -> SystemTime {
        UNIX_EPOCH + Duration::from_millis(self.expires_at_ms())
    }

    /// One line that says what the layout is and when it runs out, such as `default
    /// (clock_id=3,time=41,worker=10,sequence=9,unit_ms=1,epoch_ms=1704067200000,order=worker_first),
    /// epoch 2024-01-01T00:00:00.000Z, expires_at 2093-09-06T15:47:35.552Z`: for people; the
    /// spec in brackets is [`Layout::describe`].
    pub fn summary(&self) -> String {
        format!(
            "{} ({}), epoch {}, expires_at {}",
            self.name,
            self.describe(),
            crate::utc::iso8601(self.epoch_ms),
            crate::utc::iso8601(self.expires_at_ms()),
        )
    }

    /// A stable 64-bit fingerprint of the fields that shape IDs (not the name, nor the
    /// datacenter split, which changes how IDs read but not what they are): a namespace keeps
    /// one layout, and a generator whose fingerprint differs is refused.
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

    /// Converts Unix ms to this layout's time field: `floor(unix_ms / unit_ms) -
    /// floor(epoch_ms / unit_ms)`.
    ///
    /// # Errors
    /// [`ErrorKind::TimeRange`](crate::ErrorKind::TimeRange) before the epoch or past the end
    /// of the time field.
    pub fn time_of(&self, unix_ms: u64) -> Result<u64> {
        let start = self.unit_start_of_epoch_ms();
        if unix_ms < start {
            return Err(Error::new(
                crate::ErrorKind::TimeRange,
                format!(
                    "the clock reads {unix_ms} ms, before the layout's epoch {} ms: set the clock \
                     or choose an earlier epoch",
                    self.epoch_ms
                ),
            ));
        }
        let time = (unix_ms - start) / self.unit_ms;
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

    /// The ID for `parts`; `timestamp_ms` is rounded down to the time unit. With a
    /// `datacenter_id`, `worker_id` is the part below it (see [`Parts`]); without one, the whole
    /// worker field.
    ///
    /// # Errors
    /// [`ErrorKind::Config`](crate::ErrorKind::Config) when a part does not fit its field (or a
    /// `datacenter_id` is given for a layout without a datacenter part), and
    /// [`ErrorKind::TimeRange`](crate::ErrorKind::TimeRange) for a time outside the layout's.
    pub fn compose(&self, parts: &Parts) -> Result<u64> {
        let time = self.time_of(parts.timestamp_ms)?;
        self.check_part("clock_id", parts.clock_id, self.max_clock_id())?;
        let worker = match parts.datacenter_id {
            None => {
                self.check_part("worker_id", parts.worker_id, self.max_worker_id())?;
                parts.worker_id
            }
            Some(_) if self.datacenter_bits == 0 => {
                return Err(Error::config(format!(
                    "datacenter_id: layout {} has no datacenter part; leave it out",
                    self.name
                )))
            }
            Some(dc) => {
                let below = self.worker_bits - self.datacenter_bits;
                self.check_part("datacenter_id", dc, mask(self.datacenter_bits))?;
                self.check_part("worker_id", parts.worker_id, mask(below))?;
                dc << below | parts.worker_id
            }
        };
        self.check_part("sequence", parts.sequence, self.max_sequence())?;
        let counter = self.counter(parts.clock_id, time, parts.sequence);
        Ok(self.compose_counter(counter, self.worker_part(worker)))
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
        let below = self.worker_bits - self.datacenter_bits;
        let datacenter_id = (self.datacenter_bits > 0).then_some(worker_id >> below);
        Ok(Parts {
            clock_id: counter >> (self.time_bits + self.sequence_bits),
            // Saturating: a far-future epoch with a long unit would not fit (nothing generates it).
            timestamp_ms: self
                .unit_start_of_epoch_ms()
                .saturating_add(time.saturating_mul(self.unit_ms)),
            datacenter_id,
            worker_id: worker_id & mask(below),
            sequence: counter & self.max_sequence(),
        })
    }

    /// The whole worker field of `parts`: the worker ID of the generator that made the ID,
    /// with the datacenter part put back in place where the layout has one.
    ///
    /// # Example
    /// ```
    /// use rimeflake::Layout;
    ///
    /// let twitter = Layout::twitter();
    /// let parts = twitter.decode(37 << 12)?; // worker field 37 = datacenter 1, worker 5
    /// assert_eq!((parts.datacenter_id, parts.worker_id), (Some(1), 5));
    /// assert_eq!(twitter.worker_field(&parts), 37);
    /// # Ok::<(), rimeflake::Error>(())
    /// ```
    pub fn worker_field(&self, parts: &Parts) -> u64 {
        match parts.datacenter_id {
            Some(dc) => dc << (self.worker_bits - self.datacenter_bits) | parts.worker_id,
            None => parts.worker_id,
        }
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

    /// Checks the epoch against `now_ms`: not in the future, time field not used up. Building a
    /// generator checks this; describing or decoding does not.
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
pub(crate) mod guess;
mod presets;
mod spec;
#[cfg(test)]
mod tests;

pub use builder::LayoutBuilder;
pub use presets::{
    Preset, EPOCH_2024, EPOCH_BAIDU, EPOCH_DISCORD, EPOCH_SONYFLAKE, EPOCH_SONYFLAKE_V2,
    EPOCH_TWITTER,
};
