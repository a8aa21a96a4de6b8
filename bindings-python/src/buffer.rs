//! A writable, C-contiguous buffer of unsigned 64-bit items, borrowed through the buffer
//! protocol so `fill` writes into the caller's memory without a copy.
//!
//! PyO3's `PyBuffer` needs the limited API of 3.11; the abi3 wheel targets 3.9, so the two
//! functions and the struct (unchanged since Python 3.3, and in the stable ABI since 3.11) are
//! declared here. CPython 3.9 and 3.10 export them from the interpreter on Unix; on Windows,
//! where abi3 modules link `python3.dll`, wheels for 3.9 and 3.10 are version-specific (see
//! `.github/workflows/wheels.yml`).

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::atomic::AtomicU64;

#[repr(C)]
struct RawBuffer {
    buf: *mut c_void,
    obj: *mut pyo3::ffi::PyObject,
    len: isize,
    itemsize: isize,
    readonly: c_int,
    ndim: c_int,
    format: *mut c_char,
    shape: *mut isize,
    strides: *mut isize,
    suboffsets: *mut isize,
    internal: *mut c_void,
}

extern "C" {
    fn PyObject_GetBuffer(
        obj: *mut pyo3::ffi::PyObject,
        view: *mut RawBuffer,
        flags: c_int,
    ) -> c_int;
    fn PyBuffer_Release(view: *mut RawBuffer);
}

/// `PyBUF_RECORDS_RO`: strides and format, read-only allowed (so a read-only buffer gets our
/// own error, not a generic `BufferError`).
const PYBUF_RECORDS_RO: c_int = 0x0010 | 0x0008 | 0x0004;

/// A held buffer export; released on drop.
pub struct U64Buffer {
    view: Box<RawBuffer>,
}

// SAFETY: the export pins the memory (the exporter refuses to resize while it is held); the
// binding writes through it (atomically) only while it keeps the buffer alive, as `fill` does.
unsafe impl Send for U64Buffer {}

impl U64Buffer {
    /// Borrows `obj`'s buffer: `TypeError` for an object without one or a read-only one,
    /// `ValueError` for items that are not unsigned 64-bit integers or a non-contiguous view.
    pub fn get(obj: &Bound<'_, PyAny>) -> PyResult<Self> {
        // SAFETY: an all-zero Py_buffer is a valid "empty" value; GetBuffer fills it.
        let mut view: Box<RawBuffer> = Box::new(unsafe { std::mem::zeroed() });
        // SAFETY: `obj` is a live object (we hold the GIL or are attached), `view` is writable.
        if unsafe { PyObject_GetBuffer(obj.as_ptr(), &mut *view, PYBUF_RECORDS_RO) } != 0 {
            let err = PyErr::take(obj.py()).unwrap_or_else(|| {
                PyTypeError::new_err("object does not support the buffer protocol")
            });
            if err.is_instance_of::<pyo3::exceptions::PyBufferError>(obj.py()) {
                return Err(PyTypeError::new_err(format!(
                    "fill needs a writable buffer: {err}"
                )));
            }
            return Err(err);
        }
        let held = U64Buffer { view };
        held.check()?;
        Ok(held)
    }

    fn check(&self) -> PyResult<()> {
        let v = &*self.view;
        if v.readonly != 0 {
            return Err(PyTypeError::new_err(
                "fill needs a writable buffer, and this one is read-only",
            ));
        }
        let format = if v.format.is_null() {
            "B".to_string()
        } else {
            // SAFETY: a non-null format is a NUL-terminated string owned by the export.
            unsafe { CStr::from_ptr(v.format) }
                .to_string_lossy()
                .into_owned()
        };
        let native = format.trim_start_matches('@').trim_start_matches('=');
        let little = format.trim_start_matches('<');
        let unsigned_u64 = v.itemsize == 8
            && (matches!(native, "Q" | "L")
                || (cfg!(target_endian = "little") && matches!(little, "Q" | "L")));
        if !unsigned_u64 {
            return Err(PyValueError::new_err(format!(
                "fill needs a buffer of unsigned 64-bit items (array('Q'), numpy.uint64), not \
                 format {format:?} with {}-byte items",
                v.itemsize
            )));
        }
        if v.len % 8 != 0
            || (v.len > 0 && (v.buf as usize) % std::mem::align_of::<AtomicU64>() != 0)
        {
            return Err(PyValueError::new_err(
                "fill needs a buffer aligned to 8 bytes",
            ));
        }
        if !self.c_contiguous() {
            return Err(PyValueError::new_err("fill needs a contiguous buffer"));
        }
        Ok(())
    }

    fn c_contiguous(&self) -> bool {
        let v = &*self.view;
        if v.strides.is_null() || v.len == 0 {
            return true;
        }
        // SAFETY: with strides requested, shape and strides hold `ndim` items each.
        let (shape, strides) = unsafe {
            (
                std::slice::from_raw_parts(v.shape, v.ndim as usize),
                std::slice::from_raw_parts(v.strides, v.ndim as usize),
            )
        };
        let mut expect = v.itemsize;
        for (&n, &s) in shape.iter().zip(strides).rev() {
            if n > 1 && s != expect {
                return false;
            }
            expect *= n;
        }
        true
    }

    /// The items, to write IDs into. Atomic, because the interpreter is released while they
    /// are written and another thread may read or write the same memory meanwhile.
    pub fn as_atomic_slice(&self) -> &[AtomicU64] {
        let v = &*self.view;
        if v.len == 0 {
            return &[];
        }
        // SAFETY: checked above: writable, contiguous, 8-byte items, aligned to 8 (AtomicU64's
        // alignment), `len` bytes, pinned while the export is held (as long as `self`).
        unsafe { std::slice::from_raw_parts(v.buf.cast::<AtomicU64>(), v.len as usize / 8) }
    }
}

impl Drop for U64Buffer {
    fn drop(&mut self) {
        // Releasing needs the interpreter: attach (a no-op when already attached). When it is
        // gone (finalized), the export goes with it.
        // SAFETY: the view was filled by a successful PyObject_GetBuffer and is released once.
        Python::try_attach(|_| unsafe { PyBuffer_Release(&mut *self.view) });
    }
}
