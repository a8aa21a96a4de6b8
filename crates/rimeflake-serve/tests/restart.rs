//! Many clients through a crash of `rimeflake serve` (SIGKILL) and its restart on the same port
//! and state with the wall clock set back a day (libfaketime): no ID repeats across the restart.

use common::support::TempDir;

mod common;
use common::{check_unique, clients, faked, free_port, signal, wait_until, Server};

use rimeflake::Layout;
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

#[test]
fn a_crash_and_restart_with_the_clock_set_back_never_repeats_an_id() {
    let dir = TempDir::new("serve-restart");
    let listen = format!("127.0.0.1:{}", free_port());
    let args = ["--worker", "3", "--state-dir", dir.path()];
    let first = Server::start_with(
        std::process::Command::new(common::binary()),
        &listen,
        &args,
        &[],
    );
    let addr = first.addr;
    let stop = Arc::new(AtomicBool::new(false));
    let got = Arc::new(AtomicUsize::new(0));
    let running = clients(addr, 8, stop.clone(), got.clone());

    let mut first = first;
    wait_until(
        "IDs from the first server",
        Duration::from_secs(120),
        || got.load(Relaxed) >= 3000,
    );
    signal(&first.child, libc::SIGKILL);
    first.wait(Duration::from_secs(30));
    let before = got.load(Relaxed);

    let mut second = Server::start_with(faked("-86400"), &listen, &args, &[]);
    wait_until(
        "IDs from the restarted server",
        Duration::from_secs(120),
        || got.load(Relaxed) >= before + 3000,
    );
    stop.store(true, Relaxed);
    let mut all = Vec::new();
    for c in running {
        all.extend(c.join().unwrap());
    }
    let status = second.stop();
    assert!(status.success(), "{}", second.stderr.lock().unwrap());

    let layout = Layout::default();
    check_unique(&all, &layout, &[3]);
    // The restart really ran a day behind: its IDs are on another clock-id.
    let clock_ids: HashSet<u64> = all
        .iter()
        .map(|&id| layout.decode(id).unwrap().clock_id)
        .collect();
    assert!(
        clock_ids.len() >= 2,
        "every ID is on clock-id {clock_ids:?}: was the clock set back?"
    );
}
