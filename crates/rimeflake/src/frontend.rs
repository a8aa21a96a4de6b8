//! [`Frontend`]: which front end a [`Builder`](crate::Builder) serves, so that configuration
//! errors name a setting as that front end's user typed it (`--worker` in the CLI, `workerId` in
//! Node, `worker_id` in Python and C) and a rollback policy as they wrote it (`'bump'` in Python
//! and Node, `RollbackPolicy::BumpClock` in Rust).
//!
//! The messages are written once, here and in the core's checks; a binding only says which
//! front end it is, with [`Builder::frontend`](crate::Builder::frontend).
//!
//! How a front end writes a rollback policy ([`Frontend::policy`], [`Frontend::rollback_policy`])
//! is written beside the policy, in the generator's builder, a layer above this file.
//!
//! This module also holds what the front ends alone need beyond the crate's API, in one place:
//! the settings they resolve the way every front end does (a layout, a state directory or a
//! backend given or taken from the environment), the warning for an ID decoded on an assumed
//! layout, the hook a binding calls in a forked child, the worker ID a forked child will take,
//! the defaults a binding documents, and the UTC times the command prints and parses. A Rust
//! program using the generator needs none of it.

// What front ends alone need sits a layer above this file's spelling, beside the crate root.
mod api;
pub use api::*;

/// The front end whose spelling configuration errors use. `#[non_exhaustive]`: match with a
/// wildcard arm.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Frontend {
    /// The Rust crate: the builder's method names (`worker_id`, `rollback_policy`) and
    /// `RollbackPolicy::BumpClock`. The default.
    #[default]
    Rust,
    /// The `rimeflake` command: its flags (`--worker`, `--state-dir`).
    Cli,
    /// The Python package: keyword arguments (`worker_id`, `on_rollback='bump'`).
    Python,
    /// The Node package: option keys (`workerId`, `onRollback: 'bump'`).
    Node,
    /// The C API: the fields of `rimeflake_config` (`worker_id`, `on_rollback = "bump"`).
    C,
}

/// A setting that configuration errors name. `#[non_exhaustive]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Setting {
    /// The fixed worker ID.
    WorkerId,
    /// The state directory.
    StateDir,
    /// Where leases and state live (`local`, `memory`, a server's URL).
    Backend,
    /// The policy for a large clock rollback.
    OnRollback,
    /// How far back the clock may go and still be absorbed.
    MaxDrift,
    /// The lease TTL of a server backend.
    LeaseTtl,
}

impl Frontend {
    /// How this front end spells `setting`.
    ///
    /// # Example
    /// ```
    /// use rimeflake::frontend::{Frontend, Setting};
    ///
    /// assert_eq!(Frontend::Cli.setting(Setting::WorkerId), "--worker");
    /// assert_eq!(Frontend::Node.setting(Setting::WorkerId), "workerId");
    /// assert_eq!(Frontend::Python.setting(Setting::WorkerId), "worker_id");
    /// ```
    pub const fn setting(self, setting: Setting) -> &'static str {
        use Frontend as F;
        use Setting as S;
        match (self, setting) {
            (F::Cli, S::WorkerId) => "--worker",
            (F::Node, S::WorkerId) => "workerId",
            (_, S::WorkerId) => "worker_id",
            (F::Cli, S::StateDir) => "--state-dir",
            (F::Node, S::StateDir) => "stateDir",
            (_, S::StateDir) => "state_dir",
            (F::Cli, S::Backend) => "--backend",
            (_, S::Backend) => "backend",
            // The command has no flag for these three; what it cannot set it never hears about.
            (F::Rust, S::OnRollback) => "rollback_policy",
            (F::Node, S::OnRollback) => "onRollback",
            (_, S::OnRollback) => "on_rollback",
            (F::Rust, S::MaxDrift) => "max_drift",
            (F::Node, S::MaxDrift) => "maxDriftMs",
            (_, S::MaxDrift) => "max_drift_ms",
            (F::Rust, S::LeaseTtl) => "lease_ttl",
            (F::Node, S::LeaseTtl) => "leaseTtlMs",
            (F::Cli, S::LeaseTtl) => crate::env::LEASE_TTL_ENV,
            (_, S::LeaseTtl) => "lease_ttl_ms",
        }
    }
}

/// Every front end, for the tests that check each one's words (here and in the builder).
#[cfg(test)]
pub(crate) const ALL_FRONTENDS: [Frontend; 5] = [
    Frontend::Rust,
    Frontend::Cli,
    Frontend::Python,
    Frontend::Node,
    Frontend::C,
];

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [Frontend; 5] = ALL_FRONTENDS;

    #[test]
    fn worker_id_as_each_front_end_spells_it() {
        let spelled: Vec<_> = ALL.map(|f| f.setting(Setting::WorkerId)).to_vec();
        assert_eq!(
            spelled,
            [
                "worker_id",
                "--worker",
                "worker_id",
                "workerId",
                "worker_id"
            ]
        );
    }
}
