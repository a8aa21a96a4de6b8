//! [`Conn`] on Redis, through the `redis` crate's blocking client.
//!
//! Keys (the namespace is used verbatim: the core already keeps `/`, newlines and NUL out of
//! namespaces and bounds their length, so nothing is escaped):
//!
//! - `rimeflake:{<ns>:<id>}:lease`: the lease, a string holding the holder's token, with an
//!   expiry the server sets (`PX`), so the server's clock alone decides when it ends;
//! - `rimeflake:{<ns>:<id>}:state`: the state, a hash with fields `v` (the version, decimal) and
//!   `s` (the state's text, [`encode_state`](super::encode_state)), without expiry;
//! - `rimeflake:{<ns>}:layout`: the namespace's layout record, a string without expiry;
//! - `rimeflake:{<ns>}:workers`: a set of the worker IDs that ever had a lease or a state, so
//!   [`Conn::workers`] needs neither `KEYS` nor `SCAN`;
//! - `rimeflake:{<ns>}:used`: the namespace's marks ([`Conn::mark_used`]), a hash with the field
//!   `created` (when the hash was made, in Unix ms by the server's clock) and a field per worker
//!   ID ever leased, holding the largest reach (ms) its holders declared. A hash of its own
//!   rather than the set of workers, which older versions still running beside this one add
//!   to with `SADD`; in the slot of the namespace's other keys, so lost with them.
//!
//! [`Conn::namespaces`] (`state show` of a whole server) finds the namespaces by their layout
//! and workers keys with `SCAN`, a bounded number of keys per round trip and a bounded number
//! of round trips: never `KEYS`, which would hold a large server for the whole keyspace.
//!
//! The braces are a cluster hash tag: a worker's lease and state live in one slot, so one script
//! can check the one and write the other. Both keys begin with the same text up to the first
//! `}`, so they share a slot even when a namespace holds braces itself; a namespace that starts
//! with `}` (whose tag would be empty) has keys that begin `rimeflake:{/}{<ns>`, all in the
//! slot of the tag `/`.
//!
//! Every conditional step runs as a Lua script, atomic on the server. Scripts compare tokens and
//! versions as strings: Lua's numbers are doubles and would round versions above 2^53.
//!
//! Here: the connection ([`RedisConn`]), the running of a script, and [`Conn`] on them. Beside
//! it: the keys' names (`redis/keys.rs`), the scripts (`redis/scripts.rs`), connecting
//! (`redis/connection.rs`, through Sentinels in `connection/sentinel.rs`), Redis's errors in
//! words (`redis/errors.rs`) and its replicas (`redis/replicas.rs`).

use super::{decode_state, Conn, RemoteWorker, Replicas, Saved, Taken, Versioned};
use super::{Proposal, ServerView, Settings};
use crate::backend::sentinel::SentinelUrl;
use crate::backend::tls::Tls;
use crate::error::{Error, ErrorKind, Result};
use connection::{pipelined, Pending, Resolver};
use errors::{is_refusal, plain};
use keys::{layout_key, namespace_of, state_key, used_key, NAMESPACE_KEYS};
/// The keys the generator's tests look at on a real server.
pub(crate) use keys::{lease_key, workers_key};
use redis::{Connection, RedisResult, Value};
use scripts::{Lua, Scripts};
use std::sync::Arc;
use std::time::Duration;

mod connection;
mod errors;
mod keys;
mod replicas;
mod scripts;

/// A connection to one Redis server, reopened by the next call after it broke.
pub(crate) struct RedisConn {
    client: redis::Client,
    /// `None` after an I/O error: the next call connects again.
    conn: Option<Connection>,
    /// The URL without its password, for messages.
    url: String,
    /// The password, to scrub from any text that reaches a message.
    password: Option<String>,
    /// The longest a connect, and each read or write, may take.
    timeout: Duration,
    /// TLS (`rediss://`) or not, for the words of a failed handshake.
    tls: Tls,
    scripts: Scripts,
    /// How host names become addresses (the system's resolver; another in tests).
    resolver: Resolver,
    /// A connect its caller stopped waiting for (a resolver that did not answer): the next
    /// call waits for it again rather than starting a second one beside it.
    pending: Option<Pending>,
    /// With a `redis+sentinel://` URL: the Sentinels, asked for the primary at each connect.
    sentinels: Option<Arc<SentinelUrl>>,
    /// The replica acknowledgements every lease write and state write waits for.
    replicas: Arc<Replicas>,
}

/// Workers read per round trip by [`Conn::workers`]: bounds the size of one reply.
const WORKERS_PER_BATCH: usize = 500;

/// Keys `SCAN` looks at per round trip in [`Conn::namespaces`] (a hint to the server).
const SCAN_COUNT: usize = 5_000;

/// Round trips [`Conn::namespaces`] may make: with [`SCAN_COUNT`], ten million keys.
const SCAN_ROUNDS: usize = 2_000;

/// Leases looked at per round trip by [`Conn::acquire_first`] when its first try is refused.
const PEEK_PER_BATCH: usize = 256;

impl RedisConn {
    /// Runs a script: `EVALSHA`, or `EVAL` when the server does not have it cached. With
    /// `index`, first adds the worker ID to the namespace's set in the same round trip (a
    /// separate command: the set lives in another cluster slot than the worker's keys). With
    /// `acks` above 0, then `WAIT`s in the same round trip for that many replicas to have every
    /// write of this connection so far: fewer in time, and the call fails (its writes may have
    /// landed on the primary, as a call whose answer was lost may have).
    fn eval<T: redis::FromRedisValue>(
        &mut self,
        doing: &str,
        which: fn(&Scripts) -> &Lua,
        keys: &[&str],
        args: &[&str],
        index: Option<(&str, u64)>,
        acks: u32,
    ) -> Result<T> {
        let lua = which(&self.scripts);
        let (code, hash) = (lua.code, lua.script.get_hash().to_string());
        let wait_ms = replicas::wait_ms(self.timeout);
        let (answer, acked) = self.run(doing, |c| {
            let call = |command: &str, body: &str| {
                let mut cmd = redis::cmd(command);
                cmd.arg(body).arg(keys.len()).arg(keys).arg(args);
                cmd
            };
            let waited = |pipe: &mut redis::Pipeline| {
                if acks > 0 {
                    pipe.cmd("WAIT").arg(acks).arg(wait_ms);
                }
            };
            let mut pipe = redis::pipe();
            if let Some((set, worker_id)) = index {
                pipe.cmd("SADD").arg(set).arg(worker_id);
            }
            pipe.add_command(call("EVALSHA", &hash));
            waited(&mut pipe);
            let mut replies = match pipelined(c, &pipe, pipe.len()) {
                Ok(replies) => replies,
                // The SADD (if any) went through: only the script is sent again. EVAL also
                // caches it for the next EVALSHA.
                Err(e) if e.kind() == redis::ErrorKind::NoScriptError => {
                    let mut again = redis::pipe();
                    again.add_command(call("EVAL", code));
                    waited(&mut again);
                    pipelined(c, &again, again.len())?
                }
                Err(e) => return Err(e),
            };
            let acked: u32 = match acks {
                0 => 0,
                _ => redis::from_owned_redis_value(replies.pop().unwrap_or(Value::Nil))?,
            };
            let answer = replies.pop().unwrap_or(Value::Nil);
            Ok((redis::from_owned_redis_value::<T>(answer)?, acked))
        })?;
        if acked < acks {
            return Err(self.unacknowledged(doing, acked, acks, wait_ms));
        }
        Ok(answer)
    }

    /// Runs `CONFIG GET name`; `None` when the server has no such setting. The reply is a flat
    /// array of names and values (RESP2) or a map (RESP3).
    fn config_get(conn: &mut Connection, name: &str) -> RedisResult<Option<String>> {
        let reply: Value = redis::cmd("CONFIG").arg("GET").arg(name).query(conn)?;
        let text = |v: &Value| redis::from_redis_value::<String>(v).ok();
        let pairs: Vec<(Option<String>, &Value)> = match &reply {
            Value::Array(items) => items
                .chunks(2)
                .filter_map(|p| match p {
                    [k, v] => Some((text(k), v)),
                    _ => None,
                })
                .collect(),
            Value::Map(items) => items.iter().map(|(k, v)| (text(k), v)).collect(),
            _ => Vec::new(),
        };
        Ok(pairs
            .into_iter()
            .find(|(k, _)| k.as_deref().is_some_and(|k| k.eq_ignore_ascii_case(name)))
            .and_then(|(_, v)| text(v)))
    }
}

/// A script's answer to a conditional write.
fn saved(answer: &str, url: &str) -> Result<Saved> {
    match answer {
        "ok" => Ok(Saved::Yes),
        "notholder" => Ok(Saved::NotHolder),
        "moved" => Ok(Saved::Moved),
        other => Err(Error::new(
            ErrorKind::Lease,
            format!(
                "Redis at {url}: unexpected answer {:?} to a save",
                other.chars().take(40).collect::<String>()
            ),
        )),
    }
}

impl Conn for RedisConn {
    fn settle_layout(&mut self, namespace: &str, record: &str) -> Result<String> {
        let key = layout_key(namespace);
        let stored: Option<String> = self.eval(
            "settle the layout",
            |s| &s.settle_layout,
            &[&key],
            &[record],
            None,
            0,
        )?;
        // GET right after SET NX has a value, unless another client deleted it in between.
        stored.ok_or_else(|| {
            Error::new(
                ErrorKind::State,
                format!(
                    "Redis at {}: the layout record of namespace {namespace} vanished as it was \
                     written",
                    self.url
                ),
            )
        })
    }

    fn layout(&mut self, namespace: &str) -> Result<Option<String>> {
        let key = layout_key(namespace);
        self.run("read the layout", |c| {
            redis::cmd("GET").arg(&key).query::<Option<String>>(c)
        })
    }

    fn acquire(
        &mut self,
        namespace: &str,
        worker_id: u64,
        token: &str,
        ttl_ms: u64,
    ) -> Result<bool> {
        // The index before the lease: a lease without its index entry would hide from
        // `workers`, an entry without a lease is only skipped there.
        let index = workers_key(namespace);
        let key = lease_key(namespace, worker_id);
        let ttl = ttl_ms.max(1).to_string();
        let got: i64 = self.eval(
            "acquire",
            |s| &s.acquire,
            &[&key],
            &[token, &ttl],
            Some((&index, worker_id)),
            self.replicas.get(),
        )?;
        Ok(got == 1)
    }

    /// The first candidate is tried at once (a namespace with room takes one round trip). When
    /// it is held, the next candidates' leases are read in one pipelined round trip, and only
    /// one that looked free (or ours) is tried: the script decides, as for every acquire. So a
    /// crowded namespace costs a few round trips, not one per worker ID held. Every key is read
    /// by a command of its own, as a cluster would route it.
    fn acquire_first(
        &mut self,
        namespace: &str,
        candidates: &[u64],
        token: &str,
        ttl_ms: u64,
    ) -> Result<Option<Taken>> {
        let mut rest = candidates;
        while let Some((&worker_id, tail)) = rest.split_first() {
            let sent_boottime_ns = crate::clock::boottime_ns();
            if self.acquire(namespace, worker_id, token, ttl_ms)? {
                return Ok(Some(Taken {
                    worker_id,
                    sent_boottime_ns,
                }));
            }
            let batch = &tail[..tail.len().min(PEEK_PER_BATCH)];
            if batch.is_empty() {
                break;
            }
            let mut pipe = redis::pipe();
            for &id in batch {
                pipe.cmd("GET").arg(lease_key(namespace, id));
            }
            let holders: Vec<Option<String>> = self.run("look for a free worker ID", |c| {
                pipelined(c, &pipe, batch.len())?
                    .into_iter()
                    .map(redis::from_owned_redis_value)
                    .collect()
            })?;
            let free = holders
                .iter()
                .position(|h| h.as_deref().is_none_or(|h| h == token));
            // From the first that looked free; past the batch when none did.
            rest = &tail[free.unwrap_or(batch.len())..];
        }
        Ok(None)
    }

    fn renew(&mut self, namespace: &str, worker_id: u64, token: &str, ttl_ms: u64) -> Result<bool> {
        let key = lease_key(namespace, worker_id);
        let ttl = ttl_ms.max(1).to_string();
        let acks = self.replicas.get();
        let got: i64 = self.eval("renew", |s| &s.renew, &[&key], &[token, &ttl], None, acks)?;
        Ok(got == 1)
    }

    fn release(&mut self, namespace: &str, worker_id: u64, token: &str) -> Result<()> {
        let key = lease_key(namespace, worker_id);
        let _: i64 = self.eval("release", |s| &s.release, &[&key], &[token], None, 0)?;
        Ok(())
    }

    fn load(&mut self, namespace: &str, worker_id: u64) -> Result<Option<Versioned>> {
        let key = state_key(namespace, worker_id);
        let (v, s): (Option<String>, Option<String>) = self.run("load", |c| {
            redis::cmd("HMGET").arg(&key).arg("v").arg("s").query(c)
        })?;
        let corrupt = |what: &str| {
            Error::new(
                ErrorKind::State,
                format!(
                    "Redis at {}: the state of worker ID {worker_id} of namespace {namespace} \
                     ({key}) is corrupt: {what}; see `rimeflake state reset --backend`",
                    self.url
                ),
            )
        };
        match (v, s) {
            (None, None) => Ok(None),
            (Some(v), Some(text)) => {
                let version = v.parse().map_err(|_| {
                    corrupt(&format!(
                        "version {:?} is not a number",
                        v.chars().take(40).collect::<String>()
                    ))
                })?;
                Ok(Some(Versioned { version, text }))
            }
            (None, Some(_)) => Err(corrupt("it has no version")),
            (Some(_), None) => Err(corrupt("it has a version but no state")),
        }
    }

    fn save(
        &mut self,
        namespace: &str,
        worker_id: u64,
        token: &str,
        expected: u64,
        next: &Versioned,
    ) -> Result<Saved> {
        let keys = [
            lease_key(namespace, worker_id),
            state_key(namespace, worker_id),
        ];
        let (expected, version) = (expected.to_string(), next.version.to_string());
        let answer: String = self.eval(
            "save the state",
            |s| &s.save,
            &[&keys[0], &keys[1]],
            &[token, &expected, &version, &next.text],
            None,
            self.replicas.get(),
        )?;
        saved(&answer, &self.url)
    }

    fn reset(
        &mut self,
        namespace: &str,
        worker_id: u64,
        expected: u64,
        next: &Versioned,
    ) -> Result<Saved> {
        // A worker ID reset before it was ever leased must still show in `workers`.
        let index = workers_key(namespace);
        let keys = [
            lease_key(namespace, worker_id),
            state_key(namespace, worker_id),
        ];
        let (expected, version) = (expected.to_string(), next.version.to_string());
        let answer: String = self.eval(
            "reset the state",
            |s| &s.reset,
            &[&keys[0], &keys[1]],
            &[&expected, &version, &next.text],
            Some((&index, worker_id)),
            self.replicas.get(),
        )?;
        saved(&answer, &self.url)
    }

    fn server_time_ms(&mut self) -> Result<u64> {
        let (secs, micros): (u64, u64) =
            self.run("read the clock", |c| redis::cmd("TIME").query(c))?;
        Ok(secs.saturating_mul(1000).saturating_add(micros / 1000))
    }

    fn mark_used(
        &mut self,
        namespace: &str,
        worker_id: u64,
        reach_ms: u64,
    ) -> Result<super::Usage> {
        let key = used_key(namespace);
        let (id, reach) = (worker_id.to_string(), reach_ms.to_string());
        let (age, before): (String, String) = self.eval(
            "mark the worker ID used",
            |s| &s.mark_used,
            &[&key],
            &[&id, &reach],
            None,
            self.replicas.get(),
        )?;
        let number = |text: &str| -> Result<u64> {
            text.parse().map_err(|_| {
                Error::new(
                    ErrorKind::State,
                    format!(
                        "Redis at {}: the marks of namespace {namespace} ({key}) are corrupt: \
                         {:?} is not a number",
                        self.url,
                        text.chars().take(40).collect::<String>()
                    ),
                )
            })
        };
        let before = number(&before)?;
        Ok(super::Usage {
            age_ms: number(&age)?,
            used_before: before > 0,
            reach_ms: before.max(reach_ms),
        })
    }

    fn workers(&mut self, namespace: &str) -> Result<Vec<RemoteWorker>> {
        let index = workers_key(namespace);
        let members: Vec<String> = self.run("list the worker IDs", |c| {
            redis::cmd("SMEMBERS").arg(&index).query(c)
        })?;
        // Only rimeflake writes the index; anything else in it is skipped.
        let mut ids: Vec<u64> = members.iter().filter_map(|m| m.parse().ok()).collect();
        ids.sort_unstable();
        ids.dedup();

        let mut out = Vec::new();
        for batch in ids.chunks(WORKERS_PER_BATCH) {
            // One round trip per batch. Not a transaction: a lease may expire between its GET
            // and its PTTL, which only shows as a holder without an expiry.
            let mut pipe = redis::pipe();
            for &id in batch {
                let lease = lease_key(namespace, id);
                pipe.cmd("GET").arg(&lease);
                pipe.cmd("PTTL").arg(&lease);
                pipe.cmd("HMGET")
                    .arg(state_key(namespace, id))
                    .arg("v")
                    .arg("s");
            }
            let replies = self.run("read the workers", |c| pipelined(c, &pipe, 3 * batch.len()))?;
            for (&worker_id, r) in batch.iter().zip(replies.chunks(3)) {
                let [holder, pttl, state] = r else { continue };
                let holder: Option<String> = redis::from_redis_value(holder).unwrap_or(None);
                let pttl: i64 = redis::from_redis_value(pttl).unwrap_or(-2);
                let (v, s): (Option<String>, Option<String>) =
                    redis::from_redis_value(state).unwrap_or((None, None));
                if holder.is_none() && v.is_none() && s.is_none() {
                    continue;
                }
                out.push(RemoteWorker {
                    worker_id,
                    expires_in_ms: (holder.is_some() && pttl >= 0).then_some(pttl),
                    holder,
                    // A corrupt state shows as none, with whatever version it has.
                    state: s.as_deref().and_then(decode_state),
                    version: v.and_then(|v| v.parse().ok()).unwrap_or(0),
                });
            }
        }
        Ok(out)
    }

    fn namespaces(&mut self, limit: usize) -> Result<super::Listed> {
        let mut found = std::collections::BTreeSet::new();
        let mut cursor = 0u64;
        for _ in 0..SCAN_ROUNDS {
            let (next, keys): (u64, Vec<String>) = self.run("list the namespaces", |c| {
                redis::cmd("SCAN")
                    .arg(cursor)
                    .arg("MATCH")
                    .arg(NAMESPACE_KEYS)
                    .arg("COUNT")
                    .arg(SCAN_COUNT)
                    .query(c)
            })?;
            found.extend(
                keys.iter()
                    .filter_map(|k| namespace_of(k))
                    // What rimeflake could not have written (another program's keys) is skipped.
                    .filter(|ns| crate::lease::local::validate_namespace(ns).is_ok())
                    .map(str::to_string),
            );
            cursor = next;
            if cursor == 0 || found.len() > limit {
                break;
            }
        }
        Ok(super::Listed {
            complete: cursor == 0 && found.len() <= limit,
            names: found.into_iter().take(limit).collect(),
        })
    }

    fn check_settings(&mut self) -> Result<Vec<String>> {
        let read = self.run("CONFIG GET", |c| {
            let got = (|| -> RedisResult<_> {
                Ok((
                    Self::config_get(c, "maxmemory-policy")?,
                    Self::config_get(c, "appendonly")?,
                    Self::config_get(c, "appendfsync")?,
                ))
            })();
            match got {
                // Managed Redis often renames or forbids CONFIG (unknown command, NOPERM): then
                // nothing can be checked, which is worth a warning, not a refusal.
                Err(e) if is_refusal(&e) => Ok(Err(e)),
                // Credentials and reachability fail as anywhere else.
                other => other.map(Ok),
            }
        })?;
        let (policy, appendonly, appendfsync) = match read {
            Ok(found) => found,
            Err(refused) => {
                return Ok(vec![format!(
                    "Redis at {}: its eviction and persistence settings could not be checked \
                     (CONFIG GET: {}); make sure maxmemory-policy is noeviction or volatile-*, \
                     appendonly is yes and appendfsync is always: otherwise a restart of Redis \
                     may lose the last reservations of time, and IDs could repeat",
                    self.url,
                    self.scrub(plain(&refused))
                )]);
            }
        };

        let url = &self.url;
        let mut warnings = Vec::new();
        if let Some(p) = policy {
            // State keys have no expiry, so volatile-* policies never pick them.
            if p != "noeviction" && !p.starts_with("volatile-") {
                warnings.push(format!(
                    "Redis at {url}: maxmemory-policy is {p}: when Redis runs out of memory it may \
                     evict the state of a worker ID, and its next holder could then repeat IDs; \
                     set maxmemory-policy to noeviction (or a volatile-* policy)"
                ));
            }
        }
        match (appendonly.as_deref(), appendfsync.as_deref()) {
            (Some("no"), _) => warnings.push(format!(
                "Redis at {url}: appendonly is no: a crash or restart of Redis may lose the last \
                 reservations of time, and a generator that then takes up a worker ID without \
                 them could repeat IDs; set appendonly yes and appendfsync always"
            )),
            (Some(_), Some(f)) if f != "always" => warnings.push(format!(
                "Redis at {url}: appendfsync is {f}: a crash of Redis's host may lose the last \
                 reservations of time, and a generator that then takes up a worker ID without \
                 them could repeat IDs; set appendfsync always"
            )),
            _ => {}
        }
        Ok(warnings)
    }

    fn server(&mut self) -> Result<ServerView> {
        self.server_view()
    }

    fn settle_settings(&mut self, namespace: &str, ours: &Proposal<'_>) -> Result<Settings> {
        self.settle(namespace, ours)
    }

    fn new_epoch(&mut self, namespace: &str) -> Result<u64> {
        self.raise_epoch(namespace)
    }

    fn set_replicas(&mut self, namespace: &str, replicas: u32) -> Result<()> {
        let key = replicas::settings_key(namespace);
        self.run("set the replicas required", |c| {
            redis::cmd("HSET")
                .arg(&key)
                .arg("replicas")
                .arg(replicas)
                .query::<i64>(c)
        })?;
        Ok(())
    }

    fn require(&mut self, replicas: Arc<Replicas>) {
        self.replicas = replicas;
    }
}

#[cfg(test)]
mod tests;
