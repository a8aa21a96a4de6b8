//! Where the core's warnings go: the C callback the config names, else stderr, as every other
//! front end shows them by default.

use core_rimeflake::Builder;
use std::ffi::{c_char, c_void, CString};
use std::io::Write;

/// Receives a warning: `kind` is a stable name (such as `"container"`),
/// `message` says what and what to do; both NUL-terminated, valid during the call only.
#[allow(non_camel_case_types)]
pub type rimeflake_warning_fn = Option<
    unsafe extern "C" fn(user_data: *mut c_void, kind: *const c_char, message: *const c_char),
>;

/// The callback and its user data, which the C caller promises may be used from any thread.
struct Callback {
    f: unsafe extern "C" fn(*mut c_void, *const c_char, *const c_char),
    user_data: *mut c_void,
}

// SAFETY: the header says on_warning may be called from any thread, with warning_user_data,
// which must stay valid until rimeflake_generator_free: the C caller takes on making both safe
// for that. The struct itself is a function pointer and a pointer it never dereferences.
unsafe impl Send for Callback {}
// SAFETY: as for Send: calls through a shared Callback are calls from any thread, which the
// header allows, and nothing in it is written after it is made.
unsafe impl Sync for Callback {}

/// A warning callback that does nothing: `config.on_warning = rimeflake_warning_ignore;` drops
/// every warning, which a config without a callback prints on stderr.
#[no_mangle]
pub extern "C" fn rimeflake_warning_ignore(
    _user_data: *mut c_void,
    _kind: *const c_char,
    _message: *const c_char,
) {
}

/// `builder` with its warnings sent to `f` with `user_data`, or without a callback to stderr:
/// one line each, `rimeflake: warning: <message>`, as the CLI prints them.
pub(crate) fn route(builder: Builder, f: rimeflake_warning_fn, user_data: *mut c_void) -> Builder {
    match f {
        Some(f) => attach(builder, f, user_data),
        None => builder.on_warning(|w: &core_rimeflake::Warning| {
            // One write per line, so lines of several threads never mix; an error (stderr
            // closed) is no reason to fail the call that warned.
            let line = format!("rimeflake: warning: {}\n", w.message());
            let _ = std::io::stderr().lock().write_all(line.as_bytes());
        }),
    }
}

fn attach(
    builder: Builder,
    f: unsafe extern "C" fn(*mut c_void, *const c_char, *const c_char),
    user_data: *mut c_void,
) -> Builder {
    let callback = Callback { f, user_data };
    builder.on_warning(move |w: &core_rimeflake::Warning| {
        let kind = CString::new(w.kind().replace('\0', "")).unwrap_or_default();
        let message = CString::new(w.message().replace('\0', "")).unwrap_or_default();
        callback.call(&kind, &message);
    })
}

impl Callback {
    /// A method, so the closure above captures the whole (Send + Sync) struct.
    fn call(&self, kind: &CString, message: &CString) {
        // SAFETY: a C function pointer the caller gave in the config, of this signature, with
        // its user data (valid until the generator is freed, as the header requires) and two
        // NUL-terminated strings that live until it returns.
        unsafe { (self.f)(self.user_data, kind.as_ptr(), message.as_ptr()) }
    }
}
