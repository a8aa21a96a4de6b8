//! `Generator`: the rollback-safe generator. The per-ID calls are installed on each instance by
//! `hot::install`; the methods here are their prototype twins (for `Generator.prototype.nextId
//! .call(gen)` and the type declarations) and the calls that are not per-ID.

use crate::args::Arg;
use crate::decode::{parts, Parts};
use crate::env::EnvData;
use crate::errors::throw;
use crate::handle::Handle;
use crate::layout::Layout;
use crate::options::Options;
use napi::bindgen_prelude::Object;
use napi::bindgen_prelude::{BigUint64Array, This};
use napi::{Env, JsValue, Result, Unknown};
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
    #[napi(constructor, ts_args_type = "options?: GeneratorOptions")]
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
        ts_args_type = "options?: GeneratorOptions",
        ts_return_type = "Generator"
    )]
    pub fn shared(env: &Env, options: Option<Unknown>) -> Result<Unknown<'static>> {
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
        SHARED_HOLD.with(|slot| slot.set(Some(handle)));
        let mut instance = std::ptr::null_mut();
        // SAFETY: the current call's env and a class value of it, no arguments (a null argv
        // with argc 0), `instance` a local to write.
        let status = unsafe {
            napi::sys::napi_new_instance(env.raw(), class, 0, std::ptr::null(), &mut instance)
        };
        // Whatever happened, the slot is empty again (a failed constructor dropped nothing).
        drop(SHARED_HOLD.with(|slot| slot.take()));
        if status != napi::sys::Status::napi_ok {
            return Err(crate::errors::pending());
        }
        // SAFETY: `instance` is a value napi just made in this call's scope, returned from
        // this call (napi-rs hands it back to JavaScript before the scope closes).
        Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), instance) })
    }

    /// The next ID. IDs of one generator strictly increase (except across a clock-id reuse,
    /// counted in `stats()`).
    #[napi(ts_return_type = "bigint")]
    pub fn next_id(&self, env: &Env) -> Result<u64> {
        self.one(env)
    }

    /// The next ID in decimal, for JSON (where a bigint does not serialize).
    #[napi]
    pub fn next_id_string(&self, env: &Env) -> Result<String> {
        Ok(self.one(env)?.to_string())
    }

    /// The next ID as a Number: only on a layout of at most 53 bits (`'js_safe'`), where it is
    /// exact; else a `ConfigError`.
    #[napi]
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
    #[napi(ts_args_type = "n: number")]
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
    #[napi(ts_args_type = "array: BigUint64Array")]
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
    /// writes, and the server lease's state and renewals.
    #[napi]
    pub fn stats(&self) -> Stats {
        let s = self.handle.core.stats();
        Stats {
            ids_issued: s.ids_issued as f64,
            rollbacks: s.rollbacks as f64,
            largest_rollback_ms: s.largest_rollback_ms as f64,
            clock_id_bumps: s.clock_id_bumps as f64,
            clock_id_reuses: s.clock_id_reuses as f64,
            waits: s.waits as f64,
            waited_ms: s.waited_ms as f64,
            borrowed_ms: s.borrowed_ms as f64,
            clock_id: s.clock_id as f64,
            server_skew_ms: s.server_skew_ms as f64,
            reservation_writes: s.reservation_writes as f64,
            reservation_write_failures: s.reservation_write_failures as f64,
            reservation_write_ns: s.reservation_write_ns as f64,
            lease: s.lease.as_str().to_string(),
            lease_remaining_ms: s.lease_remaining_ms as f64,
            lease_renewals: s.lease_renewals as f64,
            lease_renewal_failures: s.lease_renewal_failures as f64,
        }
    }

    /// The layout of this generator's IDs.
    #[napi(getter)]
    pub fn layout(&self) -> Layout {
        Layout(self.handle.core.layout().clone())
    }

    /// The worker ID in use.
    #[napi(getter)]
    pub fn worker_id(&self) -> f64 {
        self.handle.core.worker_id() as f64
    }

    /// Whether `close()` was called (or the thread that made it is exiting).
    #[napi(getter)]
    pub fn closed(&self) -> bool {
        self.handle.is_closed()
    }

    /// The parts of an ID of this generator's layout.
    #[napi(ts_args_type = "id: bigint | string | number")]
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
    #[napi]
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

/// A generator's counters.
#[napi_derive::napi(object)]
pub struct Stats {
    pub ids_issued: f64,
    pub rollbacks: f64,
    pub largest_rollback_ms: f64,
    pub clock_id_bumps: f64,
    pub clock_id_reuses: f64,
    pub waits: f64,
    pub waited_ms: f64,
    pub borrowed_ms: f64,
    /// The clock-id in use.
    pub clock_id: f64,
    /// On a server backend: the server's clock minus this host's when the lease was taken, in
    /// ms; 0 otherwise.
    pub server_skew_ms: f64,
    /// Writes of the durable state (reservations, clock-id switches, start, close), failed
    /// ones included.
    pub reservation_writes: f64,
    /// Of those, writes that failed.
    pub reservation_write_failures: f64,
    /// Time spent in those writes, in ns.
    pub reservation_write_ns: f64,
    /// The server lease: `'none'` (no server leases the worker ID), `'held'` or `'lost'`.
    #[napi(ts_type = "'none' | 'held' | 'lost'")]
    pub lease: String,
    /// While the lease is held: how long it stays valid without another renewal, in ms; else 0.
    pub lease_remaining_ms: f64,
    /// Renewals of the server lease answered, failed ones included.
    pub lease_renewals: f64,
    /// Of those, renewals that failed.
    pub lease_renewal_failures: f64,
}
