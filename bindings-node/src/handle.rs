//! A user's hold on a core generator: its own, or the process-wide one of `Generator.shared`.
//!
//! The registry of shared generators is keyed by the options as the user passed them; each
//! `shared()` call takes one reference and its `close()` (or the thread's exit) gives it back.
//! The core generator closes, and its lease is released, when the last user is gone.

use rimeflake::Generator as Core;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

pub struct Handle {
    pub core: Arc<Core>,
    /// This user closed its hold (the core may still serve other users of a shared one).
    closed: AtomicBool,
    shared_key: Option<String>,
}

struct Entry {
    core: Arc<Core>,
    users: usize,
}

static SHARED: Mutex<Option<HashMap<String, Entry>>> = Mutex::new(None);

impl Handle {
    pub fn own(core: Core) -> Arc<Handle> {
        Arc::new(Handle {
            core: Arc::new(core),
            closed: AtomicBool::new(false),
            shared_key: None,
        })
    }

    /// The shared generator for `key`, made by `make` when there is none.
    pub fn shared(
        key: String,
        make: impl FnOnce() -> rimeflake::Result<Core>,
    ) -> rimeflake::Result<Arc<Handle>> {
        let mut registry = SHARED.lock().unwrap_or_else(|e| e.into_inner());
        let map = registry.get_or_insert_with(HashMap::new);
        let core = match map.get_mut(&key) {
            Some(entry) => {
                entry.users += 1;
                entry.core.clone()
            }
            None => {
                let core = Arc::new(make()?);
                map.insert(
                    key.clone(),
                    Entry {
                        core: core.clone(),
                        users: 1,
                    },
                );
                core
            }
        };
        Ok(Arc::new(Handle {
            core,
            closed: AtomicBool::new(false),
            shared_key: Some(key),
        }))
    }

    /// The next ID if the hot path gives one at once (a closed hold never does).
    #[inline(always)]
    pub fn try_next_id(&self) -> Option<u64> {
        if self.closed.load(Relaxed) {
            return None;
        }
        self.core.try_next_id()
    }

    /// Fails with the core's `Closed` error when this hold was closed.
    pub fn check_open(&self) -> rimeflake::Result<&Core> {
        if self.closed.load(Relaxed) {
            return Err(rimeflake::Error::new(
                rimeflake::ErrorKind::Closed,
                "this generator was closed: make a new one (or call Generator.shared again)",
            ));
        }
        Ok(&self.core)
    }

    pub fn is_closed(&self) -> bool {
        self.closed.load(Relaxed) || self.core.is_closed()
    }

    /// Gives this hold back: an own generator closes; a shared one closes with its last user.
    /// Closing twice is harmless.
    pub fn close(&self) -> rimeflake::Result<()> {
        if self.closed.swap(true, Relaxed) {
            return Ok(());
        }
        let Some(key) = &self.shared_key else {
            return self.core.close();
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
        match last {
            Some(entry) => entry.core.close(),
            None => Ok(()),
        }
    }
}

impl Drop for Handle {
    /// A hold collected without `close()` gives itself back too.
    fn drop(&mut self) {
        let _ = self.close();
    }
}
