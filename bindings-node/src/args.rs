//! Arguments from JavaScript. A wrong type is a `TypeError`, a number out of range (or not an
//! integer) a `RangeError`, each naming the argument; a BigInt or string that is no ID is the
//! core's `InvalidIdError`.
//!
//! Every `napi_env` and `napi_value` in this crate is the current callback's (its environment,
//! its arguments, or values made during it, held by its handle scope), used on the thread that
//! runs it: what napi requires of every call below. The `SAFETY` notes rely on that and say
//! what else a call needs.

use crate::errors::{range_error, throw, type_error};
use napi::{sys, Result};
use rimeflake::{Error, ErrorKind};
use std::ptr;

/// The largest integer a Number holds exactly.
const MAX_SAFE: f64 = 9_007_199_254_740_991.0;

/// A JavaScript value of the current call.
#[derive(Clone, Copy)]
pub struct Arg {
    pub env: sys::napi_env,
    pub value: sys::napi_value,
    pub name: &'static str,
}

pub fn type_of(env: sys::napi_env, value: sys::napi_value) -> sys::napi_valuetype {
    let mut t = sys::ValueType::napi_undefined;
    // SAFETY: `env` and `value` are the current call's; `t` is a local to write.
    unsafe { sys::napi_typeof(env, value, &mut t) };
    t
}

fn describe(t: sys::napi_valuetype) -> &'static str {
    match t {
        sys::ValueType::napi_undefined => "undefined",
        sys::ValueType::napi_null => "null",
        sys::ValueType::napi_boolean => "a boolean",
        sys::ValueType::napi_number => "a number",
        sys::ValueType::napi_string => "a string",
        sys::ValueType::napi_symbol => "a symbol",
        sys::ValueType::napi_object => "an object",
        sys::ValueType::napi_function => "a function",
        sys::ValueType::napi_bigint => "a bigint",
        _ => "an external",
    }
}

impl Arg {
    pub fn kind(&self) -> sys::napi_valuetype {
        type_of(self.env, self.value)
    }

    pub fn is_nullish(&self) -> bool {
        matches!(
            self.kind(),
            sys::ValueType::napi_undefined | sys::ValueType::napi_null
        )
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
        if self.kind() != sys::ValueType::napi_number {
            return Err(self.wrong_type("a number"));
        }
        let mut v = 0f64;
        // SAFETY: the current call's env and value (a number, checked above); `v` is a local.
        unsafe { sys::napi_get_value_double(self.env, self.value, &mut v) };
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
        if self.kind() != sys::ValueType::napi_string {
            return Err(self.wrong_type("a string"));
        }
        let mut len = 0usize;
        // SAFETY: the current call's env and value (a string, checked above); a null buffer asks
        // for the length only, into the local `len`.
        unsafe {
            sys::napi_get_value_string_utf8(self.env, self.value, ptr::null_mut(), 0, &mut len)
        };
        let mut buf = vec![0u8; len + 1];
        // SAFETY: as above; `buf` is writable for the `len + 1` bytes passed (the string and
        // its NUL), and napi writes at most that many.
        unsafe {
            sys::napi_get_value_string_utf8(
                self.env,
                self.value,
                buf.as_mut_ptr().cast(),
                len + 1,
                &mut len,
            )
        };
        buf.truncate(len);
        Ok(String::from_utf8_lossy(&buf).into_owned())
    }

    pub fn boolean(&self) -> Result<bool> {
        if self.kind() != sys::ValueType::napi_boolean {
            return Err(self.wrong_type("a boolean"));
        }
        let mut v = false;
        // SAFETY: the current call's env and value (a boolean, checked above); `v` is a local.
        unsafe { sys::napi_get_value_bool(self.env, self.value, &mut v) };
        Ok(v)
    }

    /// A 64-bit word: a bigint from 0 to 2^64 - 1, a decimal string, or a safe-integer Number.
    /// `limit` is the largest value allowed (2^63 - 1 for IDs).
    pub fn word(&self, limit: u64) -> Result<u64> {
        let bad = |why: String| Err(throw(self.env, &Error::new(ErrorKind::InvalidId, why)));
        match self.kind() {
            sys::ValueType::napi_bigint => {
                let (mut v, mut lossless) = (0u64, false);
                // SAFETY: the current call's env and value (a bigint, checked above); locals to write.
                unsafe {
                    sys::napi_get_value_bigint_uint64(self.env, self.value, &mut v, &mut lossless)
                };
                let (mut signed, mut fits) = (0i64, false);
                // SAFETY: as above.
                unsafe {
                    sys::napi_get_value_bigint_int64(self.env, self.value, &mut signed, &mut fits)
                };
                if fits && signed < 0 {
                    bad(format!(
                        "{}: {signed}n is not an ID: IDs are not negative",
                        self.name
                    ))
                } else if !lossless && !fits {
                    bad(format!(
                        "{}: the bigint is not an ID: it is negative or needs more than 64 bits",
                        self.name
                    ))
                } else if v > limit {
                    bad(format!(
                        "{}: {v}n is not an ID: IDs are below 2^63 (the sign bit is always 0)",
                        self.name
                    ))
                } else {
                    Ok(v)
                }
            }
            sys::ValueType::napi_string => {
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
            sys::ValueType::napi_number => {
                // Above 2^53 a Number is not exact: the ID it stands for is unknown.
                let v = self.integer(0.0, MAX_SAFE)?;
                Ok(v as u64)
            }
            _ => Err(self.wrong_type("a bigint, a decimal string or a number")),
        }
    }
}
