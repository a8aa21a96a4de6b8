//! The native addon of the npm package `rimeflake` (napi-rs). Thin on purpose: every decision
//! about IDs is the core's; this crate converts arguments, errors and typed arrays.

// napi-derive registers the exports only outside `cfg(test)`, so the test build of this crate
// (which `cargo clippy --all-targets` makes; it has no tests) sees them as unused.
#![cfg_attr(test, allow(dead_code))]

mod args;
mod decode;
mod env;
mod errors;
mod generator;
mod handle;
mod hot;
mod layout;
mod options;
mod otel;
#[cfg(feature = "internals")]
mod shape;
mod warnings;

use napi::bindgen_prelude::{Function, JsObjectValue, Object, Unknown};
use napi::{Env, JsValue, Result};

/// Sets up this environment (the main thread or a worker): the error classes, the cleanup hook,
/// and `Generator.prototype[Symbol.dispose]`.
#[napi_derive::napi(module_exports)]
pub fn init(mut exports: Object, env: Env) -> Result<()> {
    let data = env::EnvData::create(&env)?;
    errors::install(&env, &mut exports, &mut *data)?;
    let dispose: Function<Unknown, Unknown> = env.run_script(
        "(function (G) { if (typeof Symbol.dispose === 'symbol') G.prototype[Symbol.dispose] = G.prototype.close; })",
    )?;
    let class: Unknown = exports.get_named_property("Generator")?;
    data.keep_class(&env, "Generator", class.raw())?;
    warnings::install(&env, data)?;
    dispose.call(class)?;
    #[cfg(feature = "internals")]
    install_bench_shape(&env, class)?;
    Ok(())
}

/// `Generator.prototype._nextIdProto`, the shape bench/node measures beside the chosen one
/// (shape.rs): only in a build with the `internals` feature.
#[cfg(feature = "internals")]
fn install_bench_shape(env: &Env, class: Unknown) -> Result<()> {
    let mut proto = std::ptr::null_mut();
    // SAFETY: the current call's env and the class value it just read; the property name is
    // NUL-terminated; `proto` is a local and then a value of this call, as install_prototype
    // needs.
    unsafe {
        napi::check_status!(napi::sys::napi_get_named_property(
            env.raw(),
            class.raw(),
            c"prototype".as_ptr(),
            &mut proto
        ))?;
        shape::install_prototype(env.raw(), proto)?;
    }
    Ok(())
}

/// The package's version (the workspace's).
#[napi_derive::napi]
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// A trace ID in the SkyWalking Java agent's format, `{process}.{thread}.{ms * 10000 + seq}`,
/// that never repeats in this process.
#[napi_derive::napi(namespace = "skywalking")]
pub fn global_id() -> String {
    rimeflake::skywalking::global_id()
}

/// The process part of `globalId()` (32 hex digits, drawn anew in a forked child).
#[napi_derive::napi(namespace = "skywalking")]
pub fn process_id() -> String {
    rimeflake::skywalking::process_id()
}

/// The floor of the benchmarks: an exported function with no argument that returns a bigint
/// (what any napi call returning an ID costs at least). Built only with the `internals` feature.
#[cfg(feature = "internals")]
#[napi_derive::napi(js_name = "_floor", skip_typescript)]
pub fn floor() -> u64 {
    1
}
