//! [`Frontend`]: which front end a [`Builder`](crate::Builder) serves, so that configuration
//! errors name a setting as that front end's user typed it (`--worker` in the CLI, `workerId` in
//! Node, `worker_id` in Python and C) and a rollback policy as they wrote it (`'bump'` in Python
//! and Node, `RollbackPolicy::BumpClock` in Rust).
//!
//! The messages are written once, here and in the core's checks; a binding only says which
//! front end it is, with [`Builder::frontend`](crate::Builder::frontend).
//!
//! This module also holds what the front ends alone need beyond the crate's API, in one place:
//! the settings they resolve the way every front end does (a layout, a state directory or a
//! backend given or taken from the environment), the warning for an ID decoded on an assumed
//! layout, the hook a binding calls in a forked child, the worker ID a forked child will take,
//! the defaults a binding documents, and the UTC times the command prints and parses. A Rust
//! program using the generator needs none of it.

use crate::error::{Error, Result};
use crate::generator::RollbackPolicy;

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

    /// How this front end writes `policy`: `RollbackPolicy::Wait` in Rust, `'wait'` in Python
    /// and Node, `"wait"` in C.
    ///
    /// # Example
    /// ```
    /// use rimeflake::frontend::Frontend;
    /// use rimeflake::RollbackPolicy;
    ///
    /// assert_eq!(Frontend::Python.policy(RollbackPolicy::BumpClock), "'bump'");
    /// assert_eq!(Frontend::Rust.policy(RollbackPolicy::Wait), "RollbackPolicy::Wait");
    /// ```
    pub const fn policy(self, policy: RollbackPolicy) -> &'static str {
        use RollbackPolicy as P;
        match (self, policy) {
            (Frontend::Rust, P::BumpClock) => "RollbackPolicy::BumpClock",
            (Frontend::Rust, P::Wait) => "RollbackPolicy::Wait",
            (Frontend::Rust, P::Error) => "RollbackPolicy::Error",
            (Frontend::C | Frontend::Cli, P::BumpClock) => "\"bump\"",
            (Frontend::C | Frontend::Cli, P::Wait) => "\"wait\"",
            (Frontend::C | Frontend::Cli, P::Error) => "\"error\"",
            (_, P::BumpClock) => "'bump'",
            (_, P::Wait) => "'wait'",
            (_, P::Error) => "'error'",
        }
    }

    /// The rollback policy `name` (`bump`, `wait` or `error`), with an error in this front
    /// end's words for any other name.
    ///
    /// # Errors
    /// [`ErrorKind::Config`](crate::ErrorKind::Config) for an unknown name.
    ///
    /// # Example
    /// ```
    /// use rimeflake::frontend::Frontend;
    ///
    /// let e = Frontend::Node.rollback_policy("bumpp").unwrap_err();
    /// assert_eq!(e.message(), "onRollback: unknown policy \"bumpp\"; use 'bump', 'wait' or 'error'");
    /// ```
    pub fn rollback_policy(self, name: &str) -> Result<RollbackPolicy> {
        match name {
            "bump" | "bump_clock" => Ok(RollbackPolicy::BumpClock),
            "wait" => Ok(RollbackPolicy::Wait),
            "error" => Ok(RollbackPolicy::Error),
            other => Err(Error::config(format!(
                "{}: unknown policy {other:?}; use {}, {} or {}",
                self.setting(Setting::OnRollback),
                self.names_of_policies()[0],
                self.names_of_policies()[1],
                self.names_of_policies()[2],
            ))),
        }
    }

    /// The names `rollback_policy` takes, as this front end writes them (Rust's own enum has
    /// no names to parse, so it lists the strings).
    fn names_of_policies(self) -> [&'static str; 3] {
        let f = match self {
            Frontend::Rust => Frontend::C,
            other => other,
        };
        [
            f.policy(RollbackPolicy::BumpClock),
            f.policy(RollbackPolicy::Wait),
            f.policy(RollbackPolicy::Error),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [Frontend; 5] = [
        Frontend::Rust,
        Frontend::Cli,
        Frontend::Python,
        Frontend::Node,
        Frontend::C,
    ];

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

    #[test]
    fn policies_in_each_front_ends_words() {
        assert_eq!(
            ALL.map(|f| f.policy(RollbackPolicy::Error)).to_vec(),
            [
                "RollbackPolicy::Error",
                "\"error\"",
                "'error'",
                "'error'",
                "\"error\""
            ]
        );
    }

    #[test]
    fn unknown_policy_names_the_setting_and_the_choices() {
        let e = Frontend::Python.rollback_policy("Bump").unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Config);
        assert_eq!(
            e.message(),
            "on_rollback: unknown policy \"Bump\"; use 'bump', 'wait' or 'error'"
        );
        let e = Frontend::Rust.rollback_policy("x").unwrap_err();
        assert_eq!(
            e.message(),
            "rollback_policy: unknown policy \"x\"; use \"bump\", \"wait\" or \"error\""
        );
        for f in ALL {
            assert_eq!(f.rollback_policy("wait"), Ok(RollbackPolicy::Wait));
            assert_eq!(f.rollback_policy("bump"), Ok(RollbackPolicy::BumpClock));
            assert_eq!(f.rollback_policy("error"), Ok(RollbackPolicy::Error));
        }
    }

    fn config_error(b: crate::Builder) -> String {
        let e = b.build().unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Config, "{e}");
        e.message().to_string()
    }

    #[test]
    fn bump_on_a_layout_without_clock_ids_in_each_front_ends_words() {
        let on = |f: Frontend| {
            config_error(
                crate::Generator::builder()
                    .frontend(f)
                    .layout(crate::Layout::twitter())
                    .worker_id(1)
                    .in_memory()
                    .rollback_policy(RollbackPolicy::BumpClock),
            )
        };
        assert_eq!(
            on(Frontend::Python),
            "on_rollback: 'bump' needs clock-id bits, and layout twitter has none; use 'wait' \
             or 'error'"
        );
        assert_eq!(
            on(Frontend::Node),
            "onRollback: 'bump' needs clock-id bits, and layout twitter has none; use 'wait' \
             or 'error'"
        );
        assert_eq!(
            on(Frontend::Rust),
            "rollback_policy: RollbackPolicy::BumpClock needs clock-id bits, and layout twitter \
             has none; use RollbackPolicy::Wait or RollbackPolicy::Error"
        );
    }

    #[test]
    fn worker_id_settings_in_each_front_ends_words() {
        let in_memory =
            |f: Frontend| config_error(crate::Generator::builder().frontend(f).in_memory());
        assert!(
            in_memory(Frontend::Cli)
                .starts_with("--worker: an in-memory generator needs a fixed worker ID: give --worker, or set RIMEFLAKE_WORKER_ID"),
            "{}",
            in_memory(Frontend::Cli)
        );
        assert!(in_memory(Frontend::Node).starts_with("workerId: "));
        assert!(in_memory(Frontend::C).starts_with("worker_id: "));

        let too_big = config_error(
            crate::Generator::builder()
                .frontend(Frontend::Cli)
                .worker_id(99_999)
                .in_memory(),
        );
        assert_eq!(
            too_big,
            "worker ID 99999 (from --worker) is above this layout's largest worker ID 1023"
        );
        let empty_dir = config_error(
            crate::Generator::builder()
                .frontend(Frontend::Node)
                .worker_id(1)
                .state_dir(""),
        );
        assert!(empty_dir.starts_with("stateDir: empty"), "{empty_dir}");
        let ttl = config_error(
            crate::Generator::builder()
                .frontend(Frontend::Python)
                .worker_id(1)
                .in_memory()
                .lease_ttl(std::time::Duration::from_millis(1)),
        );
        assert!(
            ttl.starts_with("lease_ttl_ms: 1 ms is out of range"),
            "{ttl}"
        );
    }
}
