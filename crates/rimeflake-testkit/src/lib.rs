//! The test kit of the rimeflake repository, shared by the tests of the core, the CLI and
//! `rimeflake serve` and by the benchmarks: it depends on nothing of rimeflake, so the core's
//! own unit tests use it too.
//!
//! - [`servers`]: real Redis and PostgreSQL servers on loopback, killed when dropped;
//! - [`support`]: temporary directories, a seeded generator ([`support::Rng`]), a monotonic
//!   stopwatch, libfaketime's path and a clean environment for a run of the binary;
//! - [`seeds`]: the runner of the seeded simulations (which seeds, from which variables, and
//!   the failure report).

pub mod seeds;
pub mod servers;
pub mod support;

/// Nanoseconds since the first call, on the monotonic clock: the kit's timeouts and stopwatch.
pub(crate) fn now_ns() -> u64 {
    static ORIGIN: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    #[allow(clippy::disallowed_methods)] // a test harness's timeouts, not the library's clock
    let now = std::time::Instant::now();
    now.saturating_duration_since(*ORIGIN.get_or_init(|| now))
        .as_nanos() as u64
}
