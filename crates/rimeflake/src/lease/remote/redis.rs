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

use super::{decode_state, tls, Conn, RemoteWorker, Replicas, Saved, Taken, Versioned};
use super::{Proposal, ServerView, Settings};
use crate::backend::redact;
use crate::backend::sentinel::{is_sentinel, SentinelUrl};
use crate::backend::tls::{Roots, SslMode, Tls};
use crate::error::{Error, ErrorKind, Result};
use errors::{breaks_connection, is_refusal, plain};
use redis::{Connection, RedisError, RedisResult, Value};
use scripts::{Lua, Scripts};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};

mod errors;
mod replicas;
mod scripts;
mod sentinel;
use std::time::Duration;

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

/// How many timeouts a connect may take once its host name resolved: the TCP connect, the TLS
/// handshake and the crate's setup replies are each bounded by one.
const CONNECT_STEPS: u32 = 5;

/// Resolves a host name and port to addresses; blocking, perhaps for long.
pub(crate) type Resolver = fn(&str, u16) -> std::io::Result<Vec<std::net::SocketAddr>>;

/// The system's resolver (`getaddrinfo`), which has no timeout of its own.
fn system_resolver(host: &str, port: u16) -> std::io::Result<Vec<std::net::SocketAddr>> {
    use std::net::ToSocketAddrs;
    Ok((host, port).to_socket_addrs()?.collect())
}

/// A connect running on its own thread: its answer, and how far it got.
struct Pending {
    answer: mpsc::Receiver<RedisResult<Connection>>,
    resolved: Arc<AtomicBool>,
}

/// What opens a namespace's keys, up to and including the `{` of the hash tag. A namespace
/// that starts with `}` would leave the tag empty (Redis then hashes each whole key, and a
/// worker's lease and state land in different slots): its keys get the tag `{/}` first, which
/// holds all of them in one slot, and which no other namespace's keys begin with (a namespace
/// holds no `/`).
fn opening(namespace: &str) -> &'static str {
    if namespace.starts_with('}') {
        "rimeflake:{/}{"
    } else {
        "rimeflake:{"
    }
}

pub(crate) fn lease_key(namespace: &str, worker_id: u64) -> String {
    format!("{}{namespace}:{worker_id}}}:lease", opening(namespace))
}

fn state_key(namespace: &str, worker_id: u64) -> String {
    format!("{}{namespace}:{worker_id}}}:state", opening(namespace))
}

fn layout_key(namespace: &str) -> String {
    format!("{}{namespace}}}:layout", opening(namespace))
}

pub(crate) fn workers_key(namespace: &str) -> String {
    format!("{}{namespace}}}:workers", opening(namespace))
}

fn used_key(namespace: &str) -> String {
    format!("{}{namespace}}}:used", opening(namespace))
}

/// One connect, on the thread [`RedisConn::start_connect`] made: to the server `client`'s
/// URL names, or to the primary the Sentinels name now.
fn connect_now(
    client: &redis::Client,
    sentinels: Option<&SentinelUrl>,
    timeout: Duration,
    resolver: Resolver,
    resolved: &AtomicBool,
) -> RedisResult<Connection> {
    let conn = match sentinels {
        Some(s) => {
            let info = sentinel::primary(client.get_connection_info(), s, timeout, resolver, resolved)?;
            let conn = connect_to(&info, timeout, resolver, resolved)?;
            sentinel::check_role(conn)?
        }
        None => connect_to(client.get_connection_info(), timeout, resolver, resolved)?,
    };
    Ok(conn)
}

/// A connection to the server `info` names, the host name resolved by `resolver`; every read
/// and write of it bounded by `timeout`.
fn connect_to(
    info: &redis::ConnectionInfo,
    timeout: Duration,
    resolver: Resolver,
    resolved: &AtomicBool,
) -> RedisResult<Connection> {
    use redis::{ConnectionAddr, ConnectionInfo};
    let (host, port) = match &info.addr {
        ConnectionAddr::Tcp(h, p)
        | ConnectionAddr::TcpTls {
            host: h, port: p, ..
        } => (h.clone(), *p),
        _ => return Err((redis::ErrorKind::InvalidClientConfig, "not a TCP address").into()),
    };
    let addrs = resolver(&host, port)?;
    resolved.store(true, Ordering::SeqCst);
    let conn = match &info.addr {
        // Plain TCP goes to the addresses resolved here: the name is not looked up again.
        ConnectionAddr::Tcp(..) => {
            let mut last = None;
            let mut found = None;
            for addr in addrs {
                let one = ConnectionInfo {
                    addr: ConnectionAddr::Tcp(addr.ip().to_string(), addr.port()),
                    redis: info.redis.clone(),
                };
                match redis::Client::open(one).and_then(|c| c.get_connection_with_timeout(timeout))
                {
                    Ok(conn) => {
                        found = Some(conn);
                        break;
                    }
                    Err(e) => last = Some(e),
                }
            }
            match (found, last) {
                (Some(conn), _) => conn,
                (None, Some(e)) => return Err(e),
                (None, None) => {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::NotFound,
                        "the host name has no address",
                    )
                    .into())
                }
            }
        }
        // TLS checks the certificate against the name: the crate connects by name (the
        // system's resolver answered just now).
        _ => redis::Client::open(info.clone())?.get_connection_with_timeout(timeout)?,
    };
    // The crate clears its timeouts once connected: set ours for every command.
    conn.set_read_timeout(Some(timeout))?;
    conn.set_write_timeout(Some(timeout))?;
    Ok(conn)
}

/// Workers read per round trip by [`Conn::workers`]: bounds the size of one reply.
const WORKERS_PER_BATCH: usize = 500;

/// Keys `SCAN` looks at per round trip in [`Conn::namespaces`] (a hint to the server).
const SCAN_COUNT: usize = 5_000;

/// Round trips [`Conn::namespaces`] may make: with [`SCAN_COUNT`], ten million keys.
const SCAN_ROUNDS: usize = 2_000;

/// The keys of a namespace (its layout, and its set of workers), and none of a worker's: the
/// layout key ends in `t`, the workers key in `s`, a worker's `lease` and `state` in `e`.
const NAMESPACE_KEYS: &str = "rimeflake:{*}:*[ts]";

/// The namespace whose layout or workers key `key` is.
fn namespace_of(key: &str) -> Option<&str> {
    // The keys of a namespace that starts with `}` open with the tag `{/}` (see `opening`).
    let rest = key
        .strip_prefix("rimeflake:{/}{")
        .filter(|rest| rest.starts_with('}'))
        .or_else(|| key.strip_prefix("rimeflake:{"))?;
    rest.strip_suffix("}:layout")
        .or_else(|| rest.strip_suffix("}:workers"))
}

/// Leases looked at per round trip by [`Conn::acquire_first`] when its first try is refused.
const PEEK_PER_BATCH: usize = 256;

impl RedisConn {
    /// Parses `url` and connects, so a wrong address or password shows at once.
    ///
    /// # Errors
    /// [`ErrorKind::Config`] for a URL that does not parse, a wrong or missing password or a
    /// database the server lacks; [`ErrorKind::Lease`] when the server cannot be reached within
    /// `op_timeout`. Messages show the URL without its password.
    pub(crate) fn open(url: &str, op_timeout: Duration) -> Result<RedisConn> {
        RedisConn::open_with(url, op_timeout, system_resolver)
    }

    /// [`RedisConn::open`] with another resolver.
    pub(crate) fn open_with(
        url: &str,
        op_timeout: Duration,
        resolver: Resolver,
    ) -> Result<RedisConn> {
        let shown = redact(url);
        let sentinels = match is_sentinel(url) {
            true => Some(Arc::new(crate::backend::sentinel::parse(url)?)),
            false => None,
        };
        // Through Sentinels: the primary's URL with a Sentinel's address for its own, which
        // each connect replaces with the one the Sentinels give.
        let primary = sentinels.as_ref().map_or(url, |s| s.primary.as_str());
        let (driver_url, tls) = crate::backend::tls::split(primary)?;
        let client = RedisConn::client(&driver_url, &tls, &shown)?;
        let password = client
            .get_connection_info()
            .redis
            .password
            .clone()
            .filter(|p| !p.is_empty());
        let mut conn = RedisConn {
            client,
            conn: None,
            url: shown,
            password,
            // A zero timeout means "none" to the socket calls: never let it through.
            timeout: op_timeout.max(Duration::from_millis(1)),
            tls,
            scripts: Scripts::new(),
            resolver,
            pending: None,
            sentinels,
            replicas: Arc::default(),
        };
        // A PING: a server that wants a password and got none says so only at the first
        // command, and that should show here rather than at the first lease.
        if let Err(e) = conn.run("PING", |c| redis::cmd("PING").query::<String>(c)) {
            return Err(conn.plain_text_port(e));
        }
        Ok(conn)
    }

    /// `e`, the failure of the first command over TLS, or, when the address answers a PING
    /// sent in the clear, the error that says the port does not speak TLS. A Redis port without
    /// TLS takes the start of a TLS handshake for part of a command and waits for the rest, so
    /// the handshake itself only times out, as a server that is down or paused would.
    fn plain_text_port(&self, e: Error) -> Error {
        let redis::ConnectionAddr::TcpTls { host, port, .. } =
            &self.client.get_connection_info().addr
        else {
            return e;
        };
        if !answers_in_plain_text(host, *port, self.timeout) {
            return e;
        }
        Error::config(format!(
            "Redis at {}: the TLS handshake with {host}:{port} failed: the server does not speak \
             TLS? It answers in plain text there: use redis:// for this port, or the server's \
             TLS port (its tls-port)",
            self.url
        ))
    }

    /// The crate's client for `url` (rimeflake's TLS parameters already split off into `tls`),
    /// with the certificates the parameters name read now, so a missing file shows at once.
    fn client(url: &str, tls: &Tls, shown: &str) -> Result<redis::Client> {
        // The crate's messages about a URL are fixed texts (no part of the URL).
        let refused = |e: RedisError| {
            Error::config(format!(
                "backend {shown}: not a usable Redis URL ({}); the form is \
                 redis[s]://[[user]:password@]host[:port][/db]",
                plain(&e)
            ))
        };
        if tls.mode == SslMode::Disable {
            return redis::Client::open(url).map_err(refused);
        }
        tls::ensure_provider();
        // The crate takes PEM bytes: each file is read once and checked before it gets them.
        let pem_certs = |path: &std::path::Path, param: &str| -> Result<Vec<u8>> {
            let pem = tls::read_file(path, param)?;
            tls::certs(&pem, path, param)?;
            Ok(pem)
        };
        let root_cert = match &tls.roots {
            Some(Roots::File(path)) => Some(pem_certs(path, "sslrootcert")?),
            // The crate reads the system's store itself.
            Some(Roots::System) | None => None,
        };
        let client_tls = match &tls.client {
            Some((cert, key)) => {
                let client_key = tls::read_file(key, "sslkey")?;
                tls::key(&client_key, key, "sslkey")?;
                Some(redis::ClientTlsConfig {
                    client_cert: pem_certs(cert, "sslcert")?,
                    client_key,
                })
            }
            None => None,
        };
        let certs = redis::TlsCertificates {
            client_tls,
            root_cert,
        };
        redis::Client::build_with_tls(url, certs).map_err(refused)
    }

    /// Runs `f` on the connection, connecting first when there is none. Drops the connection
    /// after an error that may have left it out of step (I/O, a reply it could not parse), so
    /// the next call starts on a fresh one.
    fn run<T>(
        &mut self,
        doing: &str,
        f: impl FnOnce(&mut Connection) -> RedisResult<T>,
    ) -> Result<T> {
        let conn = match self.conn.take() {
            Some(conn) => conn,
            None => self.connect()?,
        };
        match f(self.conn.insert(conn)) {
            Ok(v) => Ok(v),
            Err(e) => {
                if breaks_connection(&e) {
                    self.conn = None;
                }
                Err(self.error(&e, doing))
            }
        }
    }

    /// A new connection whose every read and write fails after the timeout, so a server that
    /// stopped answering (paused, or its host gone) fails the call instead of hanging it.
    ///
    /// The whole of it (resolving the host name, connecting, the TLS handshake and the crate's
    /// setup commands) runs on a thread of its own. The name must resolve within one timeout:
    /// a resolver that does not answer, which no socket timeout covers, fails the call in time.
    /// The steps after it are bounded by the timeout each, [`CONNECT_STEPS`] in all. That
    /// thread ends when the resolver answers; until then the next call waits for it again
    /// instead of starting another.
    fn connect(&mut self) -> Result<Connection> {
        let pending = match self.pending.take() {
            Some(p) => match p.answer.try_recv() {
                // The connect it waited for came through after all.
                Ok(Ok(conn)) => return Ok(conn),
                // It failed, or an answer is stale: start afresh.
                Ok(Err(_)) | Err(mpsc::TryRecvError::Disconnected) => self.start_connect()?,
                Err(mpsc::TryRecvError::Empty) => p,
            },
            None => self.start_connect()?,
        };
        // The name must resolve within one timeout. What follows (connecting, the TLS
        // handshake, the crate's setup commands) bounds each of its steps by the timeout itself,
        // and is waited for up to `CONNECT_STEPS` timeouts in all.
        let mut waited = Duration::ZERO;
        loop {
            match pending.answer.recv_timeout(self.timeout) {
                Ok(Ok(conn)) => return Ok(conn),
                Ok(Err(e)) => return Err(self.error(&e, "connect")),
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(Error::new(
                        ErrorKind::Lease,
                        format!(
                            "could not reach Redis at {}: the thread connecting stopped without \
                             an answer",
                            self.url
                        ),
                    ))
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    waited += self.timeout;
                    let resolved = pending.resolved.load(Ordering::SeqCst);
                    if resolved && waited < self.timeout * CONNECT_STEPS {
                        continue;
                    }
                    let why = if resolved {
                        "connect: no answer in time"
                    } else {
                        "its host name did not resolve in time"
                    };
                    self.pending = Some(pending);
                    return Err(Error::new(
                        ErrorKind::Lease,
                        format!(
                            "could not reach Redis at {} within {} ms ({why})",
                            self.url,
                            waited.as_millis()
                        ),
                    ));
                }
            }
        }
    }

    /// Starts a connect on a thread of its own: the host name resolved by `resolver`, then the
    /// crate's connect to each address in turn (by name for TLS, whose certificate names the
    /// host), every read and write bounded by the timeout.
    fn start_connect(&self) -> Result<Pending> {
        let (tx, answer) = mpsc::sync_channel(1);
        let resolved = Arc::new(AtomicBool::new(false));
        let (client, timeout, resolver) = (self.client.clone(), self.timeout, self.resolver);
        let sentinels = self.sentinels.clone();
        let done = Arc::clone(&resolved);
        std::thread::Builder::new()
            .name("rimeflake-redis-connect".into())
            .spawn(move || {
                let _ = tx.send(connect_now(
                    &client,
                    sentinels.as_deref(),
                    timeout,
                    resolver,
                    &done,
                ));
            })
            .map_err(|e| {
                Error::new(
                    ErrorKind::Lease,
                    format!("cannot start a thread to connect to Redis: {e}"),
                )
            })?;
        Ok(Pending { answer, resolved })
    }

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

/// Whether `host:port` answers a `PING` sent in the clear as Redis does: a reply in its
/// protocol, a simple string (`+PONG`) or an error (`-NOAUTH ...`). A TLS port answers with an
/// alert record or hangs up. Only a PING is sent: never a password.
fn answers_in_plain_text(host: &str, port: u16, timeout: Duration) -> bool {
    use std::io::{Read, Write};
    use std::net::{TcpStream, ToSocketAddrs};
    let Ok(addrs) = (host, port).to_socket_addrs() else {
        return false;
    };
    for addr in addrs {
        let Ok(mut stream) = TcpStream::connect_timeout(&addr, timeout) else {
            continue;
        };
        let line_ended = |r: &[u8]| r.windows(2).any(|w| w == b"\r\n");
        let mut reply = Vec::new();
        if stream.set_read_timeout(Some(timeout)).is_ok()
            && stream.set_write_timeout(Some(timeout)).is_ok()
            && stream.write_all(b"PING\r\n").is_ok()
        {
            // The first line of the reply, in a few reads at most; a hang-up or silence ends it.
            let mut buf = [0u8; 128];
            for _ in 0..4 {
                match stream.read(&mut buf) {
                    Ok(n) if n > 0 => reply.extend_from_slice(&buf[..n]),
                    _ => break,
                }
                if line_ended(&reply) {
                    break;
                }
            }
        }
        return matches!(reply.first(), Some(b'+' | b'-')) && line_ended(&reply);
    }
    false
}

/// Sends `pipe` (of `count` commands) and reads its replies; the first error reply, if any,
/// becomes the error once all replies are read (so the connection stays in step).
///
/// Not `Pipeline::query`: after a failed read the crate goes on reading every other reply, each
/// with the full read timeout, so a paused server would hold the call for `count` timeouts.
/// Here the first failed read ends the call (and [`RedisConn::run`] drops the connection).
fn pipelined(
    conn: &mut Connection,
    pipe: &redis::Pipeline,
    count: usize,
) -> RedisResult<Vec<Value>> {
    conn.send_packed_command(&pipe.get_packed_pipeline())?;
    let replies = (0..count)
        .map(|_| conn.recv_response())
        .collect::<RedisResult<Vec<Value>>>()?;
    replies.into_iter().map(Value::extract_error).collect()
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
