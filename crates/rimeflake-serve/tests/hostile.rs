//! Hostile clients against `rimeflake serve`: slowloris connections (silent, or dribbling a
//! header), a huge `n`, bad and missing tokens, garbage paths, headers and bytes, a new key
//! past the limit. Each is refused or cut off in bounded time, the server's memory stays
//! bounded, and an honest client is served all along.

use common::support::TempDir;

mod common;
use common::{wait_until, Server};

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

const TOKEN: &str = "s3cret-token";
const AUTH: &str = "Authorization: Bearer s3cret-token";

/// The server's resident memory, in KiB (Linux's /proc).
fn rss_kib(server: &Server) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{}/status", server.child.id())).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .expect("VmRSS in /proc/<pid>/status")
}

/// Whether the server has closed `s` (a read gives EOF or an error rather than timing out).
fn closed(s: &mut TcpStream) -> bool {
    s.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue, // an answer (408, 400): read on to the close
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock
                    || e.kind() == std::io::ErrorKind::TimedOut =>
            {
                return false
            }
            Err(_) => return true,
        }
    }
}

/// One raw request's answer: its status line's code, or None when the server only closed.
fn raw(server: &Server, bytes: &[u8]) -> Option<u16> {
    let mut s = TcpStream::connect(server.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let _ = s.write_all(bytes);
    let _ = s.shutdown(std::net::Shutdown::Write);
    let mut answer = Vec::new();
    let _ = s.read_to_end(&mut answer);
    let text = String::from_utf8_lossy(&answer);
    text.split_whitespace().nth(1).and_then(|c| c.parse().ok())
}

fn honest_id(server: &Server) {
    let (status, body) = server.get_with("/id", &[AUTH]);
    assert_eq!(status, 200, "an honest client was refused: {body}");
    body.trim().parse::<u64>().expect("an ID");
}

#[test]
fn slow_and_silent_connections_are_cut_and_others_are_served_meanwhile() {
    let dir = TempDir::new("serve-slowloris");
    let server = Server::start(
        &[
            "--worker",
            "1",
            "--state-dir",
            dir.path(),
            "--header-timeout",
            "2",
            "--idle-timeout",
            "3",
        ],
        &[("RIMEFLAKE_SERVE_TOKEN", TOKEN)],
    );
    let rss_before = rss_kib(&server);
    // 100 that say nothing, 100 that start an HTTP/1.1 request and dribble a header, 50 that
    // open HTTP/2 and then say nothing.
    let mut silent: Vec<TcpStream> = (0..100)
        .map(|_| TcpStream::connect(server.addr).unwrap())
        .collect();
    let mut dribbling: Vec<TcpStream> = (0..100)
        .map(|_| {
            let mut s = TcpStream::connect(server.addr).unwrap();
            s.write_all(b"GET /id HTTP/1.1\r\nHost: x\r\nX-Slow: ")
                .unwrap();
            s
        })
        .collect();
    let mut h2: Vec<TcpStream> = (0..50)
        .map(|_| {
            let mut s = TcpStream::connect(server.addr).unwrap();
            s.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n").unwrap();
            s
        })
        .collect();
    honest_id(&server);
    // The dribblers keep sending a byte at a time (which keeps them from being idle), but a
    // header that takes longer than the header timeout is cut.
    wait_until("every slow connection cut", Duration::from_secs(60), || {
        for s in &mut dribbling {
            let _ = s.write_all(b"a");
        }
        honest_id(&server);
        silent
            .iter_mut()
            .chain(dribbling.iter_mut())
            .chain(h2.iter_mut())
            .all(closed)
    });
    honest_id(&server);
    let grown = rss_kib(&server).saturating_sub(rss_before);
    assert!(grown < 64 * 1024, "the server grew by {grown} KiB");
}

#[test]
fn bad_requests_get_a_4xx_with_a_reason_and_the_server_serves_on() {
    let dir = TempDir::new("serve-bad");
    let server = Server::start(
        &[
            "--worker",
            "1",
            "--state-dir",
            dir.path(),
            "--max-keys",
            "2",
            "--max-n",
            "1000",
        ],
        &[("RIMEFLAKE_SERVE_TOKEN", TOKEN)],
    );
    let rss_before = rss_kib(&server);
    let cases: &[(&str, &[&str], u16, &str)] = &[
        ("/id", &[], 401, "bearer token is needed"),
        (
            "/id",
            &["Authorization: Bearer wrong"],
            401,
            "bearer token is needed",
        ),
        (
            "/id",
            &["Authorization: Bearer s3cret-token-and-more"],
            401,
            "bearer token",
        ),
        (
            "/id",
            &["Authorization: Basic czNjcmV0LXRva2Vu"],
            401,
            "bearer token",
        ),
        ("/metrics", &[], 401, "bearer token"),
        ("/healthz", &[], 200, "ok"),
        ("/ids?n=1001", &[AUTH], 400, "at most 1000"),
        (
            "/ids?n=99999999999999999999999999",
            &[AUTH],
            400,
            "too many",
        ),
        ("/ids?n=-1", &[AUTH], 400, "not a count"),
        ("/ids?n=0", &[AUTH], 400, "n=0"),
        ("/ids", &[AUTH], 400, "n is needed"),
        ("/ids?n=%zz", &[AUTH], 400, "%-escape"),
        ("/id?format=xml", &[AUTH], 400, "unknown \"xml\""),
        ("/decode/abc", &[AUTH], 400, ""),
        ("/decode/18446744073709551615", &[AUTH], 400, "sign bit"),
        ("/decode/1?layout=nonsense", &[AUTH], 400, ""),
        ("/nope/../../etc/passwd", &[AUTH], 404, "no such path"),
        ("/api/snowflake/get/a", &[AUTH], 200, ""),
        ("/api/snowflake/get/b", &[AUTH], 200, ""),
        ("/api/snowflake/get/c", &[AUTH], 403, "--max-keys"),
        ("/api/snowflake/get/a", &[AUTH], 200, ""),
    ];
    for (path, headers, want, says) in cases {
        let (status, body) = server.get_with(path, headers);
        assert_eq!(status, *want, "{path} {headers:?}: {body}");
        assert!(
            body.contains(says),
            "{path}: {body:?} does not say {says:?}"
        );
        assert_eq!(
            body.trim_end().lines().count().max(1),
            1,
            "{path}: not one line: {body:?}"
        );
    }
    // Garbage on the wire: each answered with a 4xx, or the connection closed; never a hang.
    let huge_header = format!(
        "GET /id HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\n\r\n",
        "a".repeat(100_000)
    );
    let many_headers = format!(
        "GET /id HTTP/1.1\r\nHost: x\r\n{}\r\n",
        (0..500)
            .map(|i| format!("X-{i}: v\r\n"))
            .collect::<String>()
    );
    let long_path = format!("GET /{} HTTP/1.1\r\nHost: x\r\n\r\n", "p".repeat(100_000));
    let garbage: Vec<Vec<u8>> = vec![
        b"\x00\x01\x02\xff\xfe garbage\r\n\r\n".to_vec(),
        b"GET\r\n\r\n".to_vec(),
        b"POST /id HTTP/1.1\r\nHost: x\r\nContent-Length: 999999999999\r\n\r\nabc".to_vec(),
        b"GET /id HTTP/9.9\r\nHost: x\r\n\r\n".to_vec(),
        b"GET /id HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n".to_vec(),
        b"GET /id HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzzzz\r\n".to_vec(),
        b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x04\x99\x99\x99\x99\x99\x99garbage frames"
            .to_vec(),
        huge_header.into_bytes(),
        many_headers.into_bytes(),
        long_path.into_bytes(),
    ];
    for bytes in &garbage {
        let code = raw(&server, bytes);
        assert!(
            code.is_none_or(|c| (400..500).contains(&c)),
            "{:?}...: answered {code:?}",
            String::from_utf8_lossy(&bytes[..bytes.len().min(40)])
        );
        honest_id(&server);
    }
    // Many at once, then the honest client again.
    let floods: Vec<_> = (0..16)
        .map(|_| {
            let addr = server.addr;
            std::thread::spawn(move || {
                for _ in 0..50 {
                    common::get(addr, "/ids?n=1000", &[AUTH]);
                    common::get(addr, "/id", &["Authorization: Bearer nope"]);
                }
            })
        })
        .collect();
    for f in floods {
        f.join().unwrap();
    }
    honest_id(&server);
    let grown = rss_kib(&server).saturating_sub(rss_before);
    assert!(grown < 64 * 1024, "the server grew by {grown} KiB");
}
