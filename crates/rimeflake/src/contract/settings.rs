//! [`SETTINGS`]: the settings every front end offers, one row each, and [`C_CONFIG`], the order
//! of C's struct. A new setting is a row here (with its [`Setting`] variant), its line at the
//! end of [`C_CONFIG`] and its arm in the builder's `Builder::set`; the CLI's flags, Python's
//! keyword arguments and Node's option keys follow from the row, and `make contract` writes
//! the typed stubs, the C struct and C++'s setters from it.

use super::{Frontend, Setting};
use crate::env;

/// How a front end reads a setting's value from its user.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SettingKind {
    /// A preset name or a layout spec (`Layout::from_spec`); Python and Node take a `Layout`
    /// object too.
    Layout,
    /// A worker ID: a whole number from 0.
    WorkerId,
    /// A whole number of milliseconds, within the row's `range` when it has one.
    Millis,
    /// Any text.
    Text,
    /// A file system path.
    Path,
    /// `local`, `memory` or a server's URL (`Backend::parse`).
    Backend,
    /// One of these words.
    Choice(&'static [&'static str]),
    /// On or off.
    Flag,
}

/// What a setting is when no one sets it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SettingDefault {
    /// Decided when the generator is built, by the environment or a rule (the row's
    /// `default_doc` says which).
    Resolved,
    /// This many milliseconds.
    Millis(u64),
    /// Off (`false`) or on.
    Flag(bool),
}

/// One setting: how each front end spells it, what it takes, its default and its doc line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct SettingInfo {
    /// The setting this row describes.
    pub setting: Setting,
    /// The [`Builder`](crate::Builder) method.
    pub rust: &'static str,
    /// The command line's flag.
    pub cli: &'static str,
    /// Python's keyword argument.
    pub python: &'static str,
    /// Node's option key.
    pub node: &'static str,
    /// The field of C's `rimeflake_config`.
    pub c: &'static str,
    /// What it takes.
    pub kind: SettingKind,
    /// What it is when not set.
    pub default: SettingDefault,
    /// The default in words, for docs and help ("lease a free one", "2000").
    pub default_doc: &'static str,
    /// The `RIMEFLAKE_*` variable read when the setting is not given, if any.
    pub env: Option<&'static str>,
    /// The smallest and the largest value a number may take (in its unit), if bounded.
    pub range: Option<(u64, u64)>,
    /// One sentence on what it does.
    pub doc: &'static str,
}

impl SettingInfo {
    /// This setting as `frontend` spells it.
    pub const fn name_in(&self, frontend: Frontend) -> &'static str {
        match frontend {
            Frontend::Rust => self.rust,
            Frontend::Cli => self.cli,
            Frontend::Python => self.python,
            Frontend::Node => self.node,
            Frontend::C => self.c,
        }
    }

    /// The doc line with the default (and the variable it comes from), for a help text.
    ///
    /// # Example
    /// ```
    /// use rimeflake::frontend::Setting;
    ///
    /// assert_eq!(
    ///     Setting::MaxWait.info().help(),
    ///     "The longest any call waits (for the clock, a reservation or a lease) before it fails, in ms [default: 5000]"
    /// );
    /// ```
    pub fn help(&self) -> String {
        match self.env {
            Some(var) => format!("{} [default: ${var}, else {}]", self.doc, self.default_doc),
            None => format!("{} [default: {}]", self.doc, self.default_doc),
        }
    }
}

/// A row, with the spellings most settings follow: `python` is the C field too, and the CLI's
/// flag is `--` and the Python name in kebab case (only two rows differ, and say so). One
/// argument per column of the table.
#[allow(clippy::too_many_arguments)]
const fn row(
    setting: Setting,
    rust: &'static str,
    cli: &'static str,
    python: &'static str,
    node: &'static str,
    kind: SettingKind,
    default: SettingDefault,
    default_doc: &'static str,
    env: Option<&'static str>,
    doc: &'static str,
) -> SettingInfo {
    SettingInfo {
        setting,
        rust,
        cli,
        python,
        node,
        c: python,
        kind,
        default,
        default_doc,
        env,
        range: None,
        doc,
    }
}

/// The rollback policies' names, as every front end but Rust writes them.
const POLICIES: &[&str] = &["bump", "wait", "error"];

/// Every setting a front end offers, in the order front ends list them (a [`Setting`]'s
/// discriminant is its row).
pub const SETTINGS: &[SettingInfo] = &[
    row(
        Setting::WorkerId,
        "worker_id",
        "--worker", // the command's first flag, kept short
        "worker_id",
        "workerId",
        SettingKind::WorkerId,
        SettingDefault::Resolved,
        "lease a free one: the lowest of the state directory, or one from a random start on a \
         server backend",
        Some(env::WORKER_ID_ENV),
        "A fixed worker ID, locked and kept durable like a leased one (RIMEFLAKE_WORKER_ID=ordinal \
         takes a Kubernetes StatefulSet pod's ordinal)",
    ),
    row(
        Setting::Layout,
        "layout",
        "--layout",
        "layout",
        "layout",
        SettingKind::Layout,
        SettingDefault::Resolved,
        "default",
        Some(env::LAYOUT_ENV),
        "The bit layout: a preset or a layout spec such as \
         clock_id=0,time=41,worker=10,sequence=12,epoch_ms=1420070400000",
    ),
    SettingInfo {
        // `namespace` is a C++ keyword: the C header must compile as C++.
        c: "namespace_name",
        ..row(
            Setting::Namespace,
            "namespace",
            "--namespace",
            "namespace",
            "namespace",
            SettingKind::Text,
            SettingDefault::Resolved,
            "the layout's own: default, twitter, ..., custom-<fingerprint>",
            None,
            "The namespace: worker IDs and state are separate per namespace, and a namespace \
             keeps one layout",
        )
    },
    row(
        Setting::StateDir,
        "state_dir",
        "--state-dir",
        "state_dir",
        "stateDir",
        SettingKind::Path,
        SettingDefault::Resolved,
        "$XDG_STATE_HOME/rimeflake or ~/.local/state/rimeflake",
        Some(env::STATE_DIR_ENV),
        "The state directory: worker leases and durable state, for the local backend",
    ),
    row(
        Setting::Backend,
        "backend",
        "--backend",
        "backend",
        "backend",
        SettingKind::Backend,
        SettingDefault::Resolved,
        "local",
        Some(env::BACKEND_ENV),
        "Where leases and state live: local (the state directory), memory (no state: not \
         restart-safe, needs a worker ID), or a server many hosts share: \
         redis[s]://[:PASSWORD@]HOST[:PORT][/DB], redis[s]+sentinel://HOST[:PORT][,...]/MASTER[/DB], \
         postgresql://USER[:PASSWORD]@HOST[:PORT]/DB, \
         mysql://USER[:PASSWORD]@HOST[:PORT]/DB or zookeeper://HOST:PORT[,HOST:PORT...]/CHROOT",
    ),
    SettingInfo {
        range: Some((0, MAX_DRIFT_MS)),
        ..row(
            Setting::MaxDrift,
            "max_drift",
            "--max-drift-ms",
            "max_drift_ms",
            "maxDriftMs",
            SettingKind::Millis,
            SettingDefault::Millis(2000),
            "2000",
            None,
            "How far the clock may step back and still be absorbed by counting on, in ms, at \
             most 300000 (five minutes); on a server backend the namespace keeps the first \
             generator's, and refuses another",
        )
    },
    row(
        Setting::MaxWait,
        "max_wait",
        "--max-wait-ms",
        "max_wait_ms",
        "maxWaitMs",
        SettingKind::Millis,
        SettingDefault::Millis(5000),
        "5000",
        None,
        "The longest any call waits (for the clock, a reservation or a lease) before it fails, in \
         ms",
    ),
    row(
        Setting::OnRollback,
        "rollback_policy",
        "--on-rollback",
        "on_rollback",
        "onRollback",
        SettingKind::Choice(POLICIES),
        SettingDefault::Resolved,
        "bump when the layout has clock-id bits, else wait",
        None,
        "After a larger step back: bump (to the next clock-id), wait (for the clock, at most \
         the longest wait) or error",
    ),
    row(
        Setting::StrictMonotonic,
        "strict_monotonic",
        "--strict-monotonic",
        "strict_monotonic",
        "strictMonotonic",
        SettingKind::Flag,
        SettingDefault::Flag(false),
        "off",
        None,
        "Never reuse an older clock-id, so IDs always increase (at the cost of waiting when no \
         higher one is free)",
    ),
    SettingInfo {
        range: Some((MIN_LEASE_TTL_MS, MAX_LEASE_TTL_MS)),
        ..row(
            Setting::LeaseTtl,
            "lease_ttl",
            "--lease-ttl-ms",
            "lease_ttl_ms",
            "leaseTtlMs",
            SettingKind::Millis,
            SettingDefault::Millis(DEFAULT_LEASE_TTL_MS),
            "10000",
            Some(env::LEASE_TTL_ENV),
            "With a server backend: how long a lease lasts without renewal, 200 ms to a day, in \
             ms; a killed process's worker ID is free again after it",
        )
    },
    row(
        Setting::RandomSequenceStart,
        "random_sequence_start",
        "--random-sequence-start",
        "random_sequence_start",
        "randomSequenceStart",
        SettingKind::Flag,
        SettingDefault::Flag(false),
        "off",
        None,
        "Start each time unit's sequence at a random offset rather than 0, so that id % N \
         spreads evenly over N shards at any rate (layouts with the sequence below the worker)",
    ),
    row(
        Setting::WaitAtTakeover,
        "wait_at_takeover",
        "--wait-at-takeover",
        "wait_at_takeover",
        "waitAtTakeover",
        SettingKind::Flag,
        SettingDefault::Resolved,
        "off: only where the server shows the state may have been lost or copied",
        Some(env::WAIT_AT_TAKEOVER_ENV),
        "With a server backend: begin every start past what a lost holder of the worker ID may \
         have issued, even when the server has its state (the first ID about a second later): \
         for servers restored from backups where nobody runs rimeflake state restored",
    ),
];

/// A field of C's `rimeflake_config` after its `struct_size`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CField {
    /// The field of a setting: [`SettingInfo::c`], its C type and its "unset" value from the
    /// row's [`SettingKind`] and [`SettingDefault`].
    Setting(Setting),
    /// `on_warning` and `warning_user_data`: the callback that receives each warning, which
    /// the other front ends hand to their language's own warnings instead.
    OnWarning,
}

/// The fields of C's `rimeflake_config` in the struct's order, from which the struct is
/// generated. The order is an ABI: a field is only ever appended, so that a program built
/// against an older header passes a shorter struct and gets the defaults of the fields added
/// since. A new setting appends its field here.
pub const C_CONFIG: &[CField] = &[
    CField::Setting(Setting::Layout),
    CField::Setting(Setting::WorkerId),
    CField::Setting(Setting::Namespace),
    CField::Setting(Setting::StateDir),
    CField::Setting(Setting::Backend),
    CField::Setting(Setting::MaxDrift),
    CField::Setting(Setting::MaxWait),
    CField::Setting(Setting::OnRollback),
    CField::Setting(Setting::StrictMonotonic),
    CField::OnWarning,
    CField::Setting(Setting::LeaseTtl),
    CField::Setting(Setting::RandomSequenceStart),
    CField::Setting(Setting::WaitAtTakeover),
];

/// The largest `max_drift`: five minutes. A successor of a worker ID whose state was lost or may
/// be stale waits out the holder's reach (`max_drift` plus `reserve_ahead`), so weeks would
/// keep the worker ID from starting; a larger rollback moves to another clock-id.
const MAX_DRIFT_MS: u64 = 300_000;
/// A server lease's bounds and default, in ms (the lease layer's `MIN_LEASE_TTL`,
/// `MAX_LEASE_TTL` and `DEFAULT_LEASE_TTL`, which a test holds equal).
const MIN_LEASE_TTL_MS: u64 = 200;
const MAX_LEASE_TTL_MS: u64 = 24 * 3600 * 1000;
const DEFAULT_LEASE_TTL_MS: u64 = 10_000;

impl SettingDefault {
    /// The default in milliseconds, for a [`SettingKind::Millis`] row (0 for any other).
    pub const fn millis(self) -> u64 {
        match self {
            SettingDefault::Millis(ms) => ms,
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_row_is_its_settings() {
        for (i, row) in SETTINGS.iter().enumerate() {
            assert_eq!(row.setting as usize, i, "{row:?}");
            assert_eq!(row.setting.info(), row);
        }
    }

    #[test]
    fn spellings_follow_the_rules_or_say_why_not() {
        for row in SETTINGS {
            if row.setting != Setting::WorkerId {
                assert_eq!(row.cli, format!("--{}", row.python.replace('_', "-")));
            }
            if row.setting != Setting::Namespace {
                assert_eq!(row.c, row.python);
            }
            assert!(!row.doc.ends_with('.'), "a doc line is a phrase: {row:?}");
        }
    }

    #[test]
    fn c_has_one_field_for_each_setting() {
        for row in SETTINGS {
            let n = C_CONFIG
                .iter()
                .filter(|f| **f == CField::Setting(row.setting))
                .count();
            assert_eq!(n, 1, "C_CONFIG must name {:?} once: append it", row.setting);
        }
    }
}
