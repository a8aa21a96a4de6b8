//! The IDs of `rimeflake.otel.IdGenerator`, made by the core's `otel` module from a generator's
//! IDs (the hot path first, as `Generator.next_id` takes it).

use crate::errors::Result;
use crate::generator::Generator;
use pyo3::prelude::*;

/// A span ID from ``generator``: its next ID that is not 0.
#[pyfunction]
pub fn _otel_span_id(py: Python<'_>, generator: &Bound<'_, Generator>) -> Result<u64> {
    let generator = generator.get();
    rimeflake::otel::span_id(|| generator.next_id(py))
}

/// A trace ID from ``generator``: its next ID in the high 64 bits, 64 random bits from the
/// operating system below.
#[pyfunction]
pub fn _otel_trace_id(py: Python<'_>, generator: &Bound<'_, Generator>) -> Result<u128> {
    let generator = generator.get();
    rimeflake::otel::trace_id(|| generator.next_id(py))
}
