//! [`LayoutBuilder`]: custom layouts, validated.

use super::FieldOrder;
use super::{Layout, MAX_CLOCK_ID_BITS};
use crate::error::{Error, Result};

/// Builds a custom [`Layout`]; [`LayoutBuilder::build`] validates it.
///
/// # Example
/// ```
/// use rimeflake::Layout;
///
/// let layout = Layout::builder().clock_id_bits(2).time_bits(42).worker_bits(8).sequence_bits(11).build()?;
/// assert_eq!(layout.max_worker_id(), 255);
/// assert!(Layout::builder().worker_bits(20).build().is_err()); // 3 + 41 + 20 + 9 != 63
/// # Ok::<(), rimeflake::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct LayoutBuilder {
    pub(super) layout: Layout,
}

impl LayoutBuilder {
    /// Bits of the clock-id field (0 to 8). Without them large rollbacks cannot switch clock-ids.
    pub fn clock_id_bits(mut self, bits: u8) -> Self {
        self.layout.clock_id_bits = bits;
        self
    }
    /// Bits of the time field.
    pub fn time_bits(mut self, bits: u8) -> Self {
        self.layout.time_bits = bits;
        self
    }
    /// Bits of the worker field.
    pub fn worker_bits(mut self, bits: u8) -> Self {
        self.layout.worker_bits = bits;
        self
    }
    /// Bits of the sequence field.
    pub fn sequence_bits(mut self, bits: u8) -> Self {
        self.layout.sequence_bits = bits;
        self
    }
    /// Where the sequence sits relative to the worker.
    pub fn order(mut self, order: FieldOrder) -> Self {
        self.layout.order = order;
        self
    }
    /// How many of the worker bits (the upper ones) are a datacenter part (default 0: none);
    /// decoded IDs then show it as [`Parts::datacenter_id`](super::Parts::datacenter_id).
    pub fn datacenter_bits(mut self, bits: u8) -> Self {
        self.layout.datacenter_bits = bits;
        self
    }
    /// Milliseconds per time unit (at least 1).
    pub fn unit_ms(mut self, unit_ms: u64) -> Self {
        self.layout.unit_ms = unit_ms;
        self
    }
    /// The epoch, in Unix ms. A generator refuses one in the future or one whose time field
    /// has run out; decoding takes any.
    pub fn epoch_ms(mut self, epoch_ms: u64) -> Self {
        self.layout.epoch_ms = epoch_ms;
        self
    }
    /// Asks for IDs that fit in 53 bits (the fields must add up to 53 instead of 63).
    pub fn js_safe(mut self, js_safe: bool) -> Self {
        self.layout.js_safe = js_safe;
        self
    }

    /// Validates the layout's arithmetic (not its epoch: see [`Layout`]). Fields that are a
    /// preset's get the preset's name.
    ///
    /// # Errors
    /// [`ErrorKind::Config`](crate::ErrorKind::Config), naming the field: widths that do not add
    /// up to 63 (53 when JavaScript-safe), a time or sequence field of 0 bits, more than 8
    /// clock-id bits, a datacenter part wider than the worker field, a unit of 0 ms.
    pub fn build(self) -> Result<Layout> {
        let l = self.layout;
        let want = if l.js_safe { 53 } else { 63 };
        let sum = l.clock_id_bits as u32
            + l.time_bits as u32
            + l.worker_bits as u32
            + l.sequence_bits as u32;
        if sum != want {
            return Err(Error::config(format!(
                "layout: clock_id_bits {} + time_bits {} + worker_bits {} + sequence_bits {} = {sum}, \
                 but must be {want}{}",
                l.clock_id_bits,
                l.time_bits,
                l.worker_bits,
                l.sequence_bits,
                if l.js_safe { " for a JavaScript-safe layout" } else { " (the sign bit stays 0)" }
            )));
        }
        if l.clock_id_bits > MAX_CLOCK_ID_BITS {
            return Err(Error::config(format!(
                "clock_id_bits: {} is more than {MAX_CLOCK_ID_BITS}",
                l.clock_id_bits
            )));
        }
        if l.time_bits == 0 {
            return Err(Error::config("time_bits: must be at least 1"));
        }
        if l.sequence_bits == 0 {
            return Err(Error::config("sequence_bits: must be at least 1"));
        }
        if l.unit_ms == 0 {
            return Err(Error::config("unit_ms: must be at least 1"));
        }
        if l.datacenter_bits > l.worker_bits {
            return Err(Error::config(format!(
                "datacenter_bits: {} is more than the {} worker bits it is a part of",
                l.datacenter_bits, l.worker_bits
            )));
        }
        let name = l.preset_name_of().unwrap_or("custom");
        Ok(Layout { name, ..l })
    }
}
