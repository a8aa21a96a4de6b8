//! `rimeflake serve` against the floor of its stack and a peer, in one run. The floor: a hyper
//! server (the same auto HTTP/1.1 + h2c connection builder, on the same multi-threaded tokio
//! runtime) that answers every request with a constant. The peer: Go's net/http on
//! bwmarrin/snowflake (bench/serve/go), the kind of ID service rimeflake serve replaces. A hyper
//! load client asks each in turn, in alternating rounds, so all see the same machine; each
//! server's CPU time per request is read from /proc meanwhile.
//!
//! `rimeflake-bench-serve [--write] [--seconds S] [--rounds R]`: builds nothing itself (make
//! bench-serve builds the release binaries and the Go server first); `--write` appends the
//! table to bench/RESULTS.md. `rimeflake-bench-serve --floor PORT` is the floor server alone;
//! `--load ADDR:PORT [--path P] [--concurrency C] [--seconds S]` one load run alone.

mod load;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use load::{cpu_ns, median, Measured, Proto};
use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;

/// What is measured: a path, the concurrency, the protocol, and whether the path is the batch
/// (then `rimeflake serve` runs on a layout with room, [`WIDE`]).
const CASES: [(&str, usize, Proto, bool); 5] = [
    ("/id", 1, Proto::H1, false),
    ("/id", 64, Proto::H1, false),
    ("/id", 256, Proto::H1, false),
    ("/id", 64, Proto::H2c(4), false),
    ("/ids?n=1000", 64, Proto::H1, true),
];

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
        let m = runtime.block_on(load::load(addr, path, conc, Proto::H1, secs));
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
    let serve_on = |layout: &str| {
        Server::spawn(Command::new(dir.join("rimeflake")).args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--layout",
            layout,
            "--worker",
            "1",
            "--state-dir",
            state.to_str().unwrap(),
        ]))
    };
    let mut serve = serve_on("default");
    // The default layout caps a worker at 512 IDs per ms (9 sequence bits): batches are
    // measured on a layout with 18, so that the service, not the layout, sets the pace.
    let mut wide = serve_on(WIDE);
    let mut floor = Server::spawn(Command::new(&exe).args(["--floor", "0"]));
    let go = dir.join("go-snowflake");
    let mut peer = Server::spawn(Command::new(&go).args(["-listen", "127.0.0.1:0"]));

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    // One load run, with the CPU time the server process spent per request meanwhile (user and
    // system, all its threads): unlike requests a second, it does not move with what else the
    // shared machine runs.
    let run = |server: &Server, path: &'static str, conc: usize, proto: Proto| {
        let before = cpu_ns(server.child.id());
        let mut m = runtime.block_on(load::load(server.addr, path, conc, proto, seconds));
        m.cpu_us = (cpu_ns(server.child.id()) - before) as f64 / 1000.0 / m.requests;
        m
    };
    // Warm each up (connections, the generators' first reservations, Go's runtime).
    for s in [&serve, &wide, &floor, &peer] {
        run(s, "/id", 4, Proto::H1);
    }

    let mut rows = Vec::new();
    let mut verdicts = Vec::new();
    for (path, conc, proto, batch) in CASES {
        let ours = if batch { &wide } else { &serve };
        let (mut s, mut f, mut g) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..rounds {
            f.push(run(&floor, path, conc, proto));
            s.push(run(ours, path, conc, proto));
            g.push(run(&peer, path, conc, proto));
        }
        let (s, f, g) = (median(s), median(f), median(g));
        let how = match proto {
            Proto::H1 => "HTTP/1.1 keep-alive".to_string(),
            Proto::H2c(n) => format!("h2c, {n} connections"),
        };
        let what = format!("`GET {path}`, {how}, concurrency {conc}");
        let cell = |m: &Measured| {
            format!(
                "{:.0} req/s, p99 {:.0} µs, {:.1} µs CPU/req",
                m.rate, m.p99_us, m.cpu_us
            )
        };
        println!(
            "{what}: serve {}; floor {}; go {}",
            cell(&s),
            cell(&f),
            cell(&g)
        );
        let cpu_ratio = s.cpu_us / f.cpu_us;
        rows.push(format!(
            "| {what}{} | {} | {} | {} | {cpu_ratio:.2}× | {:.2}× | {:.2}× |",
            if batch {
                format!(" (rimeflake on `{WIDE}`)")
            } else {
                String::new()
            },
            cell(&s),
            cell(&f),
            cell(&g),
            s.rate / f.rate,
            g.cpu_us / s.cpu_us
        ));
        verdicts.push(format!(
            "- {what}: server CPU per request {cpu_ratio:.2}× the floor's: {}",
            if cpu_ratio <= 1.1 { "met" } else { "missed" }
        ));
    }
    for s in [&mut serve, &mut wide, &mut floor, &mut peer] {
        s.stop();
    }
    let _ = std::fs::remove_dir_all(&state);

    let table = format!(
        "| request | rimeflake serve | floor (hyper, constant) | Go net/http + bwmarrin/snowflake | serve CPU/req ÷ floor | serve req/s ÷ floor | Go CPU/req ÷ serve |\n\
         |---|---:|---:|---:|---:|---:|---:|\n{}\n\nGoal: at most 1.1× the floor's CPU per request.\n{}\n",
        rows.join("\n"),
        verdicts.join("\n")
    );
    println!("\n{table}");
    if write {
        let results = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../RESULTS.md");
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&results)
            .expect("bench/RESULTS.md");
        let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
        let go_version = Command::new("go")
            .arg("version")
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_default();
        write!(
            f,
            "\n## rimeflake serve (`make bench-serve`, {} UTC)\n\n\
             Release build; the load client (hyper), `rimeflake serve`, the floor and the Go \
             server ({go_version}, bwmarrin/snowflake v0.3.0, bench/serve/go) share this \
             machine's {cpus} cores; medians of {rounds} rounds of {seconds} s, the three taking \
             turns. CPU/req is each server process's CPU time (user and system, all threads, \
             from /proc) per request answered.\n\n{table}",
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
/// answer: one ID a line for `/id`, a thousand for `/ids` (the batch measured).
fn floor(port: u16) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let one = Bytes::from_static(b"48046053506678784\n");
    let batch = Bytes::from("48046053506678784\n".repeat(1000));
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
            let (one, batch) = (one.clone(), batch.clone());
            tokio::spawn(async move {
                let service = service_fn(move |req: hyper::Request<Incoming>| {
                    let body = match req.uri().path() {
                        "/ids" => batch.clone(),
                        _ => one.clone(),
                    };
                    async move {
                        let mut r = hyper::Response::new(Full::new(body));
                        r.headers_mut().insert(
                            hyper::header::CONTENT_TYPE,
                            hyper::header::HeaderValue::from_static("text/plain; charset=utf-8"),
                        );
                        Ok::<_, std::convert::Infallible>(r)
                    }
                });
                let _ = builder
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
}
