//! The C ABI of rimeflake: `librimeflake.so` / `librimeflake.a` and `include/rimeflake.h`
//! (generated from this crate by build.rs with cbindgen).
//!
//! Every exported function goes through [`boundary::ffi_boundary`]: panics are caught,
//! pointers checked, failures become a [`status::rimeflake_status`] and a thread-local message,
//! and nothing is written to an out-parameter on failure. The core decides everything; this
//! crate only translates.

mod boundary;
mod config;
mod generator;
mod layout;
mod stats;
mod status;
mod text;
mod warnings;

pub use layout::RIMEFLAKE_LAYOUT_DESCRIBE_MAX;
use std::ffi::c_char;
pub use text::{RIMEFLAKE_FORMAT_MAX, RIMEFLAKE_GLOBAL_ID_MAX};

/// The library's version, such as "0.1.0" (static text). Compare with RIMEFLAKE_VERSION_STRING
/// to see whether the library matches the header.
#[no_mangle]
pub extern "C" fn rimeflake_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// include/rimeflake.h is what build.rs generates from this source: regenerate it with
    /// `RIMEFLAKE_WRITE_HEADER=1 cargo test -p rimeflake-capi` (or `make header`).
    #[test]
    fn committed_header_is_current() {
        let generated = include_str!(concat!(env!("OUT_DIR"), "/rimeflake.h"));
        let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../include/rimeflake.h");
        if std::env::var_os("RIMEFLAKE_WRITE_HEADER").is_some() {
            std::fs::write(&committed, generated).expect("write include/rimeflake.h");
        }
        let on_disk = std::fs::read_to_string(&committed).unwrap_or_default();
        assert!(
            on_disk == generated,
            "include/rimeflake.h is stale: regenerate it with `make header` \
             (RIMEFLAKE_WRITE_HEADER=1 cargo test -p rimeflake-capi)"
        );
    }

    #[test]
    fn version_is_the_crate_version() {
        // SAFETY: rimeflake_version returns a static NUL-terminated string.
        let v = unsafe { std::ffi::CStr::from_ptr(super::rimeflake_version()) };
        assert_eq!(v.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
    }
}
