//! A simulated lease server, and deterministic tests of the lease protocol on it.
//!
//! [`SimServer`] keeps leases (each with an expiry by the server's own clock), versioned states
//! and layout records in memory, on a manual clock, and implements [`Conn`] like the real
//! servers: as Redis ([`Flavor::Redis`]: an expired lease is gone) or as PostgreSQL
//! ([`Flavor::Postgres`]: an expired lease keeps its owner until someone takes it).
//!
//! A run ([`World`]) simulates a few processes that all want the same worker ID. Each has the
//! keeper's state machine ([`KeeperState`]), a real [`RemoteStore`], and a model of the
//! generator: it issues IDs only while the keeper says the lease is held, and only up to the
//! reservation it last stored (as the fence does), and only from a time unit that ends before
//! the deadline its keeper last told it (as the hot path opens units); it reserves ahead as the
//! reservation thread does; it crashes or closes, and starts again with a new token. A seed decides everything,
//! faults included:
//!
//! - calls that fail (lost on the way, connection reset);
//! - calls whose answer is lost although they land, at once or later ("lost answers");
//! - slow calls, answered after the client's timeout;
//! - outages: a paused server (calls land when it resumes), one refusing connections, one
//!   nothing reaches;
//! - reconnects that outlast the call's timeout: a timeout per address the server's name
//!   resolves to, or as long as a name lookup hangs (the Redis client resolves names with no
//!   timeout);
//! - a server clock with another offset and rate than the client's;
//! - a lease taken by force by another process (and, naturally, leases taken after expiry);
//! - a keeper thread that wakes late;
//! - a server that forgets: everything (as `FLUSHALL`, or Redis restarted without its data), or
//!   one worker's lease and state (its row deleted). A start follows the generator's floor
//!   (`Usage::floor_lead_ms`) from the marks the namespace's record keeps; a start that waits
//!   for its floor may be killed there, having stored nothing and leaving its lease to expire;
//! - a replica (`remote_sim/replica.rs`): one that every write waits for (Redis's `WAIT`, a
//!   synchronous standby) or an asynchronous standby, lagging a little or more than a write may
//!   wait, its link cut now and then; promoted with the old primary lost (an asynchronous failover:
//!   the server is what the replica had, another server to the tags of the states), or left up for
//!   the processes running then (a split brain, where writes wait for the replica). A start settles
//!   the namespace's settings first, a keeper looks at the server after each success, and a start
//!   that finds a copy from another server starts a reach above it.
//!
//! Checked at every step (`remote_sim/checks.rs`, a check for each property): (a) an ID is
//! issued only under the issuer's live lease on the server; (b) no time unit is issued twice,
//! even across a forgetting server, a promotion or a split brain; (c) a process that re-takes
//! its worker ID after another writer never stores nor issues again; (d) a save refused as
//! "moved" is never refused over the process's own write; (e) nothing is issued while the
//! keeper says the lease is lost; (f) nothing is issued at or past the keeper's deadline.
//!
//! The model's simplifications: a store call lands at one instant, though its answer may reach
//! the generator much later (the keeper's calls take time: they land, and are answered or time
//! out, later); every process reads one clock; an ID is its time unit (ms).
//!
//! `RIMEFLAKE_LEASE_SEEDS=N` runs N seeds (default 200) from `RIMEFLAKE_LEASE_FIRST_SEED`
//! (default 0); `RIMEFLAKE_LEASE_SEED=N` replays one seed and prints its log.

use crate::backend::Backend;
use crate::error::{Error, ErrorKind, Result};
use crate::lease::remote::keeper::{KeeperState, News, Next};
use crate::lease::remote::{Conn, RemoteStore, RemoteWorker, Saved, Timing, Versioned, WRITER};
use crate::state::{StateStore, WorkerState};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

const MS: u64 = 1_000_000;
/// The client's `CLOCK_BOOTTIME` when a run starts, in ns.
const T0: u64 = 1_000_000 * MS;
/// The server's clock (Unix ns) at `T0`, before its skew.
const SERVER_T0: u64 = 1_767_225_600_000 * MS;
const NS: &str = "sim";
const WORKER: u64 = 7;

/// The test kit's seeded generator, so that a run replays exactly from its seed, with the
/// draws this simulation makes (their order and arithmetic are part of what a seed replays).
#[derive(Clone, Debug)]
struct Rng(rimeflake_testkit::support::Rng);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(rimeflake_testkit::support::Rng(seed))
    }
    fn next(&mut self) -> u64 {
        self.0.next()
    }
    /// From `lo` to `hi`, both included.
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        lo + self.next() % (hi - lo + 1)
    }
    fn chance(&mut self, per_mille: u64) -> bool {
        self.next() % 1000 < per_mille
    }
    fn pick<T: Copy>(&mut self, from: &[T]) -> T {
        from[self.next() as usize % from.len()]
    }
}

mod checks;
mod keeper_thread;
mod process;
mod replica;
mod scenario;
mod server;
mod world;

// The keeper's tests drive a simulated server of their own.
use checks::*;
use keeper_thread::*;
use process::*;
use replica::*;
use scenario::*;
use server::*;
pub(crate) use server::{Flavor, SimServer};
use world::*;

fn run_seed(seed: u64) -> std::result::Result<(Tally, Vec<String>), String> {
    let mut w = World::random(seed);
    let end = w.cfg.end;
    match w.run_until(end) {
        Ok(()) => {
            w.finish();
            Ok((w.tally, w.log))
        }
        Err(broken) => Err(w.report(seed, &broken)),
    }
}

#[cfg(test)]
mod tests;
