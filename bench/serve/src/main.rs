//! `rimeflake serve` against the floor of its stack: a hyper server (the same auto HTTP/1.1 +
//! h2c connection builder, on the same multi-threaded tokio runtime) that answers every request
//! with a constant ID. A hyper load client on keep-alive HTTP/1.1 connections asks each in turn,
//! in alternating rounds, so both see the same machine.
//!
//! `rimeflake-bench-serve [--write] [--seconds S] [--rounds R]`: builds nothing itself (make
//! bench-serve builds the release binaries first); `--write` appends the table to
//! bench/RESULTS.md. `rimeflake-bench-serve --floor PORT` is the floor server alone;
//! `--load ADDR:PORT [--path P] [--concurrency C] [--seconds S]` one load run alone.

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use rimeflake::clock::monotonic_ns;
use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(port) = flag(&args, "--floor") {
        floor(port.parse().expect("--floor PORT"));
        return;
    }
    if let Some(addr) = flag(&args, "--load") {
        // One load run alone: --load ADDR --path P --concurrency C --seconds S.
        let addr: SocketAddr = addr.parse().expect("--load ADDR:PORT");
        let path: &'static str = Box::leak(
            flag(&args, "--path")
                .unwrap_or("/id")
                .to_string()
                .into_boxed_str(),
        );
        let conc = flag(&args, "--concurrency").map_or(64, |c| c.parse().expect("--concurrency C"));
        let secs = flag(&args, "--seconds").map_or(3.0, |s| s.parse().expect("--seconds S"));
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .unwrap();
        let m = runtime.block_on(load(addr, path, conc, secs));
        println!(
            "{:.0} req/s p99 {:.0} us requests {:.0}",
            m.rate,
            m.p99_us,
            m.rate * secs
        );
        return;
    }
    let seconds: f64 = flag(&args, "--seconds").map_or(3.0, |s| s.parse().expect("--seconds S"));
    let rounds: usize = flag(&args, "--rounds").map_or(3, |s| s.parse().expect("--rounds R"));
    let write = args.iter().any(|a| a == "--write");

    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().to_path_buf();
    let state = dir.join("bench-serve-state");
    let _ = std::fs::remove_dir_all(&state);
    let mut serve = Server::spawn(Command::new(dir.join("rimeflake")).args([
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--worker",
        "1",
        "--state-dir",
        state.to_str().unwrap(),
    ]));
    // The default layout caps a worker at 512 IDs per ms (9 sequence bits): batches are also
    // measured on a layout with 18, so that the service, not the layout, sets the pace.
    let mut wide = Server::spawn(Command::new(dir.join("rimeflake")).args([
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--layout",
        WIDE,
        "--worker",
        "1",
        "--state-dir",
        state.to_str().unwrap(),
    ]));
    let mut floor = Server::spawn(Command::new(&exe).args(["--floor", "0"]));

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    // One load run, with the CPU time the server process spent per request meanwhile (user and
    // system, all its threads): unlike requests a second, it does not move with what else the
    // shared machine runs.
    let run = |server: &Server, path: &'static str, conc: usize| {
        let before = cpu_ns(server.child.id());
        let mut m = runtime.block_on(load(server.addr, path, conc, seconds));
        m.cpu_us = (cpu_ns(server.child.id()) - before) as f64 / 1000.0 / m.requests;
        m
    };
    // Warm both up (connections, the generator's first reservation).
    run(&serve, "/id", 4);
    run(&floor, "/id", 4);

    let mut rows = Vec::new();
    for conc in [1usize, 64] {
        let (mut s, mut f) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            f.push(run(&floor, "/id", conc));
            s.push(run(&serve, "/id", conc));
        }
        let (s, f) = (median(s), median(f));
        println!(
            "GET /id c={conc}: serve {:.0} req/s p99 {:.0} us cpu {:.1} us/req; floor {:.0} req/s p99 {:.0} us cpu {:.1} us/req",
            s.rate, s.p99_us, s.cpu_us, f.rate, f.p99_us, f.cpu_us
        );
        rows.push(format!(
            "| `GET /id`, keep-alive, concurrency {conc} | {:.0} req/s, p99 {:.0} µs, {:.1} µs CPU/req | {:.0} req/s, p99 {:.0} µs, {:.1} µs CPU/req | throughput {:.2}× (target ≥ 0.8×), p99 {:.2}× (target ≤ 1.3×), server CPU per request {:.2}× |",
            s.rate, s.p99_us, s.cpu_us, f.rate, f.p99_us, f.cpu_us, s.rate / f.rate, s.p99_us / f.p99_us, s.cpu_us / f.cpu_us
        ));
    }
    for (server, name) in [(&serve, "default"), (&wide, WIDE)] {
        let mut batches = Vec::new();
        for _ in 0..rounds {
            batches.push(run(server, "/ids?n=1000", 64));
        }
        let b = median(batches);
        let ids_per_s = b.rate * 1000.0;
        println!(
            "GET /ids?n=1000 c=64 layout {name}: {:.0} req/s = {:.2} million IDs/s, p99 {:.0} us",
            b.rate,
            ids_per_s / 1e6,
            b.p99_us
        );
        rows.push(format!(
            "| `GET /ids?n=1000`, keep-alive, concurrency 64, layout `{name}` | {:.0} req/s = {:.2} million IDs/s, p99 {:.0} µs | | target ≥ 50 million IDs/s: {} |",
            b.rate,
            ids_per_s / 1e6,
            b.p99_us,
            if ids_per_s >= 50e6 { "met" } else { "missed" }
        ));
    }
    serve.stop();
    wide.stop();
    floor.stop();
    let _ = std::fs::remove_dir_all(&state);

    let table = format!(
        "| request | rimeflake serve | floor (hyper, constant) | ratio |\n|---|---:|---:|---|\n{}\n",
        rows.join("\n")
    );
    println!("\n{table}");
    if write {
        let results = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../RESULTS.md");
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&results)
            .expect("bench/RESULTS.md");
        let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
        write!(
            f,
            "\n## rimeflake serve (`make bench-serve`, {} UTC)\n\n\
             Release build; the load client, `rimeflake serve` and the floor share this machine's {cpus} \
             cores; medians of {rounds} alternating rounds of {seconds} s.\n\n{table}\n\
             Leaf (Meituan's ID service) publishes about 50,000 requests per second on a 4-core \
             VM for its snowflake mode (its README); not measured here.\n",
            rimeflake::frontend::iso8601(rimeflake::clock::system_now_ms())
                .get(..16)
                .unwrap_or("")
                .replace('T', " ")
        )
        .unwrap();
        println!("appended to {}", results.display());
    }
}

/// The default layout with 18 sequence bits and 1 worker bit: 262 million IDs per ms-worker.
const WIDE: &str = "default,worker=1,sequence=18";

fn flag<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(String::as_str)
}

/// A server process that printed `serving on http://ADDR` on stderr.
struct Server {
    child: Child,
    addr: SocketAddr,
}

impl Server {
    // The child is waited for in `stop`, or killed and waited for when it fails to start.
    #[allow(clippy::zombie_processes)]
    fn spawn(cmd: &mut Command) -> Server {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the server starts");
        let mut reader = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        loop {
            line.clear();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                let _ = child.kill();
                let _ = child.wait();
                panic!("the server exited before listening");
            }
            if let Some(rest) = line.split("serving on http://").nth(1) {
                let addr = rest.split_whitespace().next().unwrap().parse().unwrap();
                // Keep draining stderr so the server never blocks on it.
                std::thread::spawn(move || {
                    let mut sink = String::new();
                    while reader.read_line(&mut sink).unwrap_or(0) > 0 {
                        sink.clear();
                    }
                });
                return Server { child, addr };
            }
        }
    }

    fn stop(&mut self) {
        // SAFETY: kill(2) on our own child.
        unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
        let _ = self.child.wait();
    }
}

/// The floor: the same connection builder and runtime shape as `rimeflake serve`, a constant
/// answer.
fn floor(port: u16) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .unwrap();
        eprintln!(
            "floor: serving on http://{}",
            listener.local_addr().unwrap()
        );
        let builder = Arc::new(auto::Builder::new(TokioExecutor::new()));
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            let _ = stream.set_nodelay(true);
            let builder = builder.clone();
            tokio::spawn(async move {
                let service = service_fn(|_req: hyper::Request<Incoming>| async {
                    let mut r =
                        hyper::Response::new(Full::new(Bytes::from_static(b"48046053506678784\n")));
                    r.headers_mut().insert(
                        hyper::header::CONTENT_TYPE,
                        hyper::header::HeaderValue::from_static("text/plain; charset=utf-8"),
                    );
                    Ok::<_, std::convert::Infallible>(r)
                });
                let _ = builder
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
}

/// One measurement: requests a second, the 99th percentile latency, the requests answered
/// and the server's CPU time per request (µs, filled in by the caller).
#[derive(Clone, Copy)]
struct Measured {
    rate: f64,
    p99_us: f64,
    requests: f64,
    cpu_us: f64,
}

/// The CPU time (user and system, every thread) process `pid` has used, in ns, from
/// /proc/<pid>/stat (clock ticks: 10 ms each, far below a run's seconds of CPU).
fn cpu_ns(pid: u32) -> u64 {
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

fn median(mut runs: Vec<Measured>) -> Measured {
    runs.sort_by(|a, b| a.rate.total_cmp(&b.rate));
    let mid = runs[runs.len() / 2];
    let mut p99s: Vec<f64> = runs.iter().map(|r| r.p99_us).collect();
    p99s.sort_by(f64::total_cmp);
    let mut cpus: Vec<f64> = runs.iter().map(|r| r.cpu_us).collect();
    cpus.sort_by(f64::total_cmp);
    Measured {
        p99_us: p99s[p99s.len() / 2],
        cpu_us: cpus[cpus.len() / 2],
        ..mid
    }
}

/// `conc` keep-alive HTTP/1.1 connections asking `path` back to back for `seconds`.
async fn load(addr: SocketAddr, path: &'static str, conc: usize, seconds: f64) -> Measured {
    let end = monotonic_ns() + (seconds * 1e9) as u64;
    let tasks: Vec<_> = (0..conc)
        .map(|_| {
            tokio::spawn(async move {
                let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
                stream.set_nodelay(true).unwrap();
                let (mut send, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
                    .await
                    .unwrap();
                tokio::spawn(conn);
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
                    let res = send.send_request(req).await.expect("an answer");
                    assert_eq!(res.status(), 200);
                    let body = res.into_body().collect().await.unwrap().to_bytes();
                    assert!(!body.is_empty());
                    latencies.push(monotonic_ns() - start);
                }
                latencies
            })
        })
        .collect();
    let started = monotonic_ns();
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
