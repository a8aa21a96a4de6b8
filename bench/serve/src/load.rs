//! The load client: keep-alive HTTP/1.1 connections, or HTTP/2 cleartext streams over a few
//! connections, asking one path back to back; and the measures it takes.

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rimeflake::clock::monotonic_ns;
use std::net::SocketAddr;

/// How requests travel.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Proto {
    /// One keep-alive HTTP/1.1 connection a client.
    H1,
    /// HTTP/2 cleartext: the clients share this many connections, a stream each at a time.
    H2c(usize),
}

/// One measurement: requests a second, the 99th percentile latency, the requests answered
/// and the server's CPU time per request (µs, filled in by the caller).
#[derive(Clone, Copy)]
pub struct Measured {
    pub rate: f64,
    pub p99_us: f64,
    pub requests: f64,
    pub cpu_us: f64,
}

/// The median run by rate, with the medians of p99 and CPU per request.
pub fn median(mut runs: Vec<Measured>) -> Measured {
    runs.sort_by(|a, b| a.rate.total_cmp(&b.rate));
    let mid = runs[runs.len() / 2];
    let med = |f: fn(&Measured) -> f64| {
        let mut v: Vec<f64> = runs.iter().map(f).collect();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    Measured {
        p99_us: med(|m| m.p99_us),
        cpu_us: med(|m| m.cpu_us),
        ..mid
    }
}

/// The CPU time (user and system, every thread) process `pid` has used, in ns, from
/// /proc/<pid>/stat (clock ticks: 10 ms each, far below a run's seconds of CPU).
pub fn cpu_ns(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The fields after the command's closing parenthesis; utime and stime are the 14th and
    // 15th of the whole line, so the 12th and 13th after it.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let ticks: u64 = rest
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|f| f.parse::<u64>().ok())
        .sum();
    // SAFETY: sysconf only reads a system constant.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    ticks * 1_000_000_000 / hz
}

/// A sender of requests on one connection, of either protocol.
enum Sender {
    H1(hyper::client::conn::http1::SendRequest<Empty<Bytes>>),
    H2(hyper::client::conn::http2::SendRequest<Empty<Bytes>>),
}

async fn connect(addr: SocketAddr, proto: Proto) -> Sender {
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.set_nodelay(true).unwrap();
    let io = TokioIo::new(stream);
    match proto {
        Proto::H1 => {
            let (send, conn) = hyper::client::conn::http1::handshake(io).await.unwrap();
            tokio::spawn(conn);
            Sender::H1(send)
        }
        Proto::H2c(_) => {
            let (send, conn) = hyper::client::conn::http2::handshake(TokioExecutor::new(), io)
                .await
                .unwrap();
            tokio::spawn(conn);
            Sender::H2(send)
        }
    }
}

/// `conc` clients asking `path` back to back for `seconds`.
pub async fn load(
    addr: SocketAddr,
    path: &'static str,
    conc: usize,
    proto: Proto,
    seconds: f64,
) -> Measured {
    // Every connection first, then every client at once, timed from there.
    let shared = match proto {
        Proto::H1 => Vec::new(),
        Proto::H2c(conns) => {
            let mut v = Vec::new();
            for _ in 0..conns {
                v.push(connect(addr, proto).await);
            }
            v
        }
    };
    let mut senders = Vec::with_capacity(conc);
    for i in 0..conc {
        senders.push(match proto {
            Proto::H1 => connect(addr, proto).await,
            Proto::H2c(_) => match &shared[i % shared.len()] {
                Sender::H2(s) => Sender::H2(s.clone()),
                Sender::H1(_) => unreachable!("h2c connections are HTTP/2"),
            },
        });
    }
    let started = monotonic_ns();
    let end = started + (seconds * 1e9) as u64;
    let tasks: Vec<_> = senders
        .into_iter()
        .map(|sender| tokio::spawn(client(sender, path, end)))
        .collect();
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    let elapsed = (monotonic_ns() - started) as f64 / 1e9;
    all.sort_unstable();
    let p99 = all[(all.len() * 99 / 100).min(all.len() - 1)];
    Measured {
        rate: all.len() as f64 / elapsed,
        p99_us: p99 as f64 / 1000.0,
        requests: all.len() as f64,
        cpu_us: 0.0,
    }
}

/// One client: requests back to back until `end`, each answer read whole; the latencies.
async fn client(mut sender: Sender, path: &'static str, end: u64) -> Vec<u64> {
    let mut latencies = Vec::with_capacity(100_000);
    loop {
        let start = monotonic_ns();
        if start >= end {
            break;
        }
        let req = hyper::Request::get(path)
            .header(hyper::header::HOST, "127.0.0.1")
            .body(Empty::<Bytes>::new())
            .unwrap();
        let res = match &mut sender {
            Sender::H1(s) => s.send_request(req).await,
            Sender::H2(s) => {
                let mut uri = hyper::Uri::builder().scheme("http").authority("127.0.0.1");
                uri = uri.path_and_query(path);
                let (mut parts, body) = req.into_parts();
                parts.uri = uri.build().unwrap();
                s.send_request(hyper::Request::from_parts(parts, body))
                    .await
            }
        }
        .expect("an answer");
        assert_eq!(res.status(), 200, "{path}");
        let body = res.into_body().collect().await.unwrap().to_bytes();
        assert!(!body.is_empty());
        latencies.push(monotonic_ns() - start);
    }
    latencies
}
