//! The ZooKeeper client protocol as far as rimeflake uses it (ZooKeeper 3.5 and later): a
//! session with its id and password, resumed on another server of the ensemble when its
//! connection breaks, digest authentication, and requests written together and answered in
//! order (the protocol's pipelining), with multi-operation transactions. Every read and write
//! ends by the deadline of its call.
//!
//! The session is kept alive only by the calls made on it: nothing pings the ensemble between
//! them. The keeper's renewals are its heartbeat, so a process that stops renewing (paused,
//! hung, its keeper stalled) loses its session, and with it its ephemeral nodes, after the
//! session's timeout, as a lease runs out after its TTL. (Client libraries ping from a thread of
//! their own, which would keep a session alive for a process whose keeper no longer runs.)

use crate::lease::remote::net::{self, ConnectError, Deadline, Lookup};
use std::io::{self, Read, Write};
use std::net::TcpStream;

// Operation codes.
const CREATE: i32 = 1;
const DELETE: i32 = 2;
const EXISTS: i32 = 3;
const GET_DATA: i32 = 4;
const SET_DATA: i32 = 5;
const GET_CHILDREN: i32 = 8;
const SYNC: i32 = 9;
const CHECK: i32 = 13;
const MULTI: i32 = 14;
const CREATE2: i32 = 15;
const AUTH: i32 = 100;

// Error codes.
pub(crate) const OK: i32 = 0;
pub(crate) const NO_NODE: i32 = -101;
pub(crate) const NO_AUTH: i32 = -102;
pub(crate) const BAD_VERSION: i32 = -103;
pub(crate) const NODE_EXISTS: i32 = -110;
const SESSION_EXPIRED: i32 = -112;
const AUTH_FAILED: i32 = -115;
const SESSION_MOVED: i32 = -118;
/// In a failed transaction: an operation after the one that failed.
const RUNTIME_INCONSISTENCY: i32 = -2;

/// Replies larger than this are refused (a node holds at most 1 MB by default).
const MAX_REPLY: usize = 16 << 20;

/// Why a call failed as a whole.
#[derive(Debug)]
pub(crate) enum ZkFail {
    /// No server answered by the deadline, or the connection broke.
    Io(io::Error),
    /// The host names did not resolve, or no server took the connection.
    Connect(ConnectError),
    /// A server took the connection but did not take the session in time (the last error).
    Unreachable(io::Error),
    /// The ensemble ended the session (it expired, or it was closed).
    Expired,
    /// The digest credentials were refused.
    AuthFailed,
    /// An error code this client does not expect for the request.
    Code(i32),
    /// The server sent what this client does not understand.
    Protocol(String),
}

impl From<io::Error> for ZkFail {
    fn from(e: io::Error) -> ZkFail {
        ZkFail::Io(e)
    }
}

pub(crate) type Done<T> = std::result::Result<T, ZkFail>;

/// A node's metadata (the protocol's `Stat`), the fields rimeflake reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Stat {
    /// The transaction that made the node (the ensemble's epoch in its top 32 bits).
    pub(crate) czxid: i64,
    /// When the node was made and last written, Unix ms by the clock of the ensemble's leader.
    pub(crate) ctime: i64,
    pub(crate) mtime: i64,
    /// How many writes its data had.
    pub(crate) version: i32,
    /// The session that holds an ephemeral node; 0 for another node.
    pub(crate) owner: i64,
}

/// One request.
#[derive(Clone, Debug)]
pub(crate) enum Op<'a> {
    Create {
        path: &'a str,
        data: &'a [u8],
        ephemeral: bool,
    },
    /// Makes a persistent node and answers with its `Stat` (so with the time it was made).
    Create2 {
        path: &'a str,
        data: &'a [u8],
    },
    /// Deletes `path` if its data's version is `version` (-1: any).
    Delete {
        path: &'a str,
        version: i32,
    },
    Exists(&'a str),
    GetData(&'a str),
    /// Writes `data` if the version is `version` (-1: any).
    SetData {
        path: &'a str,
        data: &'a [u8],
        version: i32,
    },
    GetChildren(&'a str),
    /// Brings the server this session talks to up to date with the leader, so that the reads
    /// after it see every write committed before it.
    Sync(&'a str),
    /// Holds if `path` exists with version `version` (-1: any): for transactions.
    Check {
        path: &'a str,
        version: i32,
    },
    /// Every operation or none, atomically (create, delete, set, check only).
    Multi(Vec<Op<'a>>),
}

/// One answer: its error code, and what came with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Reply {
    /// An error code (the request's, or a transaction's first failing operation's, with its
    /// index).
    Failed {
        code: i32,
        op: usize,
    },
    Done,
    Stat(Stat),
    Data(Vec<u8>, Stat),
    Children(Vec<String>),
}

/// Where a session connects, and as whom.
pub(crate) struct Ensemble {
    pub(crate) hosts: Vec<(String, u16)>,
    /// `user:password` for the digest scheme.
    pub(crate) auth: Option<String>,
    pub(crate) lookup: Lookup,
    /// The server the next connect tries first: connects go round the ensemble.
    next: usize,
}

impl Ensemble {
    pub(crate) fn new(hosts: Vec<(String, u16)>, auth: Option<String>, lookup: Lookup) -> Ensemble {
        // Spread first connects over the servers: start at a random one.
        let mut b = [0u8; 2];
        crate::random::os_random(&mut b);
        let next = usize::from(u16::from_le_bytes(b)) % hosts.len().max(1);
        Ensemble {
            hosts,
            auth,
            lookup,
            next,
        }
    }

    /// The ACL of the nodes rimeflake makes: the creator's only with credentials, anyone's
    /// without.
    fn acl(&self) -> (&'static str, &'static str) {
        if self.auth.is_some() {
            ("auth", "")
        } else {
            ("world", "anyone")
        }
    }
}

/// A session with the ensemble.
pub(crate) struct Session {
    pub(crate) id: i64,
    password: Vec<u8>,
    /// The timeout the session asked for, and the one the ensemble gave (ms).
    asked_ms: i32,
    pub(crate) timeout_ms: i32,
    /// The newest transaction this session has seen: a server behind it refuses to resume the
    /// session, so a resumed session never reads older data than it saw.
    last_zxid: i64,
    sock: Option<TcpStream>,
    xid: i32,
}

impl Session {
    /// A new session asking for `timeout_ms`, on the first server that takes it by `deadline`.
    pub(crate) fn open(ens: &mut Ensemble, timeout_ms: i32, deadline: Deadline) -> Done<Session> {
        let mut s = Session {
            id: 0,
            password: vec![0; 16],
            asked_ms: timeout_ms,
            timeout_ms,
            last_zxid: 0,
            sock: None,
            xid: 0,
        };
        s.connect(ens, deadline)?;
        Ok(s)
    }

    /// Connects (a new session, or this one resumed), trying the ensemble's servers in turn.
    fn connect(&mut self, ens: &mut Ensemble, deadline: Deadline) -> Done<()> {
        let mut last = None;
        for _ in 0..ens.hosts.len() {
            let (host, port) = ens.hosts[ens.next % ens.hosts.len()].clone();
            ens.next = ens.next.wrapping_add(1);
            let sock = match ens.lookup.connect(&host, port, deadline) {
                Ok(s) => s,
                Err(e) => {
                    last = Some(ZkFail::Connect(e));
                    if deadline.left().is_err() {
                        break;
                    }
                    continue;
                }
            };
            match self.handshake(sock, ens, deadline) {
                Ok(()) => return Ok(()),
                Err(e @ (ZkFail::Expired | ZkFail::AuthFailed)) => return Err(e),
                Err(ZkFail::Io(e)) => {
                    last = Some(ZkFail::Unreachable(e));
                    if deadline.left().is_err() {
                        break;
                    }
                }
                Err(e) => {
                    last = Some(e);
                    if deadline.left().is_err() {
                        break;
                    }
                }
            }
        }
        Err(last.unwrap_or(ZkFail::Protocol("the URL names no server".into())))
    }

    fn handshake(&mut self, mut sock: TcpStream, ens: &Ensemble, deadline: Deadline) -> Done<()> {
        let mut body = Vec::with_capacity(48);
        put_i32(&mut body, 0); // protocol version
        put_i64(&mut body, self.last_zxid);
        put_i32(&mut body, self.asked_ms);
        put_i64(&mut body, self.id);
        put_buffer(&mut body, &self.password);
        body.push(0); // not read-only
        send(&mut sock, &body, deadline)?;
        let reply = receive(&mut sock, deadline)?;
        let mut r = Reader::new(&reply);
        r.i32()?;
        let timeout = r.i32()?;
        let id = r.i64()?;
        let password = r.buffer()?;
        if timeout <= 0 {
            return Err(ZkFail::Expired);
        }
        (self.id, self.password, self.timeout_ms) = (id, password, timeout);
        if let Some(auth) = &ens.auth {
            let mut body = Vec::new();
            put_i32(&mut body, -4); // the protocol's xid for authentication
            put_i32(&mut body, AUTH);
            put_i32(&mut body, 0);
            put_string(&mut body, "digest");
            put_buffer(&mut body, auth.as_bytes());
            send(&mut sock, &body, deadline)?;
            let reply = receive(&mut sock, deadline)?;
            let mut r = Reader::new(&reply);
            r.i32()?;
            r.i64()?;
            if r.i32()? != OK {
                return Err(ZkFail::AuthFailed);
            }
        }
        self.sock = Some(sock);
        Ok(())
    }

    /// Sends `ops` together and returns their replies in order. A broken connection is opened
    /// again first, resuming the session; an error leaves no connection behind, so the next
    /// call starts on a fresh one.
    pub(crate) fn call(
        &mut self,
        ens: &mut Ensemble,
        ops: &[Op<'_>],
        deadline: Deadline,
    ) -> Done<Vec<Reply>> {
        if self.sock.as_ref().is_some_and(net::closed_while_idle) {
            self.sock = None;
        }
        if self.sock.is_none() {
            self.connect(ens, deadline)?;
        }
        let out = self.exchange(ens, ops, deadline);
        if out.is_err() {
            self.sock = None;
        }
        out
    }

    fn exchange(&mut self, ens: &Ensemble, ops: &[Op<'_>], deadline: Deadline) -> Done<Vec<Reply>> {
        let sock = self.sock.as_mut().expect("connected above");
        let acl = ens.acl();
        let mut out = Vec::new();
        let mut xids = Vec::with_capacity(ops.len());
        for op in ops {
            self.xid = self.xid.wrapping_add(1).max(1);
            xids.push(self.xid);
            let mut body = Vec::with_capacity(64);
            put_i32(&mut body, self.xid);
            put_i32(&mut body, code(op));
            encode(&mut body, op, acl);
            out.extend_from_slice(&(body.len() as i32).to_be_bytes());
            out.extend_from_slice(&body);
        }
        net::bound(sock, deadline)?;
        sock.write_all(&out)?;
        let mut replies = Vec::with_capacity(ops.len());
        for (op, xid) in ops.iter().zip(xids) {
            let reply = receive(sock, deadline)?;
            let mut r = Reader::new(&reply);
            if r.i32()? != xid {
                return Err(ZkFail::Protocol("an answer out of order".into()));
            }
            let zxid = r.i64()?;
            self.last_zxid = self.last_zxid.max(zxid);
            let err = r.i32()?;
            match err {
                SESSION_EXPIRED | SESSION_MOVED => return Err(ZkFail::Expired),
                AUTH_FAILED => return Err(ZkFail::AuthFailed),
                _ => {}
            }
            replies.push(decode(op, err, &mut r)?);
        }
        Ok(replies)
    }
}

fn code(op: &Op<'_>) -> i32 {
    match op {
        Op::Create { .. } => CREATE,
        Op::Create2 { .. } => CREATE2,
        Op::Delete { .. } => DELETE,
        Op::Exists(_) => EXISTS,
        Op::GetData(_) => GET_DATA,
        Op::SetData { .. } => SET_DATA,
        Op::GetChildren(_) => GET_CHILDREN,
        Op::Sync(_) => SYNC,
        Op::Check { .. } => CHECK,
        Op::Multi(_) => MULTI,
    }
}

fn encode(b: &mut Vec<u8>, op: &Op<'_>, (scheme, id): (&str, &str)) {
    match op {
        Op::Create {
            path,
            data,
            ephemeral,
        } => {
            put_string(b, path);
            put_buffer(b, data);
            put_i32(b, 1); // one ACL entry: every right
            put_i32(b, 31);
            put_string(b, scheme);
            put_string(b, id);
            put_i32(b, i32::from(*ephemeral));
        }
        Op::Create2 { path, data } => encode(
            b,
            &Op::Create {
                path,
                data,
                ephemeral: false,
            },
            (scheme, id),
        ),
        Op::Delete { path, version } | Op::Check { path, version } => {
            put_string(b, path);
            put_i32(b, *version);
        }
        Op::Exists(path) | Op::GetData(path) | Op::GetChildren(path) => {
            put_string(b, path);
            b.push(0); // no watch
        }
        Op::SetData {
            path,
            data,
            version,
        } => {
            put_string(b, path);
            put_buffer(b, data);
            put_i32(b, *version);
        }
        Op::Sync(path) => put_string(b, path),
        Op::Multi(ops) => {
            for op in ops {
                put_i32(b, code(op));
                b.push(0);
                put_i32(b, -1);
                encode(b, op, (scheme, id));
            }
            put_i32(b, -1);
            b.push(1);
            put_i32(b, -1);
        }
    }
}

fn decode(op: &Op<'_>, err: i32, r: &mut Reader<'_>) -> Done<Reply> {
    if let Op::Multi(ops) = op {
        // Each operation's result; on failure, an error result for each (0 for those before
        // the one that failed, RUNTIME_INCONSISTENCY for those after).
        let mut failed = None;
        for i in 0..=ops.len() {
            let kind = r.i32()?;
            let done = r.u8()? != 0;
            r.i32()?;
            if done {
                break;
            }
            match kind {
                -1 => {
                    let code = r.i32()?;
                    if code != OK && code != RUNTIME_INCONSISTENCY && failed.is_none() {
                        failed = Some(Reply::Failed { code, op: i });
                    }
                }
                CREATE => {
                    r.string()?;
                }
                SET_DATA => {
                    r.stat()?;
                }
                DELETE | CHECK => {}
                other => return Err(ZkFail::Protocol(format!("a transaction result {other}"))),
            }
        }
        return match (failed, err) {
            (Some(f), _) => Ok(f),
            (None, OK) => Ok(Reply::Done),
            (None, code) => Ok(Reply::Failed { code, op: 0 }),
        };
    }
    if err != OK {
        return Ok(Reply::Failed { code: err, op: 0 });
    }
    Ok(match op {
        Op::Exists(_) | Op::SetData { .. } => Reply::Stat(r.stat()?),
        Op::Create2 { .. } => {
            r.string()?;
            Reply::Stat(r.stat()?)
        }
        Op::GetData(_) => {
            let data = r.buffer()?;
            Reply::Data(data, r.stat()?)
        }
        Op::GetChildren(_) => {
            let n = r.i32()?;
            let mut names = Vec::with_capacity(n.clamp(0, 4096) as usize);
            for _ in 0..n.max(0) {
                names.push(r.string()?);
            }
            Reply::Children(names)
        }
        _ => Reply::Done,
    })
}

/// Writes one framed request.
fn send(sock: &mut TcpStream, body: &[u8], deadline: Deadline) -> Done<()> {
    let mut out = Vec::with_capacity(body.len() + 4);
    out.extend_from_slice(&(body.len() as i32).to_be_bytes());
    out.extend_from_slice(body);
    net::bound(sock, deadline)?;
    sock.write_all(&out)?;
    Ok(())
}

/// Reads one framed reply.
fn receive(sock: &mut TcpStream, deadline: Deadline) -> Done<Vec<u8>> {
    let mut head = [0u8; 4];
    net::bound(sock, deadline)?;
    sock.read_exact(&mut head)?;
    let len = i32::from_be_bytes(head);
    if len < 0 || len as usize > MAX_REPLY {
        return Err(ZkFail::Protocol(format!("a reply of {len} bytes")));
    }
    let mut buf = vec![0u8; len as usize];
    let mut filled = 0;
    while filled < buf.len() {
        net::bound(sock, deadline)?;
        let n = sock.read(&mut buf[filled..])?;
        if n == 0 {
            return Err(ZkFail::Io(io::ErrorKind::UnexpectedEof.into()));
        }
        filled += n;
    }
    Ok(buf)
}

fn put_i32(b: &mut Vec<u8>, v: i32) {
    b.extend_from_slice(&v.to_be_bytes());
}

fn put_i64(b: &mut Vec<u8>, v: i64) {
    b.extend_from_slice(&v.to_be_bytes());
}

fn put_buffer(b: &mut Vec<u8>, v: &[u8]) {
    put_i32(b, v.len() as i32);
    b.extend_from_slice(v);
}

fn put_string(b: &mut Vec<u8>, v: &str) {
    put_buffer(b, v.as_bytes());
}

/// Reads the protocol's big-endian fields.
struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader { buf }
    }

    fn take(&mut self, n: usize) -> Done<&'a [u8]> {
        if self.buf.len() < n {
            return Err(ZkFail::Protocol("a reply shorter than its fields".into()));
        }
        let (head, rest) = self.buf.split_at(n);
        self.buf = rest;
        Ok(head)
    }

    fn u8(&mut self) -> Done<u8> {
        Ok(self.take(1)?[0])
    }

    fn i32(&mut self) -> Done<i32> {
        Ok(i32::from_be_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }

    fn i64(&mut self) -> Done<i64> {
        Ok(i64::from_be_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }

    /// A buffer; a null one (length -1) reads as empty.
    fn buffer(&mut self) -> Done<Vec<u8>> {
        let len = self.i32()?;
        if len < 0 {
            return Ok(Vec::new());
        }
        Ok(self.take(len as usize)?.to_vec())
    }

    fn string(&mut self) -> Done<String> {
        String::from_utf8(self.buffer()?)
            .map_err(|_| ZkFail::Protocol("a name that is not UTF-8".into()))
    }

    fn stat(&mut self) -> Done<Stat> {
        let czxid = self.i64()?;
        self.i64()?; // mzxid
        let ctime = self.i64()?;
        let mtime = self.i64()?;
        let version = self.i32()?;
        self.i32()?; // cversion
        self.i32()?; // aversion
        let owner = self.i64()?;
        self.i32()?; // data length
        self.i32()?; // children
        self.i64()?; // pzxid
        Ok(Stat {
            czxid,
            ctime,
            mtime,
            version,
            owner,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_transaction_is_framed_with_its_headers_and_end() {
        let mut b = Vec::new();
        let ops = vec![
            Op::Check {
                path: "/a",
                version: 3,
            },
            Op::Delete {
                path: "/b",
                version: -1,
            },
        ];
        encode(&mut b, &Op::Multi(ops), ("world", "anyone"));
        let mut want = Vec::new();
        for (kind, path, version) in [(CHECK, "/a", 3), (DELETE, "/b", -1)] {
            put_i32(&mut want, kind);
            want.push(0);
            put_i32(&mut want, -1);
            put_string(&mut want, path);
            put_i32(&mut want, version);
        }
        put_i32(&mut want, -1);
        want.push(1);
        put_i32(&mut want, -1);
        assert_eq!(b, want);
    }

    #[test]
    fn a_failed_transaction_names_its_first_failing_operation() {
        let mut b = Vec::new();
        for code in [OK, BAD_VERSION, RUNTIME_INCONSISTENCY] {
            put_i32(&mut b, -1);
            b.push(0);
            put_i32(&mut b, code);
            put_i32(&mut b, code);
        }
        put_i32(&mut b, -1);
        b.push(1);
        put_i32(&mut b, -1);
        let op = Op::Multi(vec![Op::Sync("/"), Op::Sync("/"), Op::Sync("/")]);
        assert_eq!(
            decode(&op, BAD_VERSION, &mut Reader::new(&b)).unwrap(),
            Reply::Failed {
                code: BAD_VERSION,
                op: 1
            }
        );
    }
}
