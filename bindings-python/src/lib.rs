//! `rimeflake._native`: the Python binding of the rimeflake core. Thin on purpose: every
//! decision about IDs is the core's; this crate converts arguments, errors and buffers.
//! The public API is the pure-Python package `rimeflake` (python/rimeflake/), which re-exports
//! what is here.

mod args;
mod buffer;
mod errors;
mod generator;
mod interrupt;
mod layout;
mod options;
mod otel;
mod warnings;

use errors::Result;
use pyo3::prelude::*;
use pyo3::types::{PyAny, PyString};

/// The parts of `id` under `layout` (a preset name, a layout spec or a ``Layout``; by default
/// ``"default"``), as a ``Parts`` named tuple.
#[pyfunction]
#[pyo3(signature = (id, layout=None), text_signature = "(id, layout='default')")]
fn decode<'py>(
    py: Python<'py>,
    id: &Bound<'py, PyAny>,
    layout: Option<&Bound<'py, PyAny>>,
) -> Result<Bound<'py, PyAny>> {
    let id = args::id(id)?;
    let Some(layout) = layout else {
        // No layout named: the default is assumed, and said so when the ID does not fit it.
        let default = rimeflake::Layout::default();
        let parts = layout::decode_with(py, &default, id)?;
        let assumed = default.decode(id).ok().and_then(|p| {
            rimeflake::frontend::assumed_layout_warning(id, &p, rimeflake::Frontend::Python)
        });
        if let Some(w) = assumed {
            let said = warnings::Collected::default();
            said.sink()(&w);
            said.raise(py)?;
        }
        return Ok(parts);
    };
    layout::decode_with(py, &layout::from_arg(layout)?, id)
}

/// `id` (any 64-bit unsigned number) as text: ``"dec"`` (decimal), ``"hex"`` (16 digits),
/// ``"base62"`` (11 characters) or ``"base32"`` (13, Crockford). The fixed-width forms sort as
/// the numbers do.
#[pyfunction]
#[pyo3(signature = (id, encoding="dec"))]
fn format(id: &Bound<'_, PyAny>, encoding: &str) -> Result<String> {
    let id = args::word(id)?;
    Ok(rimeflake::format(
        id,
        rimeflake::Encoding::from_name(encoding)?,
    ))
}

/// The number that `text` spells in `encoding` (see ``format``). Raises ``InvalidIdError`` for
/// text that is not one (``decode`` then checks that a number is an ID of a layout).
#[pyfunction]
#[pyo3(signature = (text, encoding="dec"))]
fn parse(text: &str, encoding: &str) -> Result<u64> {
    Ok(rimeflake::parse(
        text,
        rimeflake::Encoding::from_name(encoding)?,
    )?)
}

/// A trace ID in the SkyWalking Java agent's format, ``{process}.{thread}.{ms * 10000 + seq}``,
/// that never repeats (see ``rimeflake.skywalking``).
#[pyfunction]
fn global_id(py: Python<'_>) -> Bound<'_, PyString> {
    rimeflake::skywalking::with_global_id(|s| PyString::new(py, s))
}

/// The process part of ``global_id()`` now (32 hex digits, drawn anew after a fork).
#[pyfunction]
fn process_id() -> String {
    rimeflake::skywalking::process_id()
}

/// Called in a forked child by ``os.register_at_fork`` (the core arms ``pthread_atfork`` too,
/// for forks that bypass Python): the child never continues its parent's IDs.
#[pyfunction]
fn _after_fork_in_child() {
    rimeflake::frontend::after_fork_in_child();
    rimeflake::skywalking::after_fork_in_child();
}

#[pymodule(gil_used = false)]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("EPOCH_2024", rimeflake::layout::EPOCH_2024)?;
    m.add("PRESETS", rimeflake::Layout::PRESETS.to_vec())?;
    m.add_class::<generator::Generator>()?;
    generator::set_signature(m)?;
    m.add_class::<layout::Layout>()?;
    layout::add_preset_constructors(m)?;
    m.add_function(wrap_pyfunction!(decode, m)?)?;
    m.add_function(wrap_pyfunction!(format, m)?)?;
    m.add_function(wrap_pyfunction!(parse, m)?)?;
    m.add_function(wrap_pyfunction!(global_id, m)?)?;
    m.add_function(wrap_pyfunction!(process_id, m)?)?;
    m.add_function(wrap_pyfunction!(_after_fork_in_child, m)?)?;
    m.add_function(wrap_pyfunction!(otel::_otel_span_id, m)?)?;
    m.add_function(wrap_pyfunction!(otel::_otel_trace_id, m)?)?;
    // The tests' hooks, outside `__all__`: the stub describes the wheel's module, which has none.
    #[cfg(feature = "internals")]
    {
        m.setattr("_error_kinds", wrap_pyfunction!(errors::_error_kinds, m)?)?;
        m.setattr("_raise_kind", wrap_pyfunction!(errors::_raise_kind, m)?)?;
    }
    m.add_function(wrap_pyfunction!(interrupt::_at_exit, m)?)?;
    errors::register(m)?;
    // Tells daemon threads waiting in a call when the interpreter starts to finalize (see
    // interrupt.rs).
    m.py()
        .import("atexit")?
        .call_method1("register", (m.getattr("_at_exit")?,))?;
    Ok(())
}
