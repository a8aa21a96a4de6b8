//! `rimeflake_layout` (opaque): a validated bit layout, from a preset name or a layout spec;
//! composing and decoding IDs.

use crate::boundary::{arg, ffi_boundary, out, text, write_text};
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
    /// The worker ID: the whole worker field, or, for a layout with a datacenter part (such as
    /// `twitter`) when has_datacenter_id is true, the part below it.
    pub worker_id: u64,
    /// The sequence number within the time unit.
    pub sequence: u64,
    /// The datacenter part of the worker field, when has_datacenter_id is true.
    pub datacenter_id: u64,
    /// Whether datacenter_id is given: decode sets it for layouts with a datacenter part;
    /// compose takes either form (false: worker_id is the whole worker field).
    pub has_datacenter_id: bool,
}

impl From<Parts> for rimeflake_parts {
    fn from(p: Parts) -> Self {
        rimeflake_parts {
            clock_id: p.clock_id,
            timestamp_ms: p.timestamp_ms,
            worker_id: p.worker_id,
            sequence: p.sequence,
            datacenter_id: p.datacenter_id.unwrap_or(0),
            has_datacenter_id: p.datacenter_id.is_some(),
        }
    }
}

impl From<&rimeflake_parts> for Parts {
    fn from(p: &rimeflake_parts) -> Self {
        Parts {
            clock_id: p.clock_id,
            timestamp_ms: p.timestamp_ms,
            datacenter_id: p.has_datacenter_id.then_some(p.datacenter_id),
            worker_id: p.worker_id,
            sequence: p.sequence,
        }
    }
}

/// A buffer of this many bytes holds any layout's description (rimeflake_layout_describe).
pub const RIMEFLAKE_LAYOUT_DESCRIBE_MAX: usize = 256;

/// The layout `spec` names, into `*layout`: a preset (`default`, `twitter`, `discord`,
/// `sonyflake`, `sonyflake_v2`, `js_safe`; `baidu` needs `epoch_ms=`) or a layout spec such as
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
        // SAFETY: `spec` is a NUL-terminated string (this function's contract).
        let spec = unsafe { text(spec, "spec") }?;
        // SAFETY: `layout` is writable for one pointer (this function's contract).
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
        // SAFETY: `name` is a NUL-terminated string (this function's contract).
        let name = unsafe { text(name, "name") }?;
        // SAFETY: `layout` is writable for one pointer (this function's contract).
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

/// The layout's name, into `*name`: the preset's (`"twitter"`), also for a spec whose fields
/// are a preset's, else `"custom"`. Static text.
///
/// # Safety
/// `layout` from this library; `name` writable.
#[no_mangle]
pub unsafe extern "C" fn rimeflake_layout_name(
    layout: *const rimeflake_layout,
    name: *mut *const c_char,
) -> rimeflake_status {
    ffi_boundary!({
        // SAFETY: `layout` is from rimeflake_layout_new, _preset or rimeflake_generator_layout
        // and not freed (this function's contract); a layout is immutable, so shared freely.
        let layout = unsafe { arg(layout, "layout") }?;
        // SAFETY: `name` is writable for one pointer (this function's contract).
        let name = unsafe { out(name, "name") }?;
        *name = preset_name(layout.0.name());
        Ok(())
    })
}

/// A NUL-terminated copy of a layout name, made once per name (names are few and static).
fn preset_name(name: &'static str) -> *const c_char {
    use std::collections::HashMap;
    use std::ffi::CString;
    use std::sync::{Mutex, OnceLock};
    static NAMES: OnceLock<Mutex<HashMap<&'static str, &'static CString>>> = OnceLock::new();
    let mut names = NAMES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    let text = names
        .entry(name)
        .or_insert_with(|| Box::leak(Box::new(CString::new(name).unwrap_or_default())));
    text.as_ptr()
}

/// The layout as a layout spec (every field written out), which rimeflake_layout_new reads back
/// to an equal layout, its name included; NUL-terminated into `buf` of `capacity` bytes
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
        // SAFETY: `layout` is from rimeflake_layout_new, _preset or rimeflake_generator_layout
        // and not freed (this function's contract); a layout is immutable, so shared freely.
        let layout = unsafe { arg(layout, "layout") }?;
        // SAFETY: `buf` NULL or writable for `capacity` bytes, `len` NULL or writable (this
        // function's contract).
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
        // SAFETY: `layout` is from rimeflake_layout_new, _preset or rimeflake_generator_layout
        // and not freed (this function's contract); a layout is immutable, so shared freely.
        let layout = unsafe { arg(layout, "layout") }?;
        // SAFETY: `parts` is writable for a rimeflake_parts (this function's contract).
        let parts = unsafe { out(parts, "parts") }?;
        *parts = layout.0.decode(id)?.into();
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
        // SAFETY: `layout` is from rimeflake_layout_new, _preset or rimeflake_generator_layout
        // and not freed (this function's contract); a layout is immutable, so shared freely.
        let layout = unsafe { arg(layout, "layout") }?;
        // SAFETY: `parts` points to a readable rimeflake_parts (this function's contract).
        let p = unsafe { arg(parts, "parts") }?;
        // SAFETY: `id` is writable for a u64 (this function's contract).
        let id = unsafe { out(id, "id") }?;
        *id = layout.0.compose(&Parts::from(p))?;
        Ok(())
    })
}
