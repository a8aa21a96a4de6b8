//! Arguments from JavaScript. A wrong type is a `TypeError`, a number out of range (or not an
//! integer) a `RangeError`, each naming the argument; a BigInt or string that is no ID is the
//! core's `InvalidIdError`.
//!
//! Every `napi_env` and `napi_value` in this crate is the current callback's (its environment,
//! its arguments, or values made during it, held by its handle scope), used on the thread that
//! runs it: what napi requires of every call below. The `SAFETY` notes rely on that and say
//! what else a call needs. The values are read through napi-rs's conversions, each after the
//! value's type was checked.

use crate::errors::{range_error, throw, type_error};
use napi::bindgen_prelude::{BigInt, FromNapiValue};
use napi::{sys, Result, Unknown, ValueType};
use rimeflake::{Error, ErrorKind};

/// The largest integer a Number holds exactly.
const MAX_SAFE: f64 = 9_007_199_254_740_991.0;

/// A JavaScript value of the current call.
#[derive(Clone, Copy)]
pub struct Arg<'n> {
    pub env: sys::napi_env,
    pub value: sys::napi_value,
    /// How messages name it (`id`, `options.workerId`).
    pub name: &'n str,
}

fn describe(t: ValueType) -> &'static str {
    match t {
        ValueType::Undefined => "undefined",
        ValueType::Null => "null",
        ValueType::Boolean => "a boolean",
        ValueType::Number => "a number",
        ValueType::String => "a string",
        ValueType::Symbol => "a symbol",
        ValueType::Object => "an object",
        ValueType::Function => "a function",
        ValueType::BigInt => "a bigint",
        _ => "an external",
    }
}

impl Arg<'_> {
    /// The value as napi-rs's `Unknown`.
    pub fn unknown(&self) -> Unknown<'_> {
        // SAFETY: the current call's env and value.
        unsafe { Unknown::from_raw_unchecked(self.env, self.value) }
    }

    pub fn kind(&self) -> ValueType {
        self.unknown().get_type().unwrap_or(ValueType::Unknown)
    }

    /// The value as `T`, which its type (checked by the caller) is.
    fn read<T: FromNapiValue>(&self) -> Result<T> {
        // SAFETY: the current call's env and value, of the type `T` reads (each caller checked
        // `kind()` first).
        unsafe { T::from_napi_value(self.env, self.value) }
    }

    pub fn is_nullish(&self) -> bool {
        matches!(self.kind(), ValueType::Undefined | ValueType::Null)
    }

    pub fn wrong_type(&self, expected: &str) -> napi::Error {
        type_error(
            self.env,
            &format!(
                "{} must be {expected}, not {}",
                self.name,
                describe(self.kind())
            ),
        )
    }

    /// A Number that is an integer from `min` to `max`.
    pub fn integer(&self, min: f64, max: f64) -> Result<f64> {
        if self.kind() != ValueType::Number {
            return Err(self.wrong_type("a number"));
        }
        let v: f64 = self.read()?;
        if v.fract() != 0.0 || !(min..=max).contains(&v) {
            return Err(range_error(
                self.env,
                &format!(
                    "{} must be an integer from {min} to {max}, got {v}",
                    self.name
                ),
            ));
        }
        Ok(v)
    }

    /// A count of IDs or a number of milliseconds: an integer from 0 to 2^53 - 1.
    pub fn count(&self) -> Result<u64> {
        self.integer(0.0, MAX_SAFE).map(|v| v as u64)
    }

    pub fn string(&self) -> Result<String> {
        if self.kind() != ValueType::String {
            return Err(self.wrong_type("a string"));
        }
        self.read()
    }

    /// An object (any but `null`), for its properties.
    pub fn object(&self) -> Result<napi::bindgen_prelude::Object<'_>> {
        if self.kind() != ValueType::Object {
            return Err(self.wrong_type("an object"));
        }
        self.read()
    }

    pub fn boolean(&self) -> Result<bool> {
        if self.kind() != ValueType::Boolean {
            return Err(self.wrong_type("a boolean"));
        }
        self.read()
    }

    /// A 64-bit word: a bigint from 0 to 2^64 - 1, a decimal string, or a safe-integer Number.
    /// `limit` is the largest value allowed (2^63 - 1 for IDs).
    pub fn word(&self, limit: u64) -> Result<u64> {
        let bad = |why: String| Err(throw(self.env, &Error::new(ErrorKind::InvalidId, why)));
        match self.kind() {
            ValueType::BigInt => {
                let big: BigInt = self.read()?;
                let low = big.words.first().copied().unwrap_or(0);
                let wide = big.words.iter().skip(1).any(|w| *w != 0);
                let negative = big.sign_bit && (low != 0 || wide);
                if negative && !wide && low <= 1 << 63 {
                    bad(format!(
                        "{}: -{low}n is not an ID: IDs are not negative",
                        self.name
                    ))
                } else if negative || wide {
                    bad(format!(
                        "{}: the bigint is not an ID: it is negative or needs more than 64 bits",
                        self.name
                    ))
                } else if low > limit {
                    bad(format!(
                        "{}: {low}n is not an ID: IDs are below 2^63 (the sign bit is always 0)",
                        self.name
                    ))
                } else {
                    Ok(low)
                }
            }
            ValueType::String => {
                let text = self.string()?;
                match rimeflake::parse(&text, rimeflake::Encoding::Decimal) {
                    Ok(v) if v <= limit => Ok(v),
                    Ok(v) => bad(format!(
                        "{}: {v} is not an ID: IDs are below 2^63",
                        self.name
                    )),
                    Err(e) => Err(throw(self.env, &e)),
                }
            }
            ValueType::Number => {
                // Above 2^53 a Number is not exact: the ID it stands for is unknown.
                let v = self.integer(0.0, MAX_SAFE)?;
                Ok(v as u64)
            }
            _ => Err(self.wrong_type("a bigint, a decimal string or a number")),
        }
    }
}
