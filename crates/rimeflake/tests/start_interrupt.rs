//! A start-up wait (the clock far behind the stored reservation, policy `Wait`) calls the
//! caller's interrupt hook between its slices, as the waits of `next_id_with` do: a binding
//! stops it at Ctrl-C instead of blocking for up to `max_wait`.

use rimeflake::{ErrorKind, Generator, Layout, ManualClock, Result};
use rimeflake::{StateStore, WorkerState};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const START: u64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z

#[derive(Debug, Default)]
struct MemStore(Mutex<Option<WorkerState>>);

impl StateStore for MemStore {
    fn load(&self) -> Result<Option<WorkerState>> {
        Ok(self.0.lock().unwrap().clone())
    }
    fn save(&self, state: &WorkerState) -> Result<()> {
        *self.0.lock().unwrap() = Some(state.clone());
        Ok(())
    }
    fn describe(&self) -> String {
        "a store in memory".into()
    }
}

fn builder(store: &Arc<MemStore>, clock: &ManualClock) -> rimeflake::Builder<ManualClock> {
    Generator::builder()
        .layout(Layout::twitter()) // no clock-id bits: the default policy waits
        .worker_id(3)
        .state_store(store.clone())
        .refresh_every(Duration::ZERO)
        .max_wait(Duration::from_secs(3600))
        .clock(clock.clone())
}

#[test]
fn a_start_up_wait_stops_when_the_hook_says_interrupted() {
    let store = Arc::new(MemStore::default());
    let clock = ManualClock::new(START);
    let g = builder(&store, &clock).build().unwrap();
    g.next_ids(1000).unwrap();
    std::mem::forget(g); // a crash: the reservation stays where it was
    clock.set_back(Duration::from_secs(60));

    let mut calls = 0;
    let err = builder(&store, &clock)
        .build_with(&mut || {
            calls += 1;
            calls == 3
        })
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Interrupted, "{err}");
    assert_eq!(calls, 3);

    // Without an interruption it waits, in slices, until max_wait runs out.
    let err = builder(&store, &clock)
        .max_wait(Duration::from_millis(20))
        .build_with(&mut || false)
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ClockRollback, "{err}");
}
