//! Remote leases in a ZooKeeper ensemble (cargo feature `zookeeper`): a [`Conn`] over the
//! client protocol of [`wire`].
//!
//! Nodes, under the URL's chroot (`/rimeflake` by default; a namespace's name is
//! percent-encoded into one path component):
//!
//! - `<root>/namespaces/<ns>`: the namespace's record: the layout record, and as its children
//!   the worker IDs ever leased, each holding the largest reach (ms) its holders declared (a
//!   child is made only while the record is there, and goes with it). When the record was made
//!   (`ctime`, by the leader's clock) tells its age.
//! - `<root>/workers/<ns>/<id>`: the token of the holder that last took the worker ID; every
//!   take writes it, so its version tells one lease from the next.
//! - `<root>/workers/<ns>/<id>/lease`: ephemeral, tied to the holder's session: the lease. Its
//!   data is the holder's token and its session's timeout (ms), a space between.
//! - `<root>/workers/<ns>/<id>/state`: the state, `version text`, written only in a
//!   transaction that checks the lease node is there and the worker's node still at the
//!   version of the take (the fence), over the state's node version read with it.
//! - `<root>/clock`: written to read the ensemble's clock.
//!
//! A lease lasts as long as the session holding its node: the ensemble ends a session it has
//! not heard from for its timeout, which is the lease TTL, and deletes its ephemeral nodes.
//! Renewals are requests on that session (and so its heartbeat); one that finds the node held
//! by another session of the same token (the store's, or the holder's earlier one) moves it to
//! its own in one transaction. Leaf's layout (persistent sequential nodes under
//! `/leaf_forever`, and the last timestamp written back every 3 s) is not read or reused.

use super::net::{self, Deadline, Lookup};
use super::replication::StoredSettings;
use super::{decode_state, Conn, RemoteWorker, Replicas, Saved, Taken, Versioned};
use super::{Proposal, ServerView, Settings};
use crate::backend::zookeeper_url::ZkUrl;
use crate::error::{Error, ErrorKind, Result};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

mod replicas;
pub(crate) mod wire;
use wire::{Ensemble, Op, Reply, Session, Stat, ZkFail, BAD_VERSION, NODE_EXISTS, NO_NODE};

/// A connection to a ZooKeeper ensemble for the lease protocol: one session per lease TTL
/// asked for (a generator asks for one), opened when first needed. Sessions are left to expire
/// when it is dropped, never closed: a lease is ended by `release`, and a connection dropped
/// after an error, or inherited by a forked child, must not end the lease it may hold.
pub(crate) struct ZkConn {
    ens: Ensemble,
    root: String,
    /// The URL without its password, for messages.
    shown: String,
    op_timeout: Duration,
    /// The TTL of the session used for reads and writes that hold no lease of their own.
    default_ttl_ms: u64,
    /// By the session timeout they asked for (ms).
    sessions: BTreeMap<u64, Session>,
    /// The session used last.
    last: Option<u64>,
    /// The replica acknowledgements every lease and state write needs (the namespace's).
    replicas: Arc<Replicas>,
    /// The followers the ensemble's quorum has log each write, as the last look found.
    quorum: Option<u32>,
}

impl std::fmt::Debug for ZkConn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ZkConn")
            .field("url", &self.shown)
            .field("sessions", &self.sessions.len())
            .finish_non_exhaustive()
    }
}

/// Peeks at this many candidates' leases per round trip in [`Conn::acquire_first`].
const PEEK_PER_BATCH: usize = 256;

impl ZkConn {
    /// Connects to the ensemble `url` names, with a session of `ttl`, and makes rimeflake's
    /// top nodes if they are missing. Every later call, and this one, ends within `op_timeout`.
    ///
    /// # Errors
    /// [`ErrorKind::Config`] for a URL that cannot be used or credentials refused;
    /// [`ErrorKind::Lease`] when no server of the ensemble answers in time.
    pub(crate) fn open(url: &str, op_timeout: Duration, ttl: Duration) -> Result<ZkConn> {
        ZkConn::open_with(url, op_timeout, ttl, net::system_resolver)
    }

    /// [`ZkConn::open`] with another resolver.
    pub(crate) fn open_with(
        url: &str,
        op_timeout: Duration,
        ttl: Duration,
        resolver: net::Resolver,
    ) -> Result<ZkConn> {
        let parsed = ZkUrl::parse(url)?;
        let auth = parsed.auth.as_ref().map(|(u, p)| format!("{u}:{p}"));
        let mut conn = ZkConn {
            ens: Ensemble::new(parsed.hosts.clone(), auth, Lookup::new(resolver)),
            shown: parsed.shown(),
            root: parsed.root,
            op_timeout: op_timeout.max(Duration::from_millis(1)),
            default_ttl_ms: ttl.as_millis() as u64,
            sessions: BTreeMap::new(),
            last: None,
            replicas: Arc::default(),
            quorum: None,
        };
        // Connect now, so a wrong address or credentials show at once. The nodes are made when
        // first written.
        conn.with(None, "connect", |_, _, _| Ok(()))?;
        Ok(conn)
    }

    /// Runs `f` on the session of `ttl_ms` (any session for `None`), opening it if needed, all
    /// within the timeout. A session the ensemble expired is dropped and `f` runs once more on a
    /// new one: nothing ran on the expired one.
    fn with<T>(
        &mut self,
        ttl_ms: Option<u64>,
        what: &str,
        mut f: impl FnMut(&mut Session, &mut Ensemble, Deadline) -> wire::Done<T>,
    ) -> Result<T> {
        let deadline = Deadline::after(self.op_timeout);
        // A call that holds no lease of its own goes on the session used last (one per
        // connection, but in tests that ask for several TTLs on one).
        let key = ttl_ms.or(self.last).unwrap_or(self.default_ttl_ms);
        self.last = Some(key);
        for attempt in 0..2 {
            if !self.sessions.contains_key(&key) {
                let ms = i32::try_from(key).unwrap_or(i32::MAX);
                match Session::open(&mut self.ens, ms, deadline) {
                    Ok(s) => {
                        self.sessions.insert(key, s);
                    }
                    Err(fail) => return Err(self.explain(fail, "connect", false)),
                }
            }
            let session = self.sessions.get_mut(&key).expect("opened above");
            match f(session, &mut self.ens, deadline) {
                Ok(v) => return Ok(v),
                Err(ZkFail::Expired) if attempt == 0 => {
                    self.sessions.remove(&key);
                }
                Err(fail) => {
                    if matches!(fail, ZkFail::Expired) {
                        self.sessions.remove(&key);
                    }
                    return Err(self.explain(fail, what, true));
                }
            }
        }
        unreachable!("the second attempt returns")
    }

    /// A failure told in rimeflake's terms. Never holds the password.
    fn explain(&self, fail: ZkFail, what: &str, connected: bool) -> Error {
        let url = &self.shown;
        let ms = self.op_timeout.as_millis();
        match fail {
            ZkFail::AuthFailed => Error::config(format!(
                "ZooKeeper at {url} refused the credentials (digest authentication failed)"
            )),
            ZkFail::Code(wire::NO_AUTH) => Error::config(format!(
                "ZooKeeper at {url}: not allowed ({what}): the nodes' ACL does not let these \
                 credentials in (give the URL the user:password that made them)"
            )),
            ZkFail::Code(code) => Error::new(
                ErrorKind::Lease,
                format!("ZooKeeper at {url} failed ({what}): error code {code}"),
            ),
            ZkFail::Expired => Error::new(
                ErrorKind::Lease,
                format!("ZooKeeper at {url} ended the session ({what}): it expired"),
            ),
            ZkFail::Protocol(why) => Error::new(
                ErrorKind::Lease,
                format!("ZooKeeper at {url} ({what}): {why}"),
            ),
            ZkFail::Connect(e) => Error::new(
                ErrorKind::Lease,
                format!("ZooKeeper at {url} could not be reached within {ms} ms ({e})"),
            ),
            ZkFail::Unreachable(e) => Error::new(
                ErrorKind::Lease,
                format!(
                    "ZooKeeper at {url} could not be reached within {ms} ms ({})",
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock
                    ) {
                        "no answer in time".to_string()
                    } else {
                        e.to_string()
                    }
                ),
            ),
            ZkFail::Io(e) if connected => Error::new(
                ErrorKind::Lease,
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock
                ) {
                    format!("ZooKeeper at {url} did not answer ({what}) within {ms} ms")
                } else {
                    format!("ZooKeeper at {url} failed ({what}): {e}")
                },
            ),
            ZkFail::Io(e) => Error::new(
                ErrorKind::Lease,
                format!("ZooKeeper at {url} could not be reached within {ms} ms ({e})"),
            ),
        }
    }

    /// `path` and every node above it, from the top: what [`make_all`] makes before it.
    fn parents_of(&self, path: &str) -> Vec<String> {
        let mut out: Vec<String> = path
            .match_indices('/')
            .skip(1)
            .map(|(i, _)| path[..i].to_string())
            .collect();
        out.push(path.to_string());
        out
    }

    fn ns_path(&self, namespace: &str) -> String {
        format!("{}/namespaces/{}", self.root, encode_name(namespace))
    }

    fn workers_path(&self, namespace: &str) -> String {
        format!("{}/workers/{}", self.root, encode_name(namespace))
    }

    fn worker_path(&self, namespace: &str, worker_id: u64) -> String {
        format!("{}/{worker_id}", self.workers_path(namespace))
    }

    /// The negotiated session of `ttl_ms` must last at least the TTL: the keeper stops the
    /// generator three quarters of a TTL after a renewal, which must be before the ensemble
    /// can have ended the session.
    fn check_timeout(&self, ttl_ms: u64) -> Result<()> {
        let given = self
            .sessions
            .get(&ttl_ms)
            .map_or(i32::MAX, |s| s.timeout_ms);
        if (given as u64) < ttl_ms {
            return Err(Error::config(format!(
                "ZooKeeper at {} gives sessions of at most {given} ms (its maxSessionTimeout), \
                 shorter than the lease TTL of {ttl_ms} ms: lower the TTL \
                 (RIMEFLAKE_LEASE_TTL_MS), or raise maxSessionTimeout",
                self.shown
            )));
        }
        Ok(())
    }

    /// Takes the lease of `worker_id` for `token` on the session of `ttl_ms`, or moves it to
    /// that session when `token` holds it already.
    fn take(&mut self, namespace: &str, worker_id: u64, token: &str, ttl_ms: u64) -> Result<bool> {
        // The session first, so a TTL it cannot last is refused before anything is taken.
        self.with(Some(ttl_ms), "connect", |_, _, _| Ok(()))?;
        self.check_timeout(ttl_ms)?;
        self.acknowledged("acquire", self.replicas.get())?;
        let worker = self.worker_path(namespace, worker_id);
        let parents = self.parents_of(&worker);
        self.with(Some(ttl_ms), "acquire", |s, ens, d| {
            let lease = format!("{worker}/lease");
            let data = format!("{token} {}", s.timeout_ms);
            let create = Op::Multi(vec![
                Op::Create {
                    path: &lease,
                    data: data.as_bytes(),
                    ephemeral: true,
                },
                Op::SetData {
                    path: &worker,
                    data: token.as_bytes(),
                    version: -1,
                },
            ]);
            for _ in 0..2 {
                match one(s.call(ens, std::slice::from_ref(&create), d)?)? {
                    Reply::Done => return Ok(true),
                    Reply::Failed { code: NO_NODE, .. } => make_all(s, ens, &parents, d)?,
                    Reply::Failed {
                        code: NODE_EXISTS, ..
                    } => return rehome(s, ens, &worker, token, d),
                    other => return Err(unexpected(other)),
                }
            }
            Err(ZkFail::Code(NO_NODE))
        })
    }
}

/// The only reply of a one-request call.
fn one(replies: Vec<Reply>) -> wire::Done<Reply> {
    replies
        .into_iter()
        .next()
        .ok_or_else(|| ZkFail::Protocol("no answer".into()))
}

fn unexpected(reply: Reply) -> ZkFail {
    match reply {
        Reply::Failed { code, .. } => ZkFail::Code(code),
        other => ZkFail::Protocol(format!("an answer of the wrong kind: {other:?}")),
    }
}

/// Makes each of `paths` (parents first) that is missing, in one round trip.
fn make_all(s: &mut Session, ens: &mut Ensemble, paths: &[String], d: Deadline) -> wire::Done<()> {
    let ops: Vec<Op<'_>> = paths
        .iter()
        .map(|p| Op::Create {
            path: p,
            data: b"",
            ephemeral: false,
        })
        .collect();
    for reply in s.call(ens, &ops, d)? {
        match reply {
            Reply::Done
            | Reply::Failed {
                code: NODE_EXISTS, ..
            } => {}
            other => return Err(unexpected(other)),
        }
    }
    Ok(())
}

/// What a worker's nodes say: the token of the last take with the version of that write, the
/// lease node (its token, its session, its version) and the state node, each if it is there.
struct Held {
    taker: Option<(String, i32)>,
    lease: Option<(String, Stat)>,
    state: Option<(Vec<u8>, Stat)>,
}

impl Held {
    /// Reads them after a sync, so they are at least as new as every write committed before.
    fn read(s: &mut Session, ens: &mut Ensemble, worker: &str, d: Deadline) -> wire::Done<Held> {
        let (lease, state) = (format!("{worker}/lease"), format!("{worker}/state"));
        let ops = [
            Op::Sync(worker),
            Op::GetData(worker),
            Op::GetData(&lease),
            Op::GetData(&state),
        ];
        let replies = s.call(ens, &ops, d)?;
        let data = |r: &Reply| match r {
            Reply::Data(data, stat) => Ok(Some((data.clone(), *stat))),
            Reply::Failed { code: NO_NODE, .. } => Ok(None),
            other => Err(unexpected(other.clone())),
        };
        let text = |b: Vec<u8>| String::from_utf8_lossy(&b).into_owned();
        Ok(Held {
            taker: data(&replies[1])?.map(|(t, stat)| (text(t), stat.version)),
            lease: data(&replies[2])?.map(|(t, stat)| {
                let token = text(t).split(' ').next().unwrap_or("").to_string();
                (token, stat)
            }),
            state: data(&replies[3])?,
        })
    }

    /// The version of the last take if `token` holds the lease.
    fn holds(&self, token: &str) -> Option<i32> {
        match (&self.taker, &self.lease) {
            (Some((t, v)), Some((l, _))) if t == token && l == token => Some(*v),
            _ => None,
        }
    }
}

/// The lease of `worker`, held by `token` under some session: `true` once it is held by this
/// session (moved here in one transaction if another session held it, checked on the leader
/// otherwise); `false` if `token` does not hold it.
fn rehome(
    s: &mut Session,
    ens: &mut Ensemble,
    worker: &str,
    token: &str,
    d: Deadline,
) -> wire::Done<bool> {
    let held = Held::read(s, ens, worker, d)?;
    let (Some(taken), Some((_, stat))) = (held.holds(token), held.lease.as_ref()) else {
        return Ok(false);
    };
    let lease = format!("{worker}/lease");
    let data = format!("{token} {}", s.timeout_ms);
    let mut ops = vec![Op::Check {
        path: worker,
        version: taken,
    }];
    if stat.owner == s.id {
        // A transaction goes through the leader, which checks that this session is alive.
        ops.push(Op::Check {
            path: &lease,
            version: stat.version,
        });
    } else {
        ops.push(Op::Delete {
            path: &lease,
            version: stat.version,
        });
        ops.push(Op::Create {
            path: &lease,
            data: data.as_bytes(),
            ephemeral: true,
        });
    }
    match one(s.call(ens, &[Op::Multi(ops)], d)?)? {
        Reply::Done => Ok(true),
        Reply::Failed {
            code: NO_NODE | BAD_VERSION | NODE_EXISTS,
            ..
        } => Ok(false),
        other => Err(unexpected(other)),
    }
}

/// A state node's data: its version, a space, the state's text.
fn parse_state(data: &[u8]) -> Option<Versioned> {
    let text = std::str::from_utf8(data).ok()?;
    let (version, text) = text.split_once(' ')?;
    Some(Versioned {
        version: version.parse().ok()?,
        text: text.to_string(),
    })
}

/// A namespace as one path component: bytes other than letters, digits, `-`, `_` and `.`
/// percent-encoded (and a leading `.`, which `.` and `..` would make a path's).
fn encode_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for (i, b) in name.bytes().enumerate() {
        if b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || (b == b'.' && i > 0) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn decode_name(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            out.push(u8::from_str_radix(text.get(i + 1..i + 3)?, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

impl Conn for ZkConn {
    fn settle_layout(&mut self, namespace: &str, record: &str) -> Result<String> {
        let path = self.ns_path(namespace);
        let parents = self.parents_of(&format!("{}/namespaces", self.root));
        let data = record.as_bytes();
        self.with(None, "store the layout", |s, ens, d| {
            for _ in 0..2 {
                let replies = s.call(
                    ens,
                    &[
                        Op::Create {
                            path: &path,
                            data,
                            ephemeral: false,
                        },
                        Op::GetData(&path),
                    ],
                    d,
                )?;
                match &replies[..] {
                    [Reply::Failed { code: NO_NODE, .. }, _] => make_all(s, ens, &parents, d)?,
                    [_, Reply::Data(found, _)] => {
                        return Ok(String::from_utf8_lossy(found).into_owned())
                    }
                    [_, other] => return Err(unexpected(other.clone())),
                    _ => return Err(ZkFail::Protocol("no answer".into())),
                }
            }
            Err(ZkFail::Code(NO_NODE))
        })
    }

    fn layout(&mut self, namespace: &str) -> Result<Option<String>> {
        let path = self.ns_path(namespace);
        self.with(None, "read the layout", |s, ens, d| {
            match one(s.call(ens, &[Op::GetData(&path)], d)?)? {
                Reply::Data(found, _) => Ok(Some(String::from_utf8_lossy(&found).into_owned())),
                Reply::Failed { code: NO_NODE, .. } => Ok(None),
                other => Err(unexpected(other)),
            }
        })
    }

    fn acquire(
        &mut self,
        namespace: &str,
        worker_id: u64,
        token: &str,
        ttl_ms: u64,
    ) -> Result<bool> {
        self.take(namespace, worker_id, token, ttl_ms)
    }

    /// Tries the first candidate; then looks at the leases of the next candidates, many per
    /// round trip, and tries only those that were free (or this token's own).
    fn acquire_first(
        &mut self,
        namespace: &str,
        candidates: &[u64],
        token: &str,
        ttl_ms: u64,
    ) -> Result<Option<Taken>> {
        let mut i = 0;
        while i < candidates.len() {
            let free: Vec<u64> = if i == 0 {
                vec![candidates[0]]
            } else {
                let batch = &candidates[i..(i + PEEK_PER_BATCH).min(candidates.len())];
                let paths: Vec<String> = batch
                    .iter()
                    .map(|&id| format!("{}/lease", self.worker_path(namespace, id)))
                    .collect();
                let replies = self.with(Some(ttl_ms), "acquire", |s, ens, d| {
                    let ops: Vec<Op<'_>> = paths.iter().map(|p| Op::GetData(p)).collect();
                    s.call(ens, &ops, d)
                })?;
                // Free, or this token's own (taken again, as by `acquire`).
                let open = |r: &Reply| match r {
                    Reply::Failed { code: NO_NODE, .. } => true,
                    Reply::Data(data, _) => {
                        data.split(|b| *b == b' ').next() == Some(token.as_bytes())
                    }
                    _ => false,
                };
                batch
                    .iter()
                    .zip(replies)
                    .filter(|(_, r)| open(r))
                    .map(|(id, _)| *id)
                    .collect()
            };
            i += if i == 0 { 1 } else { PEEK_PER_BATCH };
            for worker_id in free {
                let sent_boottime_ns = crate::clock::boottime_ns();
                if self.take(namespace, worker_id, token, ttl_ms)? {
                    return Ok(Some(Taken {
                        worker_id,
                        sent_boottime_ns,
                    }));
                }
            }
        }
        Ok(None)
    }

    fn renew(&mut self, namespace: &str, worker_id: u64, token: &str, ttl_ms: u64) -> Result<bool> {
        let worker = self.worker_path(namespace, worker_id);
        self.with(Some(ttl_ms), "connect", |_, _, _| Ok(()))?;
        self.check_timeout(ttl_ms)?;
        self.acknowledged("renew", self.replicas.get())?;
        self.with(Some(ttl_ms), "renew", |s, ens, d| {
            rehome(s, ens, &worker, token, d)
        })
    }

    fn release(&mut self, namespace: &str, worker_id: u64, token: &str) -> Result<()> {
        let worker = self.worker_path(namespace, worker_id);
        let lease = format!("{worker}/lease");
        self.with(None, "release", |s, ens, d| {
            let held = Held::read(s, ens, &worker, d)?;
            if let Some(taken) = held.holds(token) {
                let ops = vec![
                    Op::Check {
                        path: &worker,
                        version: taken,
                    },
                    Op::Delete {
                        path: &lease,
                        version: -1,
                    },
                ];
                // Refused only when another took it meanwhile: then it is not ours to end.
                one(s.call(ens, &[Op::Multi(ops)], d)?)?;
            }
            Ok(())
        })
    }

    fn load(&mut self, namespace: &str, worker_id: u64) -> Result<Option<Versioned>> {
        let worker = self.worker_path(namespace, worker_id);
        let state = format!("{worker}/state");
        let found = self.with(None, "load", |s, ens, d| {
            let replies = s.call(ens, &[Op::Sync(&worker), Op::GetData(&state)], d)?;
            match &replies[1] {
                Reply::Data(data, _) => Ok(Some(data.clone())),
                Reply::Failed { code: NO_NODE, .. } => Ok(None),
                other => Err(unexpected(other.clone())),
            }
        })?;
        found
            .map(|data| {
                parse_state(&data).ok_or_else(|| {
                    Error::new(
                        ErrorKind::State,
                        format!(
                            "the state node of worker ID {worker_id} of namespace {namespace} on \
                             {} is corrupt: it is not rimeflake's (no version before its state). \
                             Nothing is reset silently: once no generator uses this worker ID, \
                             delete the node ({}/{worker_id}/state) with ZooKeeper's shell, and \
                             the next start begins a reach ahead of the clock",
                            self.shown,
                            self.workers_path(namespace)
                        ),
                    )
                })
            })
            .transpose()
    }

    fn save(
        &mut self,
        namespace: &str,
        worker_id: u64,
        token: &str,
        expected: u64,
        next: &Versioned,
    ) -> Result<Saved> {
        let worker = self.worker_path(namespace, worker_id);
        let (lease, state) = (format!("{worker}/lease"), format!("{worker}/state"));
        let data = format!("{} {}", next.version, next.text);
        self.acknowledged("save", self.replicas.get())?;
        self.with(None, "save", |s, ens, d| {
            let held = Held::read(s, ens, &worker, d)?;
            let Some(taken) = held.holds(token) else {
                return Ok(Saved::NotHolder);
            };
            let stored = held
                .state
                .map(|(data, stat)| (parse_state(&data), stat.version));
            let write = match stored {
                None if expected == 0 => Op::Create {
                    path: &state,
                    data: data.as_bytes(),
                    ephemeral: false,
                },
                Some((Some(v), node_version)) if v.version == expected && expected != 0 => {
                    Op::SetData {
                        path: &state,
                        data: data.as_bytes(),
                        version: node_version,
                    }
                }
                _ => return Ok(Saved::Moved),
            };
            let ops = vec![
                Op::Check {
                    path: &lease,
                    version: -1,
                },
                Op::Check {
                    path: &worker,
                    version: taken,
                },
                write,
            ];
            match one(s.call(ens, &[Op::Multi(ops)], d)?)? {
                Reply::Done => Ok(Saved::Yes),
                Reply::Failed { op: 0 | 1, .. } => Ok(Saved::NotHolder),
                Reply::Failed { .. } => Ok(Saved::Moved),
                other => Err(unexpected(other)),
            }
        })
    }

    fn reset(
        &mut self,
        namespace: &str,
        worker_id: u64,
        expected: u64,
        next: &Versioned,
    ) -> Result<Saved> {
        let worker = self.worker_path(namespace, worker_id);
        let (lease, state) = (format!("{worker}/lease"), format!("{worker}/state"));
        let parents = self.parents_of(&worker);
        let data = format!("{} {}", next.version, next.text);
        self.acknowledged("reset", self.replicas.get())?;
        self.with(None, "reset", |s, ens, d| {
            make_all(s, ens, &parents, d)?;
            let replies = s.call(ens, &[Op::Sync(&worker), Op::GetData(&state)], d)?;
            let write = match &replies[1] {
                Reply::Failed { code: NO_NODE, .. } if expected == 0 => Op::Create {
                    path: &state,
                    data: data.as_bytes(),
                    ephemeral: false,
                },
                Reply::Data(found, stat)
                    if expected != 0
                        && parse_state(found).is_some_and(|v| v.version == expected) =>
                {
                    Op::SetData {
                        path: &state,
                        data: data.as_bytes(),
                        version: stat.version,
                    }
                }
                Reply::Data(..) | Reply::Failed { code: NO_NODE, .. } => {
                    // Refused as not held while a lease is there, else as moved.
                    let lease_there = !matches!(
                        one(s.call(ens, &[Op::Exists(&lease)], d)?)?,
                        Reply::Failed { code: NO_NODE, .. }
                    );
                    return Ok(if lease_there {
                        Saved::NotHolder
                    } else {
                        Saved::Moved
                    });
                }
                other => return Err(unexpected(other.clone())),
            };
            // No lease while it is written: made and deleted in the same transaction, so the
            // transaction fails if one is there.
            let ops = vec![
                Op::Create {
                    path: &lease,
                    data: b"",
                    ephemeral: true,
                },
                Op::Delete {
                    path: &lease,
                    version: -1,
                },
                write,
            ];
            match one(s.call(ens, &[Op::Multi(ops)], d)?)? {
                Reply::Done => Ok(Saved::Yes),
                Reply::Failed { op: 0, .. } => Ok(Saved::NotHolder),
                Reply::Failed { .. } => Ok(Saved::Moved),
                other => Err(unexpected(other)),
            }
        })
    }

    fn server_time_ms(&mut self) -> Result<u64> {
        let clock = format!("{}/clock", self.root);
        let parents = self.parents_of(&clock);
        let ms = self.with(None, "read the clock", |s, ens, d| {
            for _ in 0..2 {
                let write = Op::SetData {
                    path: &clock,
                    data: b"",
                    version: -1,
                };
                match one(s.call(ens, &[write], d)?)? {
                    Reply::Stat(stat) => return Ok(stat.mtime),
                    Reply::Failed { code: NO_NODE, .. } => make_all(s, ens, &parents, d)?,
                    other => return Err(unexpected(other)),
                }
            }
            Err(ZkFail::Code(NO_NODE))
        })?;
        Ok(ms.max(0) as u64)
    }

    fn mark_used(
        &mut self,
        namespace: &str,
        worker_id: u64,
        reach_ms: u64,
    ) -> Result<super::Usage> {
        let record = self.ns_path(namespace);
        let mark = format!("{record}/{worker_id}");
        self.acknowledged("mark the worker ID used", self.replicas.get())?;
        let usage = self.with(None, "mark the worker ID used", |s, ens, d| {
            // Each step is conditional (a mark made over the version read, or made only where
            // none is): one that another holder's mark beat reads again.
            for _ in 0..16 {
                let ops = [Op::Sync(&record), Op::Exists(&record), Op::GetData(&mark)];
                let replies = s.call(ens, &ops, d)?;
                let made = match &replies[1] {
                    Reply::Stat(stat) => stat.ctime,
                    Reply::Failed { code: NO_NODE, .. } => return Ok(None),
                    other => return Err(unexpected(other.clone())),
                };
                let (write, before) = match &replies[2] {
                    Reply::Data(found, stat) => {
                        let before = std::str::from_utf8(found)
                            .ok()
                            .and_then(|t| t.parse::<u64>().ok())
                            .unwrap_or(0);
                        (Some(stat.version), Some(before))
                    }
                    Reply::Failed { code: NO_NODE, .. } => (None, None),
                    other => return Err(unexpected(other.clone())),
                };
                let reach = before.unwrap_or(0).max(reach_ms);
                let data = reach.to_string();
                // Both answer with the node's Stat: its time is the ensemble's clock now.
                let op = match write {
                    Some(version) => Op::SetData {
                        path: &mark,
                        data: data.as_bytes(),
                        version,
                    },
                    None => Op::Create2 {
                        path: &mark,
                        data: data.as_bytes(),
                    },
                };
                match one(s.call(ens, &[op], d)?)? {
                    Reply::Stat(now) => {
                        return Ok(Some(super::Usage {
                            age_ms: (now.mtime - made).max(0) as u64,
                            used_before: before.is_some(),
                            reach_ms: reach,
                        }))
                    }
                    Reply::Failed {
                        code: BAD_VERSION | NODE_EXISTS,
                        ..
                    } => continue,
                    // The record went (with its marks) in between.
                    Reply::Failed { code: NO_NODE, .. } => return Ok(None),
                    other => return Err(unexpected(other)),
                }
            }
            Err(ZkFail::Protocol(
                "the worker ID's mark kept changing while it was marked".into(),
            ))
        })?;
        usage.ok_or_else(|| {
            Error::new(
                ErrorKind::Lease,
                format!("the record of namespace {namespace} vanished as it was marked"),
            )
        })
    }

    fn workers(&mut self, namespace: &str) -> Result<Vec<RemoteWorker>> {
        let parent = self.workers_path(namespace);
        let found = self.with(None, "list the worker IDs", |s, ens, d| {
            let replies = s.call(ens, &[Op::Sync(&parent), Op::GetChildren(&parent)], d)?;
            let mut ids: Vec<u64> = match &replies[1] {
                Reply::Children(names) => names.iter().filter_map(|n| n.parse().ok()).collect(),
                Reply::Failed { code: NO_NODE, .. } => return Ok(Vec::new()),
                other => return Err(unexpected(other.clone())),
            };
            ids.sort_unstable();
            let paths: Vec<(String, String)> = ids
                .iter()
                .map(|id| {
                    (
                        format!("{parent}/{id}/lease"),
                        format!("{parent}/{id}/state"),
                    )
                })
                .collect();
            let ops: Vec<Op<'_>> = paths
                .iter()
                .flat_map(|(l, st)| [Op::GetData(l), Op::GetData(st)])
                .collect();
            let replies = s.call(ens, &ops, d)?;
            Ok(ids
                .into_iter()
                .zip(replies.chunks(2).map(<[Reply]>::to_vec))
                .collect::<Vec<_>>())
        })?;
        let mut out = Vec::with_capacity(found.len());
        for (worker_id, replies) in found {
            let (holder, expires_in_ms) = match &replies[0] {
                Reply::Data(data, _) => {
                    let text = String::from_utf8_lossy(data);
                    let mut lines = text.split(' ');
                    let token = lines.next().unwrap_or("").to_string();
                    // The ensemble keeps no expiry: the lease lasts until its session has not
                    // been heard from for its timeout, which is shown.
                    let timeout = lines.next().and_then(|t| t.parse().ok());
                    (Some(token), timeout)
                }
                _ => (None, None),
            };
            let (state, version) = match &replies[1] {
                Reply::Data(data, _) => match parse_state(data) {
                    Some(v) => (decode_state(&v.text), v.version),
                    None => (None, 0),
                },
                _ => (None, 0),
            };
            out.push(RemoteWorker {
                worker_id,
                holder,
                expires_in_ms,
                state,
                version,
            });
        }
        Ok(out)
    }

    fn namespaces(&mut self, limit: usize) -> Result<super::Listed> {
        let parent = format!("{}/namespaces", self.root);
        let mut names = self.with(None, "list the namespaces", |s, ens, d| {
            match one(s.call(ens, &[Op::GetChildren(&parent)], d)?)? {
                Reply::Children(names) => Ok(names),
                Reply::Failed { code: NO_NODE, .. } => Ok(Vec::new()),
                other => Err(unexpected(other)),
            }
        })?;
        names = names.iter().filter_map(|n| decode_name(n)).collect();
        names.sort_unstable();
        let complete = names.len() <= limit;
        names.truncate(limit);
        Ok(super::Listed { names, complete })
    }

    /// The ensemble's durability (`forceSync`, on by default) is not readable by a client:
    /// nothing to warn about from here.
    fn check_settings(&mut self) -> Result<Vec<String>> {
        Ok(Vec::new())
    }

    fn server(&mut self) -> Result<ServerView> {
        self.server_view()
    }

    fn settle_settings(&mut self, namespace: &str, ours: &Proposal<'_>) -> Result<Settings> {
        self.settle_stored(namespace, ours)
    }

    fn new_epoch(&mut self, namespace: &str) -> Result<u64> {
        self.raise_stored_epoch(namespace)
    }

    fn set_replicas(&mut self, namespace: &str, replicas: u32) -> Result<()> {
        self.set_stored_replicas(namespace, replicas)
    }

    fn require(&mut self, replicas: Arc<Replicas>) {
        self.replicas = replicas;
    }
}

#[cfg(test)]
mod tests;
