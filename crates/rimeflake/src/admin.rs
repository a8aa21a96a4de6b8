//! Administration of the state that generators keep, as `rimeflake state show` and `rimeflake
//! state reset` do it: inspect what a state directory or a server holds, render it as text, and
//! replace a corrupt state with one safely above every ID it could have issued.
//!
//! A state directory is read with [`inspect`] and [`render`], and reset with [`reset`] (or
//! [`reset_if_any`]); a server backend (Redis or PostgreSQL) with the functions of [`remote`].
//! Inspecting never disturbs a holder; resetting refuses while a live holder has the lease.

mod inspect;
pub mod remote;
mod reset;

pub use inspect::{inspect, render, LeaseInfo, StateHealth};
pub use reset::{reset, reset_if_any, Reset, ResetOptions, ResetReport};
// The path the core's simulation tests use.
#[cfg(test)]
#[doc(hidden)]
pub use reset::reset_store;
