//! The shape of `nextId` that was measured and not chosen, kept for bench/node: one function on
//! the prototype (`_nextIdProto`, not documented) that finds its generator through `this`. It
//! costs about four times the own-property functions of `hot.rs` (bench/RESULTS.md). Built only
//! with the `internals` feature, as the benchmark's other exports are.

use crate::errors::type_error;
use crate::generator::Generator;
use napi::{sys, Result};
use std::ptr;

/// Installs `_nextIdProto` on the prototype.
///
/// # Safety
/// `env` and `proto` belong to the current call.
pub unsafe fn install_prototype(env: sys::napi_env, proto: sys::napi_value) -> Result<()> {
    let f = crate::hot::native_function(env, "_nextIdProto", next_id_proto, ptr::null_mut())?;
    // SAFETY: `env` and `proto` are the current call's (this function's contract), `f` a
    // value made in it; the name is NUL-terminated.
    unsafe {
        napi::check_status!(sys::napi_set_named_property(
            env,
            proto,
            c"_nextIdProto".as_ptr(),
            f
        ))?;
    }
    Ok(())
}

unsafe extern "C" fn next_id_proto(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    crate::hot::guarded(env, || {
        let mut this = ptr::null_mut();
        // SAFETY: `env` and `info` are this callback's; only `this` is asked for, into a local.
        unsafe {
            sys::napi_get_cb_info(
                env,
                info,
                ptr::null_mut(),
                ptr::null_mut(),
                &mut this,
                ptr::null_mut(),
            )
        };
        let mut out = ptr::null_mut();
        // SAFETY: the current call's env and its `this`.
        let Some(gen) = (unsafe { unwrap(env, this) }) else {
            type_error(env, "this must be a Generator");
            return out;
        };
        if let Some(id) = crate::hot::one(env, gen.handle()) {
            // SAFETY: the current call's env; `out` is a local.
            unsafe { sys::napi_create_bigint_uint64(env, id, &mut out) };
        }
        out
    })
}

/// The `Generator` inside a JavaScript object, if it is one (type tag checked): the way a
/// prototype method finds its generator, the cost this shape measures.
///
/// # Safety
/// `env` and `value` belong to the current call.
unsafe fn unwrap<'a>(env: sys::napi_env, value: sys::napi_value) -> Option<&'a Generator> {
    use napi::bindgen_prelude::{validate_type_tag, TypeTag};
    let mut p = ptr::null_mut();
    let tag = <Generator as TypeTag>::type_tag();
    // SAFETY: `env` and `value` are the current call's (this function's contract).
    if unsafe { validate_type_tag(env, value, &tag, "Generator") }.is_err() {
        return None;
    }
    // SAFETY: as above; `p` is a local to write.
    if unsafe { sys::napi_unwrap(env, value, &mut p) } != sys::Status::napi_ok {
        return None;
    }
    // SAFETY: the object carries Generator's type tag, which only napi-rs's constructor of
    // this class puts on the objects it wraps a Generator in, so a non-null `p` is that
    // Generator, alive as long as the object, which the current call holds.
    (!p.is_null()).then(|| unsafe { &*(p as *const Generator) })
}
