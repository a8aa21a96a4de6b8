//! A connection's socket, watched for idleness: a client that sends nothing for the idle
//! timeout loses its connection, whatever the protocol (before the HTTP version is known, an
//! idle HTTP/1.1 keep-alive, an HTTP/2 connection with no stream).

use rimeflake::clock::monotonic_ns;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// A socket that records when it last read a byte from its client.
pub struct Watched {
    stream: TcpStream,
    last_read_ns: Arc<AtomicU64>,
}

impl Watched {
    /// The watched socket and its last-read time (monotonic ns), for [`idle`].
    pub fn new(stream: TcpStream) -> (Self, Arc<AtomicU64>) {
        let last = Arc::new(AtomicU64::new(monotonic_ns()));
        (
            Watched {
                stream,
                last_read_ns: last.clone(),
            },
            last,
        )
    }
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.stream).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.last_read_ns.store(monotonic_ns(), Relaxed);
        }
        polled
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

/// Resolves once `timeout` has passed since the last byte read: the connection is then dropped.
/// A request being answered reads nothing meanwhile, but every answer comes within the
/// generator's bounded wait, far below any sensible idle timeout.
pub async fn idle(last_read_ns: Arc<AtomicU64>, timeout: Duration) {
    let timeout_ns = timeout.as_nanos().min(u64::MAX as u128) as u64;
    loop {
        let since = monotonic_ns().saturating_sub(last_read_ns.load(Relaxed));
        if since >= timeout_ns {
            return;
        }
        tokio::time::sleep(Duration::from_nanos(timeout_ns - since)).await;
    }
}
