//! The fence while a lease comes and goes (what a server backend's keeper tells a generator),
//! on a real generator and its I/O thread, with a store whose saves wait at a gate.

use super::Generator;
use crate::error::{Error, ErrorKind, Result};
use crate::lease::remote::keeper::LeaseListener;
use crate::state::{StateStore, WorkerState};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Saves wait while `shut` is set, but for `passes` of them; `started` and `finished` count
/// them.
#[derive(Debug, Default)]
struct Gate {
    state: Mutex<Option<WorkerState>>,
    shut: AtomicBool,
    passes: AtomicUsize,
    started: AtomicUsize,
    finished: AtomicUsize,
}

impl StateStore for Gate {
    fn load(&self) -> Result<Option<WorkerState>> {
        Ok(self.state.lock().unwrap().clone())
    }
    fn save(&self, state: &WorkerState) -> Result<()> {
        self.started.fetch_add(1, SeqCst);
        while self.shut.load(SeqCst) {
            let pass = self
                .passes
                .fetch_update(SeqCst, SeqCst, |n| n.checked_sub(1))
                .is_ok();
            if pass {
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        *self.state.lock().unwrap() = Some(state.clone());
        self.finished.fetch_add(1, SeqCst);
        Ok(())
    }
    fn describe(&self) -> String {
        "the gated store".into()
    }
}

fn until(what: &str, f: impl Fn() -> bool) {
    let start = crate::clock::monotonic_ns();
    while !f() {
        let waited = crate::clock::monotonic_ns() - start;
        assert!(waited < 10_000_000_000, "waited 10 s for {what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn lost() -> Error {
    Error::new(ErrorKind::Lease, "the lease was not renewed in time")
}

/// A generator of `worker_id` on a gated store, with its first ID issued.
fn gated(worker_id: u64) -> (Arc<Gate>, Generator) {
    let store = Arc::new(Gate::default());
    let g = Generator::builder()
        .worker_id(worker_id)
        .state_store(Arc::clone(&store) as Arc<dyn StateStore>)
        .build()
        .unwrap();
    g.next_id().unwrap();
    (store, g)
}

/// Shuts the gate and gives the (lost) lease back: the I/O thread's save to open the fence
/// again is then on its way, held at the gate. Returns how many saves had started before it.
fn back_with_a_save_held(store: &Gate, g: &Generator) -> usize {
    store.shut.store(true, SeqCst);
    let before = store.started.load(SeqCst);
    g.inner().lease_back();
    until("the I/O thread's save", || {
        store.started.load(SeqCst) > before
    });
    before
}

/// The lease is lost, comes back, and is lost again while the I/O thread's save (sent while it
/// was back) is on its way. The second loss finds the fence already shut, so shutting it again
/// changes nothing; the save's success must not open it.
#[test]
fn a_save_that_returns_after_the_lease_was_lost_again_leaves_the_fence_shut() {
    let (store, g) = gated(3);
    let inner = g.inner();

    inner.lease_lost(lost());
    assert_eq!(g.try_next_id(), None, "lost: the fence is shut");
    assert_eq!(g.next_id().unwrap_err().kind(), ErrorKind::Lease);

    back_with_a_save_held(&store, &g);
    inner.lease_lost(lost());
    let done = store.finished.load(SeqCst);
    store.shut.store(false, SeqCst);
    until("the save to return", || store.finished.load(SeqCst) > done);
    // Give the I/O thread time to publish what it stored, if it (wrongly) would.
    std::thread::sleep(Duration::from_millis(50));

    assert_eq!(
        g.try_next_id(),
        None,
        "the fence opened while the lease is lost"
    );
    assert_eq!(g.next_id().unwrap_err().kind(), ErrorKind::Lease);
    inner.lease_back();
    until("the fence to open once the lease is back", || {
        g.try_next_id().is_some()
    });
}

/// While lost, the server said another process held the worker ID; then it came back to this
/// generator. A later loss is not a reason to move to another worker ID by itself: the call
/// fails with the lease error, and the generator keeps its worker ID.
#[test]
fn a_worker_id_that_came_back_is_not_left_for_another_at_the_next_error() {
    let dir = std::env::temp_dir().join(format!("rimeflake-lease-tests-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let g = Generator::builder().state_dir(&dir).build().unwrap();
    let worker = g.worker_id();
    g.next_id().unwrap();
    let inner = g.inner();

    inner.lease_lost(lost());
    inner.lease_taken(); // held by another process meanwhile
    inner.lease_back(); // and let go: ours again
    until("the fence to open", || g.try_next_id().is_some());
    inner.lease_lost(lost());
    assert_eq!(g.next_id().unwrap_err().kind(), ErrorKind::Lease);
    assert_eq!(g.worker_id(), worker, "moved to another worker ID");

    // Taken and not given back: the next call moves it, as a leasing generator should.
    inner.lease_taken();
    let id = g.next_id().unwrap();
    assert_ne!(g.worker_id(), worker);
    assert_eq!(g.layout().decode(id).unwrap().worker_id, g.worker_id());
    g.close().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// The same, but the lease is also back again by the time the save returns: that save, sent
/// before the second loss, still opens nothing; the next one, sent after, does.
#[test]
fn a_save_that_straddles_a_loss_opens_nothing_even_when_the_lease_is_back() {
    let (store, g) = gated(4);
    let inner = g.inner();

    inner.lease_lost(lost());
    let before = back_with_a_save_held(&store, &g);
    inner.lease_lost(lost());
    inner.lease_back(); // asks for another save, which waits at the gate behind this one
    let done = store.finished.load(SeqCst);
    store.passes.store(1, SeqCst); // only the save sent before the second loss returns
    until("that save to return", || store.finished.load(SeqCst) > done);
    until("the next save to be sent", || {
        store.started.load(SeqCst) > before + 1
    });
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(
        g.try_next_id(),
        None,
        "a save sent before the loss opened the fence"
    );
    store.shut.store(false, SeqCst);
    until("the fence to open with the save sent after", || {
        g.try_next_id().is_some()
    });
}

/// A clock-id switch whose save straddles a loss: sent while the lease was held, answered after
/// it was lost and came back. Like an extension, it opens nothing; the switch sent after does.
#[test]
fn a_switch_whose_save_straddles_a_loss_opens_nothing_even_when_the_lease_is_back() {
    use crate::clock::ManualClock;
    let clock = ManualClock::new(1_767_225_600_000);
    let store = Arc::new(Gate::default());
    let g = Generator::builder()
        .clock(clock.clone())
        .worker_id(6)
        .rollback_policy(super::RollbackPolicy::BumpClock)
        .max_wait(Duration::from_millis(200))
        .state_store(Arc::clone(&store) as Arc<dyn StateStore>)
        .build()
        .unwrap();
    let first = g.next_id().unwrap();
    let inner = g.inner();
    let cid = |id: u64| g.layout().decode(id).unwrap().clock_id;

    // The clock steps back far: the next call asks the I/O thread to store a switch, which
    // waits at the gate; the call gives up after max_wait.
    store.shut.store(true, SeqCst);
    let before = store.started.load(SeqCst);
    clock.set_back(Duration::from_secs(60));
    assert_eq!(g.next_id().unwrap_err().kind(), ErrorKind::State);
    until("the switch's save", || store.started.load(SeqCst) > before);

    // Lost and back while that save is on its way; then only that save returns.
    inner.lease_lost(lost());
    inner.lease_back();
    let done = store.finished.load(SeqCst);
    store.passes.store(1, SeqCst);
    until("the switch's save to return", || {
        store.finished.load(SeqCst) > done
    });
    let r = g.next_id();
    assert!(
        r.is_err(),
        "a switch sent before the loss opened the fence: {:?} (clock-id {})",
        r,
        r.as_ref().map(|&id| cid(id)).unwrap_or(0)
    );
    assert_eq!(g.try_next_id(), None);

    // Saves go through again: the switch sent after the loss opens it.
    store.shut.store(false, SeqCst);
    let next = std::sync::Mutex::new(Err(lost()));
    until("an ID on the new clock-id", || {
        let r = g.next_id();
        let ok = r.is_ok();
        *next.lock().unwrap() = r;
        ok
    });
    let next = next.into_inner().unwrap().unwrap();
    assert_ne!(cid(next), cid(first), "the clock-id did not change");
    g.close().unwrap();
}

/// The deadline is checked where IDs are issued, not by the keeper thread: once it has passed,
/// the next reading in a new time unit fails with a lease error though nobody said the lease
/// was lost; a later deadline (a renewal) lets IDs through again.
#[test]
fn past_the_deadline_no_id_is_issued_before_the_keeper_says_anything() {
    let (_store, g) = gated(8);
    let inner = g.inner();
    // As the keeper tells it: a deadline now, which no renewal has moved.
    inner
        .hot
        .deadline
        .store(crate::clock::boottime_ns(), SeqCst);
    std::thread::sleep(Duration::from_millis(2)); // into a later time unit
    assert_eq!(
        g.try_next_id(),
        None,
        "the hot path issued past the deadline"
    );
    let e = g.next_id().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Lease, "{e}");
    assert!(e.message().contains("deadline"), "{e}");
    let mut ids = [0u64; 16];
    assert_eq!(g.fill(&mut ids).unwrap_err().kind(), ErrorKind::Lease);

    inner.lease_deadline(crate::clock::boottime_ns() + 10_000_000_000);
    g.next_id().unwrap();
    g.close().unwrap();
}
