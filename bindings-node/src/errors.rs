//! Errors: one mapping from the core's error kinds to `Error` subclasses with a stable `code`,
//! and `TypeError` / `RangeError` for arguments, each naming the argument.
//!
//! The classes are made once per environment (main thread or worker) by a few lines of
//! JavaScript, since napi cannot declare a subclass of `Error`; the addon keeps references to
//! them in the environment's data and throws instances of them.

use crate::env::EnvData;
use napi::bindgen_prelude::{JsObjectValue, Object};
use napi::{sys, Env, Error, JsValue, Result, Status, Unknown};
use rimeflake::ErrorKind;
use std::ffi::CString;
use std::ptr;

/// The JavaScript class of a kind: the core's stem and `Error`, as in every binding.
pub fn class_of(kind: ErrorKind) -> String {
    format!("{}Error", kind.class_stem())
}

/// The base class (`RimeflakeError`), which every class derives from.
pub const BASE: &str = "RimeflakeError";

/// `err.code` of a kind: the core's stable code string.
pub fn code_of(kind: ErrorKind) -> &'static str {
    kind.error_code()
}

const MAKE_CLASSES: &str = r#"(function (kinds) {
  class RimeflakeError extends Error {
    constructor(message, code) {
      super(message);
      this.code = code === undefined ? 'ERR_RIMEFLAKE' : code;
    }
  }
  Object.defineProperty(RimeflakeError.prototype, 'name', { value: 'RimeflakeError', writable: true, configurable: true });
  const classes = { RimeflakeError };
  for (const [name, code, parent] of kinds) {
    const Base = classes[parent];
    const cls = { [name]: class extends Base { constructor(message, c) { super(message, c === undefined ? code : c); } } }[name];
    Object.defineProperty(cls.prototype, 'name', { value: name, writable: true, configurable: true });
    classes[name] = cls;
  }
  return classes;
})"#;

/// Makes the classes of this environment, exports them and keeps references in `data`.
pub fn install(env: &Env, exports: &mut Object, data: &mut EnvData) -> Result<()> {
    let make: napi::bindgen_prelude::Function<Unknown, Object> = env.run_script(MAKE_CLASSES)?;
    let mut kinds = env.create_array(0)?;
    // A class comes after the one it derives from (the core's `broader` kind, else the base).
    let mut kinds_in_order: Vec<ErrorKind> = ErrorKind::ALL.to_vec();
    kinds_in_order.sort_by_key(|k| k.broader().is_some());
    for kind in kinds_in_order {
        let mut entry = env.create_array(3)?;
        entry.set(0, class_of(kind))?;
        entry.set(1, code_of(kind))?;
        entry.set(2, kind.broader().map_or(BASE.to_string(), class_of))?;
        kinds.insert(entry)?;
    }
    let classes = make.call(kinds.to_unknown())?;
    let names =
        std::iter::once(BASE.to_string()).chain(ErrorKind::ALL.iter().map(|k| class_of(*k)));
    for name in names {
        let class: Unknown = classes.get_named_property(&name)?;
        exports.set_named_property(&name, class)?;
        data.keep_class(env, name, class.raw())?;
    }
    Ok(())
}

/// Throws the class of `e`'s kind with its message; the returned error tells napi-rs that an
/// exception is pending (it then throws nothing of its own).
pub fn throw(env: sys::napi_env, e: &rimeflake::Error) -> Error {
    throw_class(env, &class_of(e.kind()), e.message(), code_of(e.kind()))
}

/// `err.code` of a panic in the core (a bug of rimeflake's), thrown as a `RimeflakeError`.
pub const PANIC_CODE: &str = "ERR_RIMEFLAKE_PANIC";

/// Runs `f`, a call into the core, and throws what it fails with; a panic (which would abort
/// the process if it unwound into Node) becomes a `RimeflakeError` with code
/// `ERR_RIMEFLAKE_PANIC`, as C returns `RIMEFLAKE_PANIC` and Python raises.
pub fn guard<T>(env: sys::napi_env, f: impl FnOnce() -> rimeflake::Result<T>) -> Result<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(result) => result.map_err(|e| throw(env, &e)),
        Err(payload) => Err(throw_panic(env, payload.as_ref())),
    }
}

/// Throws the `RimeflakeError` of a panic, its message the panic's.
pub fn throw_panic(env: sys::napi_env, payload: &(dyn std::any::Any + Send)) -> Error {
    let said = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("no message");
    let message = format!("internal error: rimeflake panicked ({said}); please report it");
    throw_class(env, BASE, &message, PANIC_CODE)
}

/// Throws an instance of the class called `name`, made with `message` and `code`; without
/// the environment's data (a torn-down environment), a plain Error with that code. Returns
/// [`pending`].
fn throw_class(env: sys::napi_env, name: &str, message: &str, code: &str) -> Error {
    // SAFETY: `env` is the environment of the current call, as every caller's is.
    let thrown = unsafe { throw_instance(env, name, message, code) };
    if !thrown {
        let code = CString::new(code).unwrap_or_default();
        let msg = CString::new(message.replace('\0', " ")).unwrap_or_default();
        // SAFETY: as above; both strings are NUL-terminated and outlive the call.
        unsafe { sys::napi_throw_error(env, code.as_ptr(), msg.as_ptr()) };
    }
    pending()
}

/// `new <name>(message, code)`, thrown; `false` when it could not be.
///
/// # Safety
/// `env` is the environment of the current call.
unsafe fn throw_instance(env: sys::napi_env, name: &str, message: &str, code: &str) -> bool {
    // SAFETY: `env` is the current call's (this function's contract).
    let Some(class) = (unsafe { EnvData::class(env, name) }) else {
        return false;
    };
    let mut args = [ptr::null_mut(); 2];
    let mut err = ptr::null_mut();
    // SAFETY: the current call's env; each string's pointer and length are a live &str's
    // (napi copies it), `args` holds the two values made before `napi_new_instance` reads it
    // (the && stops at the first failure), and `class` is a value of this call.
    unsafe {
        sys::napi_create_string_utf8(
            env,
            message.as_ptr().cast(),
            message.len() as isize,
            &mut args[0],
        ) == sys::Status::napi_ok
            && sys::napi_create_string_utf8(
                env,
                code.as_ptr().cast(),
                code.len() as isize,
                &mut args[1],
            ) == sys::Status::napi_ok
            && sys::napi_new_instance(env, class, 2, args.as_ptr(), &mut err)
                == sys::Status::napi_ok
            && sys::napi_throw(env, err) == sys::Status::napi_ok
    }
}

/// napi-rs's marker for "the exception is already thrown".
pub fn pending() -> Error {
    Error::new(Status::PendingException, "")
}

/// A `TypeError` with Node's code `ERR_INVALID_ARG_TYPE`, thrown now.
pub fn type_error(env: sys::napi_env, message: &str) -> Error {
    throw_node(
        env,
        sys::napi_throw_type_error,
        "ERR_INVALID_ARG_TYPE",
        message,
    )
}

/// A `RangeError` with Node's code `ERR_OUT_OF_RANGE`, thrown now.
pub fn range_error(env: sys::napi_env, message: &str) -> Error {
    throw_node(
        env,
        sys::napi_throw_range_error,
        "ERR_OUT_OF_RANGE",
        message,
    )
}

type Thrower = unsafe extern "C" fn(
    sys::napi_env,
    *const std::ffi::c_char,
    *const std::ffi::c_char,
) -> sys::napi_status;

fn throw_node(env: sys::napi_env, thrower: Thrower, code: &str, message: &str) -> Error {
    let code = CString::new(code).unwrap_or_default();
    let msg = CString::new(message.replace('\0', " ")).unwrap_or_default();
    // SAFETY: every caller passes the current call's env; `thrower` is one of napi's throw
    // functions; both strings are NUL-terminated and live until after the call (napi copies).
    unsafe { thrower(env, code.as_ptr(), msg.as_ptr()) };
    pending()
}

/// `[[name, code, class]]` for every kind of the core: the test that every kind is mapped.
/// Built only with the `internals` feature, as is `_throwKind`.
#[cfg(feature = "internals")]
#[napi_derive::napi(js_name = "_errorKinds", skip_typescript)]
pub fn error_kinds() -> Vec<Vec<String>> {
    ErrorKind::ALL
        .iter()
        .map(|k| vec![k.name().to_string(), code_of(*k).to_string(), class_of(*k)])
        .collect()
}

/// Throws the error that the core's kind called `name` maps to (for the mapping's test).
#[cfg(feature = "internals")]
#[napi_derive::napi(js_name = "_throwKind", skip_typescript)]
pub fn throw_kind(env: &Env, name: String) -> Result<()> {
    match ErrorKind::ALL.iter().find(|k| k.name() == name) {
        Some(kind) => Err(throw(
            env.raw(),
            &rimeflake::Error::new(*kind, format!("a test error of kind {name}")),
        )),
        None => Err(range_error(
            env.raw(),
            &format!("name: {name:?} is not an error kind"),
        )),
    }
}

/// Panics inside [`guard`] (for the test that a panic throws instead of aborting).
#[cfg(feature = "internals")]
#[napi_derive::napi(js_name = "_panic", skip_typescript)]
pub fn panic_inside(env: &Env, message: String) -> Result<()> {
    guard(env.raw(), || -> rimeflake::Result<()> {
        panic!("{message}")
    })
}
