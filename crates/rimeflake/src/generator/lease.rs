//! How a generator holds a server lease: what the keeper (`lease::remote::keeper`) tells it
//! when the lease is lost, held to a new deadline, taken by another process or back, and how
//! the fence is shut while it is lost. The lease is taken in `start.rs`; the deadline is checked
//! where IDs are issued (`hot.rs`, `slow.rs`), and a lost lease moves the generator to another
//! worker ID in `restart.rs` (or, with a fixed worker ID whose lease came back on another
//! server, starts it again on the same one).

use super::stats::Counters;
use super::Inner;
use crate::clock::Clock;
use crate::error::Error;
use crate::lease::remote::keeper;

impl<C: Clock> keeper::LeaseListener for Inner<C> {
    fn lease_lost(&self, why: Error) {
        let d = &self.durable;
        *d.lease_error.lock().unwrap_or_else(|p| p.into_inner()) = Some(why);
        d.lease_losses
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        d.lease_lost
            .store(true, std::sync::atomic::Ordering::SeqCst);
        self.shut_for_lease();
    }

    fn lease_deadline(&self, boottime_ns: u64) {
        self.hot
            .deadline
            .fetch_max(boottime_ns, std::sync::atomic::Ordering::SeqCst);
    }

    fn renewed(&self, ok: bool) {
        Counters::add(&self.stats.renewals, 1);
        if !ok {
            Counters::add(&self.stats.renewal_failures, 1);
        }
    }

    fn lease_taken(&self) {
        self.durable
            .lease_taken
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }

    fn lease_elsewhere(&self) {
        self.durable
            .lease_elsewhere
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }

    fn server_changed(&self) {
        self.durable
            .resave
            .store(true, std::sync::atomic::Ordering::SeqCst);
        self.nudge(0);
    }

    fn lease_back(&self) {
        let d = &self.durable;
        // Ours again: whoever held it meanwhile has let it go. Had they written its state, the
        // next save finds it moved and says so again (`state_moved`).
        d.lease_taken
            .store(false, std::sync::atomic::Ordering::SeqCst);
        d.lease_lost
            .store(false, std::sync::atomic::Ordering::SeqCst);
        *d.lease_error.lock().unwrap_or_else(|p| p.into_inner()) = None;
        self.nudge(0); // the I/O thread stores a reservation and opens the fence again
    }
}

impl<C: Clock> Inner<C> {
    /// While the lease is lost: lowers the fence below every counter value of its clock-id, so
    /// every call goes to the slow path, which answers with the lease error. (Not to
    /// `CLOSED_FENCE`, which would stop the I/O thread for good; a closed fence stays closed.)
    /// Called after `lease_lost` is set, and by whoever raises the fence after checking it, so
    /// that one of the two always sees the other.
    pub(crate) fn shut_for_lease(&self) {
        let fence = &self.hot.fence;
        let mut f = fence.load(std::sync::atomic::Ordering::SeqCst);
        while f != super::CLOSED_FENCE {
            let lowered = (f & self.shape.cid_mask) | 1;
            match fence.compare_exchange(
                f,
                lowered,
                std::sync::atomic::Ordering::SeqCst,
                std::sync::atomic::Ordering::SeqCst,
            ) {
                Ok(_) => return,
                Err(actual) => f = actual,
            }
        }
    }
}
