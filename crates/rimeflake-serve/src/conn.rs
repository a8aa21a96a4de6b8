//! A connection's socket, watched: when its client last sent a byte (a client that sends
//! nothing for the idle timeout loses its connection, whatever the protocol), whether it has
//! made a request yet (one that has not within the header timeout loses it too, which covers
//! the HTTP/2 preface and settings that HTTP/1.1's header timeout does not), and how much of
//! its answers the socket took (`admission::Flow`).
//!
//! It also gives hyper's own HTTP/1.1 refusals a body: hyper answers a request it cannot
//! parse (400, 414, 431) itself, with an empty body and no hook to change it, while every
//! refusal of this service is documented as a one-line body saying why.

use crate::admission::Flow;
use rimeflake::clock::monotonic_ns;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// What the connection's task watches.
#[derive(Clone)]
pub struct Watch {
    /// When the client last sent a byte (monotonic ns).
    pub last_read_ns: Arc<AtomicU64>,
    /// Whether a request has reached the service.
    pub asked: Arc<AtomicBool>,
    /// Requests of this connection being answered now.
    pub busy: Arc<AtomicU64>,
}

/// A request of a connection being answered, counted in [`Watch::busy`] until dropped.
pub struct Busy(Arc<AtomicU64>);

impl Busy {
    pub fn new(busy: &Arc<AtomicU64>) -> Busy {
        busy.fetch_add(1, Relaxed);
        Busy(busy.clone())
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Relaxed);
    }
}

/// A socket that records what [`Watch`] and the flow need.
pub struct Watched {
    stream: TcpStream,
    watch: Watch,
    flow: Arc<Flow>,
    /// hyper's refusal, rewritten with a body, still to be written.
    pending: Vec<u8>,
}

impl Watched {
    pub fn new(stream: TcpStream, flow: Arc<Flow>) -> (Self, Watch) {
        let watch = Watch {
            last_read_ns: Arc::new(AtomicU64::new(monotonic_ns())),
            asked: Arc::new(AtomicBool::new(false)),
            busy: Arc::new(AtomicU64::new(0)),
        };
        (
            Watched {
                stream,
                watch: watch.clone(),
                flow,
                pending: Vec::new(),
            },
            watch,
        )
    }

    /// Writes what is pending; ready once nothing is.
    fn poll_pending(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while !self.pending.is_empty() {
            let n = ready!(Pin::new(&mut self.stream).poll_write(cx, &self.pending))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.pending.drain(..n);
        }
        Poll::Ready(Ok(()))
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
            self.watch.last_read_ns.store(monotonic_ns(), Relaxed);
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
        ready!(self.poll_pending(cx))?;
        if let Some(answer) = with_body(buf) {
            self.pending = answer;
            // Taken: written from `pending`, before anything else.
            let _ = self.poll_pending(cx)?;
            return Poll::Ready(Ok(buf.len()));
        }
        let n = ready!(Pin::new(&mut self.stream).poll_write(cx, buf))?;
        self.flow.wrote(n as u64);
        Poll::Ready(Ok(n))
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        ready!(self.poll_pending(cx))?;
        if let Some(first) = bufs.iter().find(|b| !b.is_empty()) {
            if with_body(first).is_some() {
                return self.poll_write(cx, &first[..]);
            }
        }
        let n = ready!(Pin::new(&mut self.stream).poll_write_vectored(cx, bufs))?;
        self.flow.wrote(n as u64);
        Poll::Ready(Ok(n))
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_pending(cx))?;
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_pending(cx))?;
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

/// When `head` is one of hyper's own refusals (an HTTP/1.1 400, 414 or 431 status line with an
/// empty body: the service's answers always carry a content type), the same answer with a
/// one-line body saying why.
fn with_body(head: &[u8]) -> Option<Vec<u8>> {
    let reason = match head.get(..12)? {
        b"HTTP/1.1 400" | b"HTTP/1.0 400" => "the request is not valid HTTP/1.1",
        b"HTTP/1.1 414" | b"HTTP/1.0 414" => "the request's URI is too long",
        b"HTTP/1.1 431" | b"HTTP/1.0 431" => {
            "the request's headers are too large: at most 16 KiB, in at most 64 lines"
        }
        _ => return None,
    };
    let end = head.windows(4).position(|w| w == b"\r\n\r\n")? + 4;
    let text = std::str::from_utf8(&head[..end]).ok()?;
    let lower = text.to_ascii_lowercase();
    if lower.contains("content-type:")
        || !lower.contains("content-length: 0\r\n")
        || end != head.len()
    {
        return None;
    }
    let body = format!("{reason}\n");
    let text = text.replacen(
        "content-length: 0\r\n",
        &format!(
            "content-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\n",
            body.len()
        ),
        1,
    );
    let mut out = text.into_bytes();
    out.extend_from_slice(body.as_bytes());
    Some(out)
}

/// Resolves when the connection should end: no byte from its client for `idle`, no request
/// within `header` of its start, or the service stopping while it has no request being
/// answered.
pub async fn watchdog(
    watch: Watch,
    idle: Duration,
    header: Duration,
    stopping: tokio::sync::watch::Receiver<bool>,
) {
    tokio::select! {
        () = self::idle(watch.last_read_ns, idle) => {}
        () = no_request_within(watch.asked, header) => {}
        () = quiet_once_stopping(stopping, watch.busy) => {}
    }
}

/// Resolves once `timeout` has passed since the last byte read: the connection is then dropped.
/// A request being answered reads nothing meanwhile, but every answer comes within the
/// generator's bounded wait, far below any sensible idle timeout.
async fn idle(last_read_ns: Arc<AtomicU64>, timeout: Duration) {
    let timeout_ns = timeout.as_nanos().min(u64::MAX as u128) as u64;
    loop {
        let since = monotonic_ns().saturating_sub(last_read_ns.load(Relaxed));
        if since >= timeout_ns {
            return;
        }
        tokio::time::sleep(Duration::from_nanos(timeout_ns - since)).await;
    }
}

/// Resolves when no request has reached the service within `timeout` of the connection's start
/// (a slow HTTP/2 preface, or HTTP/1.1 headers dribbled a byte at a time); never once one has.
async fn no_request_within(asked: Arc<AtomicBool>, timeout: Duration) {
    tokio::time::sleep(timeout).await;
    if asked.load(Relaxed) {
        std::future::pending::<()>().await;
    }
}

/// Resolves once the service is stopping and this connection has no request being answered:
/// an idle connection, or one whose request's head is not all sent yet, is not waited for.
async fn quiet_once_stopping(
    mut stopping: tokio::sync::watch::Receiver<bool>,
    busy: Arc<AtomicU64>,
) {
    if stopping.wait_for(|s| *s).await.is_err() {
        return std::future::pending().await;
    }
    while busy.load(Relaxed) > 0 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::with_body;

    #[test]
    fn hypers_refusals_get_a_body_and_the_services_answers_are_left_alone() {
        let hyper_431 = b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\ndate: Sat, 28 Nov 2026 10:00:00 GMT\r\n\r\n";
        let out = String::from_utf8(with_body(hyper_431).unwrap()).unwrap();
        let (head, body) = out.split_once("\r\n\r\n").unwrap();
        assert_eq!(
            body,
            "the request's headers are too large: at most 16 KiB, in at most 64 lines\n"
        );
        assert!(
            head.contains(&format!("content-length: {}", body.len())),
            "{head}"
        );
        assert!(head.starts_with("HTTP/1.1 431 "));
        let ours = b"HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: 0\r\n\r\n";
        assert!(with_body(ours).is_none());
        assert!(with_body(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n").is_none());
        // A head followed by a body in the same write is not hyper's empty refusal.
        assert!(with_body(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\nx").is_none());
    }
}
