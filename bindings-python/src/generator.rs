//! `rimeflake.Generator`: the rollback-safe generator, shared by any number of threads.

use crate::buffer::U64Buffer;
use crate::errors::Result;
use crate::{args, interrupt, layout};
use pyo3::exceptions::PyMemoryError;
use pyo3::prelude::*;
use pyo3::types::{PyAny, PyDict, PyList};
use rimeflake::Frontend;
use std::time::Duration;

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
    #[pyo3(signature = (worker_id=None, *, layout=None, namespace=None, state_dir=None,
        backend=None, max_drift_ms=None, on_rollback=None, max_wait_ms=None, strict_monotonic=false,
        lease_ttl_ms=None),
        text_signature = "(worker_id=None, *, layout=None, namespace=None, state_dir=None, \
        backend=None, max_drift_ms=2000, on_rollback=None, max_wait_ms=5000, \
        strict_monotonic=False, lease_ttl_ms=None)")]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        worker_id: Option<&Bound<'_, PyAny>>,
        layout: Option<&Bound<'_, PyAny>>,
        namespace: Option<&str>,
        state_dir: Option<std::path::PathBuf>,
        backend: Option<&str>,
        max_drift_ms: Option<&Bound<'_, PyAny>>,
        on_rollback: Option<&str>,
        max_wait_ms: Option<&Bound<'_, PyAny>>,
        strict_monotonic: bool,
        lease_ttl_ms: Option<&Bound<'_, PyAny>>,
    ) -> Result<Self> {
        let mut b = rimeflake::Generator::builder()
            .frontend(Frontend::Python)
            .strict_monotonic(strict_monotonic);
        if let Some(ns) = namespace {
            b = b.namespace(ns);
        }
        if let Some(ms) = max_drift_ms {
            b = b.max_drift(Duration::from_millis(args::option(
                "max_drift_ms",
                ms,
                u64::MAX,
            )?));
        }
        if let Some(ms) = max_wait_ms {
            b = b.max_wait(Duration::from_millis(args::option(
                "max_wait_ms",
                ms,
                u64::MAX,
            )?));
        }
        if let Some(ms) = lease_ttl_ms {
            b = b.lease_ttl(Duration::from_millis(args::option(
                "lease_ttl_ms",
                ms,
                u64::MAX,
            )?));
        }
        if let Some(layout) = layout {
            b = b.layout(layout::from_arg(layout)?);
        }
        if let Some(id) = worker_id {
            b = b.worker_id(args::option("worker_id", id, u64::MAX)?);
        }
        if let Some(name) = on_rollback {
            b = b.rollback_policy(Frontend::Python.rollback_policy(name)?);
        }
        if let Some(text) = backend {
            b = b.backend(rimeflake::Backend::parse(text)?);
        }
        if let Some(dir) = state_dir {
            b = b.state_dir(dir);
        }
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
    fn next_id(&self, py: Python<'_>) -> Result<u64> {
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

    /// Counters: ``ids_issued``, ``rollbacks``, ``largest_rollback_ms``, ``clock_id_bumps``,
    /// ``clock_id_reuses``, ``waits``, ``waited_ms``, ``borrowed_ms``, ``clock_id``,
    /// ``server_skew_ms`` (on a server backend, the server's clock minus this host's when the
    /// lease was taken; 0 otherwise), ``reservation_writes``, ``reservation_write_failures``,
    /// ``reservation_write_ns``, ``lease`` (``"none"``, ``"held"`` or ``"lost"``),
    /// ``lease_remaining_ms``, ``lease_renewals`` and ``lease_renewal_failures``.
    fn stats<'py>(&self, py: Python<'py>) -> Result<Bound<'py, PyDict>> {
        let s = self.inner.stats();
        let d = PyDict::new(py);
        for (k, v) in [
            ("ids_issued", s.ids_issued),
            ("rollbacks", s.rollbacks),
            ("largest_rollback_ms", s.largest_rollback_ms),
            ("clock_id_bumps", s.clock_id_bumps),
            ("clock_id_reuses", s.clock_id_reuses),
            ("waits", s.waits),
            ("waited_ms", s.waited_ms),
            ("borrowed_ms", s.borrowed_ms),
            ("clock_id", s.clock_id),
            ("reservation_writes", s.reservation_writes),
            ("reservation_write_failures", s.reservation_write_failures),
            ("reservation_write_ns", s.reservation_write_ns),
            ("lease_remaining_ms", s.lease_remaining_ms),
            ("lease_renewals", s.lease_renewals),
            ("lease_renewal_failures", s.lease_renewal_failures),
        ] {
            d.set_item(k, v)?;
        }
        d.set_item("server_skew_ms", s.server_skew_ms)?;
        d.set_item("lease", s.lease.as_str())?;
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
