//! What a start on a server says when the clock keeps it from starting: how far this host's
//! clock is from the server's, as measured when the lease was taken, and which host's clock to
//! fix (this one's, or the last holder's, whose reservation lies ahead of the server's clock).

/// What a start knows of the clocks around it.
#[derive(Clone, Debug, Default)]
pub(super) struct Skew {
    /// The server's clock minus this host's at acquire, in ms; `None` without a server.
    pub(super) server_ms: Option<i64>,
    /// The server, as messages show it.
    pub(super) server: String,
    /// The host of the last holder of the worker ID (from its token), when its state says.
    pub(super) last_holder: Option<String>,
}

/// Below this, a skew is not what keeps a start from its clock (the skew warning's threshold).
const NOTICED_MS: u64 = 1_000;

impl Skew {
    /// What to add to an error that says the clock is `behind_ms` short of where the start must
    /// begin: the skew measured, and the host to fix.
    pub(super) fn hint(&self, behind_ms: u64) -> String {
        let Some(skew) = self.server_ms else {
            return String::new();
        };
        let this = skew.unsigned_abs();
        if skew > 0 && this >= NOTICED_MS {
            return format!(
                "; this host's clock is {this} ms behind the clock of {} (measured when the \
                 lease was taken): fix this host's time synchronisation, or start it on a host \
                 whose clock agrees",
                self.server
            );
        }
        let holder = self
            .last_holder
            .as_deref()
            .map_or("the last holder's host".to_string(), |h| {
                format!("host {h}, its last holder,")
            });
        let ahead = behind_ms.saturating_sub(this);
        if ahead >= NOTICED_MS {
            return format!(
                "; this host's clock agrees with {} within {this} ms, so the reservation was \
                 stored by a clock about {ahead} ms ahead of the server's: fix the time \
                 synchronisation of {holder} (this start goes on once its clock reaches it)",
                self.server
            );
        }
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hint_names_the_skew_and_the_host_to_fix() {
        let mut s = Skew {
            server_ms: Some(30_000),
            server: "redis://h:6379/0".into(),
            last_holder: Some("web-1".into()),
        };
        let h = s.hint(31_000);
        assert!(
            h.contains("this host's clock is 30000 ms behind the clock of redis://h:6379/0"),
            "{h}"
        );
        s.server_ms = Some(-20);
        let h = s.hint(31_000);
        assert!(
            h.contains("about 30980 ms ahead") && h.contains("host web-1"),
            "{h}"
        );
        s.server_ms = None;
        assert_eq!(s.hint(31_000), "");
    }
}
