//! The core's warnings as Python warnings: `warnings.warn(RimeflakeWarning(message, kind))`.
//!
//! The core reports them through a callback, possibly from a thread without the interpreter
//! (a generator starts with it released): they are collected there and raised once the
//! interpreter is held again, where filters (`-W error`, pytest's `filterwarnings`) apply.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;
use std::sync::{Arc, Mutex};

static CATEGORY: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// Warnings kept until they can be raised: `(kind, message)`.
#[derive(Clone, Default)]
pub struct Collected(Arc<Mutex<Vec<(&'static str, String)>>>);

impl Collected {
    /// The callback for `Builder::on_warning`.
    pub fn sink(&self) -> impl Fn(&rimeflake::Warning) + Send + Sync + 'static {
        let kept = Arc::clone(&self.0);
        move |w| {
            kept.lock()
                .unwrap_or_else(|p| p.into_inner())
                .push((w.kind(), w.message().to_string()))
        }
    }

    /// Raises what was collected, in order, with the caller's frame as its origin. An error
    /// when a filter turns a warning into one.
    pub fn raise(&self, py: Python<'_>) -> PyResult<()> {
        let taken = std::mem::take(&mut *self.0.lock().unwrap_or_else(|p| p.into_inner()));
        if taken.is_empty() {
            return Ok(());
        }
        let category = CATEGORY.import(py, "rimeflake._warning", "RimeflakeWarning")?;
        let warn = py.import("warnings")?.getattr("warn")?;
        for (kind, message) in taken {
            let warning = category.call1((message, kind))?;
            // stacklevel 1: the innermost Python frame, the one that called into rimeflake.
            warn.call1((warning, py.None(), 1))?;
        }
        Ok(())
    }
}
