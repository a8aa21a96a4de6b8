//! Warnings of the core (such as `container`), shown the Node way: `process.emitWarning` with
//! type `RimeflakeWarning` and code `RIMEFLAKE_<KIND>`, so `process.on('warning')` and
//! `--no-warnings` work as for any other.
//!
//! The core gives warnings while a generator is built, on the calling thread; they are
//! collected there and emitted when the constructor has the generator. Each message is emitted
//! once per thread (as Node emits its own deprecation warnings once), so a service that makes a
//! generator per request is not flooded.

use crate::env::EnvData;
use napi::{sys, Env, Result};
use rimeflake::Warning;
use std::ptr;

const EMIT: &str = r#"(function () {
  const emitted = new Set()
  return function (message, kind) {
    if (emitted.has(message)) return
    emitted.add(message)
    process.emitWarning(message, { type: 'RimeflakeWarning', code: 'RIMEFLAKE_' + kind.toUpperCase() })
  }
})()"#;

pub fn install(env: &Env, data: &mut EnvData) -> Result<()> {
    let f: napi::Unknown = env.run_script(EMIT)?;
    data.keep_class(env, "emitWarning", napi::JsValue::raw(&f))
}

pub fn emit(env: &Env, warnings: &[Warning]) -> Result<()> {
    if warnings.is_empty() {
        return Ok(());
    }
    let raw = env.raw();
    // SAFETY: the current call's env.
    let f = unsafe { EnvData::class(raw, "emitWarning") }
        .ok_or_else(|| napi::Error::from_reason("rimeflake: no emitWarning here"))?;
    for w in warnings {
        let args = [string(raw, w.message())?, string(raw, w.kind())?];
        let (mut global, mut out) = (ptr::null_mut(), ptr::null_mut());
        // SAFETY: the current call's env; `f` and both `args` are values of it, `args` holds
        // the 2 values that argc says; `global` and `out` are locals.
        unsafe {
            napi::check_status!(sys::napi_get_global(raw, &mut global))?;
            napi::check_status!(sys::napi_call_function(
                raw,
                global,
                f,
                2,
                args.as_ptr(),
                &mut out
            ))?;
        }
    }
    Ok(())
}

fn string(env: sys::napi_env, s: &str) -> Result<sys::napi_value> {
    let mut v = ptr::null_mut();
    // SAFETY: every caller passes the current call's env; the pointer and length are a live
    // &str's (napi copies it); `v` is a local.
    napi::check_status!(unsafe {
        sys::napi_create_string_utf8(env, s.as_ptr().cast(), s.len() as isize, &mut v)
    })?;
    Ok(v)
}
