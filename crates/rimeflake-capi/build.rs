//! Generates the C header into OUT_DIR (the committed include/rimeflake.h is compared with it by
//! a test, so a stale header fails) and gives the shared library its soname.

use std::env;
use std::path::PathBuf;

fn main() {
    let crate_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let out = PathBuf::from(env::var("OUT_DIR").expect("set by cargo")).join("rimeflake.h");
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=cbindgen.toml");

    // A versioned soname: programs record librimeflake.so.0 and keep working across 0.x.y
    // releases that keep the ABI.
    if env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,librimeflake.so.0");
    }

    let mut config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml"))
        .expect("crates/rimeflake-capi/cbindgen.toml");
    config.after_includes = Some(version_macros());
    config.trailer = Some(TRAILER.to_string());
    cbindgen::Builder::new()
        .with_crate(&crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen could not read the crate")
        .write_to_file(&out);
}

/// RIMEFLAKE_VERSION_{MAJOR,MINOR,PATCH} and RIMEFLAKE_VERSION_NUMBER, from the workspace
/// version (CARGO_PKG_VERSION_*), so they cannot drift from the crate, the wheel and npm.
fn version_macros() -> String {
    let part = |name: &str| -> u32 {
        env::var(name)
            .expect("set by cargo")
            .parse()
            .expect("a number")
    };
    let (major, minor, patch) = (
        part("CARGO_PKG_VERSION_MAJOR"),
        part("CARGO_PKG_VERSION_MINOR"),
        part("CARGO_PKG_VERSION_PATCH"),
    );
    format!(
        "\n/* The version of this header: rimeflake_version() gives the library's. */\n\
         #define RIMEFLAKE_VERSION_MAJOR {major}\n\
         #define RIMEFLAKE_VERSION_MINOR {minor}\n\
         #define RIMEFLAKE_VERSION_PATCH {patch}\n\
         /* MAJOR * 1000000 + MINOR * 1000 + PATCH: compare with >= in #if. */\n\
         #define RIMEFLAKE_VERSION_NUMBER {}\n\
         #define RIMEFLAKE_VERSION_STRING \"{major}.{minor}.{patch}\"",
        major * 1_000_000 + minor * 1000 + patch
    )
}

/// Functions that must see the caller's struct size: static inline, so `sizeof` is that of the
/// header the caller compiled against, and an older program keeps working with a newer library.
/// They come after cbindgen's include guard, so they carry one of their own.
const TRAILER: &str = r#"
#ifndef RIMEFLAKE_H_INLINE
#define RIMEFLAKE_H_INLINE
#ifdef __cplusplus
extern "C" {
#endif

/* Fills *config with the defaults (the same as every other front end) and sets its struct_size. */
static inline rimeflake_status rimeflake_config_init(rimeflake_config *config) {
  return rimeflake_config_init_sized(config, sizeof *config);
}

/* Reads the counters of generator into *stats. */
static inline rimeflake_status rimeflake_stats(const rimeflake_generator *generator,
                                               rimeflake_generator_stats *stats) {
  return rimeflake_stats_sized(generator, stats, sizeof *stats);
}

#ifdef __cplusplus
}
#endif
#endif  /* RIMEFLAKE_H_INLINE */"#;
