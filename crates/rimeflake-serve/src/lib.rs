//! The HTTP service behind `rimeflake serve`: IDs from the core's generators over HTTP/1.1
//! (keep-alive) and HTTP/2 cleartext, for languages and platforms that cannot link the core.
//!
//! The caller builds the generators (the CLI does it exactly as for `rimeflake gen`), so every
//! ID is decided by the core as in the bindings; this crate only carries them. Generator calls
//! that may wait (a clock that went back, a reservation, a lease) never run on the runtime's
//! workers: the non-waiting call is tried first, and the waiting one runs on the blocking pool.
//!
//! Endpoints (see docs/serve.md): `/id`, `/ids?n=`, `/api/snowflake/get/{key}` (a generator per
//! key), `/decode/{id}`, `/metrics`, `/healthz`, `/readyz`.

mod api;
mod conn;
mod metrics;
mod text;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use rimeflake::{Error, ErrorKind, Generator};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, RwLock};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

/// Makes the generator of a key (a namespace) on its first use. Called on the blocking pool.
pub type Factory = Arc<dyn Fn(&str) -> rimeflake::Result<Generator> + Send + Sync>;

/// How the service listens and what it allows.
#[derive(Clone, Debug)]
pub struct Config {
    /// Where to listen (`127.0.0.1:8080` unless told otherwise).
    pub listen: SocketAddr,
    /// The most IDs one `/ids` request may ask for.
    pub max_n: usize,
    /// The most keys (namespaces) `/api/snowflake/get/{key}` may create, besides the main one.
    pub max_keys: usize,
    /// The most connections open at once; more are closed as soon as accepted.
    pub max_connections: usize,
    /// A bearer token every request but `/healthz` and `/readyz` must carry.
    pub token: Option<String>,
    /// How long a client may take to send a request's headers (HTTP/1.1).
    pub header_timeout: Duration,
    /// How long a connection may stay without a byte from its client before it is closed.
    pub idle_timeout: Duration,
    /// After SIGTERM or SIGINT, how long requests in flight may take before the service stops.
    pub shutdown_timeout: Duration,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            max_n: 10_000,
            max_keys: 64,
            max_connections: 1024,
            token: None,
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            shutdown_timeout: Duration::from_secs(10),
        }
    }
}

/// The generators the service issues from: the main one (`/id`, `/ids`) and one per key.
pub(crate) struct Generators {
    pub(crate) main: Arc<Generator>,
    /// The main generator's namespace: a key naming it gets the main generator.
    pub(crate) main_namespace: String,
    pub(crate) keyed: RwLock<HashMap<String, Arc<Generator>>>,
    /// Held while a key's generator is made, so two first requests make one.
    pub(crate) making: tokio::sync::Mutex<()>,
    pub(crate) factory: Factory,
}

/// What every request handler shares.
pub(crate) struct Shared {
    pub(crate) config: Config,
    pub(crate) generators: Generators,
    pub(crate) counts: metrics::Requests,
    pub(crate) connections_open: AtomicU64,
}

/// Serves until SIGTERM or SIGINT, then finishes the requests in flight (within
/// `shutdown_timeout`), closes every generator (a lease is freed, the last reservation stored)
/// and returns. `listening` is told the address bound (its port when `listen` asked for 0)
/// before the first request is taken.
///
/// # Errors
/// [`ErrorKind::Config`] when the address cannot be bound; the first error of closing a
/// generator.
pub fn run(
    config: Config,
    main: Generator,
    main_namespace: String,
    factory: Factory,
    listening: impl FnOnce(SocketAddr),
) -> rimeflake::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("rimeflake-serve")
        .build()
        .map_err(|e| {
            Error::new(
                ErrorKind::State,
                format!("serve: cannot start the runtime: {e}"),
            )
        })?;
    let shared = Arc::new(Shared {
        config,
        generators: Generators {
            main: Arc::new(main),
            main_namespace,
            keyed: RwLock::new(HashMap::new()),
            making: tokio::sync::Mutex::new(()),
            factory,
        },
        counts: metrics::Requests::default(),
        connections_open: AtomicU64::new(0),
    });
    let served = runtime.block_on(serve(shared.clone(), listening));
    // Requests that outlived the shutdown timeout are dropped with the runtime; no ID call is
    // cut short by it (the blocking pool's calls end within the generator's max_wait).
    runtime.shutdown_timeout(Duration::from_secs(1));
    let closed = close_all(&shared.generators);
    served.and(closed)
}

/// Closes the main generator and every key's, each even when another failed; the first error.
fn close_all(generators: &Generators) -> rimeflake::Result<()> {
    let mut first = generators.main.close().err();
    let keyed = generators.keyed.read().unwrap_or_else(|p| p.into_inner());
    for g in keyed.values() {
        if let Err(e) = g.close() {
            first.get_or_insert(e);
        }
    }
    first.map_or(Ok(()), Err)
}

async fn serve(shared: Arc<Shared>, listening: impl FnOnce(SocketAddr)) -> rimeflake::Result<()> {
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
        .max_concurrent_streams(256)
        .max_send_buf_size(1024 * 1024)
        .keep_alive_interval(Some(config.idle_timeout))
        .keep_alive_timeout(config.header_timeout);
    let builder = Arc::new(builder);
    let slots = Arc::new(Semaphore::new(config.max_connections));
    let graceful = GracefulShutdown::new();
    let mut stop = std::pin::pin!(stop_signal());

    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut stop => break,
        };
        let (stream, _peer) = match accepted {
            Ok(a) => a,
            // Out of file descriptors and the like: wait a little rather than spin.
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            drop(stream); // over max_connections: closed at once
            continue;
        };
        let _ = stream.set_nodelay(true);
        let (io, last_read) = conn::Watched::new(stream);
        let shared_c = shared.clone();
        let service = service_fn(move |req: hyper::Request<Incoming>| {
            let shared = shared_c.clone();
            async move { Ok::<_, std::convert::Infallible>(api::handle(&shared, req).await) }
        });
        let connection = builder
            .serve_connection(TokioIo::new(io), service)
            .into_owned();
        let connection = graceful.watch(connection);
        let idle = config.idle_timeout;
        let shared_c = shared.clone();
        tokio::spawn(async move {
            shared_c.connections_open.fetch_add(1, Relaxed);
            tokio::select! {
                _ = connection => {}
                () = conn::idle(last_read, idle) => {}
            }
            shared_c.connections_open.fetch_sub(1, Relaxed);
            drop(slot);
        });
    }
    drop(listener); // stop accepting: new connections are refused from here
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(config.shutdown_timeout) => {}
    }
    Ok(())
}

/// Resolves at the first SIGTERM or SIGINT (Ctrl-C).
async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) {
            (Ok(mut term), Ok(mut int)) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                }
            }
            _ => std::future::pending::<()>().await,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

pub(crate) type Response = hyper::Response<Full<Bytes>>;
