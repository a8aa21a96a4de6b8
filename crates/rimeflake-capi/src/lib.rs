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

    /// A server URL that this build has no backend for (a build without the `redis` or
    /// `postgres` feature) is a RIMEFLAKE_CONFIG error naming the feature, not a crash or a
    /// silent fallback; with the feature, the URL is taken (nothing listens on port 1, so the
    /// generator then fails to connect, which is not a configuration error).
    #[test]
    fn server_urls_need_their_feature() {
        use crate::config::{rimeflake_config, rimeflake_config_init_sized};
        use crate::generator::{rimeflake_generator, rimeflake_generator_new};
        use crate::status::rimeflake_status;
        use std::ffi::{CStr, CString};

        for (url, feature, built) in [
            ("redis://127.0.0.1:1", "redis", cfg!(feature = "redis")),
            (
                "postgresql://u@127.0.0.1:1/db",
                "postgres",
                cfg!(feature = "postgres"),
            ),
            ("mysql://u@127.0.0.1:1/db", "mysql", cfg!(feature = "mysql")),
            (
                "zookeeper://127.0.0.1:1/ids",
                "zookeeper",
                cfg!(feature = "zookeeper"),
            ),
        ] {
            let url = CString::new(url).unwrap();
            let mut config = std::mem::MaybeUninit::<rimeflake_config>::uninit();
            let mut gen: *mut rimeflake_generator = std::ptr::null_mut();
            // SAFETY: `config` is writable for its size; once initialised, its text field points
            // at `url`, which outlives the call; `gen` is writable.
            let status = unsafe {
                let size = std::mem::size_of::<rimeflake_config>();
                rimeflake_config_init_sized(config.as_mut_ptr(), size);
                let mut config = config.assume_init();
                config.backend = url.as_ptr();
                config.max_wait_ms = 200;
                rimeflake_generator_new(&config, &mut gen)
            };
            // SAFETY: the message is a NUL-terminated string of this thread.
            let message =
                unsafe { CStr::from_ptr(crate::boundary::rimeflake_last_error_message()) };
            let message = message.to_string_lossy();
            assert!(gen.is_null(), "{url:?}: a generator was made");
            if built {
                assert_ne!(
                    status,
                    rimeflake_status::RIMEFLAKE_CONFIG,
                    "{url:?}: {message}"
                );
            } else {
                assert_eq!(
                    status,
                    rimeflake_status::RIMEFLAKE_CONFIG,
                    "{url:?}: {message}"
                );
                assert!(
                    message.contains(&format!("cargo feature \"{feature}\"")),
                    "{url:?}: {message}"
                );
            }
        }
    }

    #[test]
    fn version_is_the_crate_version() {
        // SAFETY: rimeflake_version returns a static NUL-terminated string.
        let v = unsafe { std::ffi::CStr::from_ptr(super::rimeflake_version()) };
        assert_eq!(v.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
    }
}
