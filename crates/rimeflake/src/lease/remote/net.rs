//! TCP for the backends whose protocol rimeflake speaks itself (MySQL, ZooKeeper): a host name
//! resolved within a deadline (the system's resolver has none of its own), and sockets whose
//! every read and write ends by the deadline of the call they serve.

use std::io;
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::sync::mpsc;
use std::time::Duration;

/// Resolves a host name and port to addresses; blocking, perhaps for long.
pub(crate) type Resolver = fn(&str, u16) -> io::Result<Vec<SocketAddr>>;

/// The system's resolver (`getaddrinfo`).
pub(crate) fn system_resolver(host: &str, port: u16) -> io::Result<Vec<SocketAddr>> {
    use std::net::ToSocketAddrs;
    Ok((host, port).to_socket_addrs()?.collect())
}

/// A deadline on `CLOCK_BOOTTIME`, in ns.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Deadline(u64);

impl Deadline {
    pub(crate) fn after(d: Duration) -> Deadline {
        Deadline(crate::clock::boottime_ns().saturating_add(d.as_nanos() as u64))
    }
    /// What is left of it; an error of kind `TimedOut` when nothing is.
    pub(crate) fn left(&self) -> io::Result<Duration> {
        let now = crate::clock::boottime_ns();
        if now >= self.0 {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "no answer in time"));
        }
        // A zero timeout means "none" to the socket calls: never let one through.
        Ok(Duration::from_nanos(self.0 - now).max(Duration::from_millis(1)))
    }
}

/// Why a connect failed.
#[derive(Debug)]
pub(crate) enum ConnectError {
    /// The resolver did not answer by the deadline.
    Unresolved,
    /// It answered with an error, or no address.
    NoAddress(io::Error),
    /// Every address refused, or none answered by the deadline (the last error).
    Connect(io::Error),
}

impl std::fmt::Display for ConnectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConnectError::Unresolved => f.write_str("its host name did not resolve in time"),
            ConnectError::NoAddress(e) => write!(f, "its host name did not resolve: {e}"),
            ConnectError::Connect(e) if e.kind() == io::ErrorKind::TimedOut => {
                f.write_str("no answer in time")
            }
            ConnectError::Connect(e) => write!(f, "{e}"),
        }
    }
}

/// A lookup running on its thread: the name and port, and where its answer comes.
type Pending = (String, u16, mpsc::Receiver<io::Result<Vec<SocketAddr>>>);

/// Host-name lookups, each on a thread of its own so that a resolver that does not answer
/// fails the call by its deadline. A lookup still running when its caller gave up is waited for
/// again by the next call for the same name, rather than started a second time beside it.
pub(crate) struct Lookup {
    resolver: Resolver,
    pending: Option<Pending>,
}

impl Lookup {
    pub(crate) fn new(resolver: Resolver) -> Lookup {
        Lookup {
            resolver,
            pending: None,
        }
    }

    /// The addresses of `host:port`, by `deadline`.
    pub(crate) fn addrs(
        &mut self,
        host: &str,
        port: u16,
        deadline: Deadline,
    ) -> Result<Vec<SocketAddr>, ConnectError> {
        if let Ok(ip) = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>()
        {
            return Ok(vec![SocketAddr::new(ip, port)]);
        }
        let rx = match self.pending.take() {
            Some((h, p, rx)) if h == host && p == port => rx,
            _ => {
                let (tx, rx) = mpsc::sync_channel(1);
                let (resolver, name) = (self.resolver, host.to_string());
                std::thread::Builder::new()
                    .name("rimeflake-resolve".into())
                    .spawn(move || {
                        let _ = tx.send(resolver(&name, port));
                    })
                    .map_err(ConnectError::NoAddress)?;
                rx
            }
        };
        let left = deadline.left().map_err(|_| ConnectError::Unresolved)?;
        match rx.recv_timeout(left) {
            Ok(Ok(addrs)) if !addrs.is_empty() => Ok(addrs),
            Ok(Ok(_)) => Err(ConnectError::NoAddress(io::Error::new(
                io::ErrorKind::NotFound,
                "no address",
            ))),
            Ok(Err(e)) => Err(ConnectError::NoAddress(e)),
            Err(mpsc::RecvTimeoutError::Timeout) => {
                self.pending = Some((host.to_string(), port, rx));
                Err(ConnectError::Unresolved)
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => Err(ConnectError::NoAddress(
                io::Error::other("the resolver's thread ended without an answer"),
            )),
        }
    }

    /// A TCP connection to `host:port`, trying each address in turn, by `deadline`.
    pub(crate) fn connect(
        &mut self,
        host: &str,
        port: u16,
        deadline: Deadline,
    ) -> Result<TcpStream, ConnectError> {
        let mut last = None;
        for addr in self.addrs(host, port, deadline)? {
            let left = deadline.left().map_err(ConnectError::Connect)?;
            match TcpStream::connect_timeout(&addr, left) {
                Ok(s) => {
                    let _ = s.set_nodelay(true);
                    return Ok(s);
                }
                Err(e) => last = Some(e),
            }
        }
        Err(ConnectError::Connect(last.unwrap_or_else(|| {
            io::Error::new(io::ErrorKind::NotFound, "no address")
        })))
    }
}

/// Sets the read and write timeouts of `sock` to what is left of `deadline`.
pub(crate) fn bound(sock: &TcpStream, deadline: Deadline) -> io::Result<()> {
    let left = deadline.left()?;
    sock.set_read_timeout(Some(left))?;
    sock.set_write_timeout(Some(left))
}

/// Whether an idle connection was closed by its server (a restart, an idle timeout, a session
/// it expired): the socket reads as ended or failed without blocking. Data waiting on an idle
/// connection is as bad: the exchange is out of step.
pub(crate) fn closed_while_idle(sock: &TcpStream) -> bool {
    if sock.set_nonblocking(true).is_err() {
        return true;
    }
    let mut byte = [0u8; 1];
    let closed = !matches!(sock.peek(&mut byte), Err(e) if e.kind() == io::ErrorKind::WouldBlock);
    closed || sock.set_nonblocking(false).is_err()
}
