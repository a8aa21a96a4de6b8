//! # rimeflake
//!
//! 64-bit, time-ordered, unique IDs (the Snowflake family) that stay unique when the clock jumps
//! back and when a process restarts or forks.
//!
//! ```
//! use rimeflake::{Generator, Layout};
//!
//! let generator = Generator::builder().layout(Layout::twitter()).worker_id(1).in_memory().build()?;
//! let id = generator.next_id()?;
//! let parts = generator.layout().decode(id)?;
//! assert_eq!(parts.worker_id, 1);
//! # Ok::<(), rimeflake::Error>(())
//! ```
//!
//! The API is the items at the root ([`Generator`] and its [`Builder`], [`Layout`] and its
//! [`Parts`], [`Encoding`] with [`format()`] and [`parse()`], [`Backend`], [`Error`] and
//! [`ErrorKind`], [`Stats`], [`Warning`] and the clocks) and six modules: [`layout`] (bits,
//! presets, compose/decode), [`clock`] (the clocks a generator can be given), [`skywalking`]
//! (SkyWalking trace IDs), [`otel`] (OpenTelemetry span and trace IDs), [`admin`] (inspecting
//! and resetting state, as `rimeflake state` does) and [`frontend`] (what the CLI and the
//! language bindings need beyond that). The modules behind them, and the layers they form, are
//! described in the repository's docs/architecture.md.
#![warn(missing_docs)]

// The file store, local leases and fork handling are written against Unix (flock, fsync,
// pthread_atfork, O_NOFOLLOW), and no other platform has been built or tested: say so plainly
// rather than fail somewhere inside the build.
#[cfg(not(unix))]
compile_error!(
    "rimeflake supports Unix (Linux; macOS untested) only: its state store, leases and fork \
     handling need flock, fsync and pthread_atfork, and no Windows store exists yet"
);

// The public surface is the root's re-exports and the modules `layout`, `clock`, `skywalking`,
// `otel`, `admin` (what `rimeflake state` does) and `frontend` (what the CLI and the bindings
// alone need). The other modules are the crate's own: the tests that reach them are unit tests,
// the ones in tests/internal/ included below.

// The tests of the crate's own modules (tests/internal/) name it `rimeflake`, as integration
// tests do, and run in its unit-test build, where those modules are visible.
#[cfg(test)]
extern crate self as rimeflake;
#[cfg(test)]
#[path = "../tests/internal/mod.rs"]
mod internal_tests;
#[cfg(test)]
pub(crate) mod testing;

pub mod admin;
mod backend;
pub mod clock;
mod contract;
mod encoding;
mod env;
mod error;
pub(crate) mod fork;
pub mod frontend;
pub(crate) mod generator;
pub mod layout;
pub(crate) mod lease;
pub mod otel;
mod random;
pub(crate) mod settings;
pub mod skywalking;
pub(crate) mod state;
mod sync;
pub(crate) mod utc;
mod warning;

pub use backend::Backend;
pub use clock::{Clock, CoarseClock, ManualClock, SystemClock};
pub use encoding::{format, parse, Encoding};
pub use error::{Error, ErrorKind, Result};
pub use frontend::Frontend;
pub use generator::{Builder, Generator, LeaseState, RollbackPolicy, Stats};
pub use layout::{FieldOrder, Layout, LayoutBuilder, Parts};
pub use lease::WorkerSource;
pub use state::{StateStore, WorkerState};
pub use warning::Warning;
