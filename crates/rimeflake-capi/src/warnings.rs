//! The C callback that receives the core's warnings.

use core_rimeflake::Builder;
use std::ffi::{c_char, c_void, CString};

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

pub(crate) fn attach(
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
