//! Connecting to Redis: the client for a URL (with its TLS certificates read at once), a
//! connect on a thread of its own whose host name must resolve in time (to the primary the
//! Sentinels name, with a `redis+sentinel://` URL: `connection/sentinel.rs`), every read and
//! write bounded by the timeout; a connection dropped after an error that may have left it out
//! of step, and opened again by the next call.

use super::errors::{breaks_connection, plain};
use super::{RedisConn, Scripts};
use crate::backend::redact;
use crate::backend::sentinel::{is_sentinel, SentinelUrl};
use crate::backend::tls::{Roots, SslMode, Tls};
use crate::error::{Error, ErrorKind, Result};
use crate::lease::remote::tls;
use redis::{Connection, RedisError, RedisResult, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

mod sentinel;

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
pub(super) struct Pending {
    answer: mpsc::Receiver<RedisResult<Connection>>,
    resolved: Arc<AtomicBool>,
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
            let info =
                sentinel::primary(client.get_connection_info(), s, timeout, resolver, resolved)?;
            let conn = connect_to(&info, timeout, resolver, resolved)?;
            sentinel::check_role(conn)?
        }
        None => connect_to(client.get_connection_info(), timeout, resolver, resolved)?,
    };
    Ok(conn)
}

/// A connection to the server `info` names, the host name resolved by `resolver`; every read
/// and write of it bounded by `timeout`.
pub(super) fn connect_to(
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
    pub(super) fn run<T>(
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
pub(super) fn pipelined(
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
