//! Raw HTTP/2 cleartext for the hostile tests: frames, HPACK header blocks written by hand (no
//! Huffman, nothing indexed), and a connection whose answers are read off the socket and
//! dropped without ever being acknowledged (no WINDOW_UPDATE: the server may send at most its
//! initial flow-control windows).

use super::Server;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

/// The bearer token the hostile tests' servers are started with.
pub const TOKEN: &str = "s3cret-token";

/// An HTTP/2 frame: its 9-byte header (length, type, flags, stream) and payload.
pub fn h2_frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let len = payload.len() as u32;
    let mut f = vec![(len >> 16) as u8, (len >> 8) as u8, len as u8, kind, flags];
    f.extend_from_slice(&(stream & 0x7fff_ffff).to_be_bytes());
    f.extend_from_slice(payload);
    f
}

pub const H2_HEADERS: u8 = 0x1;
pub const H2_RST_STREAM: u8 = 0x3;
pub const H2_SETTINGS: u8 = 0x4;
pub const H2_CONTINUATION: u8 = 0x9;
pub const END_STREAM: u8 = 0x1;
pub const END_HEADERS: u8 = 0x4;

/// A header block (HPACK, no Huffman, nothing indexed by the server) for `GET path` with the
/// token [`TOKEN`], and `extra` literal headers of `size` bytes each.
pub fn h2_request(path: &str, extra: usize, size: usize) -> Vec<u8> {
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
pub fn h2_headers(n: usize, size: usize) -> Vec<u8> {
    let mut block = Vec::new();
    let value = vec![b'v'; size];
    for i in 0..n {
        h2_literal(&mut block, format!("x-flood-{i}").as_bytes(), &value);
    }
    block
}

/// A literal header field never indexed, with a new name: 0x10, then the name and the value,
/// each with its length (a 7-bit prefix integer).
pub fn h2_literal(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
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
pub fn h2_open(server: &Server) -> (TcpStream, Read2) {
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
pub struct Read2(pub Arc<AtomicBool>, pub Arc<AtomicU64>);
