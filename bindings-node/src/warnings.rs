//! Warnings of the core (such as `container`), shown the Node way: `process.emitWarning` with
//! type `RimeflakeWarning` and code `RIMEFLAKE_<KIND>`, so `process.on('warning')` and
//! `--no-warnings` work as for any other.
//!
//! The core gives warnings while a generator is built, on the calling thread; they are
//! collected there and emitted when the constructor has the generator. Each message is emitted
//! once per thread (as Node emits its own deprecation warnings once), so a service that makes a
//! generator per request is not flooded.

use crate::env::EnvData;
use napi::bindgen_prelude::{FnArgs, FromNapiValue, Function};
use napi::{Env, Result, Unknown};
use rimeflake::Warning;

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
    // SAFETY: the current call's env.
    let f = unsafe { EnvData::class(env.raw(), "emitWarning") }
        .ok_or_else(|| napi::Error::from_reason("rimeflake: no emitWarning here"))?;
    // SAFETY: the current call's env, and the function `install` kept in its data.
    let f =
        unsafe { Function::<FnArgs<(String, String)>, Unknown>::from_napi_value(env.raw(), f) }?;
    for w in warnings {
        f.call(FnArgs::from((
            w.message().to_string(),
            w.kind().to_string(),
        )))?;
    }
    Ok(())
}
