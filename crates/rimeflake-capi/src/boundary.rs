//! The C boundary: one macro at every exported function catches panics and turns a failure into
//! a status and a thread-local message; helpers check the pointers and text a caller passes.
//!
//! On the path that succeeds, the boundary costs nothing: `catch_unwind` is a landing pad that
//! only a panic reaches, and every failure is built in `#[cold]` code.

use crate::status::rimeflake_status;
use std::any::Any;
use std::cell::RefCell;
use std::ffi::{c_char, CStr, CString};

/// Why a call failed: its status and a message for `rimeflake_last_error_message`.
#[derive(Debug)]
pub(crate) struct Failure {
    status: rimeflake_status,
    message: String,
}

/// What the body of an exported function returns.
pub(crate) type Outcome = Result<(), Failure>;

impl Failure {
    #[cold]
    pub(crate) fn new(status: rimeflake_status, message: impl Into<String>) -> Self {
        Failure {
            status,
            message: message.into(),
        }
    }

    #[cold]
    pub(crate) fn invalid(message: impl Into<String>) -> Self {
        Failure::new(rimeflake_status::RIMEFLAKE_INVALID_ARGUMENT, message)
    }
}

impl From<core_rimeflake::Error> for Failure {
    #[cold]
    fn from(e: core_rimeflake::Error) -> Self {
        Failure::new(rimeflake_status::of(e.kind()), e.message())
    }
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// Runs `$body` (a block evaluating to [`Outcome`]) with panics caught, and gives its status.
macro_rules! ffi_boundary {
    ($body:block) => {
        $crate::boundary::finish(::std::panic::catch_unwind(::std::panic::AssertUnwindSafe(
            || -> $crate::boundary::Outcome { $body },
        )))
    };
}
pub(crate) use ffi_boundary;

/// The status of a call's outcome; a failure's message is kept for this thread.
#[inline(always)]
pub(crate) fn finish(outcome: std::thread::Result<Outcome>) -> rimeflake_status {
    match outcome {
        Ok(Ok(())) => rimeflake_status::RIMEFLAKE_OK,
        Ok(Err(failure)) => record(failure),
        Err(payload) => record(panicked(payload)),
    }
}

#[cold]
#[inline(never)]
fn record(failure: Failure) -> rimeflake_status {
    // A message cannot hold NUL in C: cut it there (core messages never contain one).
    let text = failure.message.split('\0').next().unwrap_or_default();
    let text = CString::new(text).unwrap_or_default();
    // During thread teardown the slot may be gone: the status still tells what happened.
    let _ = LAST_ERROR.try_with(|slot| *slot.borrow_mut() = text);
    failure.status
}

#[cold]
fn panicked(payload: Box<dyn Any + Send>) -> Failure {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_string());
    Failure::new(
        rimeflake_status::RIMEFLAKE_PANIC,
        format!("rimeflake panicked (a bug: please report it): {what}"),
    )
}

/// The message of the last call that failed on this thread ("" if none has): NUL-terminated,
/// valid until the next call that fails on this thread. Calls that succeed leave it as it was.
#[no_mangle]
pub extern "C" fn rimeflake_last_error_message() -> *const c_char {
    thread_local! {
        static EMPTY: CString = CString::default();
    }
    // The pointer stays valid after `with` returns: the CString lives in this thread's slot
    // until a later failure replaces it.
    LAST_ERROR
        .try_with(|slot| slot.borrow().as_ptr())
        .unwrap_or(c"".as_ptr())
}

/// `ptr` as a shared reference: INVALID_ARGUMENT when NULL or misaligned.
///
/// # Safety
/// A non-NULL `ptr` must point to a live `T` for `'a`.
#[inline(always)]
pub(crate) unsafe fn arg<'a, T>(ptr: *const T, name: &'static str) -> Result<&'a T, Failure> {
    if ptr.is_null() || !ptr.is_aligned() {
        return Err(bad_pointer(name, ptr.is_null()));
    }
    // SAFETY: non-NULL and aligned; the caller vouches for the rest.
    Ok(unsafe { &*ptr })
}

/// `ptr` as an out-parameter: INVALID_ARGUMENT when NULL or misaligned.
///
/// # Safety
/// A non-NULL `ptr` must point to writable memory for a `T`, unaliased for `'a`.
#[inline(always)]
pub(crate) unsafe fn out<'a, T>(ptr: *mut T, name: &'static str) -> Result<&'a mut T, Failure> {
    let ptr = out_ptr(ptr, name)?;
    // SAFETY: non-NULL and aligned (out_ptr); the caller vouches for writable, unaliased
    // memory for a T during 'a.
    Ok(unsafe { &mut *ptr })
}

/// `ptr` checked as [`out`] checks it, and kept a raw pointer: for memory larger than one `T`
/// (an array, a newer header's struct), which a `&mut T` would not cover.
#[inline(always)]
pub(crate) fn out_ptr<T>(ptr: *mut T, name: &'static str) -> Result<*mut T, Failure> {
    if ptr.is_null() || !ptr.is_aligned() {
        return Err(bad_pointer(name, ptr.is_null()));
    }
    Ok(ptr)
}

#[cold]
pub(crate) fn bad_pointer(name: &str, null: bool) -> Failure {
    Failure::invalid(if null {
        format!("{name} is NULL")
    } else {
        format!("{name} is not aligned for its type")
    })
}

/// NUL-terminated UTF-8 text: INVALID_ARGUMENT when NULL or not UTF-8.
///
/// # Safety
/// A non-NULL `ptr` must point to a NUL-terminated string live for `'a`.
pub(crate) unsafe fn text<'a>(ptr: *const c_char, name: &str) -> Result<&'a str, Failure> {
    if ptr.is_null() {
        return Err(bad_pointer(name, true));
    }
    // SAFETY: the caller vouches for the NUL terminator.
    let bytes = unsafe { CStr::from_ptr(ptr) };
    bytes
        .to_str()
        .map_err(|e| Failure::invalid(format!("{name} is not UTF-8 ({e})")))
}

/// As [`text`], but NULL is `None` (the setting is left to the core's defaults).
///
/// # Safety
/// As [`text`].
pub(crate) unsafe fn optional_text<'a>(
    ptr: *const c_char,
    name: &str,
) -> Result<Option<&'a str>, Failure> {
    if ptr.is_null() {
        return Ok(None);
    }
    // SAFETY: as `text`.
    unsafe { text(ptr, name) }.map(Some)
}

/// Copies `s` and a NUL into the caller's `buf` of `capacity` bytes, and its length (without
/// the NUL) into `len` when not NULL; BUFFER_TOO_SMALL, writing nothing, when it does not fit.
///
/// # Safety
/// A non-NULL `buf` must be writable for `capacity` bytes; `len` NULL or writable.
pub(crate) unsafe fn write_text(
    s: &str,
    buf: *mut c_char,
    capacity: usize,
    len: *mut usize,
) -> Outcome {
    if buf.is_null() {
        return Err(bad_pointer("buf", true));
    }
    if !len.is_null() && !len.is_aligned() {
        return Err(bad_pointer("len", false));
    }
    if s.len() >= capacity {
        return Err(Failure::new(
            rimeflake_status::RIMEFLAKE_BUFFER_TOO_SMALL,
            format!(
                "the text needs {} bytes with its NUL, and the buffer has {capacity}",
                s.len() + 1
            ),
        ));
    }
    // SAFETY: `buf` holds `capacity` > s.len() bytes, as the caller vouches.
    unsafe {
        std::ptr::copy_nonoverlapping(s.as_ptr(), buf.cast::<u8>(), s.len());
        *buf.add(s.len()) = 0;
        if !len.is_null() {
            *len = s.len();
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn last() -> String {
        // SAFETY: rimeflake_last_error_message always gives a NUL-terminated string that
        // stays valid until this thread's next failing call (none before the copy below).
        unsafe { CStr::from_ptr(rimeflake_last_error_message()) }
            .to_str()
            .unwrap()
            .to_string()
    }

    /// A panic inside the boundary becomes RIMEFLAKE_PANIC with its text, and the out-parameter
    /// the body would have written keeps its value.
    #[test]
    fn a_panic_is_caught_and_reported() {
        let mut out = 7u64;
        let status = ffi_boundary!({
            // SAFETY: a pointer to a live local u64, used by nothing else meanwhile.
            let o = unsafe { super::out(&mut out as *mut u64, "out") }?;
            if o == &7 {
                panic!("deliberate");
            }
            *o = 1;
            Ok(())
        });
        assert_eq!(status, rimeflake_status::RIMEFLAKE_PANIC);
        assert_eq!(out, 7);
        assert!(last().contains("deliberate"), "{}", last());
    }

    #[test]
    fn a_core_error_keeps_its_kind_and_message() {
        let status = ffi_boundary!({
            core_rimeflake::Layout::preset("nope")?;
            Ok(())
        });
        assert_eq!(status, rimeflake_status::RIMEFLAKE_CONFIG);
        assert!(last().contains("nope"), "{}", last());
    }

    #[test]
    fn misaligned_and_null_pointers_are_refused() {
        let words = [0u64; 2];
        let odd = (words.as_ptr() as *const u8).wrapping_add(1) as *const u64;
        // SAFETY: arg reads nothing through a misaligned or NULL pointer: it refuses them.
        assert!(unsafe { arg(odd, "x") }.is_err());
        // SAFETY: as above.
        assert!(unsafe { arg(std::ptr::null::<u64>(), "x") }.is_err());
    }
}
