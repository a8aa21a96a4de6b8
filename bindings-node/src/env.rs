//! Per-environment data (the main thread and each worker thread is one environment): the error
//! classes, and the generators made here, so that a cleanup hook releases their leases when the
//! thread or the process exits.

use crate::handle::Handle;
use napi::{sys, Env, Result};
use std::ffi::c_void;
use std::ptr;
use std::sync::{Arc, Mutex, Weak};

pub struct EnvData {
    classes: Vec<(String, sys::napi_ref)>,
    handles: Handles,
}

/// Shared with the cleanup hook, which may run after or before the data's finalizer.
type Handles = Arc<Mutex<Vec<Weak<Handle>>>>;

impl EnvData {
    /// Makes this environment's data, registers it and arms the cleanup hook.
    pub fn create(env: &Env) -> Result<&'static mut EnvData> {
        let data = Box::into_raw(Box::new(EnvData {
            classes: Vec::new(),
            handles: Handles::default(),
        }));
        // SAFETY: `data` came from Box::into_raw just above: valid, and not yet shared.
        let hook = Arc::into_raw(unsafe { &*data }.handles.clone());
        // SAFETY: the current call's env. napi keeps `data` until the environment goes, then
        // `finalize` frees it (once); `hook` is one strong count of the Arc, which `cleanup`
        // takes back (once). The `&mut` returned is the only reference made from `data` until
        // init has finished with it (nothing reads the instance data before init returns).
        unsafe {
            napi::check_status!(sys::napi_set_instance_data(
                env.raw(),
                data.cast(),
                Some(finalize),
                ptr::null_mut()
            ))?;
            napi::check_status!(sys::napi_add_env_cleanup_hook(
                env.raw(),
                Some(cleanup),
                hook as *mut c_void
            ))?;
            Ok(&mut *data)
        }
    }

    /// This environment's data, if the module was initialised in it.
    ///
    /// # Safety
    /// `env` is a live environment.
    pub unsafe fn get<'a>(env: sys::napi_env) -> Option<&'a EnvData> {
        let mut data = ptr::null_mut();
        // SAFETY: `env` is live (this function's contract); `data` is a local to write.
        let ok = unsafe { sys::napi_get_instance_data(env, &mut data) } == sys::Status::napi_ok;
        if ok && !data.is_null() {
            // SAFETY: this module's instance data is only ever an EnvData from `create`, freed
            // only by `finalize` when the environment goes (after every call in it).
            Some(unsafe { &*(data as *const EnvData) })
        } else {
            None
        }
    }

    /// Keeps a reference to `value` (an error class, the Generator class, a helper) by name.
    pub fn keep_class(
        &mut self,
        env: &Env,
        name: impl Into<String>,
        class: sys::napi_value,
    ) -> Result<()> {
        let mut r = ptr::null_mut();
        // SAFETY: the current call's env and a value of it; `r` is a local to write.
        napi::check_status!(unsafe { sys::napi_create_reference(env.raw(), class, 1, &mut r) })?;
        self.classes.push((name.into(), r));
        Ok(())
    }

    /// The error class called `name`.
    ///
    /// # Safety
    /// `env` is the environment of the current call.
    pub unsafe fn class(env: sys::napi_env, name: &str) -> Option<sys::napi_value> {
        // SAFETY: `env` is the current call's (this function's contract), so live.
        let data = unsafe { EnvData::get(env) }?;
        let (_, r) = data.classes.iter().find(|(n, _)| *n == name)?;
        let mut value = ptr::null_mut();
        // SAFETY: a reference made in this environment by keep_class and never deleted before
        // the environment goes; `value` is a local.
        (unsafe { sys::napi_get_reference_value(env, *r, &mut value) } == sys::Status::napi_ok
            && !value.is_null())
        .then_some(value)
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
/// that is still open, so no lease outlives its thread.
unsafe extern "C" fn cleanup(data: *mut c_void) {
    // SAFETY: `data` is the `hook` that `create` made with Arc::into_raw for this hook,
    // which napi calls once: the count it held is taken back once.
    let handles = unsafe { Arc::from_raw(data as *const Mutex<Vec<Weak<Handle>>>) };
    let handles = std::mem::take(&mut *handles.lock().unwrap_or_else(|e| e.into_inner()));
    for h in handles.iter().filter_map(Weak::upgrade) {
        let _ = h.close();
    }
}

unsafe extern "C" fn finalize(_env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
    // References die with the environment; only the Rust side is freed here.
    // SAFETY: `data` is the Box::into_raw of `create`, which napi hands to this finalizer
    // once, when the environment goes and no call in it can read the data any more.
    drop(unsafe { Box::from_raw(data as *mut EnvData) });
}
