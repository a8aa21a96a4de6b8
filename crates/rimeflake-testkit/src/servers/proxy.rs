//! A TCP proxy on loopback that a test controls: what stands between a replica and its primary
//! (to delay or cut replication) or between a client and its server (a virtual IP that moves,
//! a network that stops answering).

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU16, AtomicU64, Ordering::SeqCst};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

/// A proxy from its own loopback port to a target port, killed when dropped.
pub struct Proxy {
    port: u16,
    shared: Arc<Shared>,
}

struct Shared {
    target: AtomicU16,
    /// How long every byte is held before it is passed on, each way, in ms.
    delay_ms: AtomicU64,
    /// Cut: open connections are closed, new ones are accepted and never answered.
    cut: AtomicBool,
    stop: AtomicBool,
    /// Both ends of every open connection, to close them all at once.
    open: Mutex<Vec<TcpStream>>,
}

impl Proxy {
    /// A proxy to `127.0.0.1:target`.
    pub fn start(target: u16) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let port = listener.local_addr().expect("the bound address").port();
        let shared = Arc::new(Shared {
            target: AtomicU16::new(target),
            delay_ms: AtomicU64::new(0),
            cut: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            open: Mutex::new(Vec::new()),
        });
        let s = Arc::clone(&shared);
        std::thread::Builder::new()
            .name("proxy-accept".into())
            .spawn(move || accept(&listener, &s))
            .expect("a proxy thread");
        Proxy { port, shared }
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The target from now on; open connections are closed, as when a virtual IP moves to
    /// another host, so that clients connect again (to the new target).
    pub fn point_to(&self, target: u16) {
        self.shared.target.store(target, SeqCst);
        self.shared.close_all();
    }

    /// Holds every byte `ms` before passing it on, each way (0: none).
    pub fn delay(&self, ms: u64) {
        self.shared.delay_ms.store(ms, SeqCst);
    }

    /// Closes every open connection; new ones are accepted and never answered, as across a
    /// network partition, until [`Proxy::heal`].
    pub fn cut(&self) {
        self.shared.cut.store(true, SeqCst);
        self.shared.close_all();
    }

    pub fn heal(&self) {
        self.shared.cut.store(false, SeqCst);
        self.shared.close_all();
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.shared.stop.store(true, SeqCst);
        self.shared.close_all();
        // Wakes the accepting thread, which then sees `stop`.
        let _ = TcpStream::connect_timeout(
            &SocketAddr::from(([127, 0, 0, 1], self.port)),
            Duration::from_secs(1),
        );
    }
}

impl Shared {
    fn close_all(&self) {
        for s in self
            .open
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .drain(..)
        {
            let _ = s.shutdown(Shutdown::Both);
        }
    }

    fn keep(&self, s: &TcpStream) {
        if let Ok(c) = s.try_clone() {
            self.open.lock().unwrap_or_else(|p| p.into_inner()).push(c);
        }
    }
}

fn accept(listener: &TcpListener, shared: &Arc<Shared>) {
    for client in listener.incoming() {
        if shared.stop.load(SeqCst) {
            return;
        }
        let Ok(client) = client else { continue };
        // Held silent while cut: closed with the others at the next heal, cut or drop.
        shared.keep(&client);
        if shared.cut.load(SeqCst) {
            continue;
        }
        let addr = SocketAddr::from(([127, 0, 0, 1], shared.target.load(SeqCst)));
        let Ok(server) = TcpStream::connect_timeout(&addr, Duration::from_secs(1)) else {
            let _ = client.shutdown(Shutdown::Both);
            continue;
        };
        shared.keep(&server);
        let (Ok(c2), Ok(s2)) = (client.try_clone(), server.try_clone()) else {
            continue;
        };
        pump(client, server, shared);
        pump(s2, c2, shared);
    }
}

/// Passes what `from` sends to `to`, each chunk held for the delay of when it was read.
fn pump(mut from: TcpStream, mut to: TcpStream, shared: &Arc<Shared>) {
    let (tx, rx) = mpsc::channel::<(u64, Vec<u8>)>();
    let s = Arc::clone(shared);
    let reader = std::thread::Builder::new()
        .name("proxy-read".into())
        .spawn(move || {
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                match from.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        let due = crate::now_ns() + s.delay_ms.load(SeqCst) * 1_000_000;
                        if tx.send((due, buf[..n].to_vec())).is_err() {
                            break;
                        }
                    }
                }
            }
            let _ = from.shutdown(Shutdown::Both);
        });
    if reader.is_err() {
        return;
    }
    let _ = std::thread::Builder::new()
        .name("proxy-write".into())
        .spawn(move || {
            for (due, bytes) in rx {
                let now = crate::now_ns();
                if due > now {
                    std::thread::sleep(Duration::from_nanos(due - now));
                }
                if to.write_all(&bytes).is_err() {
                    break;
                }
            }
            let _ = to.shutdown(Shutdown::Both);
        });
}
