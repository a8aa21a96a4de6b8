//! Arguments from Python: IDs and counts are `int` (not `bool`, not `float`), and a wrong value
//! says which and why.

use crate::errors::Result;
use pyo3::exceptions::{PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt};

/// The largest ID: IDs keep the sign bit 0.
const MAX_ID: u64 = (1 << 63) - 1;

fn int_of<'a, 'py>(what: &str, obj: &'a Bound<'py, PyAny>) -> PyResult<&'a Bound<'py, PyInt>> {
    match obj.cast::<PyInt>() {
        Ok(i) if !obj.is_instance_of::<PyBool>() => Ok(i),
        _ => Err(PyTypeError::new_err(format!(
            "{what} must be an int, not {}",
            obj.get_type().name()?
        ))),
    }
}

/// An ID: an `int` from 0 to 2^63 - 1. Anything else is an `InvalidIdError` (a `ValueError`),
/// or a `TypeError` for a non-integer.
pub fn id(obj: &Bound<'_, PyAny>) -> Result<u64> {
    let int = int_of("id", obj)?;
    let bad = |why: &str| {
        rimeflake::Error::new(
            rimeflake::ErrorKind::InvalidId,
            format!("{int} is not an ID: {why}"),
        )
    };
    match int.extract::<u64>() {
        Ok(v) if v <= MAX_ID => Ok(v),
        Ok(_) => Err(bad("IDs are below 2^63 (the sign bit is always 0)").into()),
        Err(_) if int.lt(0)? => Err(bad("IDs are not negative").into()),
        Err(_) => Err(bad("IDs are below 2^63 (the sign bit is always 0)").into()),
    }
}

/// A 64-bit number for the string encodings, which cover the whole `u64` range (as the shared
/// vectors do): an `int` from 0 to 2^64 - 1, else `InvalidIdError` (or `TypeError`).
pub fn word(obj: &Bound<'_, PyAny>) -> Result<u64> {
    let int = int_of("id", obj)?;
    match int.extract::<u64>() {
        Ok(v) => Ok(v),
        Err(_) => {
            let why = if int.lt(0)? {
                "IDs are not negative"
            } else {
                "it needs more than 64 bits"
            };
            Err(rimeflake::Error::new(
                rimeflake::ErrorKind::InvalidId,
                format!("{int} is not an ID: {why}"),
            )
            .into())
        }
    }
}

/// A count of IDs: an `int` from 0 to `isize::MAX`.
pub fn count(obj: &Bound<'_, PyAny>) -> PyResult<usize> {
    let int = int_of("n", obj)?;
    match int.extract::<i64>() {
        Ok(n) if n < 0 => Err(PyValueError::new_err(format!(
            "n must not be negative, got {n}"
        ))),
        Ok(n) if n as u64 <= isize::MAX as u64 => Ok(n as usize),
        _ => Err(PyOverflowError::new_err(format!("n is too large: {int}"))),
    }
}
