//! `rimeflake.Generator`: the rollback-safe generator, shared by any number of threads.

use crate::buffer::U64Buffer;
use crate::errors::Result;
use crate::{args, interrupt, layout};
use pyo3::exceptions::PyMemoryError;
use pyo3::prelude::*;
use pyo3::types::{PyAny, PyDict, PyList};
use rimeflake::frontend::StatValue;
use rimeflake::Frontend;

/// A generator of 64-bit, time-ordered, unique IDs.
///
/// Every argument left out is resolved by the core, once: ``worker_id`` from
/// ``$RIMEFLAKE_WORKER_ID`` (``ordinal``: a Kubernetes StatefulSet pod's ordinal, from
/// ``$RIMEFLAKE_POD_INDEX``, else the ``-<n>`` ending ``$HOSTNAME``), else a worker ID leased in
/// the state directory; ``layout`` from
/// ``$RIMEFLAKE_LAYOUT``, else ``"default"``; ``backend`` from ``$RIMEFLAKE_BACKEND``, else
/// ``"local"``; ``state_dir`` from ``$RIMEFLAKE_STATE_DIR``, else ``~/.local/state/rimeflake``
/// (``$XDG_STATE_HOME/rimeflake``); ``namespace`` is the layout's own (``"default"``, ``"twitter"``,
/// ``"custom-<fingerprint>"``, ...), so generators of different layouts never collide. A bad value in one of
/// those variables is a ``ConfigError`` naming it.
///
/// ``backend="local"`` is the embedded default: durable state and worker leases in the state
/// directory, so processes sharing it never share a worker ID and a restart continues safely.
/// ``backend="memory"`` keeps no state (not restart-safe) and needs a ``worker_id``. A server's
/// URL (any ``str``) leases worker IDs there; ``lease_ttl_ms`` is how long such a lease
/// lasts without renewal (``$RIMEFLAKE_LEASE_TTL_MS``, else 10000; 200 to 86400000).
/// ``on_rollback=None`` takes the layout's default: ``"bump"`` when it has clock-id bits,
/// ``"wait"`` otherwise (``"bump"`` on a layout without them is a ``ConfigError``).
///
/// Thread-safe without a Python-level lock. Starting (which may wait, up to ``max_wait_ms``,
/// for the clock to reach the stored reservation) and every wait release the interpreter and
/// honour signals (Ctrl-C raises ``KeyboardInterrupt``).
#[pyclass(frozen, module = "rimeflake._native", name = "Generator")]
pub struct Generator {
    inner: rimeflake::Generator,
}

impl Drop for Generator {
    /// Collected without `close()`: the close (an in-memory generator waits for the clock to
    /// pass its last ID, a durable one stores its last reservation, each up to `max_wait`) runs
    /// with the interpreter released, as `close()` does, so other threads run meanwhile.
    fn drop(&mut self) {
        if self.inner.is_closed() {
            return;
        }
        let inner = &self.inner;
        let _ = Python::try_attach(|py| interrupt::detached(py, |_| inner.close()));
    }
}

#[pymethods]
impl Generator {
    #[new]
    #[pyo3(signature = (worker_id=None, **options), text_signature = "(worker_id=None, **options)")]
    fn new(
        py: Python<'_>,
        worker_id: Option<&Bound<'_, PyAny>>,
        options: Option<&Bound<'_, PyDict>>,
    ) -> Result<Self> {
        let b = rimeflake::Generator::builder().frontend(Frontend::Python);
        let mut b = crate::options::apply(b, worker_id, options)?;
        let warnings = crate::warnings::Collected::default();
        b = b.on_warning(warnings.sink());
        // Starting takes a lock, syncs files and may wait for the clock: other threads run
        // meanwhile, and Ctrl-C interrupts it.
        let inner = interrupt::detached(py, |hook| b.build_with(hook))?;
        // A warning that a filter makes an error drops (closes) the generator just built.
        warnings.raise(py)?;
        Ok(Generator { inner })
    }

    /// The next ID, an ``int``. IDs of one generator strictly increase (except across a
    /// clock-id reuse, counted in ``stats()``).
    pub(crate) fn next_id(&self, py: Python<'_>) -> Result<u64> {
        // The hot path: no wait, no error, no release of the interpreter.
        match self.inner.try_next_id() {
            Some(id) => Ok(id),
            None => self.next_id_slow(py),
        }
    }

    /// `n` increasing IDs as a list.
    fn next_ids<'py>(&self, py: Python<'py>, n: &Bound<'py, PyAny>) -> Result<Bound<'py, PyList>> {
        let n = args::count(n)?;
        let mut ids: Vec<u64> = Vec::new();
        ids.try_reserve_exact(n)
            .map_err(|_| PyMemoryError::new_err(format!("no memory for {n} IDs")))?;
        ids.resize(n, 0);
        self.fill_slice(py, &mut ids)?;
        Ok(PyList::new(py, ids)?)
    }

    /// Fills `buffer` (any writable, contiguous buffer of unsigned 64-bit items: ``array('Q')``,
    /// a NumPy ``uint64`` array, a ``memoryview``) with increasing IDs, in place. Returns the
    /// number of IDs written.
    fn fill(&self, py: Python<'_>, buffer: &Bound<'_, PyAny>) -> Result<usize> {
        let held = U64Buffer::get(buffer)?;
        // Other Python threads may use the buffer while the interpreter is released: every ID
        // is written with an atomic store, so that is never a data race on our side.
        let ids = held.as_atomic_slice();
        interrupt::detached(py, |hook| self.inner.fill_atomic_with(ids, hook))?;
        Ok(ids.len())
    }

    /// Counters: a dict of every field of the core's ``Stats`` (``ids_issued``, ``rollbacks``,
    /// ..., ``lease``: ``"none"``, ``"held"`` or ``"lost"``), under the same names; the
    /// ``Stats`` typed dict says what each is.
    fn stats<'py>(&self, py: Python<'py>) -> Result<Bound<'py, PyDict>> {
        let s = self.inner.stats();
        let d = PyDict::new(py);
        for field in rimeflake::Stats::FIELDS {
            match field.value(&s) {
                StatValue::Unsigned(v) => d.set_item(field.name, v)?,
                StatValue::Signed(v) => d.set_item(field.name, v)?,
                StatValue::Lease(state) => d.set_item(field.name, state.as_str())?,
                other => d.set_item(field.name, format!("{other:?}"))?,
            }
        }
        Ok(d)
    }

    /// The layout of this generator's IDs.
    #[getter]
    fn layout(&self) -> layout::Layout {
        layout::Layout(self.inner.layout().clone())
    }

    /// The worker ID in use (in a forked child, the child's own: taken now if it has issued
    /// no ID yet).
    #[getter]
    fn worker_id(&self, py: Python<'_>) -> Result<u64> {
        interrupt::detached(py, |hook| {
            rimeflake::frontend::current_worker_id(&self.inner, hook)
        })
    }

    /// Whether ``close()`` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.inner.is_closed()
    }

    /// The parts of an ID of this generator's layout.
    fn decode<'py>(&self, py: Python<'py>, id: &Bound<'py, PyAny>) -> Result<Bound<'py, PyAny>> {
        layout::decode_with(py, self.inner.layout(), args::id(id)?)
    }

    /// Closes the generator: later calls raise ``ClosedError``. A memory generator first waits
    /// until the clock has passed its last ID. Closing twice is harmless.
    fn close(&self, py: Python<'_>) -> Result<()> {
        // The core's close takes no interrupt hook (its wait is bounded by max_wait); detached
        // all the same, so that a daemon thread closing at exit stays quiet too.
        interrupt::detached(py, |_| self.inner.close())
    }

    /// Returns the generator itself: ``with Generator(...) as gen:`` closes it on the way out.
    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// Closes the generator; exceptions propagate (returns ``None``).
    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, pyo3::types::PyTuple>) -> Result<()> {
        self.close(py)
    }

    fn __repr__(&self) -> String {
        format!(
            "Generator(worker_id={}, layout={:?}, closed={})",
            self.inner.worker_id(),
            self.inner.layout().name(),
            if self.inner.is_closed() {
                "True"
            } else {
                "False"
            }
        )
    }
}

impl Generator {
    /// The hot path said "decide": release the interpreter for a possible wait, and look for
    /// signals between its slices, so Ctrl-C interrupts it.
    #[cold]
    #[inline(never)]
    fn next_id_slow(&self, py: Python<'_>) -> Result<u64> {
        interrupt::detached(py, |hook| self.inner.next_id_with(hook))
    }

    /// Into memory of our own (`next_ids`' vector): no one else can see it.
    fn fill_slice(&self, py: Python<'_>, ids: &mut [u64]) -> Result<()> {
        interrupt::detached(py, |hook| self.inner.fill_with(ids, hook))
    }
}

/// Gives `Generator` the signature `help()` and `inspect.signature` show: its keyword arguments
/// are the core's table of settings (each with its default where the table has one, else
/// `None`: the core resolves it), which a literal `text_signature` could not follow.
pub fn set_signature(m: &Bound<'_, PyModule>) -> PyResult<()> {
    use rimeflake::frontend::{SettingDefault, SETTINGS};
    let py = m.py();
    let inspect = py.import("inspect")?;
    let parameter = inspect.getattr("Parameter")?;
    let (positional, keyword) = (
        parameter.getattr("POSITIONAL_OR_KEYWORD")?,
        parameter.getattr("KEYWORD_ONLY")?,
    );
    let mut params = Vec::new();
    for row in SETTINGS {
        let kind = if row.python == "worker_id" {
            &positional
        } else {
            &keyword
        };
        let default = match row.default {
            SettingDefault::Millis(ms) if row.env.is_none() => ms.into_pyobject(py)?.into_any(),
            SettingDefault::Flag(on) => pyo3::types::PyBool::new(py, on).to_owned().into_any(),
            _ => py.None().into_bound(py),
        };
        let kwargs = PyDict::new(py);
        kwargs.set_item("default", default)?;
        let p = parameter.call((row.python, kind), Some(&kwargs))?;
        // The positional one first, as Python requires.
        if row.python == "worker_id" {
            params.insert(0, p);
        } else {
            params.push(p);
        }
    }
    let signature = inspect
        .getattr("Signature")?
        .call1((PyList::new(py, params)?,))?;
    m.getattr("Generator")?.setattr("__signature__", signature)
}
