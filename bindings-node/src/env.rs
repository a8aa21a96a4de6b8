//! Per-environment data (the main thread and each worker thread is one environment): the error
//! classes, and the generators made here, so that a cleanup hook releases their leases when the
//! thread or the process exits.
//!
//! Its table of classes is the one registry here beside `Generator.shared`'s (handle.rs): the
//! values this environment made once (the error classes, the `Generator` class, the warning
//! helper), found again by name, because an error can be thrown, or a shared generator made,
//! from any call of the environment.

use crate::handle::Handle;
use napi::bindgen_prelude::{Object, ObjectRef};
use napi::{sys, Env, JsValue, Result};
use std::sync::{Arc, Mutex, Weak};

pub struct EnvData {
    classes: Vec<(String, ObjectRef<false>)>,
    handles: Handles,
}

/// Shared with the cleanup hook, which may run after or before the data's finalizer.
type Handles = Arc<Mutex<Vec<Weak<Handle>>>>;

impl EnvData {
    /// Makes this environment's data, registers it and arms the cleanup hook.
    pub fn create(env: &Env) -> Result<&'static mut EnvData> {
        let handles = Handles::default();
        // The references die with the environment; napi-rs drops the Rust side when it goes.
        env.set_instance_data(
            EnvData {
                classes: Vec::new(),
                handles: handles.clone(),
            },
            (),
            |_| {},
        )?;
        env.add_env_cleanup_hook(handles, cleanup)?;
        env.get_instance_data::<EnvData>()?
            .ok_or_else(|| napi::Error::from_reason("rimeflake: no instance data was kept"))
    }

    /// This environment's data, if the module was initialised in it.
    ///
    /// # Safety
    /// `env` is a live environment.
    pub unsafe fn get<'a>(env: sys::napi_env) -> Option<&'a EnvData> {
        Env::from_raw(env)
            .get_instance_data::<EnvData>()
            .ok()
            .flatten()
            .map(|data| &*data)
    }

    /// Keeps a reference to `value` (an error class, the Generator class, a helper) by name.
    pub fn keep_class(
        &mut self,
        env: &Env,
        name: impl Into<String>,
        class: sys::napi_value,
    ) -> Result<()> {
        let reference = Object::from_raw(env.raw(), class).create_ref::<false>()?;
        self.classes.push((name.into(), reference));
        Ok(())
    }

    /// The error class called `name`.
    ///
    /// # Safety
    /// `env` is the environment of the current call.
    pub unsafe fn class(env: sys::napi_env, name: &str) -> Option<sys::napi_value> {
        // SAFETY: `env` is the current call's (this function's contract), so live.
        let data = unsafe { EnvData::get(env) }?;
        let (_, reference) = data.classes.iter().find(|(n, _)| *n == name)?;
        let env = Env::from_raw(env);
        let value = reference.get_value(&env).ok()?.raw();
        Some(value)
    }

    /// Remembers a generator made in this environment (and forgets those already gone).
    pub fn track(env: sys::napi_env, handle: &Arc<Handle>) {
        // SAFETY: every caller passes the current call's env, which is live.
        if let Some(data) = unsafe { EnvData::get(env) } {
            let mut handles = data.handles.lock().unwrap_or_else(|e| e.into_inner());
            handles.retain(|h| h.strong_count() > 0);
            handles.push(Arc::downgrade(handle));
        }
    }
}

/// The environment is going away (its thread or the process exits): release every generator
/// that is still open, so no lease outlives its thread. A panic stays here: there is no caller
/// to throw it to.
fn cleanup(handles: Handles) {
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let handles = std::mem::take(&mut *handles.lock().unwrap_or_else(|e| e.into_inner()));
        for h in handles.iter().filter_map(Weak::upgrade) {
            let _ = h.close();
        }
    }));
}
