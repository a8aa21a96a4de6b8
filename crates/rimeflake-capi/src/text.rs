//! String forms of IDs (`rimeflake_format`, `rimeflake_parse`) and the tracing ID
//! (`rimeflake_global_id`), written into the caller's buffers.

use crate::boundary::{ffi_boundary, out, text, write_text};
use crate::status::rimeflake_status;
use core_rimeflake::Encoding;
use std::ffi::c_char;

/// A buffer of this many bytes holds any ID in any encoding, with its NUL (20 decimal digits).
pub const RIMEFLAKE_FORMAT_MAX: usize = 21;
/// A buffer of this many bytes holds any rimeflake_global_id, with its NUL.
pub const RIMEFLAKE_GLOBAL_ID_MAX: usize = 75;

/// `id` as text of `encoding` (`"dec"`, `"hex"`, `"base62"` or `"base32"`; the fixed-width ones
/// sort like the numbers), NUL-terminated into `buf` of `capacity` bytes
/// (RIMEFLAKE_FORMAT_MAX always suffices), its length into `*len` unless NULL.
///
/// # Safety
/// `encoding` a NUL-terminated string; `buf` writable for `capacity` bytes; `len` NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn rimeflake_format(
    id: u64,
    encoding: *const c_char,
    buf: *mut c_char,
    capacity: usize,
    len: *mut usize,
) -> rimeflake_status {
    ffi_boundary!({
        // SAFETY: `encoding` is a NUL-terminated string (this function's contract).
        let encoding = Encoding::from_name(unsafe { text(encoding, "encoding") }?)?;
        // SAFETY: `buf` NULL or writable for `capacity` bytes, `len` NULL or writable (this
        // function's contract).
        unsafe { write_text(&core_rimeflake::format(id, encoding), buf, capacity, len) }
    })
}

/// The ID that `text` spells in `encoding`, into `*id`; RIMEFLAKE_INVALID_ID saying what is
/// wrong (length, a character and where, a value past 2^64 - 1).
///
/// # Safety
/// `text` and `encoding` NUL-terminated strings; `id` writable.
#[no_mangle]
pub unsafe extern "C" fn rimeflake_parse(
    text: *const c_char,
    encoding: *const c_char,
    id: *mut u64,
) -> rimeflake_status {
    ffi_boundary!({
        // SAFETY: `encoding` is a NUL-terminated string (this function's contract).
        let encoding = Encoding::from_name(unsafe { self::text(encoding, "encoding") }?)?;
        // SAFETY: `id` is writable for a u64 (this function's contract).
        let id = unsafe { out(id, "id") }?;
        if text.is_null() {
            return Err(crate::boundary::Failure::invalid("text is NULL"));
        }
        // Text that is not UTF-8 cannot spell an ID: the core says so, as for any other.
        // SAFETY: `text` is not NULL (checked above) and NUL-terminated, live during the call
        // (this function's contract).
        let bytes = unsafe { std::ffi::CStr::from_ptr(text) }.to_bytes();
        let s = String::from_utf8_lossy(bytes);
        *id = core_rimeflake::parse(&s, encoding)?;
        Ok(())
    })
}

/// A new ID in the SkyWalking agent's GlobalIdGenerator format
/// (`{32 hex digits}.{thread token}.{ms * 10000 + sequence}`), unique per process and thread,
/// NUL-terminated into `buf` of `capacity` bytes (RIMEFLAKE_GLOBAL_ID_MAX always suffices), its
/// length into `*len` unless NULL.
///
/// # Safety
/// `buf` writable for `capacity` bytes; `len` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn rimeflake_global_id(
    buf: *mut c_char,
    capacity: usize,
    len: *mut usize,
) -> rimeflake_status {
    ffi_boundary!({
        // SAFETY: `buf` NULL or writable for `capacity` bytes, `len` NULL or writable (this
        // function's contract).
        core_rimeflake::skywalking::with_global_id(|s| unsafe { write_text(s, buf, capacity, len) })
    })
}
