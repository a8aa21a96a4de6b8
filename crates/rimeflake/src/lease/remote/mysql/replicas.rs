//! MySQL and MariaDB replicas (see the `replication` module of the remote leases): what the
//! server says of itself, the namespace's settings, and the check that every lease and state
//! write was acknowledged by the replicas the namespace requires.
//!
//! Replicas count only through semi-synchronous replication waiting `AFTER_SYNC`: a commit is
//! answered only once a replica has its binary log events, and no other session sees it before
//! (with `AFTER_COMMIT` another client could read, and build on, a lease a failover then
//! loses). A primary that waited longer than `rpl_semi_sync_master_timeout` for a replica
//! answers the commit anyway and switches to asynchronous replication (its status `OFF`):
//! so a write is taken as acknowledged only where the status is still `ON` after it. When it
//! comes back `ON`, a replica caught up with the whole binary log, the write included.
//!
//! Identity and lineage are one: MariaDB's GTID domain and server ID (`mariadb:0-1`), MySQL's
//! server UUID (`mysql:<uuid>`); a promoted replica names its former primary as its parent by
//! the GTIDs it applied as a replica (MariaDB's `gtid_slave_pos`, MySQL's `gtid_executed`),
//! where they name one other server of its domain. A restart keeps them; a restore into the
//! same server does too, which `rimeflake state restored` is for.

use super::sql::{self, bind, Val};
use super::wire::{Answer, Done, Fail, Wire};
use super::{cell, MyConn};
use crate::error::{Error, ErrorKind, Result};
use crate::lease::remote::net::Deadline;
use crate::lease::remote::replication::{plain, Stored, StoredSettings};
use crate::lease::remote::ServerView;

/// Semi-synchronous replication as the primary has it now.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct SemiSync {
    enabled: bool,
    after_sync: bool,
    /// Switched on now: not fallen back to asynchronous after a timeout.
    on: bool,
    /// Replicas connected semi-synchronously.
    clients: u32,
    /// Acknowledgements each commit waits for (MySQL's `wait_for_replica_count`; MariaDB
    /// waits for one).
    wait_for: u32,
}

impl SemiSync {
    /// From `SHOW GLOBAL VARIABLES` and `SHOW GLOBAL STATUS` (`rpl_semi_sync_%`), the primary's
    /// side under either of its names; a server without it (MySQL without the plugin) has none.
    fn read(variables: &Answer, status: &Answer) -> SemiSync {
        let mut s = SemiSync {
            wait_for: 1,
            ..SemiSync::default()
        };
        for row in variables.rows.iter().chain(&status.rows) {
            let (Some(Some(name)), Some(Some(value))) = (row.first(), row.get(1)) else {
                continue;
            };
            let name = name.to_ascii_lowercase();
            let Some(what) = name
                .strip_prefix("rpl_semi_sync_master_")
                .or_else(|| name.strip_prefix("rpl_semi_sync_source_"))
            else {
                continue;
            };
            let on = value.eq_ignore_ascii_case("ON") || value == "1";
            match what {
                "enabled" => s.enabled = on,
                "wait_point" => s.after_sync = value.eq_ignore_ascii_case("AFTER_SYNC"),
                "wait_for_slave_count" | "wait_for_replica_count" => {
                    s.wait_for = value.parse().unwrap_or(1)
                }
                "status" => s.on = on,
                "clients" => s.clients = value.parse().unwrap_or(0),
                _ => {}
            }
        }
        s
    }

    /// Replicas that have every commit before it is answered.
    pub(super) fn acknowledging(&self) -> u32 {
        if self.enabled && self.after_sync && self.on {
            self.clients.min(self.wait_for)
        } else {
            0
        }
    }
}

/// Semi-synchronous replication now, in two statements on `w`.
fn semi_sync(w: &mut Wire, d: Deadline) -> Done<SemiSync> {
    let variables = w.query(sql::SEMI_SYNC_VARIABLES, d)?;
    let status = w.query(sql::SEMI_SYNC_STATUS, d)?;
    Ok(SemiSync::read(&variables, &status))
}

/// The one other server of `domain` that GTIDs name, if one: `gtids` are MariaDB's
/// (`domain-server-sequence`) or MySQL's (`uuid:ranges`; `domain` empty).
fn former_primary(gtids: &str, domain: &str, own: &str) -> Option<String> {
    let mut others: Vec<String> = gtids
        .split(',')
        .filter_map(|g| {
            let g = g.trim();
            if domain.is_empty() {
                return Some(g.split(':').next()?.to_ascii_lowercase());
            }
            let mut parts = g.split('-');
            (parts.next()? == domain).then_some(())?;
            Some(format!("{domain}-{}", parts.next()?))
        })
        .filter(|s| !s.is_empty() && s != own)
        .collect();
    others.sort();
    others.dedup();
    match &others[..] {
        [one] => Some(plain(one)),
        _ => None,
    }
}

impl MyConn {
    /// Whether the server is MariaDB (its version says so), not MySQL.
    fn mariadb(w: &Wire) -> bool {
        w.version.contains("MariaDB")
    }

    /// [`Conn::server`](super::Conn::server): refuses a read-only server (a replica, as
    /// operators set them); names the server and its former primary; counts the replicas that
    /// acknowledge every commit.
    pub(super) fn server_view(&mut self) -> Result<ServerView> {
        let (view, semi) = self.call("look at the server", |w, d| {
            let maria = MyConn::mariadb(w);
            let a = w.query(
                if maria {
                    sql::VIEW_MARIADB
                } else {
                    sql::VIEW_MYSQL
                },
                d,
            )?;
            let at = |c| cell(&a, 0, c).unwrap_or_default();
            let read_only = if maria { at(2) } else { at(1) };
            if read_only == "1" {
                return Err(Fail::Protocol(format!(
                    "it is read-only ({}): a replica? Leases and states are written to the \
                     primary only; give the primary's address, or a virtual IP that follows it",
                    if maria {
                        "read_only"
                    } else {
                        "read_only or super_read_only"
                    }
                )));
            }
            let (name, parent) = if maria {
                let (server, domain) = (plain(&at(0)), plain(&at(1)));
                let own = format!("{domain}-{server}");
                let parent = former_primary(&at(3), &domain, &own);
                (
                    format!("mariadb:{own}"),
                    parent.map(|p| format!("mariadb:{p}")),
                )
            } else {
                let own = plain(&at(0)).to_ascii_lowercase();
                let parent = former_primary(&at(2), "", &own);
                (format!("mysql:{own}"), parent.map(|p| format!("mysql:{p}")))
            };
            let semi = semi_sync(w, d)?;
            Ok((
                ServerView {
                    identity: name.clone(),
                    lineage: name,
                    parent,
                    replicas: semi.acknowledging(),
                },
                semi,
            ))
        })?;
        self.wait_for = Some(semi.wait_for);
        Ok(view)
    }
}

impl StoredSettings for MyConn {
    /// In one transaction that locks the namespace's row.
    fn change_settings(
        &mut self,
        what: &str,
        namespace: &str,
        change: &dyn Fn(Stored) -> Stored,
    ) -> Result<Option<Stored>> {
        let lock = bind(sql::LOCK_SETTINGS, &[Val::Text(namespace)]);
        self.call(what, |w, d| {
            w.query(sql::BEGIN, d)?;
            let a = w.query(&lock, d)?;
            if a.rows.is_empty() {
                w.query(sql::COMMIT, d)?;
                return Ok(None);
            }
            let corrupt = || {
                Fail::Protocol(format!(
                    "the settings of namespace {namespace} are corrupt: {:?}",
                    a.rows[0]
                ))
            };
            let number = |c: usize| -> Done<Option<u64>> {
                cell(&a, 0, c)
                    .map(|t| t.parse().map_err(|_| corrupt()))
                    .transpose()
            };
            let stored = Stored {
                max_drift_ms: number(1)?,
                replicas: number(2)?.unwrap_or(0).try_into().map_err(|_| corrupt())?,
                epoch: number(3)?.unwrap_or(0),
                lineage: cell(&a, 0, 4),
            };
            // A settings row has `replicas` (NOT NULL); the join gives none without one.
            let exists = cell(&a, 0, 2).is_some();
            let next = change(stored.clone());
            if exists && next == stored {
                w.query(sql::COMMIT, d)?;
                return Ok(Some(next));
            }
            let store = bind(
                sql::STORE_SETTINGS,
                &[
                    Val::Text(namespace),
                    next.max_drift_ms.map_or(Val::Null, Val::Num),
                    Val::Num(u64::from(next.replicas)),
                    Val::Num(next.epoch),
                    next.lineage.as_deref().map_or(Val::Null, Val::Text),
                ],
            );
            w.query(&store, d)?;
            w.query(sql::COMMIT, d)?;
            Ok(Some(next))
        })
    }

    /// After a lease or state write: an error unless `required` replicas have it
    /// (semi-synchronous replication still on, and waiting for as many).
    fn acknowledged(&mut self, doing: &str, required: u32) -> Result<()> {
        if required == 0 {
            return Ok(());
        }
        let known = self.wait_for;
        let semi = self.call(doing, |w, d| match known {
            // The count each commit waits for changes only by an operator's hand: the one
            // read at the last look at the server, and the status now.
            Some(wait_for) => {
                let status = w.query(sql::SEMI_SYNC_STATUS, d)?;
                let mut s = SemiSync::read(&Answer::default(), &status);
                s.wait_for = wait_for;
                Ok((s.on, s.clients.min(wait_for)))
            }
            None => semi_sync(w, d).map(|s| (s.on && s.enabled, s.acknowledging())),
        })?;
        let (on, acks) = semi;
        if on && acks >= required {
            return Ok(());
        }
        Err(Error::new(
            ErrorKind::Lease,
            format!(
                "MySQL at {}: {doing}: its namespace requires every lease and state write to be \
                 acknowledged by {required} replica(s) through semi-synchronous replication \
                 (AFTER_SYNC), and {}, so it counts as failed (a replica is down or behind, or \
                 this is an old primary cut off from its replicas); it goes on once they \
                 acknowledge writes again, or see `rimeflake state replicas` if a replica is \
                 gone for good",
                self.shown,
                if on {
                    format!("{acks} acknowledge commits now")
                } else {
                    "semi-synchronous replication is off (it fell back to asynchronous, or was \
                     never on)"
                        .to_string()
                }
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(rows: &[(&str, &str)]) -> Answer {
        Answer {
            rows: rows
                .iter()
                .map(|(n, v)| vec![Some(n.to_string()), Some(v.to_string())])
                .collect(),
            affected: 0,
        }
    }

    #[test]
    fn semi_sync_counts_only_after_sync_and_switched_on() {
        let vars = answer(&[
            ("rpl_semi_sync_master_enabled", "ON"),
            ("rpl_semi_sync_master_wait_point", "AFTER_SYNC"),
            ("rpl_semi_sync_slave_enabled", "OFF"),
        ]);
        let on = answer(&[
            ("Rpl_semi_sync_master_status", "ON"),
            ("Rpl_semi_sync_master_clients", "2"),
        ]);
        assert_eq!(SemiSync::read(&vars, &on).acknowledging(), 1);
        let off = answer(&[
            ("Rpl_semi_sync_master_status", "OFF"),
            ("Rpl_semi_sync_master_clients", "2"),
        ]);
        assert_eq!(SemiSync::read(&vars, &off).acknowledging(), 0);
        let after_commit = answer(&[
            ("rpl_semi_sync_source_enabled", "ON"),
            ("rpl_semi_sync_source_wait_point", "AFTER_COMMIT"),
        ]);
        assert_eq!(SemiSync::read(&after_commit, &on).acknowledging(), 0);
        // MySQL's source names, waiting for two.
        let mysql = answer(&[
            ("rpl_semi_sync_source_enabled", "ON"),
            ("rpl_semi_sync_source_wait_point", "AFTER_SYNC"),
            ("rpl_semi_sync_source_wait_for_replica_count", "2"),
        ]);
        let three = answer(&[
            ("Rpl_semi_sync_source_status", "ON"),
            ("Rpl_semi_sync_source_clients", "3"),
        ]);
        assert_eq!(SemiSync::read(&mysql, &three).acknowledging(), 2);
        assert_eq!(
            SemiSync::read(&Answer::default(), &Answer::default()).acknowledging(),
            0
        );
    }

    #[test]
    fn the_former_primary_is_the_one_other_server_the_gtids_name() {
        assert_eq!(former_primary("0-1-57", "0", "0-2"), Some("0-1".into()));
        assert_eq!(former_primary("", "0", "0-2"), None);
        assert_eq!(former_primary("0-2-9", "0", "0-2"), None);
        assert_eq!(former_primary("0-1-5,0-3-7", "0", "0-2"), None);
        assert_eq!(
            former_primary("1-1-5,0-3-7", "0", "0-2"),
            Some("0-3".into())
        );
        // As MySQL prints it: a line per source.
        let gtids = [
            "3E11FA47-71CA-11E1-9E33-C80AA9429562:1-5,",
            "aaaaaaaa-0000-0000-0000-000000000001:1-3",
        ]
        .join(&'\n'.to_string());
        assert_eq!(
            former_primary(&gtids, "", "aaaaaaaa-0000-0000-0000-000000000001"),
            Some("3e11fa47-71ca-11e1-9e33-c80aa9429562".into())
        );
    }
}
