//! Overload answered rather than parked: past `--max-connections` a fast 503 (counted), the
//! open-file limit raised at start or the start refused, batches past the layout's rate refused
//! at once with `Retry-After`, HTTP/2 clients that never read their answers bounded (IDs,
//! threads, memory, back to the baseline once they leave), a slow HTTP/2 preface cut at the
//! header timeout. Each time another client is served meanwhile; its latency is printed (tests
//! assert no timing: the machine is shared).

use common::support::TempDir;

mod common;
use common::h2::*;
use common::{closed, rss_kib, threads, wait_until, Conn, Server};

use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

/// The value of the sample `name{labels}` (or `name`) on /metrics (asked again while the
/// server is at its connection limit).
fn metric(server: &Server, sample: &str) -> f64 {
    let auth = format!("Authorization: Bearer {TOKEN}");
    let mut page = String::new();
    wait_until("/metrics", Duration::from_secs(30), || {
        let (status, body) = server.get_with("/metrics", &[&auth]);
        page = body;
        status == 200
    });
    page.lines()
        .find_map(|l| l.strip_prefix(sample)?.strip_prefix(' '))
        .unwrap_or_else(|| panic!("no {sample} in:\n{page}"))
        .parse()
        .unwrap()
}

/// Another client's `/id` meanwhile: its status and latency (printed, not asserted).
fn another_client(server: &Server, what: &str) -> u16 {
    let start = rimeflake::clock::monotonic_ns();
    let mut conn = Conn::open(server.addr);
    let a = conn.ask("GET", "/id", &[&format!("Authorization: Bearer {TOKEN}")]);
    let ms = (rimeflake::clock::monotonic_ns() - start) as f64 / 1e6;
    eprintln!("{what}: another client's /id: {} in {ms:.1} ms", a.status);
    assert!(
        a.status == 200 || (a.status == 503 && a.header("retry-after").is_some()),
        "{what}: {a:?}"
    );
    a.status
}

#[test]
fn past_max_connections_a_503_says_so_and_is_counted() {
    let dir = TempDir::new("serve-maxconn");
    let server = Server::start(
        &[
            "--worker",
            "1",
            "--state-dir",
            dir.path(),
            "--max-connections",
            "8",
        ],
        &[],
    );
    let mut held: Vec<Conn> = (0..8).map(|_| Conn::open(server.addr)).collect();
    for c in &mut held {
        assert_eq!(c.get("/healthz").status, 200);
    }
    // The ninth, even for /healthz: a 503 with a reason and Retry-After, not a silent close.
    for path in ["/healthz", "/id"] {
        let start = rimeflake::clock::monotonic_ns();
        let a = Conn::open(server.addr).get(path);
        let ms = (rimeflake::clock::monotonic_ns() - start) as f64 / 1e6;
        eprintln!("past the limit: {path}: {} in {ms:.1} ms", a.status);
        assert_eq!(a.status, 503, "{a:?}");
        assert_eq!(a.header("retry-after"), Some("1"));
        assert!(a.body.contains("--max-connections"), "{:?}", a.body);
        assert_eq!(a.body.lines().count(), 1);
    }
    // An HTTP/2 client past the limit: GOAWAY (no stream processed), the reason with it.
    let mut h2 = TcpStream::connect(server.addr).unwrap();
    h2.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    h2.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n").unwrap();
    h2.write_all(&h2_frame(H2_SETTINGS, 0, 0, &[])).unwrap();
    let mut got = Vec::new();
    let _ = h2.read_to_end(&mut got);
    let goaway = got
        .windows(8)
        .position(|w| w[3] == 0x7 && w[5..8] == [0, 0, 0]);
    assert!(goaway.is_some(), "no GOAWAY in {got:?}");
    assert!(String::from_utf8_lossy(&got).contains("--max-connections"));
    // Others are served once a connection frees a place.
    drop(held.pop());
    wait_until("a place again", Duration::from_secs(30), || {
        common::try_get(server.addr, "/id").is_some_and(|(s, _)| s == 200)
    });
    assert!(metric(&server, "rimeflake_http_connections_refused_total") >= 3.0);
}

/// `rimeflake serve` with its open-file limit set to `soft` and `hard` before it runs.
fn with_nofile(soft: u64, hard: u64) -> Command {
    let mut cmd = Command::new(common::binary());
    // SAFETY: setrlimit in the child before exec, on values we own; async-signal-safe.
    unsafe {
        cmd.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: soft as libc::rlim_t,
                rlim_max: hard as libc::rlim_t,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd
}

/// A process's open-file limit, soft and hard, from /proc.
fn nofile(pid: u32) -> (u64, u64) {
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .unwrap();
    let v: Vec<u64> = line
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    (v[0], v[1])
}

#[test]
fn the_open_file_limit_is_raised_to_what_max_connections_needs_or_the_start_refused() {
    let dir = TempDir::new("serve-nofile");
    let args = [
        "--worker",
        "1",
        "--state-dir",
        dir.path(),
        "--max-connections",
        "1024",
    ];
    let mut server = Server::start_with(with_nofile(256, 4096), "127.0.0.1:0", &args, &[]);
    let (soft, hard) = nofile(server.child.id());
    assert!(soft > 1024, "soft limit {soft} (hard {hard})");
    assert!(server
        .stderr
        .lock()
        .unwrap()
        .contains("raised the open-file limit from 256"));
    assert!(server.stop().success());

    let out = with_nofile(256, 512)
        .args(["serve", "--listen", "127.0.0.1:0"])
        .args(args)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--max-connections 1024 need"), "{err}");
    assert!(
        err.contains("at most 512") && err.contains("LimitNOFILE="),
        "{err}"
    );
}

#[test]
fn batches_past_the_layouts_rate_are_refused_at_once_with_retry_after() {
    let dir = TempDir::new("serve-rate");
    // The default layout: 512 IDs a ms. Eight clients asking for 10,000 at a time want more.
    let server = Server::start(
        &["--worker", "1", "--state-dir", dir.path()],
        &[("RIMEFLAKE_SERVE_TOKEN", TOKEN)],
    );
    let stop = Arc::new(AtomicBool::new(false));
    let refused = Arc::new(AtomicU64::new(0));
    let auth = format!("Authorization: Bearer {TOKEN}");
    let clients: Vec<_> = (0..8)
        .map(|_| {
            let (stop, refused) = (stop.clone(), refused.clone());
            let (addr, auth) = (server.addr, auth.clone());
            std::thread::spawn(move || {
                let mut conn = Conn::open(addr);
                let mut served = 0u64;
                while !stop.load(SeqCst) {
                    let a = conn.ask("GET", "/ids?n=10000", &[&auth]);
                    match a.status {
                        200 => {
                            assert_eq!(a.body.lines().count(), 10_000);
                            served += 1;
                        }
                        503 => {
                            assert!(a.header("retry-after").is_some(), "{a:?}");
                            assert!(a.body.starts_with("busy: "), "{a:?}");
                            refused.fetch_add(1, SeqCst);
                        }
                        s => panic!("{s}: {}", a.body),
                    }
                }
                served
            })
        })
        .collect();
    // Refused, not parked: some answers are a 503 that says when to come back.
    wait_until("refusals past the rate", Duration::from_secs(30), || {
        refused.load(SeqCst) >= 10
    });
    another_client(&server, "batches past the rate");
    stop.store(true, SeqCst);
    let served: u64 = clients.into_iter().map(|c| c.join().unwrap()).sum();
    eprintln!(
        "batches past the rate: {served} served, {} refused",
        refused.load(SeqCst)
    );
    assert!(served > 0);
    assert!(
        metric(
            &server,
            "rimeflake_http_requests_refused_total{reason=\"deadline\"}"
        ) >= 10.0
    );
}

#[test]
fn h2_clients_that_never_read_are_bounded_and_the_memory_comes_back_when_they_leave() {
    let dir = TempDir::new("serve-h2unread");
    let server = Server::start(
        &["--worker", "2", "--state-dir", dir.path()],
        &[("RIMEFLAKE_SERVE_TOKEN", TOKEN)],
    );
    let pid = server.child.id();
    // Warm: the first answers, the blocking pool's first thread.
    for _ in 0..20 {
        another_client(&server, "warming");
    }
    let (rss_before, threads_before) = (rss_kib(pid), threads(pid));
    // Eight connections, each 256 streams of 10,000 IDs, none ever acknowledged: the server
    // may send 64 KiB a connection; the rest of each answer would wait in its memory.
    let conns: Vec<_> = (0..8)
        .map(|_| {
            let (mut s, read) = h2_open(&server);
            let block = h2_request("/ids?n=10000", 0, 0);
            for i in 0..256u32 {
                let frame = h2_frame(H2_HEADERS, END_STREAM | END_HEADERS, 2 * i + 1, &block);
                s.write_all(&frame).unwrap();
            }
            (s, read)
        })
        .collect();
    let issued = "rimeflake_ids_issued_total{namespace=\"default\"}";
    wait_until(
        "the unread streams answered or refused",
        Duration::from_secs(120),
        || {
            let answered = metric(&server, "rimeflake_http_responses_total{code=\"2xx\"}")
                + metric(&server, "rimeflake_http_responses_total{code=\"4xx\"}")
                + metric(&server, "rimeflake_http_responses_total{code=\"5xx\"}");
            answered >= 8.0 * 256.0
        },
    );
    let during = (rss_kib(pid), threads(pid), metric(&server, issued));
    another_client(&server, "h2 clients that never read");
    eprintln!(
        "unread h2: RSS {rss_before} -> {} KiB, threads {threads_before} -> {}, IDs issued {}",
        during.0, during.1, during.2
    );
    // A sixteenth of --max-ids-in-flight (1,000,000 IDs of 20 bytes) a connection: answers
    // of about 1.25 MB each (some 70,000 IDs of 18 bytes), and what the windows let through;
    // the rest refused with 429.
    assert!(
        during.2 <= 8.0 * 80_000.0,
        "{} IDs issued for unread answers",
        during.2
    );
    assert!(
        metric(
            &server,
            "rimeflake_http_requests_refused_total{reason=\"connection\"}"
        ) > 0.0
    );
    assert!(
        during.1 <= threads_before + 16,
        "threads {threads_before} -> {}",
        during.1
    );
    assert!(
        during.0 < rss_before + 64 * 1024,
        "RSS {rss_before} -> {} KiB",
        during.0
    );
    for (s, _) in &conns {
        let _ = s.shutdown(std::net::Shutdown::Both); // the clients leave
    }
    wait_until("the connections gone", Duration::from_secs(60), || {
        metric(&server, "rimeflake_http_connections_open") <= 1.0
    });
    wait_until("the memory back", Duration::from_secs(60), || {
        rss_kib(pid) < rss_before + 8 * 1024
    });
    assert_eq!(metric(&server, "rimeflake_http_ids_in_flight"), 0.0);
}

#[test]
fn a_slow_http2_preface_is_cut_at_the_header_timeout() {
    let dir = TempDir::new("serve-preface");
    let server = Server::start(
        &[
            "--worker",
            "3",
            "--state-dir",
            dir.path(),
            "--header-timeout",
            "1",
            "--idle-timeout",
            "600",
        ],
        &[],
    );
    // The preface a byte at a time, then settings and pings: never idle, never a request.
    let mut slow = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    slow.extend(h2_frame(H2_SETTINGS, 0, 0, &[]));
    let mut s = TcpStream::connect(server.addr).unwrap();
    let mut sent = 0;
    wait_until("the slow preface cut", Duration::from_secs(20), || {
        let _ = match slow.get(sent) {
            Some(b) => s.write_all(&[*b]),
            None => s.write_all(&h2_frame(0x6, 0, 0, &[0; 8])), // PING
        };
        sent += 1;
        std::thread::sleep(Duration::from_millis(100));
        closed(&mut s)
    });
    // A whole preface, then nothing: cut too (no request within the header timeout).
    let mut s = TcpStream::connect(server.addr).unwrap();
    s.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n").unwrap();
    s.write_all(&h2_frame(H2_SETTINGS, 0, 0, &[])).unwrap();
    wait_until(
        "the silent h2 connection cut",
        Duration::from_secs(60),
        || closed(&mut s),
    );
    assert_eq!(server.get("/id").0, 200);
}
