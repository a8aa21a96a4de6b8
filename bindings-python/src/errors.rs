//! The exception hierarchy rooted at `rimeflake.RimeflakeError`, and the one mapping from the
//! core's error kinds to it.
//!
//! `create_exception!` gives a class a single base, but these classes have two (the root and
//! the fitting built-in, so `except ValueError` catches a `ConfigError`): they are made at
//! import with `type(name, bases, namespace)` and kept in a `PyOnceLock`.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};
use rimeflake::ErrorKind;

/// One exception class: its kind (none for the root), the built-in it also derives from, and
/// its docstring. Its name and `code` are the core's ([`ErrorKind::class_stem`] and `Error`,
/// [`ErrorKind::error_code`]), the same as in every binding. It derives first from the root, or
/// from the class of the kind the core says it is a case of ([`ErrorKind::broader`]).
struct Class {
    kind: Option<ErrorKind>,
    builtin: Option<&'static str>,
    doc: &'static str,
}

impl Class {
    fn name(&self) -> String {
        let stem = self
            .kind
            .map_or(ErrorKind::ROOT_CLASS_STEM, ErrorKind::class_stem);
        format!("{stem}Error")
    }

    fn code(&self) -> &'static str {
        self.kind
            .map_or(ErrorKind::ROOT_ERROR_CODE, ErrorKind::error_code)
    }
}

const ROOT: usize = 0;

/// Parents come before their children: the root first, then the kinds of a broader kind after
/// it. Only what Python adds to the core's table is here (the built-in base, the docstring).
const CLASSES: [Class; 11] = [
    Class {
        kind: None,
        builtin: Some("Exception"),
        doc: "The base of every error rimeflake raises.",
    },
    Class {
        kind: Some(ErrorKind::Config),
        builtin: Some("ValueError"),
        doc: "A layout, preset, worker ID or option is invalid (also a backend URL the server \
              refuses: a wrong password, an unknown database, an untrusted certificate); the \
              message names the field.",
    },
    Class {
        kind: Some(ErrorKind::ClockRollback),
        builtin: None,
        doc: "The clock went back further than the rollback policy tolerates.",
    },
    Class {
        kind: Some(ErrorKind::Lease),
        // A lease is a lock file in the state directory or a record on a server: its failures
        // are the system's (a directory that cannot be written, a server that cannot be
        // reached), so `except OSError` catches them as it does StateError.
        builtin: Some("OSError"),
        doc: "A worker lease was lost, or could not be taken or renewed: its lock file in the \
              state directory could not be made or locked, or a server backend cannot be reached \
              or does not answer in time. Also an OSError, as StateError is.",
    },
    Class {
        kind: Some(ErrorKind::NoFreeWorker),
        builtin: None,
        doc: "Every worker ID in the allowed range is taken.",
    },
    Class {
        kind: Some(ErrorKind::State),
        builtin: Some("OSError"),
        doc: "The durable state could not be read or written, or is corrupt.",
    },
    Class {
        kind: Some(ErrorKind::InvalidId),
        builtin: Some("ValueError"),
        doc: "An ID or string that this layout or encoding could not have produced.",
    },
    Class {
        kind: Some(ErrorKind::Closed),
        builtin: None,
        doc: "The generator was closed, or belongs to the parent of a forked process.",
    },
    Class {
        kind: Some(ErrorKind::TimeRange),
        builtin: None,
        doc: "The clock lies outside the layout's time range (before the epoch or past its end).",
    },
    Class {
        kind: Some(ErrorKind::Overloaded),
        builtin: Some("TimeoutError"),
        doc: "The clock did not catch up with the IDs lent ahead within max_wait.",
    },
    Class {
        kind: Some(ErrorKind::Interrupted),
        builtin: Some("InterruptedError"),
        doc: "A wait was interrupted (a signal whose handler did not raise).",
    },
];

static TYPES: PyOnceLock<Vec<Py<PyType>>> = PyOnceLock::new();

/// Which class a core error kind becomes (its index in `CLASSES`). A kind this binding has no
/// entry for (the core may add some) becomes the root, `RimeflakeError`: never a panic.
fn class_of(kind: ErrorKind) -> usize {
    CLASSES
        .iter()
        .position(|c| c.kind == Some(kind))
        .unwrap_or(ROOT)
}

fn types(py: Python<'_>) -> PyResult<&Vec<Py<PyType>>> {
    TYPES.get_or_try_init(py, || {
        let builtins = py.import("builtins")?;
        let make_type = builtins.getattr("type")?;
        let mut made: Vec<Py<PyType>> = Vec::with_capacity(CLASSES.len());
        for (i, class) in CLASSES.iter().enumerate() {
            let mut bases = Vec::new();
            if i != ROOT {
                let parent = class
                    .kind
                    .and_then(ErrorKind::broader)
                    .map_or(ROOT, class_of);
                bases.push(made[parent].bind(py).clone().into_any());
            }
            if let Some(b) = class.builtin {
                bases.push(builtins.getattr(b)?);
            }
            let namespace = PyDict::new(py);
            namespace.set_item("__module__", "rimeflake")?;
            namespace.set_item("__doc__", class.doc)?;
            namespace.set_item("code", class.code())?;
            let ty = make_type.call1((class.name(), PyTuple::new(py, bases)?, namespace))?;
            made.push(ty.cast_into::<PyType>()?.unbind());
        }
        Ok(made)
    })
}

/// Adds the exception classes to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    for (class, ty) in CLASSES.iter().zip(types(m.py())?) {
        m.add(class.name(), ty.bind(m.py()))?;
    }
    Ok(())
}

/// A core error on its way to Python (the orphan rule forbids `From<rimeflake::Error> for PyErr`
/// itself). Every fallible function of the binding returns it, so `?` maps core errors in one
/// place.
pub enum Failure {
    Core(rimeflake::Error),
    Py(PyErr),
}

pub type Result<T> = std::result::Result<T, Failure>;

impl From<rimeflake::Error> for Failure {
    fn from(e: rimeflake::Error) -> Self {
        Failure::Core(e)
    }
}

impl From<PyErr> for Failure {
    fn from(e: PyErr) -> Self {
        Failure::Py(e)
    }
}

impl From<Failure> for PyErr {
    fn from(f: Failure) -> PyErr {
        match f {
            Failure::Py(e) => e,
            Failure::Core(e) => Python::attach(|py| match types(py) {
                Ok(types) => PyErr::from_type(
                    types[class_of(e.kind())].bind(py).clone(),
                    e.message().to_string(),
                ),
                Err(err) => err,
            }),
        }
    }
}

/// `(name, code, exception class name)` of every core error kind, for the test that each one
/// is mapped. Built only with the `internals` feature, as is `_raise_kind`.
#[cfg(feature = "internals")]
#[pyfunction]
pub fn _error_kinds() -> Vec<(&'static str, u32, String)> {
    ErrorKind::ALL
        .iter()
        .map(|&k| (k.name(), k.code(), CLASSES[class_of(k)].name()))
        .collect()
}

/// Raises the exception that a core error of kind `name` (such as `"CLOCK_ROLLBACK"`) becomes,
/// with `message`: lets the tests reach kinds that are hard to provoke.
#[cfg(feature = "internals")]
#[pyfunction]
pub fn _raise_kind(name: &str, message: &str) -> Result<()> {
    match ErrorKind::ALL.iter().find(|k| k.name() == name) {
        Some(&kind) => Err(rimeflake::Error::new(kind, message).into()),
        None => Err(pyo3::exceptions::PyKeyError::new_err(name.to_string()).into()),
    }
}
