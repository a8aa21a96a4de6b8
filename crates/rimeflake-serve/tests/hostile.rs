//! Hostile clients against `rimeflake serve`: slowloris connections (silent, or dribbling a
//! header), a huge `n`, bad and missing tokens, garbage paths, headers and bytes, a new key
//! past the limit. Each is refused or cut off in bounded time, the server's memory stays
//! bounded, and an honest client is served all along.

use common::support::TempDir;

mod common;
use common::h2::*;
use common::{closed, rss_kib, wait_until, Server};

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::Ordering::SeqCst;
use std::time::Duration;

const AUTH: &str = "Authorization: Bearer s3cret-token";

/// One raw request's answer: its status line's code (None when the server only closed), and
/// its body.
fn raw(server: &Server, bytes: &[u8]) -> (Option<u16>, String) {
    let mut s = TcpStream::connect(server.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let _ = s.write_all(bytes);
    let _ = s.shutdown(std::net::Shutdown::Write);
    let mut answer = Vec::new();
    let _ = s.read_to_end(&mut answer);
    let text = String::from_utf8_lossy(&answer);
    let code = text.split_whitespace().nth(1).and_then(|c| c.parse().ok());
    let body = text
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_string();
    (code, body)
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
    let rss_before = rss_kib(server.child.id());
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
    let grown = rss_kib(server.child.id()).saturating_sub(rss_before);
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
            "--keys",
            "a,b",
            "--max-n",
            "1000",
        ],
        &[("RIMEFLAKE_SERVE_TOKEN", TOKEN)],
    );
    let rss_before = rss_kib(server.child.id());
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
        ("/api/snowflake/get/c", &[AUTH], 403, "--keys"),
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
        huge_header.clone().into_bytes(),
        many_headers.into_bytes(),
        long_path.into_bytes(),
    ];
    for bytes in &garbage {
        let (code, body) = raw(&server, bytes);
        let what = String::from_utf8_lossy(&bytes[..bytes.len().min(40)]).into_owned();
        assert!(
            code.is_none_or(|c| (400..500).contains(&c)),
            "{what:?}...: answered {code:?}"
        );
        // Every refusal says why in one line, hyper's own (400, 414, 431) as the service's.
        if code.is_some() {
            assert_eq!(body.lines().count(), 1, "{what:?}: {code:?} {body:?}");
            assert!(
                body.ends_with('\n') && body.len() > 10,
                "{what:?}: {body:?}"
            );
        }
        honest_id(&server);
    }
    // The header flood is hyper's 431, with its reason.
    let (code, body) = raw(&server, huge_header.as_bytes());
    assert_eq!(code, Some(431));
    assert!(body.contains("headers are too large"), "{body:?}");
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
    let grown = rss_kib(server.child.id()).saturating_sub(rss_before);
    assert!(grown < 64 * 1024, "the server grew by {grown} KiB");
}

#[test]
fn an_h2c_flood_of_headers_streams_and_resets_stays_bounded_and_others_are_served() {
    let dir = TempDir::new("serve-h2flood");
    let server = Server::start(
        &["--worker", "2", "--state-dir", dir.path()],
        &[("RIMEFLAKE_SERVE_TOKEN", TOKEN)],
    );
    honest_id(&server);
    let rss_before = rss_kib(server.child.id());
    let mut floods = Vec::new();

    // 1. A header block that never ends: HEADERS without END_HEADERS, then CONTINUATION
    //    frames of 16 KiB each, 128 MiB in all, never marked the last.
    let (mut s, ended) = h2_open(&server);
    floods.push(std::thread::spawn(move || {
        let _ = s.write_all(&h2_frame(
            H2_HEADERS,
            END_STREAM,
            1,
            &h2_request("/id", 0, 0),
        ));
        let chunk = h2_headers(1, 16 * 1024 - 64);
        let frame = h2_frame(H2_CONTINUATION, 0, 1, &chunk);
        for _ in 0..8192 {
            if s.write_all(&frame).is_err() {
                break;
            }
        }
        ended
    }));

    // 2. One request whose headers are huge (1 MiB of header lines in one block, sent in
    //    frames of 16 KiB).
    let (mut s, ended) = h2_open(&server);
    floods.push(std::thread::spawn(move || {
        let block = h2_request("/id", 64, 16 * 1024);
        let parts: Vec<&[u8]> = block.chunks(16 * 1024).collect();
        for (i, part) in parts.iter().enumerate() {
            let last = i + 1 == parts.len();
            let (kind, flags) = match (i, last) {
                (0, true) => (H2_HEADERS, END_STREAM | END_HEADERS),
                (0, false) => (H2_HEADERS, END_STREAM),
                (_, true) => (H2_CONTINUATION, END_HEADERS),
                (_, false) => (H2_CONTINUATION, 0),
            };
            if s.write_all(&h2_frame(kind, flags, 1, part)).is_err() {
                break;
            }
        }
        ended
    }));

    // 3. Many streams at once, far past the limit of concurrent streams: 20,000 requests for
    //    a batch of IDs each, never read (the reader drops the answers).
    let (mut s, ended) = h2_open(&server);
    floods.push(std::thread::spawn(move || {
        let block = h2_request("/ids?n=1000", 0, 0);
        for i in 0..20_000u32 {
            let frame = h2_frame(H2_HEADERS, END_STREAM | END_HEADERS, 2 * i + 1, &block);
            if s.write_all(&frame).is_err() {
                break;
            }
        }
        ended
    }));

    // 4. Rapid resets: each stream opened and reset at once, 20,000 times.
    let (mut s, ended) = h2_open(&server);
    floods.push(std::thread::spawn(move || {
        let block = h2_request("/ids?n=1000", 0, 0);
        for i in 0..20_000u32 {
            let mut frames = h2_frame(H2_HEADERS, END_STREAM | END_HEADERS, 2 * i + 1, &block);
            frames.extend(h2_frame(H2_RST_STREAM, 0, 2 * i + 1, &8u32.to_be_bytes()));
            if s.write_all(&frames).is_err() {
                break;
            }
        }
        ended
    }));

    // Others are served while the floods run.
    for _ in 0..20 {
        honest_id(&server);
        std::thread::sleep(Duration::from_millis(20));
    }
    let ended: Vec<_> = floods.into_iter().map(|f| f.join().unwrap()).collect();
    honest_id(&server);
    // The endless and the huge header blocks are refused: their connections end.
    wait_until("the header floods cut off", Duration::from_secs(60), || {
        ended[..2].iter().all(|e| e.0.load(SeqCst))
    });
    // The many streams were answered in part (up to the limit of concurrent streams, the
    // rest refused), not ignored.
    assert!(ended[2].1.load(SeqCst) > 0);
    honest_id(&server);
    let grown = rss_kib(server.child.id()).saturating_sub(rss_before);
    assert!(grown < 64 * 1024, "the server grew by {grown} KiB");
}
