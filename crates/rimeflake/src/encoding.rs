//! String forms of IDs: decimal, and three fixed-width forms whose string order is the numeric
//! order (hex, base62, Crockford base32), so IDs sort the same as text as they do as numbers.

use crate::error::{Error, Result};

/// A string form of an ID.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// Decimal digits, no padding: `1234567`.
    Decimal,
    /// 16 lower-case hex digits, zero-padded (parsing accepts either case).
    Hex,
    /// 11 characters of `0-9A-Za-z`, zero-padded; case-sensitive.
    Base62,
    /// 13 characters of Crockford's base32 (`0-9A-HJKMNP-TV-Z`), zero-padded. Parsing accepts
    /// lower case and reads `I`/`L` as 1 and `O` as 0, as Crockford specifies.
    Base32,
}

const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const CROCKFORD: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

impl Encoding {
    /// The encoding for a name: `dec`/`decimal`, `hex`, `base62`, `base32`.
    ///
    /// # Errors
    /// [`ErrorKind::Config`](crate::ErrorKind::Config) for any other name.
    pub fn from_name(name: &str) -> Result<Self> {
        match name {
            "dec" | "decimal" => Ok(Encoding::Decimal),
            "hex" => Ok(Encoding::Hex),
            "base62" => Ok(Encoding::Base62),
            "base32" => Ok(Encoding::Base32),
            other => Err(Error::config(format!(
                "encoding: unknown {other:?}; use dec, hex, base62 or base32"
            ))),
        }
    }

    /// The encoding's name, as `from_name` reads it.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Decimal => "dec",
            Encoding::Hex => "hex",
            Encoding::Base62 => "base62",
            Encoding::Base32 => "base32",
        }
    }

    /// The length of every string of this encoding (`None` for decimal, which is not padded).
    pub fn width(self) -> Option<usize> {
        match self {
            Encoding::Decimal => None,
            Encoding::Hex => Some(16),
            Encoding::Base62 => Some(11),
            Encoding::Base32 => Some(13),
        }
    }
}

/// `id` as a string of `encoding`.
///
/// # Example
/// ```
/// use rimeflake::{format, parse, Encoding};
///
/// let (a, b) = (1_234_567_u64, 98_765_432_u64);
/// for enc in [Encoding::Hex, Encoding::Base62, Encoding::Base32] {
///     assert!(format(a, enc) < format(b, enc)); // string order is numeric order
///     assert_eq!(parse(&format(b, enc), enc)?, b);
/// }
/// # Ok::<(), rimeflake::Error>(())
/// ```
pub fn format(id: u64, encoding: Encoding) -> String {
    match encoding {
        Encoding::Decimal => id.to_string(),
        Encoding::Hex => format!("{id:016x}"),
        Encoding::Base62 => digits(id, 62, 11, BASE62),
        Encoding::Base32 => digits(id, 32, 13, CROCKFORD),
    }
}

/// The decimal digits of a number, written on the stack: no allocation, no formatting
/// machinery. The one decimal writer of the crate and its front ends (SkyWalking IDs, Node's
/// `nextIdString`, the HTTP service's bodies).
///
/// # Example
/// ```
/// use rimeflake::frontend::DecimalDigits;
///
/// assert_eq!(DecimalDigits::new(1234567).as_str(), "1234567");
/// assert_eq!(DecimalDigits::new(u64::MAX).as_bytes(), u64::MAX.to_string().as_bytes());
/// ```
#[derive(Clone, Copy, Debug)]
pub struct DecimalDigits {
    buf: [u8; 20],
    start: u8,
}

impl DecimalDigits {
    /// The digits of `n` (20 at most, for `u64::MAX`).
    #[inline]
    pub fn new(mut n: u64) -> Self {
        let mut buf = [0u8; 20];
        let mut at = buf.len();
        loop {
            at -= 1;
            buf[at] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        DecimalDigits {
            buf,
            start: at as u8,
        }
    }

    /// The digits, as ASCII bytes.
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[self.start as usize..]
    }

    /// The digits, as text.
    #[inline]
    pub fn as_str(&self) -> &str {
        // ASCII digits only, written by `new`.
        std::str::from_utf8(self.as_bytes()).unwrap_or_default()
    }
}

fn digits(mut id: u64, base: u64, width: usize, alphabet: &[u8]) -> String {
    let mut out = vec![b'0'; width];
    for slot in out.iter_mut().rev() {
        *slot = alphabet[(id % base) as usize];
        id /= base;
    }
    String::from_utf8(out).expect("alphabets are ASCII")
}

/// The ID that `text` encodes in `encoding`.
///
/// # Errors
/// [`ErrorKind::InvalidId`](crate::ErrorKind::InvalidId), saying which: an empty string, a wrong
/// length, a character outside the alphabet (and where), or a value above 2^64 - 1.
pub fn parse(text: &str, encoding: Encoding) -> Result<u64> {
    let name = encoding.name();
    if text.is_empty() {
        return Err(Error::invalid_id(format!(
            "an empty string is not a {name} ID"
        )));
    }
    if let Some(width) = encoding.width() {
        if text.len() != width {
            return Err(Error::invalid_id(format!(
                "{text:?} has {} characters; a {name} ID has exactly {width}",
                text.len()
            )));
        }
    }
    let base: u64 = match encoding {
        Encoding::Decimal => 10,
        Encoding::Hex => 16,
        Encoding::Base62 => 62,
        Encoding::Base32 => 32,
    };
    let mut value: u64 = 0;
    for (at, ch) in text.char_indices() {
        let digit = digit_of(ch, encoding).ok_or_else(|| {
            Error::invalid_id(format!(
                "{text:?} is not a {name} ID: {ch:?} at position {at}"
            ))
        })?;
        value = value
            .checked_mul(base)
            .and_then(|v| v.checked_add(digit))
            .ok_or_else(|| Error::invalid_id(format!("{text:?} is larger than 2^64 - 1")))?;
    }
    Ok(value)
}

fn digit_of(ch: char, encoding: Encoding) -> Option<u64> {
    let c = u8::try_from(ch).ok()?;
    let d = match encoding {
        Encoding::Decimal => (c as char).to_digit(10)?,
        Encoding::Hex => (c as char).to_digit(16)?,
        Encoding::Base62 => BASE62.iter().position(|&a| a == c)? as u32,
        Encoding::Base32 => match c.to_ascii_uppercase() {
            b'I' | b'L' => 1,
            b'O' => 0,
            up => CROCKFORD.iter().position(|&a| a == up)? as u32,
        },
    };
    Some(d as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    const ALL: [Encoding; 4] = [
        Encoding::Decimal,
        Encoding::Hex,
        Encoding::Base62,
        Encoding::Base32,
    ];

    #[test]
    fn decimal_digits_match_std() {
        for n in [
            0,
            7,
            10,
            99,
            100,
            12345,
            u64::MAX / 7,
            u64::MAX - 1,
            u64::MAX,
        ] {
            assert_eq!(DecimalDigits::new(n).as_str(), n.to_string());
        }
    }

    #[test]
    fn round_trips_at_the_edges() {
        for enc in ALL {
            for id in [0, 1, 61, 62, 1 << 32, (1 << 63) - 1, 1 << 63, u64::MAX] {
                assert_eq!(parse(&format(id, enc), enc).unwrap(), id, "{enc:?} {id}");
            }
        }
        assert_eq!(format(u64::MAX, Encoding::Base62), "LygHa16AHYF");
        assert_eq!(format(u64::MAX, Encoding::Base32), "FZZZZZZZZZZZZ");
        assert_eq!(format(255, Encoding::Hex), "00000000000000ff");
    }

    #[test]
    fn fixed_widths_sort_like_numbers() {
        let ids = [0u64, 9, 10, 61, 62, 1000, 1 << 40, (1 << 63) - 1, u64::MAX];
        for enc in [Encoding::Hex, Encoding::Base62, Encoding::Base32] {
            let strings: Vec<_> = ids.iter().map(|&i| format(i, enc)).collect();
            assert!(
                strings.windows(2).all(|w| w[0] < w[1]),
                "{enc:?}: {strings:?}"
            );
        }
    }

    #[test]
    fn errors_say_what_is_wrong() {
        let e = parse("", Encoding::Decimal).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidId);
        assert!(parse("12a", Encoding::Decimal)
            .unwrap_err()
            .message()
            .contains("position 2"));
        assert!(parse("18446744073709551616", Encoding::Decimal)
            .unwrap_err()
            .message()
            .contains("larger"));
        assert!(parse("abc", Encoding::Hex)
            .unwrap_err()
            .message()
            .contains("exactly 16"));
        assert!(parse("LygHa16AHYG", Encoding::Base62)
            .unwrap_err()
            .message()
            .contains("larger"));
        assert!(parse("G0000000000000", Encoding::Base32)
            .unwrap_err()
            .message()
            .contains("exactly 13"));
        assert!(parse("G000000000000", Encoding::Base32)
            .unwrap_err()
            .message()
            .contains("larger"));
        assert!(parse("U000000000000", Encoding::Base32)
            .unwrap_err()
            .message()
            .contains("'U'"));
        assert!(parse("-1", Encoding::Decimal).is_err());
        assert!(parse("١٢", Encoding::Decimal).is_err());
    }

    #[test]
    fn crockford_reads_its_aliases() {
        assert_eq!(parse("000000000000i", Encoding::Base32).unwrap(), 1);
        assert_eq!(parse("000000000000L", Encoding::Base32).unwrap(), 1);
        assert_eq!(parse("o00000000000z", Encoding::Base32).unwrap(), 31);
    }
}
