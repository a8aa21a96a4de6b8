//! One error type with stable kinds that every binding maps to its own error types.
//!
//! [`Error`] is opaque: match on [`Error::kind`], whose [`ErrorKind::code`] is a stable number
//! shared by the Python, Node and C bindings. New kinds may be added; bindings map a kind they do
//! not know to a generic error rather than failing.

use std::fmt;

/// What went wrong, as a stable category. `#[non_exhaustive]`: match with a wildcard arm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A layout, preset, worker ID or option is invalid (also a backend URL the server refuses:
    /// a wrong password, an unknown database, an untrusted certificate): the message names the
    /// field and why.
    Config,
    /// The clock went back further than the policy tolerates (or a wait for it timed out).
    ClockRollback,
    /// A worker lease was lost, or could not be taken or renewed (also a server backend that
    /// cannot be reached or does not answer in time).
    Lease,
    /// Every worker ID in the allowed range is taken.
    NoFreeWorker,
    /// The durable state could not be read or written, or is corrupt: the message names the file.
    State,
    /// An ID or string that this layout or encoding could not have produced.
    InvalidId,
    /// The generator was closed, or belongs to the parent of a forked process.
    Closed,
    /// The clock lies outside the layout's time range: before the epoch, or past the end of the
    /// time field (also when a batch would run past it).
    TimeRange,
    /// The generator waited `max_wait` for the clock to catch up with the IDs it had lent ahead.
    Overloaded,
    /// A wait was interrupted by the caller's hook (a signal in a binding, such as Ctrl-C).
    Interrupted,
}

impl ErrorKind {
    /// Every kind, in code order: bindings test that each one is mapped.
    pub const ALL: [ErrorKind; 10] = [
        ErrorKind::Config,
        ErrorKind::ClockRollback,
        ErrorKind::Lease,
        ErrorKind::NoFreeWorker,
        ErrorKind::State,
        ErrorKind::InvalidId,
        ErrorKind::Closed,
        ErrorKind::TimeRange,
        ErrorKind::Overloaded,
        ErrorKind::Interrupted,
    ];

    /// The stable number of this kind (1-based; 0 means success in the C API).
    pub const fn code(self) -> u32 {
        match self {
            ErrorKind::Config => 1,
            ErrorKind::ClockRollback => 2,
            ErrorKind::Lease => 3,
            ErrorKind::NoFreeWorker => 4,
            ErrorKind::State => 5,
            ErrorKind::InvalidId => 6,
            ErrorKind::Closed => 7,
            ErrorKind::TimeRange => 8,
            ErrorKind::Overloaded => 9,
            ErrorKind::Interrupted => 10,
        }
    }

    /// The kind this one is a case of, if any, so that a binding's class for it derives from
    /// that kind's class and one handler catches both: no free worker ID is a lease that could
    /// not be taken.
    ///
    /// # Example
    /// ```
    /// use rimeflake::ErrorKind;
    ///
    /// assert_eq!(ErrorKind::NoFreeWorker.broader(), Some(ErrorKind::Lease));
    /// assert_eq!(ErrorKind::Lease.broader(), None);
    /// ```
    pub const fn broader(self) -> Option<ErrorKind> {
        match self {
            ErrorKind::NoFreeWorker => Some(ErrorKind::Lease),
            _ => None,
        }
    }

    /// The stem every binding names this kind's error class after, the same in each:
    /// `ClockRollback` gives `ClockRollbackError` in Python and Node. A stem never collides with
    /// a built-in error of a binding's language (`InterruptedWait`, not Python's
    /// `InterruptedError`, which that class derives from).
    ///
    /// # Example
    /// ```
    /// use rimeflake::ErrorKind;
    ///
    /// assert_eq!(ErrorKind::Interrupted.class_stem(), "InterruptedWait");
    /// ```
    pub const fn class_stem(self) -> &'static str {
        match self {
            ErrorKind::Config => "Config",
            ErrorKind::ClockRollback => "ClockRollback",
            ErrorKind::Lease => "Lease",
            ErrorKind::NoFreeWorker => "NoFreeWorker",
            ErrorKind::State => "State",
            ErrorKind::InvalidId => "InvalidId",
            ErrorKind::Closed => "Closed",
            ErrorKind::TimeRange => "TimeRange",
            ErrorKind::Overloaded => "Overloaded",
            ErrorKind::Interrupted => "InterruptedWait",
        }
    }

    /// The stem of the class every binding's error classes derive from (`RimeflakeError`),
    /// which also stands for a kind a binding does not know yet.
    pub const ROOT_CLASS_STEM: &'static str = "Rimeflake";

    /// The error code of the root class, [`ErrorKind::ROOT_CLASS_STEM`]'s.
    pub const ROOT_ERROR_CODE: &'static str = "ERR_RIMEFLAKE";

    /// The stable code string of this kind's errors in every binding that has one (Node's
    /// `err.code`, Python's `code`): `ERR_RIMEFLAKE_` and [`ErrorKind::name`].
    ///
    /// # Example
    /// ```
    /// use rimeflake::ErrorKind;
    ///
    /// assert_eq!(ErrorKind::ClockRollback.error_code(), "ERR_RIMEFLAKE_CLOCK_ROLLBACK");
    /// ```
    pub const fn error_code(self) -> &'static str {
        match self {
            ErrorKind::Config => "ERR_RIMEFLAKE_CONFIG",
            ErrorKind::ClockRollback => "ERR_RIMEFLAKE_CLOCK_ROLLBACK",
            ErrorKind::Lease => "ERR_RIMEFLAKE_LEASE",
            ErrorKind::NoFreeWorker => "ERR_RIMEFLAKE_NO_FREE_WORKER",
            ErrorKind::State => "ERR_RIMEFLAKE_STATE",
            ErrorKind::InvalidId => "ERR_RIMEFLAKE_INVALID_ID",
            ErrorKind::Closed => "ERR_RIMEFLAKE_CLOSED",
            ErrorKind::TimeRange => "ERR_RIMEFLAKE_TIME_RANGE",
            ErrorKind::Overloaded => "ERR_RIMEFLAKE_OVERLOADED",
            ErrorKind::Interrupted => "ERR_RIMEFLAKE_INTERRUPTED",
        }
    }

    /// A stable, upper-case name for the kind, such as `CLOCK_ROLLBACK` (the end of its
    /// [`ErrorKind::error_code`]).
    pub const fn name(self) -> &'static str {
        match self {
            ErrorKind::Config => "CONFIG",
            ErrorKind::ClockRollback => "CLOCK_ROLLBACK",
            ErrorKind::Lease => "LEASE",
            ErrorKind::NoFreeWorker => "NO_FREE_WORKER",
            ErrorKind::State => "STATE",
            ErrorKind::InvalidId => "INVALID_ID",
            ErrorKind::Closed => "CLOSED",
            ErrorKind::TimeRange => "TIME_RANGE",
            ErrorKind::Overloaded => "OVERLOADED",
            ErrorKind::Interrupted => "INTERRUPTED",
        }
    }
}

/// An error of rimeflake: a stable [`ErrorKind`] and a message for people.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
}

/// `Result` with rimeflake's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An error of `kind` with a message that says what is wrong and, where there is one, the
    /// way out.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error {
            kind,
            message: message.into(),
        }
    }

    /// The stable category of this error.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The message, without the kind.
    pub fn message(&self) -> &str {
        &self.message
    }

    pub(crate) fn config(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::Config, message)
    }

    pub(crate) fn invalid_id(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::InvalidId, message)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_distinct_and_in_order() {
        for (i, kind) in ErrorKind::ALL.iter().enumerate() {
            assert_eq!(kind.code() as usize, i + 1);
        }
        let mut names: Vec<_> = ErrorKind::ALL.iter().map(|k| k.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), ErrorKind::ALL.len());
    }

    #[test]
    fn the_bindings_table_is_one_per_kind() {
        let mut stems = vec![ErrorKind::ROOT_CLASS_STEM];
        for kind in ErrorKind::ALL {
            assert_eq!(
                kind.error_code(),
                format!("{}_{}", ErrorKind::ROOT_ERROR_CODE, kind.name())
            );
            let stem = kind.class_stem();
            assert!(
                stem.starts_with(|c: char| c.is_ascii_uppercase())
                    && stem.chars().all(|c| c.is_ascii_alphanumeric()),
                "{stem}"
            );
            stems.push(stem);
        }
        let count = stems.len();
        stems.sort();
        stems.dedup();
        assert_eq!(stems.len(), count);
    }

    #[test]
    fn display_is_the_message() {
        let e = Error::config("worker_bits: 70 is more than 63");
        assert_eq!(e.to_string(), "worker_bits: 70 is more than 63");
        assert_eq!(e.kind(), ErrorKind::Config);
    }
}
