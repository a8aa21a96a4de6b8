//! The HTTP service behind `rimeflake serve`: IDs from the core's generators over HTTP/1.1
//! (keep-alive) and HTTP/2 cleartext, for languages and platforms that cannot link the core.
//!
//! The caller builds the generators (the CLI does it exactly as for `rimeflake gen`), so every
//! ID is decided by the core as in the bindings; this crate only carries them. Generator calls
//! that may wait (a clock that went back, a reservation, a lease) never run on the runtime's
//! workers: the non-waiting call is tried first, and the waiting one runs on the blocking pool,
//! within a deadline.
//!
//! Endpoints (see docs/serve.md): `/id`, `/ids?n=`, `/api/snowflake/get/{key}` and
//! `/decodeSnowflakeId` (Meituan Leaf's), `/decode/{id}`, `/metrics`, `/healthz`, `/readyz`.

mod admission;
mod answer;
mod api;
mod conn;
mod files;
mod issue;
mod leaf;
mod listen;
pub mod log;
mod metrics;
mod monitor;
mod signals;
mod text;

pub use leaf::{Factory, LeafPath};
pub use log::{Log, LogFormat};

use bytes::Bytes;
use http_body_util::Full;
use issue::Issuer;
use rimeflake::{Error, ErrorKind, Generator};
use std::net::SocketAddr;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;

/// How the service listens and what it allows.
#[derive(Clone, Debug)]
pub struct Config {
    /// Where to listen (`127.0.0.1:8080` unless told otherwise).
    pub listen: SocketAddr,
    /// The most IDs one `/ids` request may ask for.
    pub max_n: usize,
    /// With a namespace per Leaf key: the most keys, each a generator and a lease.
    pub max_keys: usize,
    /// The Leaf keys served; `None` for any.
    pub keys: Option<Vec<String>>,
    /// The most connections open at once; more are answered 503 and closed.
    pub max_connections: usize,
    /// The most requests being answered at once, over every connection; more are answered 503.
    pub max_requests: usize,
    /// The most IDs in answers not yet written to their clients (as their bytes, 20 an ID);
    /// a connection may hold a sixteenth of them (429 past it), all of them together this
    /// (503 past it).
    pub max_ids_in_flight: u64,
    /// How long a request may wait for a generator (the clock, a reservation) before it is
    /// answered 503 with `Retry-After`; one that would wait longer is refused at once.
    pub wait_deadline: Duration,
    /// The most concurrent streams of an HTTP/2 connection.
    pub max_streams: u32,
    /// A bearer token every request but `/healthz` and `/readyz` must carry.
    pub token: Option<String>,
    /// How long a client may take to send its first request's headers (HTTP/1.1 and HTTP/2,
    /// the preface included), and each later HTTP/1.1 request's.
    pub header_timeout: Duration,
    /// How long a connection may stay without a byte from its client before it is closed.
    pub idle_timeout: Duration,
    /// After a stop signal, how long requests in flight may take before the service stops.
    pub shutdown_timeout: Duration,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            max_n: 10_000,
            max_keys: 64,
            keys: None,
            max_connections: 1024,
            max_requests: 4096,
            max_ids_in_flight: 1_000_000,
            wait_deadline: Duration::from_millis(100),
            max_streams: 256,
            token: None,
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            shutdown_timeout: Duration::from_secs(10),
        }
    }
}

/// How the service ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// After the stop signal `signal`: requests in flight finished (or the shutdown timeout
    /// passed) and every generator closed.
    Closed { signal: i32 },
    /// A second signal came while it stopped: it ended at once, generators not closed (their
    /// leases end at their TTL, a state directory's lock with the process).
    Abandoned { signal: i32 },
}

/// What every request handler shares.
pub(crate) struct Shared {
    pub(crate) config: Config,
    pub(crate) main: Arc<Issuer>,
    pub(crate) leaf: leaf::Leaf,
    pub(crate) limits: Arc<admission::Limits>,
    pub(crate) counts: metrics::Counts,
    pub(crate) connections_open: AtomicU64,
}

impl Shared {
    /// Every generator: the main one, then the Leaf path's.
    pub(crate) fn issuers(&self) -> Vec<Arc<Issuer>> {
        let mut all = vec![self.main.clone()];
        all.extend(self.leaf.issuers());
        all
    }
}

/// The open files the service needs with `config`, besides those open now: a connection
/// each, and with a namespace per key, a few for each key's generator.
fn files_needed(config: &Config, leaf: &LeafPath) -> u64 {
    let keys = match leaf {
        LeafPath::Main => 0,
        LeafPath::Shared { .. } => 4,
        LeafPath::Separate { .. } => config.max_keys as u64 * 4,
    };
    files::open_now() + config.max_connections as u64 + keys + files::MARGIN
}

/// Serves until SIGTERM, SIGINT or SIGHUP, then finishes the requests in flight (within
/// `shutdown_timeout`), closes every generator (a lease is freed, the last reservation stored)
/// and returns how it stopped; a second signal meanwhile ends it at once. `listening` is told
/// the address bound (its port when `listen` asked for 0) and the open-file limit before the
/// first request is taken.
///
/// # Errors
/// [`ErrorKind::Config`] when the address cannot be bound, or the open-file limit is below
/// what `max_connections` needs and cannot be raised; the first error of closing a generator.
pub fn run(
    config: Config,
    main: (String, Generator),
    leaf: LeafPath,
    log: Log,
    listening: impl FnOnce(SocketAddr, u64),
) -> rimeflake::Result<Stop> {
    let limit = files::ensure(
        files_needed(&config, &leaf),
        &format!("--max-connections {}", config.max_connections),
    )?;
    if let Some(from) = limit.raised_from {
        log.info(
            "open_files",
            &format!(
                "raised the open-file limit from {from} to {} for --max-connections {}",
                limit.soft, config.max_connections
            ),
            &[("from", from.into()), ("to", limit.soft.into())],
        );
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("rimeflake-serve")
        .max_blocking_threads(admission::MAX_WAITING as usize + 16)
        .build()
        .map_err(|e| {
            Error::new(
                ErrorKind::State,
                format!("serve: cannot start the runtime: {e}"),
            )
        })?;
    let shared = Arc::new(Shared {
        limits: Arc::new(admission::Limits::new(
            config.max_ids_in_flight,
            config.max_n as u64,
            config.max_requests as u64,
            config.wait_deadline,
        )),
        config,
        main: Issuer::new(main.1, main.0),
        leaf: leaf::Leaf::new(leaf),
        counts: metrics::Counts::default(),
        connections_open: AtomicU64::new(0),
    });
    let stop = runtime.block_on(async {
        let mut signals = signals::Signals::listen();
        let (signal, again) = listen::serve(shared.clone(), log, &mut signals, |addr| {
            listening(addr, limit.soft)
        })
        .await?;
        if let Some(again) = again {
            return Ok(Stop::Abandoned { signal: again });
        }
        let shared_c = shared.clone();
        let closing = tokio::task::spawn_blocking(move || close_all(&shared_c));
        tokio::select! {
            closed = closing => {
                let closed = closed.unwrap_or_else(|_| Err(Error::new(ErrorKind::State, "internal error: closing did not finish")));
                closed.map(|()| Stop::Closed { signal })
            }
            again = signals.next() => Ok(Stop::Abandoned { signal: again }),
        }
    });
    match stop {
        Ok(Stop::Abandoned { signal }) => {
            log.warn(
                "abandoned",
                &format!(
                    "{} while stopping: ending at once, generators not closed",
                    signals::name(signal)
                ),
                &[("signal", (signal as u64).into())],
            );
            runtime.shutdown_background();
        }
        Ok(Stop::Closed { .. }) => {
            log.info(
                "stopped",
                "stopped: every generator closed (leases released, last reservations stored)",
                &[],
            );
            runtime.shutdown_timeout(Duration::from_secs(1));
        }
        Err(_) => runtime.shutdown_timeout(Duration::from_secs(1)),
    }
    stop
}

/// Closes every generator, each even when another failed; the first error.
fn close_all(shared: &Shared) -> rimeflake::Result<()> {
    let mut first = None;
    for issuer in shared.issuers() {
        if let Err(e) = issuer.generator.close() {
            first.get_or_insert(e);
        }
    }
    first.map_or(Ok(()), Err)
}

pub(crate) type Response = hyper::Response<Full<Bytes>>;
