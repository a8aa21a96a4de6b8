//! Starting a generator again in place: in a forked child (the parent's lease is not the
//! child's), and on a server backend after another process took the worker ID. Either way the
//! old `Inner` is left in place, never freed: other threads may still be reading it.

use super::{Generator, Inner};
use crate::clock::Clock;
use crate::error::{Error, ErrorKind, Result};
use crate::sync::Ordering::SeqCst;
use std::sync::Arc;

impl<C: Clock> Generator<C> {
    /// On a server backend, after another process took the worker ID while this generator had
    /// lost its lease: closes it (its threads stop; its writes were refused already) and starts
    /// again with another worker ID. Returns `failed` (the call's error) when it cannot. The old
    /// `Inner` is never freed (other threads may still be reading it), as after a fork.
    #[cold]
    pub(super) fn restart_elsewhere(&self, stale: &Inner<C>, failed: Result<u64>) -> Result<()> {
        if self.closed.load(SeqCst) {
            return failed.map(|_| ());
        }
        let stale_ptr = stale as *const Inner<C> as *mut Inner<C>;
        if self.inner.load(SeqCst) != stale_ptr {
            return Ok(()); // another thread restarted it first: the caller goes on with that one
        }
        let fresh = match Inner::start(&self.recipe, &mut || false) {
            Ok(fresh) => Arc::into_raw(fresh) as *mut Inner<C>,
            // Another thread may have restarted it meanwhile; else the server decides again
            // at the next call.
            Err(_) if self.inner.load(SeqCst) != stale_ptr => return Ok(()),
            Err(_) => return failed.map(|_| ()),
        };
        if self
            .inner
            .compare_exchange(stale_ptr, fresh, SeqCst, SeqCst)
            .is_err()
        {
            // Another thread restarted it first: give back our new lease.
            // SAFETY: `fresh` came from Arc::into_raw above and was never shared.
            let _ = unsafe { Arc::from_raw(fresh) }.close();
            return Ok(());
        }
        let _ = stale.close();
        if self.closed.load(SeqCst) {
            // As in `restart_after_fork`: `close` may have run while we started.
            // SAFETY: `fresh` is now the generator's, alive while `self` is.
            let _ = unsafe { &*fresh }.close();
        }
        Ok(())
    }

    /// In a forked child: abandons the parent's generator without touching its locks, lease or
    /// threads, and starts a new one with a new lease. A generator closed (before the fork or in
    /// the child) stays closed; a fixed worker ID cannot be taken twice, so it is refused.
    #[cold]
    pub(super) fn restart_after_fork(&self, stale: &Inner<C>) -> Result<()> {
        stale.fork_slot.abandon(&stale.hot.fence);
        if self.closed.load(SeqCst) {
            return Err(Error::new(ErrorKind::Closed, "the generator is closed"));
        }
        if !self.recipe.takes_any_worker() {
            return Err(Error::new(
                ErrorKind::Lease,
                format!(
                    "this generator was made in process {} before a fork, with fixed worker ID {}: \
                     the child must not use it; make a new generator in the child (the embedded \
                     default leases a free worker ID by itself)",
                    stale.pid, stale.worker_id
                ),
            ));
        }
        let fresh = Arc::into_raw(Inner::start(&self.recipe, &mut || false)?) as *mut Inner<C>;
        let stale_ptr = stale as *const Inner<C> as *mut Inner<C>;
        if self
            .inner
            .compare_exchange(stale_ptr, fresh, SeqCst, SeqCst)
            .is_err()
        {
            // Another thread of the child restarted it first: give back our new lease. Dropping
            // it releases its fork slot.
            // SAFETY: `fresh` came from Arc::into_raw above and was never shared.
            let fresh = unsafe { Arc::from_raw(fresh) };
            let _ = fresh.close();
        } else if self.closed.load(SeqCst) {
            // `close` ran while we started: it set the flag before loading `inner`, so either it
            // saw `fresh` and closes it, or we see the flag here (closing twice is harmless).
            // SAFETY: `fresh` is now the generator's, alive while `self` is.
            let _ = unsafe { &*fresh }.close();
        }
        Ok(())
    }
}
