//! Hostile clients against `rimeflake serve`: slowloris connections (silent, or dribbling a
//! header), a huge `n`, bad and missing tokens, garbage paths, headers and bytes, a new key
//! past the limit. Each is refused or cut off in bounded time, the server's memory stays
//! bounded, and an honest client is served all along.

use common::support::TempDir;

mod common;
use common::{wait_until, Server};

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::Arc;
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
            "--keys",
            "a,b",
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

/// An HTTP/2 frame: its 9-byte header (length, type, flags, stream) and payload.
fn h2_frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let len = payload.len() as u32;
    let mut f = vec![(len >> 16) as u8, (len >> 8) as u8, len as u8, kind, flags];
    f.extend_from_slice(&(stream & 0x7fff_ffff).to_be_bytes());
    f.extend_from_slice(payload);
    f
}

const H2_HEADERS: u8 = 0x1;
const H2_RST_STREAM: u8 = 0x3;
const H2_SETTINGS: u8 = 0x4;
const H2_CONTINUATION: u8 = 0x9;
const END_STREAM: u8 = 0x1;
const END_HEADERS: u8 = 0x4;

/// A header block (HPACK, no Huffman, nothing indexed by the server) for `GET path` with the
/// token, and `extra` literal headers of `size` bytes each.
fn h2_request(path: &str, extra: usize, size: usize) -> Vec<u8> {
    // :method GET, :scheme http (indexed, static table 2 and 6).
    let mut block = vec![0x82, 0x86];
    h2_literal(&mut block, b":path", path.as_bytes());
    h2_literal(&mut block, b":authority", b"t");
    h2_literal(
        &mut block,
        b"authorization",
        format!("Bearer {TOKEN}").as_bytes(),
    );
    block.extend(h2_headers(extra, size));
    block
}

/// `n` literal headers of `size` bytes each, HPACK-encoded.
fn h2_headers(n: usize, size: usize) -> Vec<u8> {
    let mut block = Vec::new();
    let value = vec![b'v'; size];
    for i in 0..n {
        h2_literal(&mut block, format!("x-flood-{i}").as_bytes(), &value);
    }
    block
}

/// A literal header field never indexed, with a new name: 0x10, then the name and the value,
/// each with its length (a 7-bit prefix integer).
fn h2_literal(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    out.push(0x10);
    for s in [name, value] {
        let mut n = s.len();
        if n < 127 {
            out.push(n as u8);
        } else {
            out.push(127);
            n -= 127;
            while n >= 128 {
                out.push((n % 128 + 128) as u8);
                n /= 128;
            }
            out.push(n as u8);
        }
        out.extend_from_slice(s);
    }
}

/// Opens an h2c connection (preface and empty settings), with a thread that reads and drops
/// whatever the server sends, so that its writes never wait on us. Returns the stream and
/// whether the server has closed it yet.
fn h2_open(server: &Server) -> (TcpStream, Read2) {
    let mut s = TcpStream::connect(server.addr).unwrap();
    s.set_write_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n").unwrap();
    s.write_all(&h2_frame(H2_SETTINGS, 0, 0, &[])).unwrap();
    let ended = Read2::default();
    let mut reader = s.try_clone().unwrap();
    let seen = ended.clone();
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 64 * 1024];
        while let Ok(n @ 1..) = reader.read(&mut buf) {
            seen.1.fetch_add(n as u64, SeqCst);
        }
        seen.0.store(true, SeqCst);
    });
    (s, ended)
}

/// What the reader of an h2c connection saw: whether the server closed it, and the bytes it
/// sent.
#[derive(Clone, Default)]
struct Read2(Arc<AtomicBool>, Arc<AtomicU64>);

#[test]
fn an_h2c_flood_of_headers_streams_and_resets_stays_bounded_and_others_are_served() {
    let dir = TempDir::new("serve-h2flood");
    let server = Server::start(
        &["--worker", "2", "--state-dir", dir.path()],
        &[("RIMEFLAKE_SERVE_TOKEN", TOKEN)],
    );
    honest_id(&server);
    let rss_before = rss_kib(&server);
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
    let grown = rss_kib(&server).saturating_sub(rss_before);
    assert!(grown < 64 * 1024, "the server grew by {grown} KiB");
}
