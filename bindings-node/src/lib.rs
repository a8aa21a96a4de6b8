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
mod parts;
#[cfg(feature = "internals")]
mod shape;
mod warnings;

use napi::bindgen_prelude::{Function, JsObjectValue, Object, Unknown};
use napi::{Env, JsValue, Result};

/// Sets up this environment (the main thread or a worker): the error classes, the cleanup hook,
/// and `Generator.prototype[Symbol.dispose]`.
#[napi_derive::napi(module_exports)]
pub fn init(exports: Object, env: Env) -> Result<()> {
    // Under the panic guard as every entry is: a panic here would abort `require()`.
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| set_up(exports, env))).unwrap_or_else(
        |_| {
            Err(napi::Error::from_reason(
                "rimeflake: the module panicked while it was set up",
            ))
        },
    )
}

fn set_up(mut exports: Object, env: Env) -> Result<()> {
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
    // SAFETY: the current call's env and the class (a function, so an object) it just read.
    let class = unsafe { class.cast::<Object>() }?;
    let proto: Unknown = class.get_named_property("prototype")?;
    // SAFETY: the current call's env and the prototype object it just read.
    unsafe { shape::install_prototype(env.raw(), proto.raw()) }
}

/// The package's version (the workspace's).
#[napi_derive::napi]
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// A trace ID in the SkyWalking Java agent's format, `{process}.{thread}.{ms * 10000 + seq}`,
/// that never repeats in this process.
#[napi_derive::napi(catch_unwind, namespace = "skywalking")]
pub fn global_id() -> String {
    rimeflake::skywalking::global_id()
}

/// The process part of `globalId()` (32 hex digits, drawn anew in a forked child).
#[napi_derive::napi(catch_unwind, namespace = "skywalking")]
pub fn process_id() -> String {
    rimeflake::skywalking::process_id()
}

/// The floor of the benchmarks: an exported function with no argument that returns a bigint
/// (what any napi call returning an ID costs at least). Built only with the `internals` feature.
#[cfg(feature = "internals")]
#[napi_derive::napi(catch_unwind, js_name = "_floor", skip_typescript)]
pub fn floor() -> u64 {
    1
}
