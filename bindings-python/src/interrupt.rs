//! Waits with the interpreter released: signals between their slices, and quiet exits.
//!
//! A call that waits (for the clock, for a reservation, at start-up) releases the interpreter
//! and, between the slices of its wait, re-attaches briefly to run Python's signal handlers, so
//! Ctrl-C raises `KeyboardInterrupt`. At interpreter exit, a daemon thread may be in such a wait
//! while the interpreter finalizes: attaching then would panic in PyO3 ("not initialized") or
//! make CPython end the thread with `pthread_exit`, unwinding through Rust frames. Such a thread
//! never touches the interpreter again: it parks until the process is gone, as CPython 3.14
//! itself does with daemon threads that try to attach during finalization.

use crate::errors::Failure;
use pyo3::prelude::*;
use rimeflake::ErrorKind;
use std::sync::atomic::{AtomicU64, Ordering};

/// The thread that ran the `atexit` hook (plus one; 0 before): the one finalizing, which may
/// still attach (a `__del__` calling `fill` during finalization must not hang the exit).
static FINALIZER: AtomicU64 = AtomicU64::new(0);

fn thread_key() -> u64 {
    // `ThreadId::as_u64` is unstable; any stable per-thread address will do.
    thread_local!(static KEY: u8 = const { 0 });
    KEY.with(|k| k as *const u8 as u64)
}

/// Registered with `atexit` at import: runs in the thread that finalizes, before it does.
#[pyfunction]
pub fn _at_exit() {
    FINALIZER.store(thread_key(), Ordering::SeqCst);
}

/// Whether the interpreter is finalizing (or gone), read without attaching to it.
fn finalizing() -> bool {
    // SAFETY: Py_IsInitialized may be called at any time, attached or not.
    if unsafe { pyo3::ffi::Py_IsInitialized() } == 0 {
        return true;
    }
    is_finalizing()
}

/// `Py_IsFinalizing` (3.13+) or `_Py_IsFinalizing` (3.9 to 3.12): neither is in the stable ABI
/// of 3.9 that the wheel targets, so it is looked up once in the running interpreter.
#[cfg(unix)]
fn is_finalizing() -> bool {
    use std::sync::OnceLock;
    type F = unsafe extern "C" fn() -> std::ffi::c_int;
    static FN: OnceLock<Option<F>> = OnceLock::new();
    let f = FN.get_or_init(|| {
        for name in [c"Py_IsFinalizing", c"_Py_IsFinalizing"] {
            // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name only looks a symbol up.
            let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
            if !p.is_null() {
                // SAFETY: both functions take nothing and return an int.
                return Some(unsafe { std::mem::transmute::<*mut libc::c_void, F>(p) });
            }
        }
        None
    });
    // SAFETY: the interpreter's own function, callable without attaching (it reads one field).
    f.is_some_and(|f| unsafe { f() } != 0)
}

#[cfg(not(unix))]
fn is_finalizing() -> bool {
    false
}

/// Called, detached, before attaching again: a thread other than the finalizing one that finds
/// the interpreter finalizing parks for good (the process is about to end), instead of
/// attaching into a panic or an unwind.
pub fn park_if_finalizing() {
    if finalizing() && FINALIZER.load(Ordering::SeqCst) != thread_key() {
        loop {
            std::thread::park();
        }
    }
}

/// The interrupt hook of a wait: runs Python's signal handlers (attaching briefly); `true`
/// when one raised, whose exception is kept to be raised instead of the core's `Interrupted`.
pub fn signalled(raised: &mut Option<PyErr>) -> bool {
    park_if_finalizing();
    Python::try_attach(|py| match py.check_signals() {
        Ok(()) => false,
        Err(e) => {
            *raised = Some(e);
            true
        }
    })
    .unwrap_or_else(|| {
        // Not attachable any more: finalized under us.
        park_if_finalizing();
        false
    })
}

/// Runs `f` (a call that may wait) with the interpreter released and `signalled` as its
/// interrupt hook; a signal's exception replaces the core's `Interrupted` error.
pub fn detached<T: Send>(
    py: Python<'_>,
    f: impl Send + FnOnce(&mut dyn FnMut() -> bool) -> rimeflake::Result<T>,
) -> Result<T, Failure> {
    let mut raised: Option<PyErr> = None;
    let result = py.detach(|| {
        let r = f(&mut || signalled(&mut raised));
        park_if_finalizing(); // attaching again is what detach does next
        r
    });
    result.map_err(|e| match raised {
        Some(signal) if e.kind() == ErrorKind::Interrupted => Failure::Py(signal),
        _ => Failure::Core(e),
    })
}
