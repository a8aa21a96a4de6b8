//! A user's hold on a core generator: its own, or the process-wide one of `Generator.shared`.
//!
//! The registry of shared generators is keyed by the options as the user passed them; each
//! `shared()` call takes one reference and its `close()` (or the thread's exit) gives it back.
//! The core generator closes, and its lease is released, when the last user is gone.
//!
//! Why the registry is Node's alone: in Python and C every thread reaches the same objects, so
//! threads share a generator by sharing the object itself (the core's generator is Sync). A
//! Node worker thread has a JavaScript heap of its own and cannot hold another thread's
//! object: threads can only meet on one core generator through a process-wide table, keyed by
//! what they can all pass (the options).

use rimeflake::Generator as Core;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU8, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

pub struct Handle {
    pub core: Arc<Core>,
    /// [`OPEN`], or [`CLOSED`] when this user closed its hold (the core may still serve other
    /// users of a shared one); one word the hot path reads.
    state: AtomicU8,
    shared_key: Option<String>,
}

const OPEN: u8 = 0;
const CLOSED: u8 = 1;
/// A test's state (`_panicOnNextCall`, only with the `internals` feature): the next call
/// panics where the hot path runs, to show the panic thrown instead of aborting the process.
#[cfg(feature = "internals")]
const PANIC_NEXT: u8 = 2;

struct Entry {
    core: Arc<Core>,
    users: usize,
}

static SHARED: Mutex<Option<HashMap<String, Entry>>> = Mutex::new(None);

/// One lock per key, held while that key's generator is built: a second `shared()` of the same
/// options waits for the first build (one lease, not two), and other keys never wait for it
/// (the registry's own lock is not held while a generator is built: a slow server would block
/// every thread's `shared()`).
static BUILDING: Mutex<Option<HashMap<String, Arc<Mutex<()>>>>> = Mutex::new(None);

/// Takes one more user of the shared generator for `key`, if there is one.
fn join(key: &str) -> Option<Arc<Core>> {
    let mut registry = SHARED.lock().unwrap_or_else(|e| e.into_inner());
    let entry = registry.get_or_insert_with(HashMap::new).get_mut(key)?;
    entry.users += 1;
    Some(entry.core.clone())
}

impl Handle {
    pub fn own(core: Core) -> Arc<Handle> {
        Arc::new(Handle {
            core: Arc::new(core),
            state: AtomicU8::new(OPEN),
            shared_key: None,
        })
    }

    /// The shared generator for `key`, made by `make` when there is none.
    pub fn shared(
        key: String,
        make: impl FnOnce() -> rimeflake::Result<Core>,
    ) -> rimeflake::Result<Arc<Handle>> {
        let core = match join(&key) {
            Some(core) => core,
            None => {
                let build_lock = {
                    let mut building = BUILDING.lock().unwrap_or_else(|e| e.into_inner());
                    building
                        .get_or_insert_with(HashMap::new)
                        .entry(key.clone())
                        .or_default()
                        .clone()
                };
                let _building = build_lock.lock().unwrap_or_else(|e| e.into_inner());
                // Built by the holder of the key's lock before us?
                match join(&key) {
                    Some(core) => core,
                    None => {
                        let core = Arc::new(make()?);
                        let mut registry = SHARED.lock().unwrap_or_else(|e| e.into_inner());
                        registry.get_or_insert_with(HashMap::new).insert(
                            key.clone(),
                            Entry {
                                core: core.clone(),
                                users: 1,
                            },
                        );
                        core
                    }
                }
            }
        };
        Ok(Arc::new(Handle {
            core,
            state: AtomicU8::new(OPEN),
            shared_key: Some(key),
        }))
    }

    /// The next ID if the hot path gives one at once (a closed hold never does).
    #[inline(always)]
    pub fn try_next_id(&self) -> Option<u64> {
        if self.state.load(Relaxed) != OPEN {
            return self.not_open();
        }
        self.core.try_next_id()
    }

    /// The hot path's answer for a hold that is not open: none (the slow path says why).
    #[cold]
    #[inline(never)]
    fn not_open(&self) -> Option<u64> {
        self.test_panic();
        None
    }

    /// A test's panic, where `_panicOnNextCall` asked for one (`internals` only).
    fn test_panic(&self) {
        #[cfg(feature = "internals")]
        if self.state.load(Relaxed) == PANIC_NEXT {
            panic!("a test's panic on the hot path (_panicOnNextCall)");
        }
    }

    /// Makes the next call on this hold panic on the hot path (a test's; `internals` only).
    #[cfg(feature = "internals")]
    pub fn panic_on_next_call(&self) {
        self.state.store(PANIC_NEXT, Relaxed);
    }

    /// Fails with the core's `Closed` error when this hold was closed.
    pub fn check_open(&self) -> rimeflake::Result<&Core> {
        if self.state.load(Relaxed) != OPEN {
            self.test_panic();
            return Err(rimeflake::Error::new(
                rimeflake::ErrorKind::Closed,
                "this generator was closed: make a new one (or call Generator.shared again)",
            ));
        }
        Ok(&self.core)
    }

    pub fn is_closed(&self) -> bool {
        self.state.load(Relaxed) != OPEN || self.core.is_closed()
    }

    /// Gives this hold back: an own generator closes; a shared one closes with its last user.
    /// Closing twice is harmless.
    pub fn close(&self) -> rimeflake::Result<()> {
        match self.give_back() {
            Some(core) => core.close(),
            None => Ok(()),
        }
    }

    /// Marks this hold closed; the core to close now, if this was its last user.
    fn give_back(&self) -> Option<Arc<Core>> {
        if self.state.swap(CLOSED, Relaxed) == CLOSED {
            return None;
        }
        let Some(key) = &self.shared_key else {
            return Some(self.core.clone());
        };
        let last = {
            let mut registry = SHARED.lock().unwrap_or_else(|e| e.into_inner());
            let map = registry.get_or_insert_with(HashMap::new);
            match map.get_mut(key) {
                Some(entry) if Arc::ptr_eq(&entry.core, &self.core) => {
                    entry.users -= 1;
                    (entry.users == 0).then(|| map.remove(key)).flatten()
                }
                _ => None,
            }
        };
        last.map(|entry| entry.core)
    }
}

impl Drop for Handle {
    /// A hold collected without `close()` gives itself back too. The close (which may wait up
    /// to `max_wait`: a store that hangs, the clock behind an in-memory generator's last ID)
    /// runs on a thread of its own, never on the JavaScript thread in a finalizer.
    fn drop(&mut self) {
        let Some(core) = self.give_back() else {
            return;
        };
        let closing = core.clone();
        let spawned = std::thread::Builder::new()
            .name("rimeflake-close".into())
            .spawn(move || {
                let _ = closing.close();
            });
        if spawned.is_err() {
            let _ = core.close(); // no thread to be had: close here rather than not at all
        }
    }
}
