//! The hot path: `nextId`, `nextIdString`, `nextIdNumber`, `nextIds` and `fill` are plain napi
//! functions made for each generator, with the generator as the function's data, and installed
//! on the instance as own properties. A call then costs what an exported function costs: no
//! `this` to unwrap, no argument conversion (for the single-ID calls), no lock, no allocation
//! beyond the returned value. (A `#[napi]` class method measured ten times slower: the
//! class-method row of bench/node, in bench/RESULTS.md.) This file and `shape.rs` are the only
//! ones that call napi directly: the measured floor needs it.
//!
//! Each callback's body runs under [`guarded`]: a panic (a bug of rimeflake's) becomes a
//! thrown `RimeflakeError` with code `ERR_RIMEFLAKE_PANIC`, as every `#[napi]` entry's does
//! through `errors::guard`, instead of unwinding out of an `extern "C"` function, which aborts
//! the process.

use crate::args::Arg;
use crate::errors::{range_error, throw, throw_panic, type_error};
use crate::handle::Handle;
use napi::{sys, Result};
use rimeflake::frontend::DecimalDigits;
use rimeflake::{Error, ErrorKind};
use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

type Callback = unsafe extern "C" fn(sys::napi_env, sys::napi_callback_info) -> sys::napi_value;

const METHODS: [(&str, Callback); 5] = [
    ("nextId", next_id),
    ("nextIdString", next_id_string),
    ("nextIdNumber", next_id_number),
    ("nextIds", next_ids),
    ("fill", fill),
];

/// Installs the hot-path functions on `this`, each holding a reference to `handle` that its
/// finalizer gives back (a function may outlive the instance it came from).
pub fn install(env: sys::napi_env, this: sys::napi_value, handle: &Arc<Handle>) -> Result<()> {
    for (name, cb) in METHODS {
        let data = Arc::into_raw(handle.clone()) as *mut c_void;
        let f = native_function(env, name, cb, data)?;
        // SAFETY: the current call's env and a function made in it; `data` is one strong count
        // of the Arc, which napi hands to `release` once, when `f` is collected.
        unsafe {
            napi::check_status!(sys::napi_add_finalizer(
                env,
                f,
                data,
                Some(release),
                ptr::null_mut(),
                ptr::null_mut()
            ))?;
        }
        let prop = sys::napi_property_descriptor {
            utf8name: ptr::null(),
            name: name_value(env, name)?,
            method: None,
            getter: None,
            setter: None,
            value: f,
            // Not enumerable, so a generator logs and spreads as before.
            attributes: sys::PropertyAttributes::writable | sys::PropertyAttributes::configurable,
            data: ptr::null_mut(),
        };
        // SAFETY: the current call's env and `this`; `prop` is one descriptor (count 1) whose
        // name and value are values of this call.
        napi::check_status!(unsafe { sys::napi_define_properties(env, this, 1, &prop) })?;
    }
    Ok(())
}

/// A JavaScript function named `name` that calls `cb` with `data` as its data.
pub fn native_function(
    env: sys::napi_env,
    name: &str,
    cb: Callback,
    data: *mut c_void,
) -> Result<sys::napi_value> {
    let mut f = ptr::null_mut();
    // SAFETY: every caller passes the current call's env; the name's pointer and length are a
    // live &str's (napi copies it); `cb` is an `extern "C"` callback of the right type, and
    // `data` whatever it expects to find (a Handle from Arc::into_raw, or null for
    // `_nextIdProto`, which reads none); `f` is a local.
    napi::check_status!(unsafe {
        sys::napi_create_function(
            env,
            name.as_ptr().cast(),
            name.len() as isize,
            Some(cb),
            data,
            &mut f,
        )
    })?;
    Ok(f)
}

fn name_value(env: sys::napi_env, name: &str) -> Result<sys::napi_value> {
    let mut v = ptr::null_mut();
    // SAFETY: the current call's env; `name` is one of METHODS' ASCII names (so Latin-1 text),
    // its pointer and length a live &str's; `v` is a local.
    napi::check_status!(unsafe {
        sys::napi_create_string_latin1(env, name.as_ptr().cast(), name.len() as isize, &mut v)
    })?;
    Ok(v)
}

unsafe extern "C" fn release(_env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
    // SAFETY: `data` is the Arc::into_raw of `install` for this function, which napi passes
    // to this finalizer once: the strong count it held is given back once.
    let handle = unsafe { Arc::from_raw(data as *const Handle) };
    // A finalizer has no caller to throw to: a panic is dropped rather than abort the process.
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(handle)));
}

/// The generator of this call, and up to one argument.
#[inline(always)]
unsafe fn this_call<'a>(
    env: sys::napi_env,
    info: sys::napi_callback_info,
    arg: &mut sys::napi_value,
) -> &'a Handle {
    let mut data = ptr::null_mut();
    let mut argc = 1usize;
    // SAFETY: `env` and `info` are this callback's (this function's contract); `arg` has room
    // for the one argument `argc` allows (napi fills it with undefined when none was passed);
    // `data` is a local.
    unsafe { sys::napi_get_cb_info(env, info, &mut argc, arg, ptr::null_mut(), &mut data) };
    // SAFETY: the callbacks that call this are only ever made by `install`, whose data is an
    // Arc<Handle> from Arc::into_raw that the function's finalizer alone gives back; the
    // function is running, so it is not collected and the Handle lives through the call ('a).
    unsafe { &*(data as *const Handle) }
}

#[inline(always)]
unsafe fn handle_only<'a>(env: sys::napi_env, info: sys::napi_callback_info) -> &'a Handle {
    let mut data = ptr::null_mut();
    // SAFETY: `env` and `info` are this callback's (this function's contract); only the data
    // is asked for, into a local.
    unsafe {
        sys::napi_get_cb_info(
            env,
            info,
            ptr::null_mut(),
            ptr::null_mut(),
            ptr::null_mut(),
            &mut data,
        )
    };
    // SAFETY: as in this_call: the data of a function `install` made, alive while it runs.
    unsafe { &*(data as *const Handle) }
}

/// Runs the body of a callback, keeping a panic inside: it is thrown as a `RimeflakeError`
/// (`ERR_RIMEFLAKE_PANIC`) and the callback returns no value. Free when nothing panics.
#[inline(always)]
pub fn guarded(env: sys::napi_env, body: impl FnOnce() -> sys::napi_value) -> sys::napi_value {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)) {
        Ok(value) => value,
        Err(payload) => {
            throw_panic(env, payload.as_ref());
            ptr::null_mut()
        }
    }
}

/// One ID: the hot path, else the core decides (waits, errors) with panics kept inside.
#[inline(always)]
pub fn one(env: sys::napi_env, h: &Handle) -> Option<u64> {
    match h.try_next_id() {
        Some(id) => Some(id),
        None => slow_one(env, h),
    }
}

#[cold]
#[inline(never)]
fn slow_one(env: sys::napi_env, h: &Handle) -> Option<u64> {
    crate::errors::guard(env, || h.check_open()?.next_id()).ok()
}

unsafe extern "C" fn next_id(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    guarded(env, || {
        // SAFETY: `env` and `info` are this callback's, one of the functions `install` made.
        let h = unsafe { handle_only(env, info) };
        let mut out = ptr::null_mut();
        if let Some(id) = one(env, h) {
            // SAFETY: this callback's env; `out` is a local.
            unsafe { sys::napi_create_bigint_uint64(env, id, &mut out) };
        }
        out
    })
}

unsafe extern "C" fn next_id_string(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    guarded(env, || {
        // SAFETY: `env` and `info` are this callback's, one of the functions `install` made.
        let h = unsafe { handle_only(env, info) };
        let mut out = ptr::null_mut();
        if let Some(id) = one(env, h) {
            // The core's decimal writer: on the stack, no allocation, no fmt.
            let digits = DecimalDigits::new(id);
            let digits = digits.as_bytes();
            // SAFETY: this callback's env; `digits` is live ASCII (Latin-1 text) of the length
            // passed; `out` is a local.
            unsafe {
                sys::napi_create_string_latin1(
                    env,
                    digits.as_ptr().cast(),
                    digits.len() as isize,
                    &mut out,
                )
            };
        }
        out
    })
}

unsafe extern "C" fn next_id_number(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    guarded(env, || {
        // SAFETY: `env` and `info` are this callback's, one of the functions `install` made.
        let h = unsafe { handle_only(env, info) };
        let mut out = ptr::null_mut();
        let layout = h.core.layout();
        if layout.total_bits() > 53 {
            let e = Error::new(
                ErrorKind::Config,
                format!(
                    "nextIdNumber: layout {:?} has {} bits, more than a Number holds exactly (53): use nextId() (a bigint), nextIdString(), or layout 'js_safe'",
                    layout.name(),
                    layout.total_bits()
                ),
            );
            throw(env, &e);
            return out;
        }
        if let Some(id) = one(env, h) {
            // SAFETY: this callback's env; `out` is a local.
            unsafe { sys::napi_create_double(env, id as f64, &mut out) };
        }
        out
    })
}

/// Fills `ids` (memory of a typed array this call made), keeping panics inside.
fn fill_slice(env: sys::napi_env, h: &Handle, ids: &mut [u64]) -> bool {
    crate::errors::guard(env, || h.check_open()?.fill(ids)).is_ok()
}

/// IDs stored into callers' arrays by [`fill_caller_array`], for the package's tests
/// (`_callerArrayStores`): a `fill` that wrote a caller's array by any other path (plain stores)
/// would leave it unchanged.
#[cfg(feature = "internals")]
static CALLER_ARRAY_STORES: AtomicU64 = AtomicU64::new(0);

/// How many IDs `fill` stored into callers' arrays with atomic stores so far (this process).
/// Built only with the `internals` feature.
#[cfg(feature = "internals")]
#[napi_derive::napi(catch_unwind, js_name = "_callerArrayStores", skip_typescript)]
pub fn caller_array_stores() -> u64 {
    CALLER_ARRAY_STORES.load(std::sync::atomic::Ordering::Relaxed)
}

/// Fills the caller's typed array, `len` u64s at `data`, with atomic stores, keeping panics
/// inside: the one way both `fill`s (the own property here and the prototype's) write memory
/// that the caller handed in. That memory may be a `SharedArrayBuffer`'s, which other threads
/// read or write meanwhile: a plain store there would be a data race on the Rust side.
///
/// # Safety
/// `data` null (then `len` is ignored) or the start of a typed array's `len` u64s, aligned to
/// 8 (a BigUint64Array's are) and alive for this call.
pub unsafe fn fill_caller_array(
    env: sys::napi_env,
    h: &Handle,
    data: *mut c_void,
    len: usize,
) -> bool {
    let ids: &[AtomicU64] = if len == 0 || data.is_null() {
        &[]
    } else {
        // SAFETY: the caller vouches for `len` aligned u64s alive for this call; AtomicU64 has
        // u64's size and alignment, and every access made through this slice is atomic, so
        // other threads' accesses (JavaScript's, through the SharedArrayBuffer) meanwhile are
        // no data race. A shared reference suffices: atomics store through `&`.
        unsafe { std::slice::from_raw_parts(data.cast::<AtomicU64>(), len) }
    };
    let ok =
        crate::errors::guard(env, || h.check_open()?.fill_atomic_with(ids, &mut || false)).is_ok();
    #[cfg(feature = "internals")]
    if ok {
        CALLER_ARRAY_STORES.fetch_add(ids.len() as u64, std::sync::atomic::Ordering::Relaxed);
    }
    ok
}

unsafe extern "C" fn fill(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    guarded(env, || {
        let mut value = ptr::null_mut();
        // SAFETY: `env` and `info` are this callback's; its data is the Handle that `install`
        // gave this function, alive until the function's finalizer runs, which cannot be during
        // a call.
        let h = unsafe { this_call(env, info, &mut value) };
        let mut out = ptr::null_mut();
        if let Some(len) = fill_typed_array(env, h, value) {
            // SAFETY: `env` is this call's and `out` a place for the result.
            unsafe { sys::napi_create_double(env, len as f64, &mut out) };
        }
        out
    })
}

/// `fill(array)`, the own property's and the prototype's: checks that `value` (this call's
/// argument, null when absent) is a BigUint64Array and fills it with atomic stores. `None`:
/// an exception is pending.
pub fn fill_typed_array(env: sys::napi_env, h: &Handle, value: sys::napi_value) -> Option<usize> {
    let arg = Arg {
        env,
        value,
        name: "array",
    };
    let (mut is_typed, mut kind, mut len, mut data) = (false, -1, 0usize, ptr::null_mut());
    if !value.is_null() {
        // SAFETY: `env` is the current call's and `value` one of its arguments.
        unsafe { sys::napi_is_typedarray(env, value, &mut is_typed) };
    }
    if is_typed {
        let (mut buffer, mut offset) = (ptr::null_mut(), 0usize);
        // SAFETY: as above, and `value` is a typed array; every out-pointer is a local.
        unsafe {
            sys::napi_get_typedarray_info(
                env,
                value,
                &mut kind,
                &mut len,
                &mut data,
                &mut buffer,
                &mut offset,
            )
        };
    }
    if kind != sys::TypedarrayType::biguint64_array {
        if value.is_null() {
            type_error(env, "array must be a BigUint64Array, not undefined");
        } else {
            arg.wrong_type("a BigUint64Array");
        }
        return None;
    }
    // SAFETY: napi_get_typedarray_info said BigUint64Array: `data` is its `len` u64s, aligned
    // to 8 (a BigUint64Array's byte offset is a multiple of 8), kept alive during this call by
    // `value`, which the call's handle scope holds; a detached one has a null `data`.
    unsafe { fill_caller_array(env, h, data, len) }.then_some(len)
}

unsafe extern "C" fn next_ids(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    guarded(env, || {
        let mut value = ptr::null_mut();
        // SAFETY: `env` and `info` are this callback's, one of the functions `install` made.
        let h = unsafe { this_call(env, info, &mut value) };
        let mut out = ptr::null_mut();
        if value.is_null() {
            type_error(env, "n must be a number, not undefined");
            return out;
        }
        // 2^31 IDs (16 GiB) is past any typed array Node allows: refuse it clearly before allocating.
        let n = match (Arg {
            env,
            value,
            name: "n",
        })
        .integer(0.0, (1u64 << 31) as f64)
        {
            Ok(n) => n as usize,
            Err(_) => return out,
        };
        let (mut data, mut buffer) = (ptr::null_mut(), ptr::null_mut());
        // SAFETY: this callback's env; `data` and `buffer` are locals to write.
        if unsafe { sys::napi_create_arraybuffer(env, n * 8, &mut data, &mut buffer) }
            != sys::Status::napi_ok
        {
            if !pending(env) {
                range_error(env, &format!("n: no memory for {n} IDs"));
            }
            return out;
        }
        let ids: &mut [u64] = if n == 0 {
            &mut []
        } else {
            // SAFETY: napi_create_arraybuffer just made `n * 8` bytes at `data` (n <= 2^31, so
            // the size fits in isize), aligned for u64 (V8 allocates backing stores at least
            // 8-aligned) and zeroed; no JavaScript has seen `buffer` yet, so this is the only
            // access to them, and `buffer`, held by this call's scope, keeps them alive.
            unsafe { std::slice::from_raw_parts_mut(data as *mut u64, n) }
        };
        if fill_slice(env, h, ids) {
            // SAFETY: this callback's env and the `buffer` made above, `n` u64s from offset 0
            // fit in it exactly; `out` is a local.
            unsafe {
                sys::napi_create_typedarray(
                    env,
                    sys::TypedarrayType::biguint64_array,
                    n,
                    buffer,
                    0,
                    &mut out,
                )
            };
        }
        out
    })
}

fn pending(env: sys::napi_env) -> bool {
    let mut p = false;
    // SAFETY: every caller passes its callback's env; `p` is a local.
    unsafe { sys::napi_is_exception_pending(env, &mut p) };
    p
}
