//! The listening socket and each connection's task: the connection limit (past it a fast 503,
//! counted, rather than a silent close), the HTTP/1.1 and HTTP/2 settings, the timeouts, and
//! the stop on the first signal (stop accepting, let requests in flight finish).

use crate::admission::Flow;
use crate::log::Log;
use crate::signals::{self, Signals};
use crate::{api, conn, Shared};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use rimeflake::{Error, ErrorKind};
use std::net::SocketAddr;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

/// Connections past the limit being answered at once (each holds a descriptor a moment);
/// past these, one is closed without an answer (counted all the same).
pub(crate) const REFUSING: usize = 32;

/// Serves until the first stop signal, then stops accepting and lets the requests in flight
/// finish, within the shutdown timeout. Returns the signal, and a second one if it came while
/// requests finished (then the caller ends at once).
pub(crate) async fn serve(
    shared: Arc<Shared>,
    log: Log,
    signals: &mut Signals,
    listening: impl FnOnce(SocketAddr),
) -> rimeflake::Result<(i32, Option<i32>)> {
    let config = &shared.config;
    let listener = TcpListener::bind(config.listen).await.map_err(|e| {
        Error::new(
            ErrorKind::Config,
            format!("serve: cannot listen on {}: {e}", config.listen),
        )
    })?;
    let local = listener
        .local_addr()
        .map_err(|e| Error::new(ErrorKind::Config, format!("serve: {e}")))?;
    listening(local);
    let monitor = tokio::spawn(crate::monitor::watch(shared.clone(), log));

    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(config.header_timeout)
        .max_buf_size(16 * 1024)
        .max_headers(64);
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_header_list_size(16 * 1024)
        .max_concurrent_streams(config.max_streams)
        .max_send_buf_size(1024 * 1024)
        .keep_alive_interval(Some(config.idle_timeout))
        .keep_alive_timeout(config.header_timeout);
    let builder = Arc::new(builder);
    let slots = Arc::new(Semaphore::new(config.max_connections));
    let refusing = Arc::new(Semaphore::new(REFUSING));
    let graceful = GracefulShutdown::new();
    // Told when the service stops: a connection with no request being answered then (idle, or
    // its request's head not all sent) is closed at once rather than waited for.
    let (stopping, stop_seen) = tokio::sync::watch::channel(false);

    let signal = loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            signal = signals.next() => break signal,
        };
        let stream = match accepted {
            Ok((stream, _peer)) => stream,
            // Out of file descriptors and the like: counted, and a moment to recover rather
            // than a spin.
            Err(_) => {
                shared.counts.accept_errors.fetch_add(1, Relaxed);
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            shared.counts.connections_refused.fetch_add(1, Relaxed);
            match refusing.clone().try_acquire_owned() {
                Ok(permit) => {
                    let max = config.max_connections;
                    tokio::spawn(async move {
                        refuse(stream, max).await;
                        drop(permit);
                    });
                }
                Err(_) => drop(stream),
            }
            continue;
        };
        let _ = stream.set_nodelay(true);
        let flow = Flow::new(shared.limits.clone());
        let (io, watch) = conn::Watched::new(stream, flow.clone());
        let shared_c = shared.clone();
        let (asked, busy) = (watch.asked.clone(), watch.busy.clone());
        let service = service_fn(move |req: hyper::Request<Incoming>| {
            if !asked.load(Relaxed) {
                asked.store(true, Relaxed);
            }
            let shared = shared_c.clone();
            let flow = flow.clone();
            let busy = conn::Busy::new(&busy);
            async move {
                let answer = api::handle(&shared, &flow, req).await;
                drop(busy);
                Ok::<_, std::convert::Infallible>(answer)
            }
        });
        let connection = builder
            .serve_connection(TokioIo::new(io), service)
            .into_owned();
        let connection = graceful.watch(connection);
        let (idle, header) = (config.idle_timeout, config.header_timeout);
        let shared_c = shared.clone();
        let stop_seen = stop_seen.clone();
        // The connection runs as a task of its own, and its watchdog beside it ends it (the
        // socket closed) when the client idles, sends no request in time, or the service stops
        // while it has none: so that a request's wake-ups poll the connection alone.
        let serving = tokio::spawn(async move {
            let _ = connection.await;
        });
        tokio::spawn(async move {
            shared_c.connections_open.fetch_add(1, Relaxed);
            let stop = serving.abort_handle();
            tokio::select! {
                _ = serving => {}
                () = conn::watchdog(watch, idle, header, stop_seen) => stop.abort(),
            }
            shared_c.connections_open.fetch_sub(1, Relaxed);
            drop(slot);
        });
    };
    monitor.abort();
    log.info(
        "stopping",
        &format!(
            "stopping on {}: no new connections; {} open finish their requests (within {} s, \
             --shutdown-timeout), then every generator is closed; a second signal ends at once",
            signals::name(signal),
            shared.connections_open.load(Relaxed),
            config.shutdown_timeout.as_secs_f64()
        ),
        &[("signal", (signal as u64).into())],
    );
    drop(listener); // stop accepting: new connections are refused from here
    let _ = stopping.send(true);
    let again = tokio::select! {
        () = graceful.shutdown() => None,
        () = tokio::time::sleep(config.shutdown_timeout) => None,
        again = signals.next() => Some(again),
    };
    Ok((signal, again))
}

/// A connection past `--max-connections`: a 503 saying so (HTTP/2's GOAWAY when the client
/// opened with HTTP/2's preface), then closed. What the client sent is read a moment after, so
/// that the close does not reset the connection before the client reads the answer.
async fn refuse(mut stream: TcpStream, max: usize) {
    let reason = format!(
        "busy: {max} connections are open, the most this service takes (--max-connections)"
    );
    let mut first = [0u8; 24];
    let n = tokio::time::timeout(Duration::from_millis(200), stream.read(&mut first))
        .await
        .map_or(0, |r| r.unwrap_or(0));
    let answer = if first[..n].starts_with(b"PRI * HTTP/2.0") {
        h2_goaway(&reason)
    } else {
        let body = format!("{reason}\n");
        format!(
            "HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n\
             retry-after: 1\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        )
        .into_bytes()
    };
    let second = Duration::from_secs(1);
    let _ = tokio::time::timeout(second, stream.write_all(&answer)).await;
    let _ = tokio::time::timeout(second, stream.shutdown()).await;
    let _ = tokio::time::timeout(second, async {
        let mut sink = [0u8; 4096];
        while let Ok(1..) = stream.read(&mut sink).await {}
    })
    .await;
}

/// HTTP/2's refusal of a whole connection: the server's SETTINGS (its preface), then GOAWAY
/// with no stream processed and REFUSED_STREAM, the reason as its debug data.
fn h2_goaway(reason: &str) -> Vec<u8> {
    let frame = |kind: u8, payload: &[u8]| {
        let len = payload.len() as u32;
        let mut f = vec![
            (len >> 16) as u8,
            (len >> 8) as u8,
            len as u8,
            kind,
            0,
            0,
            0,
            0,
            0,
        ];
        f.extend_from_slice(payload);
        f
    };
    let mut goaway = vec![0, 0, 0, 0, 0, 0, 0, 0x7];
    goaway.extend_from_slice(reason.as_bytes());
    let mut out = frame(0x4, &[]);
    out.extend(frame(0x7, &goaway));
    out
}
