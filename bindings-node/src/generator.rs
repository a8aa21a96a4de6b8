//! `Generator`: the rollback-safe generator. The per-ID calls are installed on each instance by
//! `hot::install`; the methods here are their prototype twins (for `Generator.prototype.nextId
//! .call(gen)` and the type declarations) and the calls that are not per-ID.

use crate::args::Arg;
use crate::env::EnvData;
use crate::errors::throw;
use crate::handle::Handle;
use crate::layout::Layout;
use crate::options::Options;
use crate::parts::{parts, Parts};
use napi::bindgen_prelude::{BigUint64Array, FromNapiValue, Function, JsObjectValue, Object, This};
use napi::{Env, JsValue, Result, Unknown};
use rimeflake::frontend::StatValue;
use std::sync::Arc;

/// A generator of 64-bit, time-ordered, unique IDs. With no options it is the embedded default:
/// a worker ID leased in the state directory, so processes sharing it never share a worker ID,
/// and durable state beside it, so a restart continues safely.
///
/// `using gen = new Generator()` closes it at the end of the scope.
#[napi_derive::napi]
pub struct Generator {
    handle: Arc<Handle>,
}

thread_local! {
    /// The hold `Generator.shared` passes to the constructor it calls (same thread, same call).
    static SHARED_HOLD: std::cell::Cell<Option<Arc<Handle>>> = const { std::cell::Cell::new(None) };
}

fn start(env: &Env, this: &Object, handle: Arc<Handle>) -> Result<Generator> {
    crate::hot::install(env.raw(), this.raw(), &handle)?;
    EnvData::track(env.raw(), &handle);
    Ok(Generator { handle })
}

#[napi_derive::napi]
impl Generator {
    /// A new generator with a lease of its own.
    #[napi(catch_unwind, constructor, ts_args_type = "options?: GeneratorOptions")]
    pub fn new(env: &Env, this: This, options: Option<Unknown>) -> Result<Self> {
        // `Generator.shared` constructs its instances through here, with the hold it took.
        if let Some(handle) = SHARED_HOLD.with(|slot| slot.take()) {
            return start(env, &this, handle);
        }
        let options = Options::from_js(env, options)?;
        let (core, warnings) = crate::errors::guard(env.raw(), || options.build())?;
        let gen = start(env, &this, Handle::own(core))?;
        crate::warnings::emit(env, &warnings)?;
        Ok(gen)
    }

    /// The process-wide generator for these options: every call with equal options, from any
    /// `worker_thread`, shares one lease and one counter. Each returned object is one user; the
    /// generator closes when the last user closes (or its thread exits).
    #[napi(
        catch_unwind,
        ts_args_type = "options?: GeneratorOptions",
        ts_return_type = "Generator"
    )]
    pub fn shared<'e>(env: &'e Env, options: Option<Unknown>) -> Result<Unknown<'e>> {
        let options = Options::from_js(env, options)?;
        let key = format!("{options:?}");
        let mut warnings = Vec::new();
        let handle = crate::errors::guard(env.raw(), || {
            Handle::shared(key, || {
                let (core, w) = options.build()?;
                warnings = w;
                Ok(core)
            })
        })?;
        crate::warnings::emit(env, &warnings)?;
        // A real instance, made by the constructor, so it gets its own hot-path functions (a
        // napi-rs factory has no instance to install them on while it runs).
        // SAFETY: the current call's env.
        let class =
            unsafe { crate::env::EnvData::class(env.raw(), "Generator") }.ok_or_else(|| {
                napi::Error::from_reason("rimeflake: the module is not set up in this environment")
            })?;
        // SAFETY: the current call's env, and the class `init` kept in its data.
        let class = unsafe { Function::<(), Unknown>::from_napi_value(env.raw(), class) }?;
        SHARED_HOLD.with(|slot| slot.set(Some(handle)));
        let instance = class.new_instance(());
        // Whatever happened, the slot is empty again (a failed constructor dropped nothing).
        drop(SHARED_HOLD.with(|slot| slot.take()));
        instance
    }

    /// The next ID. IDs of one generator strictly increase (except across a clock-id reuse,
    /// counted in `stats()`).
    #[napi(catch_unwind, ts_return_type = "bigint")]
    pub fn next_id(&self, env: &Env) -> Result<u64> {
        self.one(env)
    }

    /// The next ID in decimal, for JSON (where a bigint does not serialize).
    #[napi(catch_unwind)]
    pub fn next_id_string(&self, env: &Env) -> Result<String> {
        Ok(self.one(env)?.to_string())
    }

    /// The next ID as a Number: only on a layout of at most 53 bits (`'js_safe'`), where it is
    /// exact; else a `ConfigError`.
    #[napi(catch_unwind)]
    pub fn next_id_number(&self, env: &Env) -> Result<f64> {
        if self.handle.core.layout().total_bits() > 53 {
            let e = rimeflake::Error::new(
                rimeflake::ErrorKind::Config,
                "nextIdNumber: the layout has more than 53 bits: use nextId()",
            );
            return Err(throw(env.raw(), &e));
        }
        Ok(self.one(env)? as f64)
    }

    /// `n` increasing IDs.
    #[napi(catch_unwind, ts_args_type = "n: number")]
    pub fn next_ids(&self, env: &Env, n: Unknown) -> Result<BigUint64Array> {
        let n = Arg {
            env: env.raw(),
            value: n.raw(),
            name: "n",
        }
        .integer(0.0, (1u64 << 31) as f64)? as usize;
        let mut ids = vec![0u64; n];
        self.fill_ids(env, &mut ids)?;
        Ok(BigUint64Array::new(ids))
    }

    /// Fills `array` with increasing IDs, in place; returns how many it wrote.
    #[napi(catch_unwind, ts_args_type = "array: BigUint64Array")]
    pub fn fill(&self, env: &Env, array: Unknown) -> Result<u32> {
        // Taken as a napi value, not as napi-rs's BigUint64Array, whose only way to the memory
        // is a `&mut [u64]`: a SharedArrayBuffer's memory must never be behind a reference
        // that claims it alone.
        match crate::hot::fill_typed_array(env.raw(), &self.handle, array.raw()) {
            Some(len) => Ok(len as u32),
            None => Err(crate::errors::pending()),
        }
    }

    /// Counters since the start: IDs issued, rollbacks seen, clock-id switches, waits, state
    /// writes, and the server lease's state and renewals (the core's table of them, each
    /// under its camelCase name).
    #[napi(catch_unwind, ts_return_type = "Stats")]
    pub fn stats<'e>(&self, env: &'e Env) -> Result<Object<'e>> {
        let s = self.handle.core.stats();
        let mut out = Object::new(env)?;
        for field in rimeflake::Stats::FIELDS {
            let key = rimeflake::frontend::camel_case(field.name);
            match field.value(&s) {
                StatValue::Unsigned(v) => out.set_named_property(&key, v as f64)?,
                StatValue::Signed(v) => out.set_named_property(&key, v as f64)?,
                StatValue::Lease(state) => out.set_named_property(&key, state.as_str())?,
                other => out.set_named_property(&key, format!("{other:?}"))?,
            }
        }
        Ok(out)
    }

    /// The layout of this generator's IDs.
    #[napi(catch_unwind, getter)]
    pub fn layout(&self) -> Layout {
        Layout(self.handle.core.layout().clone())
    }

    /// The worker ID in use.
    #[napi(catch_unwind, getter)]
    pub fn worker_id(&self) -> f64 {
        self.handle.core.worker_id() as f64
    }

    /// Whether `close()` was called (or the thread that made it is exiting).
    #[napi(catch_unwind, getter)]
    pub fn closed(&self) -> bool {
        self.handle.is_closed()
    }

    /// The parts of an ID of this generator's layout.
    #[napi(catch_unwind, ts_args_type = "id: bigint | string | number")]
    pub fn decode<'e>(&self, env: &'e Env, id: Unknown) -> Result<Parts<'e>> {
        parts(
            env,
            self.handle.core.layout(),
            Arg {
                env: env.raw(),
                value: id.raw(),
                name: "id",
            },
        )
    }

    /// Closes the generator (for a shared one: this user's hold): later calls throw
    /// `ClosedError`. The last reservation is stored and the lease released. Closing twice is
    /// harmless.
    #[napi(catch_unwind)]
    pub fn close(&self, env: &Env) -> Result<()> {
        crate::errors::guard(env.raw(), || self.handle.close())
    }
}

impl Generator {
    pub fn handle(&self) -> &Handle {
        &self.handle
    }

    /// The `Generator` inside a JavaScript object, if it is one (type tag checked).
    ///
    /// # Safety
    /// `env` and `value` belong to the current call.
    pub unsafe fn unwrap<'a>(
        env: napi::sys::napi_env,
        value: napi::sys::napi_value,
    ) -> Option<&'a Generator> {
        use napi::bindgen_prelude::{validate_type_tag, TypeTag};
        let mut p = std::ptr::null_mut();
        let tag = <Generator as TypeTag>::type_tag();
        // SAFETY: `env` and `value` are the current call's (this function's contract).
        if unsafe { validate_type_tag(env, value, &tag, "Generator") }.is_err() {
            return None;
        }
        // SAFETY: as above; `p` is a local to write.
        if unsafe { napi::sys::napi_unwrap(env, value, &mut p) } != napi::sys::Status::napi_ok {
            return None;
        }
        // SAFETY: the object carries Generator's type tag, which only napi-rs's constructor of
        // this class puts on the objects it wraps a Generator in, so a non-null `p` is that
        // Generator, alive as long as the object, which the current call holds.
        (!p.is_null()).then(|| unsafe { &*(p as *const Generator) })
    }

    pub(crate) fn one(&self, env: &Env) -> Result<u64> {
        match self.handle.try_next_id() {
            Some(id) => Ok(id),
            None => crate::errors::guard(env.raw(), || self.handle.check_open()?.next_id()),
        }
    }

    fn fill_ids(&self, env: &Env, ids: &mut [u64]) -> Result<()> {
        crate::errors::guard(env.raw(), || self.handle.check_open()?.fill(ids))
    }
}

/// Makes `generator`'s next call panic on the hot path, inside the `extern "C"` function that
/// runs it (for the test that such a panic throws instead of aborting the process).
#[cfg(feature = "internals")]
#[napi_derive::napi(catch_unwind, js_name = "_panicOnNextCall", skip_typescript)]
pub fn panic_on_next_call(generator: &Generator) {
    generator.handle().panic_on_next_call();
}
