//! `rimeflake.Layout`: a validated bit layout: a preset, a layout spec or custom widths.

use crate::args;
use crate::errors::Result;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyAny, PyCFunction, PyDict, PyTuple, PyType};
use rimeflake::{FieldOrder, Layout as Core};
use std::ffi::CString;

/// How the 63 bits of an ID are shared between clock-id, time, worker and sequence.
///
/// Build one from a layout spec, the text every rimeflake front end takes: a preset name
/// (``Layout("twitter")``) or fields (``Layout(
/// "clock_id=0,time=41,worker=10,sequence=12,epoch_ms=1420070400000")``; ``describe()`` gives
/// it back; ``Layout.from_spec(spec)`` is the same), from a preset by its method
/// (``Layout.twitter()``, ...), or with custom widths as keywords, starting from the
/// ``default`` preset's fields:
/// ``Layout(clock_id_bits=2, time_bits=42, worker_bits=8, sequence_bits=11)``.
/// Widths must add up to 63 (53 with ``js_safe=True``); anything invalid raises ``ConfigError``.
/// A layout only checks its arithmetic: one whose epoch is in the future or whose time field
/// has run out still decodes (a ``Generator`` on it is refused).
#[pyclass(frozen, eq, hash, module = "rimeflake._native", name = "Layout")]
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Layout(pub Core);

#[pymethods]
impl Layout {
    #[new]
    #[pyo3(signature = (spec=None, /, *, clock_id_bits=None, time_bits=None, worker_bits=None,
        sequence_bits=None, unit_ms=None, epoch_ms=None, order=None, js_safe=None,
        datacenter_bits=None),
        // help() shows the defaults that apply (the `default` preset's fields); a test checks
        // them against Layout().
        text_signature = "(spec=None, /, *, clock_id_bits=3, time_bits=41, worker_bits=10, \
        sequence_bits=9, unit_ms=1, epoch_ms=1704067200000, order='sequence_below_worker', \
        js_safe=False, datacenter_bits=0)")]
    #[allow(clippy::too_many_arguments)]
    fn new(
        spec: Option<&str>,
        clock_id_bits: Option<u8>,
        time_bits: Option<u8>,
        worker_bits: Option<u8>,
        sequence_bits: Option<u8>,
        unit_ms: Option<u64>,
        epoch_ms: Option<u64>,
        order: Option<&str>,
        js_safe: Option<bool>,
        datacenter_bits: Option<u8>,
    ) -> Result<Self> {
        let widths = [
            clock_id_bits,
            time_bits,
            worker_bits,
            sequence_bits,
            datacenter_bits,
        ];
        let fields_given = widths.iter().any(Option::is_some)
            || unit_ms.is_some()
            || epoch_ms.is_some()
            || order.is_some()
            || js_safe.is_some();
        if let Some(spec) = spec {
            if fields_given {
                return Err(PyTypeError::new_err(
                    "Layout() takes a layout spec or keyword fields, not both (a spec can \
                     change a preset's fields itself: \"baidu,epoch=2025-01-01T00:00:00Z\")",
                )
                .into());
            }
            return Ok(Layout(Core::from_spec(spec)?));
        }
        let base = Core::default();
        let order = match order {
            Some(name) => FieldOrder::from_name(name)?,
            None => base.order(),
        };
        let layout = Core::builder()
            .clock_id_bits(clock_id_bits.unwrap_or(base.clock_id_bits()))
            .time_bits(time_bits.unwrap_or(base.time_bits()))
            .worker_bits(worker_bits.unwrap_or(base.worker_bits()))
            .sequence_bits(sequence_bits.unwrap_or(base.sequence_bits()))
            .unit_ms(unit_ms.unwrap_or(base.unit_ms()))
            .epoch_ms(epoch_ms.unwrap_or(base.epoch_ms()))
            .order(order)
            .js_safe(js_safe.unwrap_or(base.is_js_safe()))
            .datacenter_bits(datacenter_bits.unwrap_or(base.datacenter_bits()))
            .build()?;
        Ok(Layout(layout))
    }

    /// The preset called `name`: ``default``, ``twitter``, ``discord``, ``sonyflake``,
    /// ``sonyflake_v2``, ``baidu`` (Baidu's own 2016 epoch, which ran out in 2024: it decodes old IDs; generate
    /// with a later epoch, ``Layout.baidu(epoch_ms)``) or ``js_safe``.
    #[staticmethod]
    fn preset(name: &str) -> Result<Self> {
        Ok(Layout(Core::preset(name)?))
    }

    /// The layout that `spec` names (the same as ``Layout(spec)``): a preset name, or
    /// comma-separated ``key=value`` pairs
    /// (keys ``clock_id``, ``time``, ``worker``, ``sequence`` (bit widths), ``unit_ms``,
    /// ``epoch_ms`` or ``epoch`` (ISO 8601), ``order`` (``worker_first`` | ``sequence_first``),
    /// ``datacenter``), possibly after a preset whose fields they change
    /// (``"baidu,epoch=2025-01-01T00:00:00Z"``). ``ConfigError`` names the key that is wrong.
    #[staticmethod]
    fn from_spec(spec: &str) -> Result<Self> {
        Ok(Layout(Core::from_spec(spec)?))
    }

    /// The layout as a spec: ``Layout(layout.describe()) == layout``.
    fn describe(&self) -> String {
        self.0.describe()
    }

    /// Baidu uid-generator's layout (28 time bits of 1 s, 22 worker, 13 sequence) from `epoch_ms`.
    #[staticmethod]
    fn baidu(epoch_ms: u64) -> Result<Self> {
        Ok(Layout(Core::baidu(epoch_ms)?))
    }

    /// The preset's name, or ``"custom"``.
    #[getter]
    fn name(&self) -> &'static str {
        self.0.name()
    }
    /// Bits of the clock-id field.
    #[getter]
    fn clock_id_bits(&self) -> u8 {
        self.0.clock_id_bits()
    }
    /// Bits of the time field.
    #[getter]
    fn time_bits(&self) -> u8 {
        self.0.time_bits()
    }
    /// Bits of the worker field.
    #[getter]
    fn worker_bits(&self) -> u8 {
        self.0.worker_bits()
    }
    /// How many of the worker bits (the upper ones) are a datacenter part (``twitter``: 5).
    #[getter]
    fn datacenter_bits(&self) -> u8 {
        self.0.datacenter_bits()
    }
    /// Bits of the sequence field.
    #[getter]
    fn sequence_bits(&self) -> u8 {
        self.0.sequence_bits()
    }
    /// ``"sequence_below_worker"`` (Twitter's order) or ``"sequence_above_worker"`` (Sonyflake's).
    #[getter]
    fn order(&self) -> &'static str {
        self.0.order().name()
    }
    /// Milliseconds per time unit.
    #[getter]
    fn unit_ms(&self) -> u64 {
        self.0.unit_ms()
    }
    /// The epoch, in Unix milliseconds.
    #[getter]
    fn epoch_ms(&self) -> u64 {
        self.0.epoch_ms()
    }
    /// Whether IDs fit in 53 bits.
    #[getter]
    fn is_js_safe(&self) -> bool {
        self.0.is_js_safe()
    }
    /// The largest worker ID.
    #[getter]
    fn max_worker_id(&self) -> u64 {
        self.0.max_worker_id()
    }
    /// The largest clock-id.
    #[getter]
    fn max_clock_id(&self) -> u64 {
        self.0.max_clock_id()
    }
    /// The largest sequence number in one time unit.
    #[getter]
    fn max_sequence(&self) -> u64 {
        self.0.max_sequence()
    }
    /// The largest value of the time field.
    #[getter]
    fn max_time(&self) -> u64 {
        self.0.max_time()
    }
    /// Bits in all: 63, or 53 for a JavaScript-safe layout.
    #[getter]
    fn total_bits(&self) -> u8 {
        self.0.total_bits()
    }
    /// A hash of the layout's fields, stored once per namespace to refuse a different layout.
    #[getter]
    fn fingerprint(&self) -> u64 {
        self.0.fingerprint()
    }
    /// When the time field runs out, in Unix milliseconds.
    #[getter]
    fn expires_at_ms(&self) -> u64 {
        self.0.expires_at_ms()
    }

    /// The parts of `id` (a ``Parts`` named tuple). Raises ``InvalidIdError`` for an ID this
    /// layout cannot have produced.
    fn decode<'py>(&self, py: Python<'py>, id: &Bound<'py, PyAny>) -> Result<Bound<'py, PyAny>> {
        decode_with(py, &self.0, args::id(id)?)
    }

    /// The ID made of these parts. Raises ``ConfigError`` when a part does not fit its field.
    #[pyo3(signature = (*, clock_id=None, timestamp_ms, worker_id, sequence=None, datacenter_id=None),
        text_signature = "($self, *, clock_id=0, timestamp_ms, worker_id, sequence=0, datacenter_id=None)")]
    fn compose(
        &self,
        clock_id: Option<&Bound<'_, PyAny>>,
        timestamp_ms: &Bound<'_, PyAny>,
        worker_id: &Bound<'_, PyAny>,
        sequence: Option<&Bound<'_, PyAny>>,
        datacenter_id: Option<&Bound<'_, PyAny>>,
    ) -> Result<u64> {
        let part = |what, obj: Option<&Bound<'_, PyAny>>| match obj {
            Some(obj) => args::option(what, obj, u64::MAX),
            None => Ok(0),
        };
        Ok(self.0.compose(&rimeflake::Parts {
            clock_id: part("clock_id", clock_id)?,
            timestamp_ms: part("timestamp_ms", Some(timestamp_ms))?,
            worker_id: part("worker_id", Some(worker_id))?,
            sequence: part("sequence", sequence)?,
            datacenter_id: datacenter_id
                .map(|d| args::option("datacenter_id", d, u64::MAX))
                .transpose()?,
        })?)
    }

    /// The layout's fields, as keyword arguments of ``Layout``.
    fn __repr__(&self) -> String {
        let l = &self.0;
        format!(
            "Layout(name={:?}, clock_id_bits={}, time_bits={}, worker_bits={}, sequence_bits={}, unit_ms={}, epoch_ms={}, order={:?}, js_safe={}, datacenter_bits={})",
            l.name(), l.clock_id_bits(), l.time_bits(), l.worker_bits(), l.sequence_bits(),
            l.unit_ms(), l.epoch_ms(), l.order().name(), if l.is_js_safe() { "True" } else { "False" },
            l.datacenter_bits()
        )
    }
}

/// A layout argument: a preset name, a layout spec or a `Layout`.
pub fn from_arg(obj: &Bound<'_, PyAny>) -> Result<Core> {
    if let Ok(layout) = obj.cast::<Layout>() {
        return Ok(layout.get().0.clone());
    }
    match obj.cast::<pyo3::types::PyString>() {
        Ok(spec) => Ok(Core::from_spec(&spec.to_cow()?)?),
        Err(_) => Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "layout must be a preset name, a layout spec or a Layout, not {}",
            obj.get_type().name()?
        ))
        .into()),
    }
}

static PARTS: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// `layout.decode(id)` as the façade's `Parts` named tuple.
pub fn decode_with<'py>(py: Python<'py>, layout: &Core, id: u64) -> Result<Bound<'py, PyAny>> {
    let p = layout.decode(id)?;
    let parts = PARTS.import(py, "rimeflake._parts", "Parts")?;
    Ok(parts.call1((
        p.clock_id,
        p.timestamp_ms,
        p.worker_id,
        p.sequence,
        p.datacenter_id,
    ))?)
}

/// A constructor on `Layout` for each preset of the core's list (`Layout.twitter()`, with the
/// preset's doc line), but for a preset whose constructor the class writes itself
/// (`Layout.baidu(epoch_ms)`): a new preset in the core is a constructor here with nothing
/// more. The stub's block of them is generated from the same list.
pub fn add_preset_constructors(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let class = m.getattr("Layout")?;
    let staticmethod = py.import("builtins")?.getattr("staticmethod")?;
    for preset in Core::PRESET_LIST {
        if class.hasattr(preset.name)? {
            continue;
        }
        let name = preset.name;
        // A builtin's name and doc are C strings that live as long as it: made once per
        // preset, when the module is first imported. The doc's first line is the signature
        // `inspect` reads (CPython's `__text_signature__` form).
        let leak = |s: String| -> &'static std::ffi::CStr {
            Box::leak(
                CString::new(s)
                    .expect("no NUL in a preset's name or doc")
                    .into_boxed_c_str(),
            )
        };
        let doc = leak(format!("{name}()\n--\n\n{}.", preset.doc));
        let make = move |args: &Bound<'_, PyTuple>, kwargs: Option<&Bound<'_, PyDict>>| {
            if !args.is_empty() || kwargs.is_some_and(|k| !k.is_empty()) {
                return Err(PyTypeError::new_err(format!(
                    "Layout.{name}() takes no arguments"
                )));
            }
            Core::preset(name)
                .map(Layout)
                .map_err(|e| PyErr::from(crate::errors::Failure::from(e)))
        };
        let f = PyCFunction::new_closure(py, Some(leak(name.to_string())), Some(doc), make)?;
        class.setattr(name, staticmethod.call1((f,))?)?;
    }
    Ok(())
}
