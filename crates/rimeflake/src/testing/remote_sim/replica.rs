//! The simulated server's replica and its faults: replication lag, a replication link cut, a
//! promotion (the replica becomes the server with what it had then: an asynchronous failover),
//! and a split brain (the old primary stays up for the clients that were using it, with
//! nothing of the promoted one's). `WAIT` is modelled by whether a write landing at some time
//! reaches the replica within the wait's time, over a link that stays up.

use super::*;
use std::collections::BTreeSet;

/// What a server keeps: the part a replica copies (the checker's history stays apart).
#[derive(Clone, Debug, Default)]
pub(crate) struct Data {
    pub(super) layouts: BTreeMap<String, String>,
    pub(super) marks: BTreeMap<String, (u64, BTreeMap<u64, u64>)>,
    pub(super) settings: BTreeMap<String, NsSettings>,
    pub(super) cells: BTreeMap<(String, u64), (Option<Lease>, Option<Versioned>)>,
    pub(super) generation: u64,
}

/// A replica of the server.
#[derive(Clone, Debug)]
pub(crate) struct Replica {
    /// Whether it acknowledges writes (Redis; a synchronous standby) or not (an asynchronous
    /// standby, which writes never wait for).
    pub(crate) acknowledges: bool,
    /// How far behind the primary it runs, in ns.
    pub(crate) lag: u64,
    /// `(from, until)`: the replication link is down (what was on its way is lost).
    pub(crate) cuts: Vec<(u64, u64)>,
    /// The primary's data at each event, as the replica receives it `lag` later.
    pub(super) history: Vec<(u64, Data)>,
}

impl Replica {
    pub(crate) fn new(acknowledges: bool, lag: u64, cuts: Vec<(u64, u64)>) -> Replica {
        Replica {
            acknowledges,
            lag,
            cuts,
            history: Vec::new(),
        }
    }

    fn cut_within(&self, from: u64, until: u64) -> bool {
        self.cuts.iter().any(|&(a, b)| a < until && from < b)
    }

    /// What the replica has at `t`: the primary's data `lag` before, or before the first cut
    /// still open then.
    fn at(&self, t: u64) -> Option<&Data> {
        let open_cut = self
            .cuts
            .iter()
            .filter(|&&(a, b)| a <= t && t < b)
            .map(|&(a, _)| a)
            .min();
        let upto = open_cut.unwrap_or(t).saturating_sub(self.lag);
        self.history
            .iter()
            .rev()
            .find(|(at, _)| *at <= upto)
            .map(|(_, c)| c)
    }
}

/// The old primary after a split brain: its data, and the clients that still reach it.
#[derive(Clone, Debug)]
pub(crate) struct OldSide {
    pub(super) copy: Data,
    pub(super) tokens: BTreeSet<String>,
}

impl Server {
    /// The server's data now.
    pub(super) fn copy(&self) -> Data {
        Data {
            layouts: self.layouts.clone(),
            marks: self.marks.clone(),
            settings: self.settings.clone(),
            cells: self
                .workers
                .iter()
                .map(|(k, w)| (k.clone(), (w.lease.clone(), w.state.clone())))
                .collect(),
            generation: self.generation,
        }
    }

    /// Makes `c` the server's data (the checker's history stays).
    fn install(&mut self, c: Data) {
        self.layouts = c.layouts;
        self.marks = c.marks;
        self.settings = c.settings;
        self.generation = c.generation;
        for w in self.workers.values_mut() {
            w.lease = None;
            w.state = None;
        }
        for (k, (lease, state)) in c.cells {
            let w = self.workers.entry(k).or_default();
            w.lease = lease;
            w.state = state;
        }
    }

    /// Records the data as of now for the replica (called at each event, before time moves).
    pub(super) fn replicate(&mut self) {
        if self.replica.is_some() && !self.on_old_side {
            let (now, c) = (self.now, self.copy());
            if let Some(r) = self.replica.as_mut() {
                // One entry per instant: the last data of it.
                if r.history.last().is_some_and(|(at, _)| *at == now) {
                    r.history.pop();
                }
                r.history.push((now, c));
            }
        }
    }

    /// Whether a write landing now with `required` acknowledgements is acknowledged in time
    /// (half the client's timeout, as the `WAIT` of the Redis backend).
    pub(super) fn acknowledged(&self, required: u32) -> bool {
        if required == 0 {
            return true;
        }
        match (&self.replica, self.on_old_side) {
            (Some(r), false) => {
                r.acknowledges
                    && r.lag <= self.wait_ns
                    && !r.cut_within(self.now, self.now + r.lag + 1)
            }
            _ => false,
        }
    }

    /// The replicas that acknowledge writes now, as the server says of itself.
    pub(super) fn replicas_online(&self) -> u32 {
        match (&self.replica, self.on_old_side) {
            (Some(r), false) => u32::from(r.acknowledges && !r.cut_within(self.now, self.now + 1)),
            _ => 0,
        }
    }

    /// The replica is promoted now: the server is what the replica had (a new generation:
    /// another identity and lineage, whose parent is the old one), with no replica of its own.
    /// With `old_side`, the old primary stays up, with its data as now, for those tokens.
    pub(crate) fn promote(&mut self, old_side: Option<BTreeSet<String>>) {
        let Some(r) = self.replica.take() else { return };
        let mut promoted = r.at(self.now).cloned().unwrap_or_default();
        promoted.generation = self.generation + 1;
        if let Some(tokens) = old_side {
            self.old_side = Some(OldSide {
                copy: self.copy(),
                tokens,
            });
        }
        self.install(promoted);
    }

    /// Runs `f` on the side of the server `token` reaches: the old primary after a split
    /// brain, for the clients that still reach it; else the server.
    pub(super) fn on_side<T>(&mut self, token: &str, f: impl FnOnce(&mut Server) -> T) -> T {
        let old = self
            .old_side
            .as_ref()
            .is_some_and(|o| o.tokens.contains(token));
        if !old {
            return f(self);
        }
        let mut side = self.old_side.take().expect("checked above");
        let main = self.copy();
        self.install(std::mem::take(&mut side.copy));
        self.on_old_side = true;
        let out = f(self);
        self.on_old_side = false;
        side.copy = self.copy();
        self.install(main);
        self.old_side = Some(side);
        out
    }
}
