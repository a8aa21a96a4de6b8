//! Errors: one mapping from the core's error kinds to `Error` subclasses with a stable `code`,
//! and `TypeError` / `RangeError` for arguments, each naming the argument.
//!
//! The classes are made once per environment (main thread or worker) by a few lines of
//! JavaScript, since napi cannot declare a subclass of `Error`; the addon keeps references to
//! them in the environment's data and throws instances of them.

use crate::env::EnvData;
use napi::bindgen_prelude::{FnArgs, FromNapiValue, Function, JsObjectValue, Object};
use napi::{sys, Env, Error, JsValue, Result, Status, Unknown};
use rimeflake::ErrorKind;

/// The JavaScript class of a kind: the core's stem and `Error`, as in every binding.
pub fn class_of(kind: ErrorKind) -> String {
    format!("{}Error", kind.class_stem())
}

/// The base class (`RimeflakeError`), which every class derives from: the core's root stem and
/// `Error`, as in every binding.
pub fn base() -> String {
    format!("{}Error", ErrorKind::ROOT_CLASS_STEM)
}

/// `err.code` of a kind: the core's stable code string.
pub fn code_of(kind: ErrorKind) -> &'static str {
    kind.error_code()
}

/// Makes the classes from the names and codes it is given (the root's and each kind's, all the
/// core's): napi has no way to declare a subclass of `Error` itself.
const MAKE_CLASSES: &str = r#"(function (root, rootCode, kinds) {
  const Root = { [root]: class extends Error {
    constructor(message, code) {
      super(message);
      this.code = code === undefined ? rootCode : code;
    }
  } }[root];
  Object.defineProperty(Root.prototype, 'name', { value: root, writable: true, configurable: true });
  const classes = { [root]: Root };
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
    let make: Function<FnArgs<(String, String, Unknown)>, Object> = env.run_script(MAKE_CLASSES)?;
    let mut kinds = env.create_array(0)?;
    // A class comes after the one it derives from (the core's `broader` kind, else the base).
    let mut kinds_in_order: Vec<ErrorKind> = ErrorKind::ALL.to_vec();
    kinds_in_order.sort_by_key(|k| k.broader().is_some());
    for kind in kinds_in_order {
        let mut entry = env.create_array(3)?;
        entry.set(0, class_of(kind))?;
        entry.set(1, code_of(kind))?;
        entry.set(2, kind.broader().map_or_else(base, class_of))?;
        kinds.insert(entry)?;
    }
    let classes = make.call(FnArgs::from((
        base(),
        ErrorKind::ROOT_ERROR_CODE.to_string(),
        kinds.to_unknown(),
    )))?;
    let names = std::iter::once(base()).chain(ErrorKind::ALL.iter().map(|k| class_of(*k)));
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

/// `err.code` of a panic in the core (a bug of rimeflake's), thrown as a `RimeflakeError`: the
/// core's root code and `_PANIC`.
pub fn panic_code() -> String {
    format!("{}_PANIC", ErrorKind::ROOT_ERROR_CODE)
}

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
    throw_class(env, &base(), &message, &panic_code())
}

/// Throws an instance of the class called `name`, made with `message` and `code`; without
/// the environment's data (a torn-down environment), a plain Error with that code. Returns
/// [`pending`].
fn throw_class(env: sys::napi_env, name: &str, message: &str, code: &str) -> Error {
    // SAFETY: `env` is the environment of the current call, as every caller's is.
    let thrown = unsafe { throw_instance(env, name, message, code) };
    if !thrown {
        let _ = Env::from_raw(env).throw_error(&message.replace('\0', " "), Some(code));
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
    // SAFETY: the current call's env, and a class (a function) kept by this environment.
    let Ok(class) =
        (unsafe { Function::<FnArgs<(String, String)>, Unknown>::from_napi_value(env, class) })
    else {
        return false;
    };
    match class.new_instance(FnArgs::from((message.to_string(), code.to_string()))) {
        Ok(error) => Env::from_raw(env).throw(error).is_ok(),
        Err(_) => false,
    }
}

/// napi-rs's marker for "the exception is already thrown".
pub fn pending() -> Error {
    Error::new(Status::PendingException, "")
}

/// A `TypeError` with Node's code `ERR_INVALID_ARG_TYPE`, thrown now.
pub fn type_error(env: sys::napi_env, message: &str) -> Error {
    let _ = Env::from_raw(env)
        .throw_type_error(&message.replace('\0', " "), Some("ERR_INVALID_ARG_TYPE"));
    pending()
}

/// A `RangeError` with Node's code `ERR_OUT_OF_RANGE`, thrown now.
pub fn range_error(env: sys::napi_env, message: &str) -> Error {
    let _ =
        Env::from_raw(env).throw_range_error(&message.replace('\0', " "), Some("ERR_OUT_OF_RANGE"));
    pending()
}

/// `[[name, code, class]]` for every kind of the core: the test that every kind is mapped.
/// Built only with the `internals` feature, as is `_throwKind`.
#[cfg(feature = "internals")]
#[napi_derive::napi(catch_unwind, js_name = "_errorKinds", skip_typescript)]
pub fn error_kinds() -> Vec<Vec<String>> {
    ErrorKind::ALL
        .iter()
        .map(|k| vec![k.name().to_string(), code_of(*k).to_string(), class_of(*k)])
        .collect()
}

/// Throws the error that the core's kind called `name` maps to (for the mapping's test).
#[cfg(feature = "internals")]
#[napi_derive::napi(catch_unwind, js_name = "_throwKind", skip_typescript)]
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
#[napi_derive::napi(catch_unwind, js_name = "_panic", skip_typescript)]
pub fn panic_inside(env: &Env, message: String) -> Result<()> {
    guard(env.raw(), || -> rimeflake::Result<()> {
        panic!("{message}")
    })
}
