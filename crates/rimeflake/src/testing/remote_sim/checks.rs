//! What the lease simulation guarantees: each property a check that the processes' events
//! (`process.rs`) call at the step it concerns, with what the step did and the server it ran on.
//! A check that fails is the run's error, a message that starts with the property's letter:
//!
//! - (a) an ID is issued only while the server's lease is the issuer's and has not expired by
//!   the server's clock (unless the lease was taken by force, or the server forgot it, and the
//!   issuer has not noticed);
//! - (b) no time unit is issued by two processes, even after the server forgot or failed over;
//!   a process starts above every reservation any other stored, lost or not; a save is
//!   answered only while no other process took the worker ID since the saver last took it;
//! - (c) a process that re-takes its worker ID with another writer in between never stores nor
//!   issues again; one with nobody in between goes on;
//! - (d) a save refused as "moved" is never one whose newer version is the process's own
//!   write (a lost answer is recognised as ours);
//! - (e) nothing is issued while the keeper says the lease is lost: a reservation thread's
//!   save that returns late (after a loss, even with the lease back by then) opens nothing.
//! - (f) nothing is issued at or past the keeper's deadline (three quarters of a TTL after the
//!   last successful call was sent), even when the keeper thread wakes late and has not said
//!   the lease is lost yet.
//!
//! The checks of (b) remember the run: [`Checks`] keeps who issued each time unit and what each
//! process stored. The others look only at the step and at the server.

use super::*;

/// The checks of a run, and what they remember of it.
#[derive(Debug, Default)]
pub(super) struct Checks {
    /// Who issued each time unit.
    units: HashMap<u64, String>,
    /// The reservation each token last stored (answered).
    durable: BTreeMap<String, u64>,
}

impl Checks {
    /// (a) An ID is issued only while the server's lease is the issuer's and live by the
    /// server's clock, unless it was taken by force or forgotten and the issuer has not noticed.
    pub(super) fn lease_is_the_issuers(
        &self,
        s: &mut Server,
        token: &str,
        unit: u64,
        stolen: bool,
    ) -> Step {
        if stolen {
            return Ok(());
        }
        let lease = s.on_side(token, |s| s.lease(WORKER));
        match &lease {
            Some((owner, true)) if owner == token => Ok(()),
            _ => Err(format!(
                "(a) {token} issues at unit {unit} while the server's lease is {lease:?}"
            )),
        }
    }

    /// (b) No time unit is issued by two processes; records `unit` as `token`'s.
    pub(super) fn unit_issued_once(&mut self, token: &str, unit: u64) -> Step {
        match self.units.get(&unit) {
            Some(other) if other != token => {
                Err(format!("(b) unit {unit} issued by {other} and by {token}"))
            }
            Some(_) => Ok(()),
            None => {
                self.units.insert(unit, token.to_string());
                Ok(())
            }
        }
    }

    /// (b) A process starts above every reservation any other process stored, whether the
    /// server still has it or not.
    pub(super) fn start_above_every_stored_reservation(&self, token: &str, first: u64) -> Step {
        match self
            .durable
            .iter()
            .find(|(t, r)| *t != token && **r >= first)
        {
            Some((other, r)) => Err(format!(
                "(b) {token} starts at {first}, not above {other}'s stored reservation {r}"
            )),
            None => Ok(()),
        }
    }

    /// (b) A save is answered only while no other process took the worker ID since the saver
    /// last took it; records `reserved` as what `token` stored.
    pub(super) fn save_answered_to_the_last_taker(
        &mut self,
        s: &Server,
        token: &str,
        reserved: u64,
    ) -> Step {
        let last = s.last_owner(WORKER);
        if last.as_deref() != Some(token) {
            return Err(format!(
                "(b) a save by {token} was answered after {last:?} took the worker ID"
            ));
        }
        self.durable.insert(token.to_string(), reserved);
        Ok(())
    }

    /// (c) A process that took its worker ID when the state had `since` writes issues nothing
    /// once another process stored the state after those, unless its lease was taken by force
    /// or forgotten and it has not noticed.
    pub(super) fn no_issue_after_another_writer(
        &self,
        s: &Server,
        token: &str,
        since: u64,
        unit: u64,
        stolen: bool,
    ) -> Step {
        if !stolen && s.written_by_another(WORKER, since, token) {
            return Err(format!(
                "(c) {token} issues at unit {unit} after another process stored its state"
            ));
        }
        Ok(())
    }

    /// (c) A process that took its worker ID when the state had `since` writes stores nothing
    /// (`what`: a reservation, its last state) once another process stored the state after
    /// those.
    pub(super) fn no_store_after_another_writer(
        &self,
        s: &Server,
        token: &str,
        since: u64,
        what: &str,
    ) -> Step {
        if s.written_by_another(WORKER, since, token) {
            return Err(format!(
                "(c) {token} stored {what} after another process stored its state"
            ));
        }
        Ok(())
    }

    /// (d) A save refused as moved (`why`) is never refused over the process's own write: the
    /// newer version is another's (unless the server forgot the state while it ran).
    pub(super) fn moved_only_over_another_write(
        &self,
        s: &Server,
        token: &str,
        since: u64,
        forgotten: bool,
        why: &str,
    ) -> Step {
        let another = s.written_by_another(WORKER, since, token);
        if !forgotten && (s.writer(WORKER).as_deref() == Some(token) || !another) {
            return Err(format!(
                "(d) {token}'s save was refused as moved over its own write: {why}"
            ));
        }
        Ok(())
    }

    /// (e) Nothing is issued while the keeper says the lease is lost.
    pub(super) fn nothing_issued_while_lost(&self, token: &str, unit: u64, lost: bool) -> Step {
        if lost {
            return Err(format!(
                "(e) {token} issues at unit {unit} while its lease is lost"
            ));
        }
        Ok(())
    }

    /// (f) Nothing is issued at or past the keeper's deadline (`valid_until`), whether the
    /// keeper said the lease is lost or not.
    pub(super) fn nothing_issued_past_the_deadline(
        &self,
        token: &str,
        unit: u64,
        t: u64,
        valid_until: u64,
    ) -> Step {
        if t >= valid_until {
            return Err(format!(
                "(f) {token} issues at unit {unit}, {:.3} ms past its lease deadline",
                (t - valid_until) as f64 / 1e6
            ));
        }
        Ok(())
    }
}

/// Each check, fed a step that breaks its property, fails with its letter; fed one that keeps
/// it, passes. So no check can pass whatever it is given.
#[cfg(test)]
mod tests {
    use super::*;

    /// A server whose worker's lease `holders` took in turn, each storing a state.
    fn taken_by(holders: &[&str]) -> SimServer {
        let server = SimServer::new(Flavor::Redis, 1);
        {
            let mut s = server.lock();
            s.set_time(T0);
            for (i, token) in holders.iter().enumerate() {
                s.steal(WORKER, token, 1_000);
                let next = Versioned {
                    version: i as u64 + 1,
                    text: format!("state{WRITER}{token}"),
                };
                assert_eq!(s.save(NS, WORKER, token, i as u64, &next), Saved::Yes);
            }
        }
        server
    }

    fn fails_with(letter: &str, step: Step) {
        match step {
            Err(why) => assert!(why.starts_with(letter), "{why}"),
            Ok(()) => panic!("the check of {letter} passed a step that breaks it"),
        }
    }

    #[test]
    fn a_lease_that_is_not_the_issuers_or_has_expired_fails_a() {
        let c = Checks::default();
        let server = taken_by(&["a"]);
        let mut s = server.lock();
        assert_eq!(c.lease_is_the_issuers(&mut s, "a", 5, false), Ok(()));
        fails_with("(a)", c.lease_is_the_issuers(&mut s, "b", 5, false));
        assert_eq!(c.lease_is_the_issuers(&mut s, "b", 5, true), Ok(()));
        s.set_time(T0 + 2_000 * MS); // expired
        fails_with("(a)", c.lease_is_the_issuers(&mut s, "a", 5, false));
    }

    #[test]
    fn a_unit_issued_twice_fails_b() {
        let mut c = Checks::default();
        assert_eq!(c.unit_issued_once("a", 5), Ok(()));
        assert_eq!(c.unit_issued_once("a", 5), Ok(())); // one process, the same unit again
        assert_eq!(c.unit_issued_once("b", 6), Ok(()));
        fails_with("(b)", c.unit_issued_once("b", 5));
    }

    #[test]
    fn a_start_at_or_below_anothers_stored_reservation_fails_b() {
        let mut c = Checks::default();
        let server = taken_by(&["a"]);
        let s = server.lock();
        assert_eq!(c.save_answered_to_the_last_taker(&s, "a", 100), Ok(()));
        assert_eq!(c.start_above_every_stored_reservation("a", 50), Ok(()));
        assert_eq!(c.start_above_every_stored_reservation("b", 101), Ok(()));
        fails_with("(b)", c.start_above_every_stored_reservation("b", 100));
    }

    #[test]
    fn a_save_answered_after_another_took_the_worker_id_fails_b() {
        let mut c = Checks::default();
        let server = taken_by(&["a", "b"]);
        let s = server.lock();
        assert_eq!(c.save_answered_to_the_last_taker(&s, "b", 100), Ok(()));
        fails_with("(b)", c.save_answered_to_the_last_taker(&s, "a", 200));
        // Refused, the save is not remembered as stored.
        assert_eq!(c.start_above_every_stored_reservation("c", 101), Ok(()));
    }

    #[test]
    fn issuing_or_storing_after_another_writer_fails_c() {
        let c = Checks::default();
        let server = taken_by(&["a", "b"]);
        let s = server.lock();
        // "a" took the worker ID when the state had no write; "b" wrote the second.
        fails_with("(c)", c.no_issue_after_another_writer(&s, "a", 0, 5, false));
        assert_eq!(c.no_issue_after_another_writer(&s, "a", 0, 5, true), Ok(()));
        assert_eq!(
            c.no_issue_after_another_writer(&s, "b", 1, 5, false),
            Ok(())
        );
        fails_with(
            "(c)",
            c.no_store_after_another_writer(&s, "a", 0, "a reservation"),
        );
        assert_eq!(
            c.no_store_after_another_writer(&s, "b", 1, "a reservation"),
            Ok(())
        );
    }

    #[test]
    fn moved_over_the_processs_own_write_fails_d() {
        let c = Checks::default();
        let server = taken_by(&["a", "b"]);
        let s = server.lock();
        assert_eq!(
            c.moved_only_over_another_write(&s, "a", 0, false, "moved"),
            Ok(())
        );
        // "b" wrote the newest version, nobody else since it took the worker ID.
        fails_with(
            "(d)",
            c.moved_only_over_another_write(&s, "b", 1, false, "moved"),
        );
        assert_eq!(
            c.moved_only_over_another_write(&s, "b", 1, true, "moved"),
            Ok(())
        );
    }

    #[test]
    fn issuing_while_lost_fails_e_and_at_the_deadline_fails_f() {
        let c = Checks::default();
        assert_eq!(c.nothing_issued_while_lost("a", 5, false), Ok(()));
        fails_with("(e)", c.nothing_issued_while_lost("a", 5, true));
        assert_eq!(
            c.nothing_issued_past_the_deadline("a", 5, T0 - 1, T0),
            Ok(())
        );
        fails_with("(f)", c.nothing_issued_past_the_deadline("a", 5, T0, T0));
        fails_with(
            "(f)",
            c.nothing_issued_past_the_deadline("a", 5, T0 + MS, T0),
        );
    }
}
