//! Arguments from Python. Integers are anything with `__index__` (an `int`, a NumPy integer),
//! as Python's own APIs take them, but never a `bool` or a `float`; a wrong value says which
//! argument and why.

use crate::errors::Result;
use pyo3::exceptions::{PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt};
use rimeflake::{Error, ErrorKind};

/// The largest ID: IDs keep the sign bit 0.
const MAX_ID: u64 = (1 << 63) - 1;

/// `operator.index(obj)`, refusing `bool` (an `int` subclass, but `True` is no worker ID).
fn index<'py>(what: &str, obj: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyInt>> {
    let not_an_integer = || -> PyResult<PyErr> {
        Ok(PyTypeError::new_err(format!(
            "{what} must be an integer, not {}",
            obj.get_type().name()?
        )))
    };
    if obj.is_instance_of::<PyBool>() {
        return Err(not_an_integer()?);
    }
    if let Ok(int) = obj.cast::<PyInt>() {
        return Ok(int.clone());
    }
    // SAFETY: `obj` is a live object and we are attached; the result is a new reference or NULL.
    let ptr = unsafe { pyo3::ffi::PyNumber_Index(obj.as_ptr()) };
    if ptr.is_null() {
        drop(PyErr::take(obj.py()));
        return Err(not_an_integer()?);
    }
    // SAFETY: a new, non-null reference to an int (PyNumber_Index returns an exact int).
    let int = unsafe { Bound::from_owned_ptr(obj.py(), ptr) };
    Ok(int.cast_into::<PyInt>()?)
}

/// An unsigned option such as `worker_id` or `max_wait_ms`: an integer from 0 to `max`, else a
/// `ConfigError` that names the argument (`TypeError` for a non-integer).
pub fn option(what: &str, obj: &Bound<'_, PyAny>, max: u64) -> Result<u64> {
    let int = index(what, obj)?;
    match int.extract::<u64>() {
        Ok(v) if v <= max => Ok(v),
        _ if int.lt(0)? => Err(Error::new(
            ErrorKind::Config,
            format!("{what}: must not be negative, got {int}"),
        )
        .into()),
        _ => Err(Error::new(
            ErrorKind::Config,
            format!("{what}: at most {max}, got {int}"),
        )
        .into()),
    }
}

/// An ID: an integer from 0 to 2^63 - 1. Anything else is an `InvalidIdError` (a `ValueError`),
/// or a `TypeError` for a non-integer.
pub fn id(obj: &Bound<'_, PyAny>) -> Result<u64> {
    let int = index("id", obj)?;
    let bad = |why: &str| Error::new(ErrorKind::InvalidId, format!("{int} is not an ID: {why}"));
    match int.extract::<u64>() {
        Ok(v) if v <= MAX_ID => Ok(v),
        Err(_) if int.lt(0)? => Err(bad("IDs are not negative").into()),
        _ => Err(bad("IDs are below 2^63 (the sign bit is always 0)").into()),
    }
}

/// A 64-bit number for the string encodings, which cover the whole `u64` range (as the shared
/// vectors do): an integer from 0 to 2^64 - 1, else `InvalidIdError` (or `TypeError`).
pub fn word(obj: &Bound<'_, PyAny>) -> Result<u64> {
    let int = index("id", obj)?;
    match int.extract::<u64>() {
        Ok(v) => Ok(v),
        Err(_) => {
            let why = if int.lt(0)? {
                "IDs are not negative"
            } else {
                "it needs more than 64 bits"
            };
            Err(Error::new(ErrorKind::InvalidId, format!("{int} is not an ID: {why}")).into())
        }
    }
}

/// A count of IDs: an integer from 0 to `isize::MAX`.
pub fn count(obj: &Bound<'_, PyAny>) -> PyResult<usize> {
    let int = index("n", obj)?;
    match int.extract::<i64>() {
        Ok(n) if n < 0 => Err(PyValueError::new_err(format!(
            "n must not be negative, got {n}"
        ))),
        Ok(n) if n as u64 <= isize::MAX as u64 => Ok(n as usize),
        _ => Err(PyOverflowError::new_err(format!("n is too large: {int}"))),
    }
}
