//! IDs for OpenTelemetry's ID generators: span IDs that are a generator's IDs, and trace IDs with
//! a generator's ID in the high 64 bits and 64 random bits below it. The Python package's
//! `rimeflake.otel.IdGenerator` and the npm package's `rimeflake/otel` both make their IDs here.
//!
//! - **Span IDs** are 64-bit, never 0 (the invalid span ID): a generator's next ID, skipping 0
//!   (which only the first millisecond of a layout's epoch can compose). They are unique as the
//!   generator's IDs are: across threads, forked children (which take a worker ID of their own)
//!   and hosts (which lease different worker IDs).
//! - **Trace IDs** are 128-bit: a span ID's kind of ID in the high half, so no two trace IDs of
//!   generators with distinct worker IDs are equal, and 64 bits from the operating system's
//!   randomness in the low half. W3C Trace Context Level 2 asks, of a trace ID sent with the
//!   `random` flag, that its rightmost 7 bytes be uniformly random; OpenTelemetry's ratio
//!   sampler reads the low 64 bits (Python), or the XOR of the trace ID's four 32-bit words
//!   (JavaScript), both uniform when the low 64 bits are.
//!
//! Fork-safe by construction: nothing here keeps a random state in memory that a forked child
//! would copy. Each trace ID's random half is read from the operating system (`getrandom` on
//! Linux, `arc4random_buf` on the BSDs and macOS) at the call, once per trace.
//!
//! # Example
//! ```
//! use rimeflake::{otel, Generator};
//!
//! let gen = Generator::builder().worker_id(1).in_memory().build()?;
//! let span = otel::span_id(|| gen.next_id())?;
//! let trace = otel::trace_id(|| gen.next_id())?;
//! assert!(span != 0 && (trace >> 64) as u64 > span);
//! assert_eq!(otel::span_id_hex(span).len(), 16);
//! assert_eq!(otel::trace_id_hex(trace).len(), 32);
//! # Ok::<(), rimeflake::Error>(())
//! ```

/// A span ID: the first ID of `next_id` that is not 0. `next_id` is a generator's `next_id`, or
/// a binding's call of it; its error is returned as it is.
pub fn span_id<E>(mut next_id: impl FnMut() -> Result<u64, E>) -> Result<u64, E> {
    loop {
        let id = next_id()?;
        if id != 0 {
            return Ok(id);
        }
    }
}

/// A trace ID: a [`span_id`] of `next_id` in the high 64 bits, 64 bits of the operating system's
/// randomness in the low 64 bits (never 0, since the high half is not).
pub fn trace_id<E>(next_id: impl FnMut() -> Result<u64, E>) -> Result<u128, E> {
    let high = span_id(next_id)?;
    let mut low = [0u8; 8];
    crate::random::os_random(&mut low);
    Ok(compose(high, u64::from_le_bytes(low)))
}

fn compose(high: u64, low: u64) -> u128 {
    (u128::from(high) << 64) | u128::from(low)
}

/// A span ID as OpenTelemetry's JavaScript API writes it: 16 lower-case hex digits.
pub fn span_id_hex(id: u64) -> String {
    format!("{id:016x}")
}

/// A trace ID as OpenTelemetry's JavaScript API writes it: 32 lower-case hex digits.
pub fn trace_id_hex(id: u128) -> String {
    format!("{id:032x}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn a_span_id_skips_zero_and_passes_errors_on() {
        let mut ids = [0u64, 0, 7].into_iter();
        assert_eq!(span_id(|| Ok::<_, ()>(ids.next().unwrap())), Ok(7));
        assert_eq!(span_id(|| Err::<u64, _>("closed")), Err("closed"));
        let mut ids = [0u64, 9].into_iter();
        let trace = trace_id(|| Ok::<_, ()>(ids.next().unwrap())).unwrap();
        assert_eq!(trace >> 64, 9);
    }

    #[test]
    fn the_hex_forms_are_fixed_width_and_lower_case() {
        assert_eq!(span_id_hex(0xAB), "00000000000000ab");
        assert_eq!(span_id_hex(u64::MAX), "ffffffffffffffff");
        assert_eq!(
            trace_id_hex(compose(1, 0xFE)),
            "000000000000000100000000000000fe"
        );
    }

    /// The low half is random: 10,000 trace IDs of one high half have 10,000 low halves, and
    /// each of the low 64 bits is set in about half of them. With n = 10,000 a bit's count has
    /// a standard deviation of 50; 4,000 to 6,000 is 20 of them, which a uniform bit leaves
    /// with a probability far below 10^-80 (Hoeffding: 2·exp(-2·1000²/10⁴) = 2·e^-200).
    #[test]
    fn the_low_half_is_random() {
        let n = 10_000;
        let lows: HashSet<u64> = (0..n)
            .map(|_| trace_id(|| Ok::<_, ()>(5)).unwrap() as u64)
            .collect();
        assert_eq!(lows.len(), n);
        for bit in 0..64 {
            let set = lows.iter().filter(|&&low| low >> bit & 1 == 1).count();
            assert!((4_000..=6_000).contains(&set), "bit {bit}: {set} of {n}");
        }
    }
}
