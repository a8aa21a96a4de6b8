//! Redis replicas: what the server says of itself (`INFO`), the namespace's settings, and the
//! `WAIT` every lease and state write ends with while the namespace requires acknowledgements
//! (see the `replication` module of the remote leases).

use super::connection::pipelined;
use super::RedisConn;
use crate::error::{Error, ErrorKind, Result};
use crate::lease::remote::replication::plain;
use crate::lease::remote::{Proposal, ServerView, Settings};
use std::time::Duration;

/// How long a `WAIT` may take: half the connection's timeout, so that its answer comes back
/// within it (and the connection stays in step).
pub(super) fn wait_ms(timeout: Duration) -> u64 {
    (timeout.as_millis() as u64 / 2).max(1)
}

/// The key of a namespace's settings, a hash: `max_drift_ms`, `replicas`, `lineage`, `epoch`. In the slot of the namespace's other keys, so lost with them.
pub(super) fn settings_key(namespace: &str) -> String {
    format!("{}{namespace}}}:settings", super::keys::opening(namespace))
}

/// The value of `name:` in an `INFO` reply.
fn field<'a>(info: &'a str, name: &str) -> Option<&'a str> {
    info.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
        .map(str::trim)
}

/// The replicas an `INFO replication` reply lists as online.
fn online(info: &str) -> u32 {
    info.lines()
        .filter(|l| l.starts_with("slave") && l.contains("state=online"))
        .count() as u32
}

impl RedisConn {
    /// The error of a write that fewer replicas than required acknowledged in time.
    pub(super) fn unacknowledged(&self, doing: &str, acked: u32, acks: u32, ms: u64) -> Error {
        Error::new(
            ErrorKind::Lease,
            format!(
                "Redis at {}: {doing}: {acked} of the {acks} replicas its namespace requires \
                 acknowledged it within {ms} ms, so it counts as failed (a replica is down or \
                 behind, or this is an old primary cut off from its replicas); it goes on once \
                 they acknowledge writes again, or see `rimeflake state replicas` if a replica \
                 is gone for good",
                self.url
            ),
        )
    }

    /// [`Conn::server`](super::Conn::server): `INFO replication` and `INFO server` in one round
    /// trip. A server that refuses `INFO` (renamed or forbidden on a managed service) is taken
    /// as it was before replicas were looked at: one whose identity never changes, with no
    /// replicas to wait for.
    pub(super) fn server_view(&mut self) -> Result<ServerView> {
        let read = self.run("read INFO", |c| {
            let mut pipe = redis::pipe();
            pipe.cmd("INFO").arg("replication");
            pipe.cmd("INFO").arg("server");
            match pipelined(c, &pipe, 2) {
                Ok(replies) => {
                    let text = |i: usize| -> redis::RedisResult<String> {
                        redis::from_redis_value(&replies[i])
                    };
                    Ok(Some((text(0)?, text(1)?)))
                }
                Err(e) if super::errors::is_refusal(&e) => Ok(None),
                Err(e) => Err(e),
            }
        })?;
        let Some((replication, server)) = read else {
            return Ok(ServerView {
                identity: "redis:unknown".into(),
                lineage: "unknown".into(),
                parent: None,
                replicas: 0,
            });
        };
        if field(&replication, "role") != Some("master") {
            return Err(Error::new(
                ErrorKind::Lease,
                format!(
                    "Redis at {} is a replica (role {}): leases and states are written to the \
                     primary only; give the primary's address, a virtual IP that follows it, or \
                     redis+sentinel://",
                    self.url,
                    field(&replication, "role").map_or_else(|| "unknown".into(), plain)
                ),
            ));
        }
        let replid = field(&replication, "master_replid").map_or_else(String::new, plain);
        let parent = field(&replication, "master_replid2")
            .map(plain)
            .filter(|p| !p.is_empty() && p.chars().any(|c| c != '0'));
        let run_id = field(&server, "run_id").map_or_else(String::new, plain);
        Ok(ServerView {
            identity: format!("redis:{replid}:{run_id}"),
            lineage: replid,
            parent,
            replicas: online(&replication),
        })
    }

    /// [`Conn::settle_settings`](super::Conn::settle_settings). It waits for no replica itself:
    /// the next lease write on this connection waits for what the settings require, and covers
    /// it too (`WAIT` counts every earlier write of the connection).
    pub(super) fn settle(&mut self, namespace: &str, ours: &Proposal<'_>) -> Result<Settings> {
        let key = settings_key(namespace);
        let args = [
            ours.max_drift_ms.to_string(),
            ours.view.lineage.clone(),
            ours.view.parent.clone().unwrap_or_default(),
            ours.view.replicas.to_string(),
        ];
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let got: Vec<Option<String>> = self.eval(
            "settle the namespace's settings",
            |s| &s.settle_settings,
            &[&key],
            &args,
            None,
            0,
        )?;
        let number = |i: usize| -> Result<u64> {
            got.get(i)
                .and_then(|v| v.as_deref())
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| {
                    Error::new(
                        ErrorKind::State,
                        format!(
                            "Redis at {}: the settings of namespace {namespace} ({key}) are \
                             corrupt: {got:?}",
                            self.url
                        ),
                    )
                })
        };
        Ok(Settings {
            max_drift_ms: number(0)?,
            replicas: number(1)? as u32,
            epoch: number(2)?,
        })
    }

    /// [`Conn::new_epoch`](super::Conn::new_epoch), waiting for the replicas the namespace
    /// requires to have it.
    pub(super) fn raise_epoch(&mut self, namespace: &str) -> Result<u64> {
        let key = settings_key(namespace);
        let wait = wait_ms(self.timeout);
        let (epoch, required): (u64, Option<u32>) = self.run("raise the restore epoch", |c| {
            let mut pipe = redis::pipe();
            pipe.cmd("HINCRBY").arg(&key).arg("epoch").arg(1);
            pipe.cmd("HGET").arg(&key).arg("replicas");
            let r = pipelined(c, &pipe, 2)?;
            let required: Option<String> = redis::from_redis_value(&r[1])?;
            Ok((
                redis::from_redis_value(&r[0])?,
                required.and_then(|n| n.parse().ok()),
            ))
        })?;
        let acks = required.unwrap_or(0);
        if acks > 0 {
            let acked: u32 = self.run("wait for the replicas", |c| {
                redis::cmd("WAIT").arg(acks).arg(wait).query(c)
            })?;
            if acked < acks {
                return Err(self.unacknowledged("raise the restore epoch", acked, acks, wait));
            }
        }
        Ok(epoch)
    }
}
