//! Administration of the state that generators keep, as `rimeflake state show` and `rimeflake
//! state reset` do it: inspect what a state directory or a server holds, render it as text, and
//! replace a corrupt state with one safely above every ID it could have issued.
//!
//! A state directory is read with [`inspect`] and [`render`], and reset with [`reset`] (or
//! [`reset_if_any`]); a server backend (Redis or PostgreSQL) with the functions of [`remote`].
//! Inspecting never disturbs a holder; resetting refuses while a live holder has the lease.

pub use crate::state::inspect::{inspect, render, LeaseInfo, StateHealth};
pub use crate::state::reset::{reset, reset_if_any, Reset, ResetOptions, ResetReport};

/// The same administration for a server backend: one namespace ([`inspect`](remote::inspect),
/// [`render`](remote::render), [`reset`](remote::reset)) or every namespace on the server
/// ([`inspect_all`](remote::inspect_all), [`render_all`](remote::render_all)). Without the
/// `redis` or `postgres` feature these fail with [`ErrorKind::Config`](crate::ErrorKind::Config).
pub mod remote {
    pub use crate::worker::remote::{
        inspect, inspect_all, render, render_all, reset, RemoteNamespace, RemoteReset,
        RemoteServer, MAX_NAMESPACES,
    };
}
