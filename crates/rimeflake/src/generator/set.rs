//! [`Builder::set`]: a setting of the front ends' table ([`SETTINGS`](crate::frontend::SETTINGS))
//! applied by its row, so that a front end reads its user's options by the table and never
//! names a builder method itself. A new row of the table needs its arm here, and nothing in the
//! front ends.

use super::builder::Builder;
use crate::backend::Backend;
use crate::clock::Clock;
use crate::contract::{Setting, SettingKind};
use crate::error::{Error, Result};
use crate::layout::Layout;
use std::path::PathBuf;
use std::time::Duration;

/// A setting's value, as a front end read it from its user by the setting's
/// [`SettingKind`](crate::frontend::SettingKind).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SettingValue {
    /// A whole number: a worker ID, milliseconds.
    Number(u64),
    /// Text: a layout spec, a namespace, a backend, a policy's name.
    Text(String),
    /// A path (a state directory), which need not be UTF-8.
    Path(PathBuf),
    /// On or off.
    Flag(bool),
    /// A layout the front end already holds (Python's and Node's `Layout` objects).
    Layout(Layout),
}

impl<C: Clock> Builder<C> {
    /// Sets `setting` to `value`, as the front end's user gave it: what a front end does with
    /// each option it reads by the table, instead of calling the builder method of each.
    /// Errors name the setting as the builder's [`Frontend`](crate::Frontend) spells it.
    ///
    /// # Errors
    /// [`ErrorKind::Config`](crate::ErrorKind::Config) for a value the setting cannot take (a
    /// bad layout spec, backend or policy name, or a value of another kind than its row's).
    ///
    /// # Example
    /// ```
    /// use rimeflake::frontend::{Frontend, Setting, SettingValue};
    ///
    /// let generator = rimeflake::Generator::builder()
    ///     .frontend(Frontend::Node)
    ///     .set(Setting::WorkerId, SettingValue::Number(7))?
    ///     .set(Setting::Backend, SettingValue::Text("memory".into()))?
    ///     .set(Setting::OnRollback, SettingValue::Text("wait".into()))?
    ///     .build()?;
    /// assert_eq!(generator.worker_id(), 7);
    /// # Ok::<(), rimeflake::Error>(())
    /// ```
    pub fn set(self, setting: Setting, value: SettingValue) -> Result<Self> {
        use SettingValue as V;
        let frontend = self.spelling();
        let ms = |v: u64| Duration::from_millis(v);
        Ok(match (setting, value) {
            (Setting::WorkerId, V::Number(id)) => self.worker_id(id),
            (Setting::Layout, V::Layout(layout)) => self.layout(layout),
            (Setting::Layout, V::Text(spec)) => self.layout(Layout::from_spec(&spec)?),
            (Setting::Namespace, V::Text(ns)) => self.namespace(ns),
            (Setting::StateDir, V::Path(dir)) => self.state_dir(dir),
            (Setting::StateDir, V::Text(dir)) => self.state_dir(dir),
            (Setting::Backend, V::Text(text)) => self.backend(Backend::parse(&text)?),
            (Setting::MaxDrift, V::Number(v)) => self.max_drift(ms(v)),
            (Setting::MaxWait, V::Number(v)) => self.max_wait(ms(v)),
            (Setting::OnRollback, V::Text(name)) => {
                self.rollback_policy(frontend.rollback_policy(&name)?)
            }
            (Setting::StrictMonotonic, V::Flag(on)) => self.strict_monotonic(on),
            (Setting::LeaseTtl, V::Number(v)) => self.lease_ttl(ms(v)),
            (Setting::RandomSequenceStart, V::Flag(on)) => self.random_sequence_start(on),
            (Setting::WaitAtTakeover, V::Flag(on)) => self.wait_at_takeover(on),
            (setting, value) => {
                return Err(Error::config(format!(
                    "{}: {value:?} is not {}",
                    frontend.setting(setting),
                    what(setting.info().kind)
                )))
            }
        })
    }
}

/// What a value of `kind` is, for the error of a value of another kind.
fn what(kind: SettingKind) -> &'static str {
    match kind {
        SettingKind::Layout => "a layout",
        SettingKind::WorkerId => "a worker ID",
        SettingKind::Millis => "a number of milliseconds",
        SettingKind::Path => "a path",
        SettingKind::Flag => "true or false",
        _ => "text",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::{Frontend, SETTINGS};

    /// A value of the kind each row takes (as a front end reads it).
    fn sample(kind: SettingKind) -> SettingValue {
        match kind {
            SettingKind::Layout => SettingValue::Text("twitter".into()),
            SettingKind::WorkerId | SettingKind::Millis => SettingValue::Number(1000),
            SettingKind::Path => SettingValue::Path("/tmp".into()),
            SettingKind::Flag => SettingValue::Flag(true),
            SettingKind::Backend => SettingValue::Text("memory".into()),
            SettingKind::Choice(words) => SettingValue::Text(words[0].into()),
            SettingKind::Text => SettingValue::Text("ns".into()),
        }
    }

    #[test]
    fn every_row_of_the_table_applies() {
        for row in SETTINGS {
            let b = crate::Generator::builder().set(row.setting, sample(row.kind));
            assert!(b.is_ok(), "{row:?}: {:?}", b.err());
        }
    }

    #[test]
    fn a_value_of_another_kind_names_the_setting() {
        let e = crate::Generator::builder()
            .frontend(Frontend::Python)
            .set(Setting::MaxWait, SettingValue::Text("5s".into()))
            .unwrap_err();
        assert_eq!(
            e.message(),
            "max_wait_ms: Text(\"5s\") is not a number of milliseconds"
        );
    }
}
