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
//! The modules, and the layers they form, are described in the repository's
//! docs/architecture.md: [`layout`] (bits, presets, compose/decode), [`clock`],
//! [`generator`] (the rollback-safe state machine), [`state`] (durable state), [`worker`]
//! (where worker IDs come from), [`encoding`] (string forms) and [`error`].
#![warn(missing_docs)]

// The file store, local leases and fork handling are written against Unix (flock, fsync,
// pthread_atfork, O_NOFOLLOW), and no other platform has been built or tested: say so plainly
// rather than fail somewhere inside the build.
#[cfg(not(unix))]
compile_error!(
    "rimeflake supports Unix (Linux; macOS untested) only: its state store, leases and fork \
     handling need flock, fsync and pthread_atfork, and no Windows store exists yet"
);

mod backend;
pub mod clock;
pub mod encoding;
pub mod error;
pub mod fork;
pub mod frontend;
pub mod generator;
pub mod layout;
mod random;
pub mod settings;
pub mod skywalking;
pub mod state;
mod sync;
/// The SkyWalking IDs under their first name, kept for one release: use [`skywalking`] (a Rust
/// reader takes `rimeflake::tracing` for the `tracing` crate).
#[deprecated(since = "0.1.0", note = "renamed `rimeflake::skywalking`")]
pub mod tracing {
    pub use crate::skywalking::*;
}
pub mod utc;
mod warning;
pub mod worker;

pub use backend::Backend;
pub use clock::{Clock, CoarseClock, ManualClock, SystemClock};
pub use encoding::{format, parse, Encoding};
pub use error::{Error, ErrorKind, Result};
pub use frontend::Frontend;
pub use generator::{Builder, Generator, RollbackPolicy, Stats};
pub use layout::{FieldOrder, Layout, LayoutBuilder, Parts};
pub use state::{StateStore, WorkerState};
pub use warning::Warning;
pub use worker::WorkerSource;
