//! `rimeflake_status`: one value per core error kind (the kind's stable code), plus the ones
//! only the C boundary has, and their names.

use core_rimeflake::ErrorKind;
use std::ffi::c_char;

/// What a call did: RIMEFLAKE_OK (0), or why it failed. Values 1 to 63 are the core's error
/// kinds, by their stable codes (the same kinds as Python's exception classes and Node's
/// `err.code`); 64 and up are the C boundary's own. Compare with names, not numbers.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub enum rimeflake_status {
    /// Success.
    RIMEFLAKE_OK = 0,
    /// A layout, preset, worker ID or option is invalid (also a backend URL the server refuses:
    /// a wrong password, an unknown database, an untrusted certificate): the message names the
    /// field and why.
    RIMEFLAKE_CONFIG = 1,
    /// The clock went back further than the rollback policy tolerates.
    RIMEFLAKE_CLOCK_ROLLBACK = 2,
    /// A worker lease was lost or could not be taken; also a generator with a fixed worker ID
    /// used in a forked child.
    RIMEFLAKE_LEASE = 3,
    /// Every worker ID in the allowed range is taken.
    RIMEFLAKE_NO_FREE_WORKER = 4,
    /// The durable state could not be read or written, or is corrupt: the message names the file.
    RIMEFLAKE_STATE = 5,
    /// An ID or string that this layout or encoding could not have produced.
    RIMEFLAKE_INVALID_ID = 6,
    /// The generator was closed.
    RIMEFLAKE_CLOSED = 7,
    /// The clock lies outside the layout's time range (before the epoch, or past its end).
    RIMEFLAKE_TIME_RANGE = 8,
    /// The clock did not catch up with the IDs lent ahead within max_wait_ms.
    RIMEFLAKE_OVERLOADED = 9,
    /// A wait was interrupted (not produced by the C API, which has no interrupt hook).
    RIMEFLAKE_INTERRUPTED = 10,
    /// A NULL or misaligned pointer, text that is not UTF-8, or a config of unknown size.
    RIMEFLAKE_INVALID_ARGUMENT = 64,
    /// The caller's buffer is too small: see the message, and the *_MAX constants.
    RIMEFLAKE_BUFFER_TOO_SMALL = 65,
    /// A bug in rimeflake: a Rust panic was caught at the boundary. The message has its text.
    RIMEFLAKE_PANIC = 66,
    /// An error of a kind this version of the C API does not know (from a newer core).
    RIMEFLAKE_ERROR = 67,
}

use rimeflake_status::*;

/// Every status, in value order (tests check each has a name).
pub(crate) const ALL: [rimeflake_status; 15] = [
    RIMEFLAKE_OK,
    RIMEFLAKE_CONFIG,
    RIMEFLAKE_CLOCK_ROLLBACK,
    RIMEFLAKE_LEASE,
    RIMEFLAKE_NO_FREE_WORKER,
    RIMEFLAKE_STATE,
    RIMEFLAKE_INVALID_ID,
    RIMEFLAKE_CLOSED,
    RIMEFLAKE_TIME_RANGE,
    RIMEFLAKE_OVERLOADED,
    RIMEFLAKE_INTERRUPTED,
    RIMEFLAKE_INVALID_ARGUMENT,
    RIMEFLAKE_BUFFER_TOO_SMALL,
    RIMEFLAKE_PANIC,
    RIMEFLAKE_ERROR,
];

impl rimeflake_status {
    /// The status of a core error kind; a kind added to the core after this mapping is
    /// RIMEFLAKE_ERROR, never a panic.
    pub(crate) fn of(kind: ErrorKind) -> Self {
        match kind {
            ErrorKind::Config => RIMEFLAKE_CONFIG,
            ErrorKind::ClockRollback => RIMEFLAKE_CLOCK_ROLLBACK,
            ErrorKind::Lease => RIMEFLAKE_LEASE,
            ErrorKind::NoFreeWorker => RIMEFLAKE_NO_FREE_WORKER,
            ErrorKind::State => RIMEFLAKE_STATE,
            ErrorKind::InvalidId => RIMEFLAKE_INVALID_ID,
            ErrorKind::Closed => RIMEFLAKE_CLOSED,
            ErrorKind::TimeRange => RIMEFLAKE_TIME_RANGE,
            ErrorKind::Overloaded => RIMEFLAKE_OVERLOADED,
            ErrorKind::Interrupted => RIMEFLAKE_INTERRUPTED,
            _ => RIMEFLAKE_ERROR,
        }
    }

    /// The status's name, as spelled in the header, NUL-terminated.
    fn name(self) -> &'static str {
        match self {
            RIMEFLAKE_OK => "RIMEFLAKE_OK\0",
            RIMEFLAKE_CONFIG => "RIMEFLAKE_CONFIG\0",
            RIMEFLAKE_CLOCK_ROLLBACK => "RIMEFLAKE_CLOCK_ROLLBACK\0",
            RIMEFLAKE_LEASE => "RIMEFLAKE_LEASE\0",
            RIMEFLAKE_NO_FREE_WORKER => "RIMEFLAKE_NO_FREE_WORKER\0",
            RIMEFLAKE_STATE => "RIMEFLAKE_STATE\0",
            RIMEFLAKE_INVALID_ID => "RIMEFLAKE_INVALID_ID\0",
            RIMEFLAKE_CLOSED => "RIMEFLAKE_CLOSED\0",
            RIMEFLAKE_TIME_RANGE => "RIMEFLAKE_TIME_RANGE\0",
            RIMEFLAKE_OVERLOADED => "RIMEFLAKE_OVERLOADED\0",
            RIMEFLAKE_INTERRUPTED => "RIMEFLAKE_INTERRUPTED\0",
            RIMEFLAKE_INVALID_ARGUMENT => "RIMEFLAKE_INVALID_ARGUMENT\0",
            RIMEFLAKE_BUFFER_TOO_SMALL => "RIMEFLAKE_BUFFER_TOO_SMALL\0",
            RIMEFLAKE_PANIC => "RIMEFLAKE_PANIC\0",
            RIMEFLAKE_ERROR => "RIMEFLAKE_ERROR\0",
        }
    }

    /// The status whose value is `value`, if there is one (an int from C may be anything).
    fn from_value(value: i32) -> Option<Self> {
        ALL.into_iter().find(|s| *s as i32 == value)
    }
}

/// The name of a status (`"RIMEFLAKE_CLOCK_ROLLBACK"`), static text; `"RIMEFLAKE_UNKNOWN"` for
/// a value that is no status. Takes an int so that any value is safe to pass.
#[no_mangle]
pub extern "C" fn rimeflake_status_name(status: i32) -> *const c_char {
    // Nothing here can panic (a lookup in constant tables), so no boundary is needed.
    rimeflake_status::from_value(status)
        .map_or("RIMEFLAKE_UNKNOWN\0", rimeflake_status::name)
        .as_ptr()
        .cast()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every core error kind has its own status, whose value is the kind's stable code; none
    /// falls to the generic RIMEFLAKE_ERROR.
    #[test]
    fn every_core_error_kind_has_a_status() {
        for kind in ErrorKind::ALL {
            let status = rimeflake_status::of(kind);
            assert_ne!(status, RIMEFLAKE_ERROR, "{kind:?} is not mapped");
            assert_eq!(status as u32, kind.code(), "{kind:?}");
            assert_eq!(status.name(), format!("RIMEFLAKE_{}\0", kind.name()));
        }
        // The boundary's own values stay clear of the core's codes.
        let core_max = ErrorKind::ALL.iter().map(|k| k.code()).max().unwrap();
        assert!(core_max < RIMEFLAKE_INVALID_ARGUMENT as u32);
    }

    #[test]
    fn every_status_has_its_name_and_unknown_values_have_one_too() {
        for status in ALL {
            // SAFETY: rimeflake_status_name always returns a static NUL-terminated string.
            let name = unsafe { std::ffi::CStr::from_ptr(rimeflake_status_name(status as i32)) };
            assert_eq!(format!("{}\0", name.to_str().unwrap()), status.name());
        }
        for value in [-1, 11, 63, 68, i32::MAX] {
            // SAFETY: as above, for any value.
            let name = unsafe { std::ffi::CStr::from_ptr(rimeflake_status_name(value)) };
            assert_eq!(name.to_str().unwrap(), "RIMEFLAKE_UNKNOWN");
        }
    }
}
