//! The front ends' contract, as data, in the bottom layer so that every layer can name a
//! setting as its user typed it: which front end a [`Builder`](crate::Builder) serves
//! ([`Frontend`]), the settings every front end offers and how each spells them ([`SETTINGS`],
//! one row per [`Setting`]: name per front end, type, default, environment variable, bounds,
//! doc line), and the one "did you mean" for a name a front end does not know
//! ([`Frontend::unknown_setting`], [`nearest`]).
//!
//! The front ends read this table instead of keeping lists of their own: the CLI makes its
//! flags from it, Python its keyword arguments, Node its option keys; the C config struct (in the
//! order of [`C_CONFIG`], an ABI), C++'s setters and the typed stubs (Python's, TypeScript's) are
//! generated from it by `make contract`, and a test holds them to it. The messages are
//! written once, here and in the core's checks; a binding only says which front end it is, with
//! [`Builder::frontend`](crate::Builder::frontend).
//!
//! The counters of [`Stats`](crate::Stats) have their table beside the struct
//! (`Stats::FIELDS`), and the presets theirs beside the layouts (`Layout::PRESET_LIST`): each
//! table lives with what it describes, and this file with what the lower layers name.

mod settings;
mod suggest;

pub use settings::{CField, SettingDefault, SettingInfo, SettingKind, C_CONFIG, SETTINGS};
pub use suggest::{edit_distance, nearest};

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

/// A setting every front end offers, in the order of [`SETTINGS`] (its row is
/// `SETTINGS[setting as usize]`). `#[non_exhaustive]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Setting {
    /// The fixed worker ID.
    WorkerId,
    /// The bit layout: a preset name or a layout spec.
    Layout,
    /// The namespace whose worker IDs and state the generator uses.
    Namespace,
    /// The state directory.
    StateDir,
    /// Where leases and state live (`local`, `memory`, a server's URL).
    Backend,
    /// How far back the clock may go and still be absorbed.
    MaxDrift,
    /// The longest any call waits.
    MaxWait,
    /// The policy for a large clock rollback.
    OnRollback,
    /// Never reuse a clock-id.
    StrictMonotonic,
    /// The lease TTL of a server backend.
    LeaseTtl,
    /// Start each time unit's sequence at a random offset rather than 0.
    RandomSequenceStart,
    /// On a server backend, begin every start past what a lost holder may have issued.
    WaitAtTakeover,
}

impl Setting {
    /// This setting's row of [`SETTINGS`].
    pub const fn info(self) -> &'static SettingInfo {
        &SETTINGS[self as usize]
    }
}

impl Frontend {
    /// Every front end, in declaration order.
    pub const ALL: [Frontend; 5] = [
        Frontend::Rust,
        Frontend::Cli,
        Frontend::Python,
        Frontend::Node,
        Frontend::C,
    ];

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
        setting.info().name_in(self)
    }

    /// The setting this front end spells `name`, if any (exactly as spelt: a near miss is
    /// [`Frontend::unknown_setting`]'s to name).
    ///
    /// # Example
    /// ```
    /// use rimeflake::frontend::{Frontend, Setting};
    ///
    /// assert_eq!(Frontend::Node.find_setting("maxWaitMs"), Some(Setting::MaxWait));
    /// assert_eq!(Frontend::Node.find_setting("max_wait_ms"), None);
    /// ```
    pub fn find_setting(self, name: &str) -> Option<Setting> {
        SETTINGS
            .iter()
            .find(|row| row.name_in(self) == name)
            .map(|row| row.setting)
    }

    /// The message for a setting this front end does not know: the nearest of its own names
    /// when one is near (a different case, another front end's spelling, a typo or two), else
    /// the list of them. Every front end's "did you mean" is this one.
    ///
    /// # Example
    /// ```
    /// use rimeflake::frontend::Frontend;
    ///
    /// assert_eq!(
    ///     Frontend::Python.unknown_setting("workerid"),
    ///     "unknown keyword argument 'workerid'; did you mean 'worker_id'?"
    /// );
    /// assert_eq!(
    ///     Frontend::Node.unknown_setting("workerID"),
    ///     "options: unknown option 'workerID'; did you mean 'workerId'?"
    /// );
    /// ```
    pub fn unknown_setting(self, name: &str) -> String {
        let names: Vec<&str> = SETTINGS.iter().map(|row| row.name_in(self)).collect();
        let (prefix, noun) = match self {
            Frontend::Node => ("options: ", "option"),
            Frontend::Python => ("", "keyword argument"),
            Frontend::Cli => ("", "flag"),
            Frontend::C => ("", "field"),
            Frontend::Rust => ("", "setting"),
        };
        match nearest(name, &names) {
            Some(near) => format!("{prefix}unknown {noun} '{name}'; did you mean '{near}'?"),
            None => format!(
                "{prefix}unknown {noun} '{name}'; the {noun}s are {}",
                names.join(", ")
            ),
        }
    }
}

/// `snake_case` as `camelCase`: Node's spelling of a name of the tables (`lease_ttl_ms` is
/// `leaseTtlMs`, as `stats()`'s `lease_renewals` is `leaseRenewals`).
///
/// # Example
/// ```
/// assert_eq!(rimeflake::frontend::camel_case("lease_renewal_failures"), "leaseRenewalFailures");
/// ```
pub fn camel_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for (i, word) in name.split('_').enumerate() {
        let mut chars = word.chars();
        if let Some(first) = chars.next() {
            if i == 0 {
                out.push(first);
            } else {
                out.push(first.to_ascii_uppercase());
            }
            out.push_str(chars.as_str());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worker_id_as_each_front_end_spells_it() {
        let spelled: Vec<_> = Frontend::ALL.map(|f| f.setting(Setting::WorkerId)).to_vec();
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
    fn nodes_keys_are_the_camel_case_of_pythons() {
        for row in SETTINGS {
            assert_eq!(camel_case(row.python), row.node);
        }
    }

    #[test]
    fn each_front_end_finds_its_own_names_only() {
        for f in Frontend::ALL {
            for row in SETTINGS {
                assert_eq!(f.find_setting(row.name_in(f)), Some(row.setting), "{f:?}");
            }
        }
        assert_eq!(Frontend::Cli.find_setting("worker_id"), None);
    }

    #[test]
    fn unknown_names_get_the_nearest_or_the_list() {
        assert_eq!(
            Frontend::Node.unknown_setting("worker_id"),
            "options: unknown option 'worker_id'; did you mean 'workerId'?"
        );
        assert_eq!(
            Frontend::Python.unknown_setting("workerId"),
            "unknown keyword argument 'workerId'; did you mean 'worker_id'?"
        );
        assert_eq!(
            Frontend::Cli.unknown_setting("--workr"),
            "unknown flag '--workr'; did you mean '--worker'?"
        );
        // Nothing near: every option, in the table's order.
        let all: Vec<&str> = SETTINGS.iter().map(|row| row.node).collect();
        assert!(all.starts_with(&["workerId", "layout", "namespace"]));
        assert_eq!(
            Frontend::Node.unknown_setting("foo"),
            format!(
                "options: unknown option 'foo'; the options are {}",
                all.join(", ")
            )
        );
    }
}
