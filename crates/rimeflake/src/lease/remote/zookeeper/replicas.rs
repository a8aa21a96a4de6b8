//! ZooKeeper's replication (see the `replication` module of the remote leases): what the
//! ensemble says of itself, and the namespace's settings.
//!
//! An ensemble replicates every write before it answers it: the leader commits a write only
//! once a quorum (a majority of its voting members) has logged it, and a new leader is elected
//! only by a quorum, which always holds one member that has every committed write. So a write
//! answered is on `voters / 2` followers besides the leader, and no failover inside the ensemble
//! loses it; a member cut off from the quorum (a split) answers nothing. The replicas a
//! namespace requires are therefore met by the quorum alone: the view counts `voters / 2` of
//! them (none for a standalone server), and a write goes ahead only while the namespace
//! requires no more than that. There is no replica to promote by hand, so no lineage has a
//! parent.
//!
//! Identity and lineage are one: the transaction that made the chroot's node and when
//! (`zk:<czxid>-<ctime>`). A restart of the ensemble keeps them; a new or replaced ensemble, or
//! the node deleted and made again, shows another; a restore of the ensemble's data directory
//! keeps them, which `rimeflake state restored` is for.

use super::wire::{Op, Reply, ZkFail, BAD_VERSION, NODE_EXISTS, NO_NODE};
use super::{make_all, one, unexpected, ZkConn};
use crate::error::{Error, ErrorKind, Result};
use crate::lease::remote::replication::{Stored, StoredSettings};
use crate::lease::remote::ServerView;

/// The node that holds the ensemble's membership (ZooKeeper 3.5 and later; readable by all).
const CONFIG: &str = "/zookeeper/config";

/// The followers that log every write before it is answered, by the ensemble's membership
/// (`server.N=host:ports[:role];client` lines): half its voting members, rounded down. A
/// standalone server has no membership there.
fn quorum_followers(config: &[u8]) -> u32 {
    let text = String::from_utf8_lossy(config);
    let voters = text
        .lines()
        .filter(|l| l.starts_with("server."))
        .filter(|l| {
            let ports = l.split(';').next().unwrap_or("");
            !ports.ends_with(":observer")
        })
        .count() as u32;
    voters / 2
}

impl ZkConn {
    /// [`Conn::server`](super::Conn::server): the chroot's node (made first if missing) names
    /// the ensemble; its membership counts the followers every write waits for.
    pub(super) fn server_view(&mut self) -> Result<ServerView> {
        let root = self.root.clone();
        let parents = self.parents_of(&root);
        let (stat, followers) = self.with(None, "look at the ensemble", |s, ens, d| {
            for _ in 0..2 {
                let ops = [Op::Sync(&root), Op::Exists(&root), Op::GetData(CONFIG)];
                let replies = s.call(ens, &ops, d)?;
                let followers = match &replies[2] {
                    Reply::Data(config, _) => quorum_followers(config),
                    Reply::Failed { code: NO_NODE, .. } => 0,
                    other => return Err(unexpected(other.clone())),
                };
                match &replies[1] {
                    Reply::Stat(stat) => return Ok((*stat, followers)),
                    Reply::Failed { code: NO_NODE, .. } => make_all(s, ens, &parents, d)?,
                    other => return Err(unexpected(other.clone())),
                }
            }
            Err(ZkFail::Code(NO_NODE))
        })?;
        self.quorum = Some(followers);
        let name = format!("zk:{:x}-{}", stat.czxid, stat.ctime);
        Ok(ServerView {
            identity: name.clone(),
            lineage: name,
            parent: None,
            replicas: followers,
        })
    }
}

impl StoredSettings for ZkConn {
    /// Changes the namespace's settings (the record's child `settings`, `Stored::encode`'s
    /// text) by a write over the version read; `None` when the namespace has no record.
    fn change_settings(
        &mut self,
        what: &str,
        namespace: &str,
        change: &dyn Fn(Stored) -> Stored,
    ) -> Result<Option<Stored>> {
        let record = self.ns_path(namespace);
        let node = format!("{record}/settings");
        self.with(None, what, |s, ens, d| {
            // Another generator's write between the read and ours fails ours: read again.
            for _ in 0..16 {
                let ops = [Op::Sync(&record), Op::Exists(&record), Op::GetData(&node)];
                let replies = s.call(ens, &ops, d)?;
                match &replies[1] {
                    Reply::Stat(_) => {}
                    Reply::Failed { code: NO_NODE, .. } => return Ok(None),
                    other => return Err(unexpected(other.clone())),
                }
                let (stored, version) = match &replies[2] {
                    Reply::Data(data, stat) => {
                        let text = String::from_utf8_lossy(data);
                        let stored = Stored::decode(&text).ok_or_else(|| {
                            ZkFail::Protocol(format!(
                                "the settings of namespace {namespace} ({node}) are corrupt: \
                                 {text:?}"
                            ))
                        })?;
                        (stored, Some(stat.version))
                    }
                    Reply::Failed { code: NO_NODE, .. } => (Stored::default(), None),
                    other => return Err(unexpected(other.clone())),
                };
                let next = change(stored.clone());
                let text = next.encode();
                let write = match version {
                    // Nothing to change (the common case: many generators starting at once):
                    // only that the node is still as read, which other such checks never fail.
                    Some(version) if next == stored => Op::Multi(vec![Op::Check {
                        path: &node,
                        version,
                    }]),
                    Some(version) => Op::SetData {
                        path: &node,
                        data: text.as_bytes(),
                        version,
                    },
                    None => Op::Create {
                        path: &node,
                        data: text.as_bytes(),
                        ephemeral: false,
                    },
                };
                match one(s.call(ens, &[write], d)?)? {
                    Reply::Done | Reply::Stat(_) => return Ok(Some(next)),
                    Reply::Failed {
                        code: BAD_VERSION | NODE_EXISTS,
                        ..
                    } => continue,
                    // The record went in between.
                    Reply::Failed { code: NO_NODE, .. } => return Ok(None),
                    other => return Err(unexpected(other)),
                }
            }
            Err(ZkFail::Protocol(
                "the namespace's settings kept changing while they were written".into(),
            ))
        })
    }

    /// Before (or after) a lease or state write: an error unless the ensemble's quorum gives
    /// `required` replicas (it always gives what the namespace settled on, unless an operator
    /// required more, or the ensemble shrank).
    fn acknowledged(&mut self, doing: &str, required: u32) -> Result<()> {
        if required == 0 {
            return Ok(());
        }
        let followers = match self.quorum {
            Some(f) => f,
            None => self.server_view()?.replicas,
        };
        if followers >= required {
            return Ok(());
        }
        Err(Error::new(
            ErrorKind::Lease,
            format!(
                "ZooKeeper at {}: {doing}: its namespace requires every lease and state write to \
                 be acknowledged by {required} replica(s), and the ensemble's quorum has \
                 {followers} follower(s) log each write before it is answered ({} voting \
                 member(s) or fewer); it goes on once the ensemble is that large again, or see \
                 `rimeflake state replicas`",
                self.shown,
                followers * 2 + 1
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::quorum_followers;

    #[test]
    fn the_quorum_counts_half_the_voters() {
        assert_eq!(quorum_followers(b""), 0);
        let lines = |l: &[&str]| l.join(&'\n'.to_string());
        let three = lines(&[
            "server.1=127.0.0.1:2888:3888:participant;0.0.0.0:2181",
            "server.2=127.0.0.1:2889:3889:participant;0.0.0.0:2182",
            "server.3=127.0.0.1:2890:3890:participant;0.0.0.0:2183",
            "version=100000000",
        ]);
        assert_eq!(quorum_followers(three.as_bytes()), 1);
        let observer = "server.4=127.0.0.1:2891:3891:observer;2184";
        assert_eq!(quorum_followers(lines(&[&three, observer]).as_bytes()), 1);
        let five = lines(&[
            "server.1=a:1:2",
            "server.2=b:1:2",
            "server.3=c:1:2",
            "server.4=d:1:2",
            "server.5=e:1:2",
        ]);
        assert_eq!(quorum_followers(five.as_bytes()), 2);
    }
}
