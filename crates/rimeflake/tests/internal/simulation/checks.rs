//! What the disk simulation guarantees: each property a check that the simulator
//! (`simulation.rs`) calls after the step it concerns, failing with a message that says which
//! ID or call broke it:
//!
//! - an ID carries the configured worker's bits;
//! - no ID is issued twice in a run, across every crash and restart, and by a holder whose lock
//!   file was replaced;
//! - within one generator's life, the IDs of one clock-id increase;
//! - across lives they do too: a restart starts above the durable reservation;
//! - no ID's time is past the durable reservation of its clock-id (what a crash would leave);
//! - a call fails only with an error of kind State, ClockRollback, Overloaded or TimeRange (and
//!   Lease for a holder whose lock file was replaced);
//! - never with State on a healthy disk: the generator recovers by itself;
//! - a corrupt state file is refused at start with a State error naming the file, never reset
//!   silently;
//! - a reset given evidence (the highest ID issued) succeeds on a healthy disk.
//!
//! The ordering and reservation checks are off once the newest slot was rotted on purpose, or
//! with `RIMEFLAKE_SIM_UNIQUE_ONLY=1`; uniqueness always counts. That nothing panics or hangs,
//! `run_seed` checks around the whole run.

use rimeflake::{Error, ErrorKind, Layout, Parts, WorkerState};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Display;

pub(super) type Check = Result<(), String>;

/// The kinds of error a generator on the simulated disk may fail with.
pub(super) const EXPECTED: [ErrorKind; 4] = [
    ErrorKind::State,
    ErrorKind::ClockRollback,
    ErrorKind::Overloaded,
    ErrorKind::TimeRange,
];

/// The kinds of error a holder whose lock file was replaced may fail with: those, and Lease.
pub(super) const EXPECTED_OF_THE_OLD_HOLDER: [ErrorKind; 5] = [
    ErrorKind::Lease,
    ErrorKind::State,
    ErrorKind::ClockRollback,
    ErrorKind::Overloaded,
    ErrorKind::TimeRange,
];

/// The checks of the IDs of a run, and what they remember of it.
#[derive(Debug)]
pub(super) struct Checks {
    layout: Layout,
    worker: u64,
    /// Every ID issued in the run, in any life.
    seen: HashSet<u64>,
    /// The last ID of each clock-id in this generator's life, and in any life.
    life_last: HashMap<u64, u64>,
    ever_last: HashMap<u64, u64>,
}

impl Checks {
    pub(super) fn new(layout: Layout, worker: u64) -> Checks {
        Checks {
            layout,
            worker,
            seen: HashSet::new(),
            life_last: HashMap::new(),
            ever_last: HashMap::new(),
        }
    }

    /// A generator's life begins: its IDs increase from its first.
    pub(super) fn new_life(&mut self) {
        self.life_last.clear();
    }

    /// The highest ID issued in the run: the evidence an operator gives a reset.
    pub(super) fn highest(&self) -> Option<u64> {
        self.seen.iter().copied().max()
    }

    /// The IDs one call issued, in order, each held to every property of an ID; `ordered`:
    /// whether the ordering and reservation checks count; `durable`: the state a crash now
    /// would leave.
    pub(super) fn issued(
        &mut self,
        ids: &[u64],
        ordered: bool,
        durable: impl FnOnce() -> Option<WorkerState>,
    ) -> Check {
        let mut highest: BTreeMap<u64, u64> = BTreeMap::new();
        for &id in ids {
            let p = self
                .layout
                .decode(id)
                .map_err(|e| format!("decode {id}: {e}"))?;
            self.carries_the_workers_bits(id, &p)?;
            self.never_issued_before(id, &p)?;
            self.above_the_last_of_its_life(id, &p)?;
            if ordered {
                self.above_every_earlier_life(id, &p)?;
            }
            let cid = p.clock_id;
            self.life_last.insert(cid, id);
            let e = self.ever_last.entry(cid).or_insert(id);
            *e = (*e).max(id);
            let time = (p.timestamp_ms - self.layout.epoch_ms()) / self.layout.unit_ms();
            let h = highest.entry(cid).or_insert(time);
            *h = (*h).max(time);
        }
        if highest.is_empty() || !ordered {
            return Ok(());
        }
        within_the_durable_reservation(&highest, &durable())
    }

    /// No ID is issued twice by a holder whose lock file was replaced, nor by anyone else.
    pub(super) fn issued_by_the_old_holder(&mut self, ids: &[u64]) -> Check {
        for &id in ids {
            if !self.seen.insert(id) {
                return Err(format!("DUPLICATE ID {id} from the old holder"));
            }
        }
        Ok(())
    }

    /// An ID carries the configured worker's bits.
    fn carries_the_workers_bits(&self, id: u64, p: &Parts) -> Check {
        let worker = self.layout.worker_field(p);
        if worker != self.worker {
            return Err(format!("ID {id} has worker {worker}, not {}", self.worker));
        }
        Ok(())
    }

    /// No ID is issued twice in a run, across every crash and restart.
    fn never_issued_before(&mut self, id: u64, p: &Parts) -> Check {
        if !self.seen.insert(id) {
            return Err(format!("DUPLICATE ID {id} ({p:?})"));
        }
        Ok(())
    }

    /// Within one generator's life, the IDs of one clock-id increase.
    fn above_the_last_of_its_life(&self, id: u64, p: &Parts) -> Check {
        let cid = p.clock_id;
        match self.life_last.get(&cid) {
            Some(&last) if id <= last => Err(format!(
                "ID {id} ({p:?}) is not above {last}, an earlier ID of clock-id {cid} in the \
                 same generator's life"
            )),
            _ => Ok(()),
        }
    }

    /// Across lives, the IDs of one clock-id increase: a restart starts above the durable
    /// reservation.
    fn above_every_earlier_life(&self, id: u64, p: &Parts) -> Check {
        let cid = p.clock_id;
        match self.ever_last.get(&cid) {
            Some(&last) if id <= last => Err(format!(
                "ID {id} ({p:?}) is not above {last} ({:?}), an ID of clock-id {cid} from an \
                 earlier life: the restart did not start above the durable reservation",
                self.layout.decode(last)
            )),
            _ => Ok(()),
        }
    }
}

/// No ID's time (`highest`: the latest issued of each clock-id, in time units) is past the
/// durable reservation of its clock-id, so a crash now could not repeat it.
fn within_the_durable_reservation(
    highest: &BTreeMap<u64, u64>,
    durable: &Option<WorkerState>,
) -> Check {
    for (&cid, &time) in highest {
        let reserved = durable.as_ref().and_then(|s| s.reserved_of(cid));
        if reserved.is_none_or(|r| r < time) {
            return Err(format!(
                "an ID of clock-id {cid} has time {time}, past the durable reservation \
                 {reserved:?} (durable state: {durable:?}): a crash now could repeat it"
            ));
        }
    }
    Ok(())
}

/// A call (`what`) on a healthy disk never fails with a State error: the generator recovers by
/// itself once the store works again.
pub(super) fn no_state_error_on_a_healthy_disk(what: &str, e: &Error, healthy: bool) -> Check {
    if healthy && e.kind() == ErrorKind::State {
        return Err(format!(
            "{what}: a State error on a healthy disk (the generator must recover by itself \
             once the store works again): {e}"
        ));
    }
    Ok(())
}

/// A call (`what`) fails only with an error of the kinds `expected`.
pub(super) fn only_expected_errors(what: &str, e: &Error, expected: &[ErrorKind]) -> Check {
    if !expected.contains(&e.kind()) {
        return Err(format!("{what}: an error of kind {}: {e}", e.kind().name()));
    }
    Ok(())
}

/// A corrupt state file (`why`) at `path` is refused at start with a State error naming the
/// file, never reset silently; `started` is the start's outcome.
pub(super) fn corrupt_state_is_refused(
    started: Result<(), &Error>,
    why: &dyn Display,
    path: &str,
) -> Check {
    match started {
        Ok(()) => Err(format!(
            "start: the state file is corrupt ({why}) but the generator started: a silent reset"
        )),
        Err(e) if e.kind() != ErrorKind::State || !e.message().contains(path) => Err(format!(
            "start on a corrupt state ({why}): want a State error naming {path}, got {}: {e}",
            e.kind().name()
        )),
        Err(_) => Ok(()),
    }
}

/// A reset given evidence (the highest ID issued) succeeds on a healthy disk; `failed` is its
/// error, if any.
pub(super) fn reset_with_evidence_succeeds(
    failed: Option<&Error>,
    healthy_with_evidence: bool,
) -> Check {
    match failed {
        Some(e) if healthy_with_evidence => {
            Err(format!("reset with evidence failed on a healthy disk: {e}"))
        }
        _ => Ok(()),
    }
}

/// Each check, fed what breaks its property, fails; fed what keeps it, passes. So no check can
/// pass whatever it is given.
#[cfg(test)]
mod tests {
    use super::*;

    const WORKER: u64 = 5;

    fn id(layout: &Layout, clock_id: u64, unit: u64, worker_id: u64, sequence: u64) -> u64 {
        let parts = Parts {
            clock_id,
            timestamp_ms: layout.epoch_ms() + unit * layout.unit_ms(),
            datacenter_id: None,
            worker_id,
            sequence,
        };
        layout.compose(&parts).expect("an ID of the layout")
    }

    fn reserved(clock_id: u64, until: u64) -> Option<WorkerState> {
        let mut s = WorkerState::fresh(8);
        s.raise(clock_id, until);
        Some(s)
    }

    fn fails_with(words: &str, check: Check) {
        match check {
            Err(why) => assert!(why.contains(words), "{why}"),
            Ok(()) => panic!("a check passed what breaks it (want: {words})"),
        }
    }

    #[test]
    fn an_id_issued_twice_fails_in_any_life_and_from_the_old_holder() {
        let layout = Layout::default();
        let mut c = Checks::new(layout.clone(), WORKER);
        let (a, b) = (id(&layout, 0, 10, WORKER, 0), id(&layout, 0, 10, WORKER, 1));
        assert_eq!(c.issued(&[a, b], true, || reserved(0, 10)), Ok(()));
        c.new_life();
        fails_with("DUPLICATE ID", c.issued(&[b], false, || None));
        fails_with("DUPLICATE ID", c.issued_by_the_old_holder(&[a]));
        let next = id(&layout, 0, 11, WORKER, 0);
        assert_eq!(c.issued_by_the_old_holder(&[next]), Ok(()));
        assert_eq!(c.highest(), Some(next));
    }

    #[test]
    fn an_id_of_another_worker_fails() {
        let layout = Layout::default();
        let mut c = Checks::new(layout.clone(), WORKER);
        let other = id(&layout, 0, 10, WORKER + 1, 0);
        fails_with(
            "has worker 6, not 5",
            c.issued(&[other], true, || reserved(0, 10)),
        );
    }

    #[test]
    fn an_id_not_above_the_last_fails_within_a_life_and_across_lives() {
        let layout = Layout::default();
        let mut c = Checks::new(layout.clone(), WORKER);
        let (low, high) = (id(&layout, 1, 10, WORKER, 0), id(&layout, 1, 12, WORKER, 0));
        assert_eq!(c.issued(&[high], true, || reserved(1, 12)), Ok(()));
        fails_with(
            "same generator's life",
            c.issued(&[low], true, || reserved(1, 12)),
        );
        let mut c = Checks::new(layout.clone(), WORKER);
        assert_eq!(c.issued(&[high], true, || reserved(1, 12)), Ok(()));
        c.new_life();
        fails_with("earlier life", c.issued(&[low], true, || reserved(1, 12)));
        // Unordered (the newest slot rotted on purpose), only uniqueness counts.
        let low2 = id(&layout, 1, 11, WORKER, 0);
        assert_eq!(c.issued(&[low2], false, || None), Ok(()));
        // Another clock-id has an order of its own.
        assert_eq!(
            c.issued(&[id(&layout, 2, 5, WORKER, 0)], true, || reserved(2, 5)),
            Ok(())
        );
    }

    #[test]
    fn an_id_past_the_durable_reservation_fails() {
        let layout = Layout::default();
        let mut c = Checks::new(layout.clone(), WORKER);
        let ids = [id(&layout, 0, 10, WORKER, 0), id(&layout, 0, 11, WORKER, 0)];
        fails_with(
            "past the durable reservation",
            c.issued(&ids, true, || reserved(0, 10)),
        );
        let mut c = Checks::new(layout.clone(), WORKER);
        fails_with(
            "past the durable reservation",
            c.issued(&ids, true, || None),
        );
        let mut c = Checks::new(layout, WORKER);
        assert_eq!(c.issued(&ids, true, || reserved(0, 11)), Ok(()));
    }

    #[test]
    fn unexpected_errors_fail() {
        let state = Error::new(ErrorKind::State, "the disk failed");
        let lease = Error::new(ErrorKind::Lease, "the lock file was replaced");
        fails_with(
            "on a healthy disk",
            no_state_error_on_a_healthy_disk("next_id", &state, true),
        );
        assert_eq!(
            no_state_error_on_a_healthy_disk("next_id", &state, false),
            Ok(())
        );
        assert_eq!(only_expected_errors("next_id", &state, &EXPECTED), Ok(()));
        fails_with(
            "of kind LEASE",
            only_expected_errors("next_id", &lease, &EXPECTED),
        );
        assert_eq!(
            only_expected_errors("the old holder", &lease, &EXPECTED_OF_THE_OLD_HOLDER),
            Ok(())
        );
    }

    #[test]
    fn a_corrupt_state_started_or_refused_without_naming_the_file_fails() {
        let path = "/sim/default/worker-00005.state";
        let named = Error::new(ErrorKind::State, format!("{path} is corrupt"));
        let unnamed = Error::new(ErrorKind::State, "corrupt");
        fails_with(
            "a silent reset",
            corrupt_state_is_refused(Ok(()), &"rot", path),
        );
        fails_with(
            "want a State error",
            corrupt_state_is_refused(Err(&unnamed), &"rot", path),
        );
        assert_eq!(corrupt_state_is_refused(Err(&named), &"rot", path), Ok(()));
    }

    #[test]
    fn a_reset_with_evidence_that_fails_on_a_healthy_disk_fails() {
        let e = Error::new(ErrorKind::State, "no room");
        fails_with("healthy disk", reset_with_evidence_succeeds(Some(&e), true));
        assert_eq!(reset_with_evidence_succeeds(Some(&e), false), Ok(()));
        assert_eq!(reset_with_evidence_succeeds(None, true), Ok(()));
    }
}
