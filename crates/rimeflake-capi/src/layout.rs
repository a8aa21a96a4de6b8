//! `rimeflake_layout` (opaque): a validated bit layout, from a preset name or a layout spec;
//! composing and decoding IDs.

use crate::boundary::{arg, ffi_boundary, out, text, write_text};
use crate::interim::LayoutSpec;
use crate::status::rimeflake_status;
use core_rimeflake::{Layout, Parts};
use std::ffi::c_char;

/// A bit layout (opaque): how the 63 bits of an ID are shared between clock-id, time, worker
/// and sequence. Immutable, so it may be shared between threads.
#[allow(non_camel_case_types)]
pub struct rimeflake_layout(Layout);

impl rimeflake_layout {
    pub(crate) fn boxed(layout: Layout) -> *mut rimeflake_layout {
        Box::into_raw(Box::new(rimeflake_layout(layout)))
    }
}

/// The parts of an ID.
#[repr(C)]
#[derive(Clone, Copy)]
#[allow(non_camel_case_types)]
pub struct rimeflake_parts {
    /// Which clock-id the generator was on (0 for layouts without clock-id bits).
    pub clock_id: u64,
    /// The start of the ID's time unit, in Unix milliseconds.
    pub timestamp_ms: u64,
    /// The worker ID.
    pub worker_id: u64,
    /// The sequence number within the time unit.
    pub sequence: u64,
}

/// A buffer of this many bytes holds any layout's description (rimeflake_layout_describe).
pub const RIMEFLAKE_LAYOUT_DESCRIBE_MAX: usize = 256;

/// The layout `spec` names, into `*layout`: a preset (`default`, `twitter`, `sonyflake`,
/// `sonyflake_v2`, `js_safe`; `baidu` needs `epoch_ms=`) or a layout spec such as
/// `"clock_id=0,time=41,worker=10,sequence=12,epoch_ms=1420070400000"`. RIMEFLAKE_CONFIG names
/// what is wrong. Free it with rimeflake_layout_free.
///
/// # Safety
/// `spec` a NUL-terminated string; `layout` writable.
#[no_mangle]
pub unsafe extern "C" fn rimeflake_layout_new(
    spec: *const c_char,
    layout: *mut *mut rimeflake_layout,
) -> rimeflake_status {
    ffi_boundary!({
        let spec = unsafe { text(spec, "spec") }?;
        let layout = unsafe { out(layout, "layout") }?;
        *layout = rimeflake_layout::boxed(Layout::from_spec(spec)?);
        Ok(())
    })
}

/// The preset called `name` only (no layout spec), into `*layout`.
///
/// # Safety
/// As rimeflake_layout_new.
#[no_mangle]
pub unsafe extern "C" fn rimeflake_layout_preset(
    name: *const c_char,
    layout: *mut *mut rimeflake_layout,
) -> rimeflake_status {
    ffi_boundary!({
        let name = unsafe { text(name, "name") }?;
        let layout = unsafe { out(layout, "layout") }?;
        *layout = rimeflake_layout::boxed(Layout::preset(name)?);
        Ok(())
    })
}

/// Frees a layout. NULL is ignored.
///
/// # Safety
/// `layout` NULL or from this library, not yet freed.
#[no_mangle]
pub unsafe extern "C" fn rimeflake_layout_free(layout: *mut rimeflake_layout) {
    if !layout.is_null() {
        // SAFETY: made by Box::into_raw, freed once, as the caller vouches.
        drop(unsafe { Box::from_raw(layout) });
    }
}

/// The layout as a layout spec (a preset keeps its name), which rimeflake_layout_new reads back
/// to an equal layout; NUL-terminated into `buf` of `capacity` bytes
/// (RIMEFLAKE_LAYOUT_DESCRIBE_MAX always suffices), its length into `*len` unless NULL.
///
/// # Safety
/// `layout` from this library; `buf` writable for `capacity` bytes; `len` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn rimeflake_layout_describe(
    layout: *const rimeflake_layout,
    buf: *mut c_char,
    capacity: usize,
    len: *mut usize,
) -> rimeflake_status {
    ffi_boundary!({
        let layout = unsafe { arg(layout, "layout") }?;
        unsafe { write_text(&layout.0.describe(), buf, capacity, len) }
    })
}

/// The parts of `id` under `layout`, into `*parts`; RIMEFLAKE_INVALID_ID when no generator of
/// this layout could have made `id` (its sign bit is set, ...).
///
/// # Safety
/// `layout` from this library; `parts` writable.
#[no_mangle]
pub unsafe extern "C" fn rimeflake_decode(
    layout: *const rimeflake_layout,
    id: u64,
    parts: *mut rimeflake_parts,
) -> rimeflake_status {
    ffi_boundary!({
        let layout = unsafe { arg(layout, "layout") }?;
        let parts = unsafe { out(parts, "parts") }?;
        let p = layout.0.decode(id)?;
        *parts = rimeflake_parts {
            clock_id: p.clock_id,
            timestamp_ms: p.timestamp_ms,
            worker_id: p.worker_id,
            sequence: p.sequence,
        };
        Ok(())
    })
}

/// The ID of `parts` under `layout` (`timestamp_ms` rounded down to the time unit), into `*id`;
/// RIMEFLAKE_CONFIG when a part does not fit its field, RIMEFLAKE_TIME_RANGE for a time outside
/// the layout's.
///
/// # Safety
/// `layout` from this library; `parts` readable; `id` writable.
#[no_mangle]
pub unsafe extern "C" fn rimeflake_compose(
    layout: *const rimeflake_layout,
    parts: *const rimeflake_parts,
    id: *mut u64,
) -> rimeflake_status {
    ffi_boundary!({
        let layout = unsafe { arg(layout, "layout") }?;
        let p = unsafe { arg(parts, "parts") }?;
        let id = unsafe { out(id, "id") }?;
        *id = layout.0.compose(&Parts {
            clock_id: p.clock_id,
            timestamp_ms: p.timestamp_ms,
            worker_id: p.worker_id,
            sequence: p.sequence,
        })?;
        Ok(())
    })
}
