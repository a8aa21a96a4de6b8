//! A generator issuing on a thread of its own until stopped, keeping every ID and the kinds of
//! the errors it met, while a test does things to its server (remote.rs,
//! zookeeper_ensemble.rs).

use rimeflake::{ErrorKind, Generator};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub struct Driver {
    stop: Arc<AtomicBool>,
    ids: Arc<Mutex<Vec<u64>>>,
    errors: Arc<Mutex<Vec<ErrorKind>>>,
    thread: Option<std::thread::JoinHandle<Generator>>,
}

impl Driver {
    /// A steady trickle: a millisecond's pause every 64 IDs.
    #[allow(dead_code)] // not every test binary that has this module uses it
    pub fn start(g: Generator) -> Driver {
        Driver::run(g, true)
    }

    /// As fast as it can.
    #[allow(dead_code)] // not every test binary that has this module uses it
    pub fn flat_out(g: Generator) -> Driver {
        Driver::run(g, false)
    }

    fn run(g: Generator, paced: bool) -> Driver {
        let stop = Arc::new(AtomicBool::new(false));
        let ids = Arc::new(Mutex::new(Vec::new()));
        let errors = Arc::new(Mutex::new(Vec::new()));
        let (s, i, e) = (stop.clone(), ids.clone(), errors.clone());
        let thread = std::thread::spawn(move || {
            // Handed over 64 at a time, so that counting them costs little.
            let mut batch = Vec::with_capacity(64);
            while !s.load(Ordering::Relaxed) {
                match g.next_id() {
                    Ok(id) => batch.push(id),
                    Err(err) => {
                        e.lock().unwrap().push(err.kind());
                        std::thread::sleep(Duration::from_millis(5));
                    }
                }
                if batch.len() == 64 {
                    i.lock().unwrap().append(&mut batch);
                    if paced {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                }
            }
            i.lock().unwrap().append(&mut batch);
            g
        });
        Driver {
            stop,
            ids,
            errors,
            thread: Some(thread),
        }
    }

    /// IDs and errors so far.
    pub fn counts(&self) -> (usize, usize) {
        (
            self.ids.lock().unwrap().len(),
            self.errors.lock().unwrap().len(),
        )
    }

    /// Waits up to `secs` for `f(ids, errors)` to hold.
    pub fn wait_for(&self, secs: u64, what: &str, f: impl Fn(usize, usize) -> bool) {
        for _ in 0..secs * 20 {
            let (i, e) = self.counts();
            if f(i, e) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("waited {secs} s for {what}: {:?}", self.counts());
    }

    pub fn finish(mut self) -> (Vec<u64>, Vec<ErrorKind>, Generator) {
        self.stop.store(true, Ordering::Relaxed);
        let g = self.thread.take().unwrap().join().unwrap();
        let ids = std::mem::take(&mut *self.ids.lock().unwrap());
        let errors = std::mem::take(&mut *self.errors.lock().unwrap());
        (ids, errors, g)
    }
}
