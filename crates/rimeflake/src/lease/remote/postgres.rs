//! Remote leases in PostgreSQL (cargo feature `postgres`): a [`Conn`] over `tokio-postgres`,
//! driven by a small runtime of its own so that callers stay synchronous.
//!
//! Every lease time comes from the server's clock (`now()`, `clock_timestamp()`), never from
//! this host's. Every call, connecting included, ends within the connection's timeout: a server
//! that hangs (paused, or a host that vanished) gives a lease error instead of a hang, and the
//! connection is dropped and opened again by the next call.

use super::{decode_state, tls, Conn, RemoteWorker, Replicas, Saved, Taken, Versioned};
use super::{Proposal, ServerView, Settings};
use crate::backend::redact;
use crate::backend::tls::{SslMode, Tls};
use crate::error::{Error, ErrorKind, Result};
use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::runtime::Runtime;
use tokio::task::JoinHandle;
use tokio_postgres::types::{FromSql, ToSql};
use tokio_postgres::{Client, Config, Row, Statement};
use tokio_postgres_rustls::MakeRustlsConnect;

mod errors;
mod replicas;
mod sql;
use errors::{chain, is_creation_race};
pub(crate) use sql::SCHEMA;
use sql::*;

// ---- the connection -----------------------------------------------------------------------------

/// A connection to PostgreSQL for the lease protocol. It owns a current-thread runtime that runs
/// only inside its calls; the connection task is driven there while a query waits.
pub(crate) struct PgConn {
    /// The open session; `None` after an error, until the next call opens a new one.
    session: Option<Session>,
    /// `None` only while dropping (see the `Drop` impl).
    rt: Option<Runtime>,
    config: Config,
    /// The TLS settings of the URL, and the connector made of them.
    tls: Tls,
    connector: MakeRustlsConnect,
    /// The URL without its password, for messages.
    shown: String,
    op_timeout: Duration,
    /// 1 when lease and state writes must go through a synchronous standby (the namespace
    /// requires it); 0 otherwise.
    replicas: Arc<Replicas>,
}

/// One open connection: the client, the task that drives its socket, and the statements
/// prepared on it (which die with it).
struct Session {
    client: Client,
    driver: JoinHandle<()>,
    statements: HashMap<&'static str, Statement>,
}

impl Drop for Session {
    fn drop(&mut self) {
        // A dropped client would let the task say goodbye to the server, but a hung server
        // never reads it: end the task (and close its socket) instead.
        self.driver.abort();
    }
}

/// Why a call failed, before it is told in rimeflake's terms.
enum Fail {
    /// From the server or the driver.
    Pg(tokio_postgres::Error),
    /// Already told: a value the server sent that makes no sense.
    Ours(Error),
}

impl From<tokio_postgres::Error> for Fail {
    fn from(e: tokio_postgres::Error) -> Self {
        Fail::Pg(e)
    }
}

type Done<T> = std::result::Result<T, Fail>;

impl Drop for PgConn {
    fn drop(&mut self) {
        self.session = None;
        // A plain drop of the runtime waits for its blocking threads, and a host-name lookup
        // (getaddrinfo, run on one) cannot be cancelled: let a hung lookup end on its own.
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

impl std::fmt::Debug for PgConn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgConn")
            .field("url", &self.shown)
            .field("connected", &self.session.is_some())
            .finish_non_exhaustive()
    }
}

impl PgConn {
    /// Connects to the server `url` names (`postgresql://user:password@host:port/database`) and
    /// creates the tables of [`SCHEMA`] if they are missing. Every later call, and this one, ends
    /// within `op_timeout`.
    ///
    /// # Errors
    /// [`ErrorKind::Config`] for a URL that cannot be parsed, a wrong password or an unknown
    /// database; [`ErrorKind::Lease`] when the server cannot be reached in time. The messages
    /// show the URL without its password.
    pub(crate) fn open(url: &str, op_timeout: Duration) -> Result<PgConn> {
        let shown = redact(url);
        // A zero timeout would fail every call at once.
        let op_timeout = op_timeout.max(Duration::from_millis(1));
        let (driver_url, tls) = crate::backend::tls::split(url)?;
        let mut config: Config = driver_url.parse().map_err(|e: tokio_postgres::Error| {
            Error::config(format!(
                "backend {shown}: not a usable PostgreSQL URL ({}); the form is \
                 postgresql://user:password@host:port/database",
                chain(&e)
            ))
        })?;
        // The URL may ask for a shorter one; never a longer one than a call may take.
        if config.get_connect_timeout().is_none_or(|t| *t > op_timeout) {
            config.connect_timeout(op_timeout);
        }
        if config.get_application_name().is_none() {
            config.application_name("rimeflake");
        }
        // rimeflake's commits wait for a synchronous standby where one is configured, whatever
        // the server's default (`off` and `local` do not): set in the startup packet, so it
        // costs no round trip.
        let options = match config.get_options() {
            Some(o) if !o.is_empty() => format!("{o} -c synchronous_commit=on"),
            _ => "-c synchronous_commit=on".to_string(),
        };
        config.options(&options);
        // The driver knows three modes; the verifying ones are `require` plus the checks of
        // the connector.
        config.ssl_mode(match tls.mode {
            SslMode::Disable => tokio_postgres::config::SslMode::Disable,
            SslMode::Prefer => tokio_postgres::config::SslMode::Prefer,
            SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => {
                tokio_postgres::config::SslMode::Require
            }
        });
        let connector = MakeRustlsConnect::new(tls::client_config(&tls)?);
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()
            .map_err(|e| {
                Error::new(
                    ErrorKind::Lease,
                    format!("cannot start the I/O runtime for {shown}: {e}"),
                )
            })?;
        let mut conn = PgConn {
            session: None,
            rt: Some(rt),
            config,
            tls,
            connector,
            shown,
            op_timeout,
            replicas: Arc::default(),
        };
        // Connect now, so a wrong URL or password shows at once rather than at the first use.
        conn.call("connect", |s| async move { (s, Ok(())) })?;
        Ok(conn)
    }

    /// Runs `op` on an open session (opening one first if there is none), all within the
    /// timeout. The session comes back with the outcome; after any failure it is dropped, so
    /// the next call starts on a fresh connection.
    fn call<T, F, Fut>(&mut self, mut what: &str, op: F) -> Result<T>
    where
        F: FnOnce(Session) -> Fut + Send,
        Fut: Future<Output = (Session, Done<T>)> + Send,
        T: Send,
    {
        self.drop_if_closed();
        let Some(rt) = &self.rt else {
            return Err(Error::new(ErrorKind::Lease, "the connection is closed"));
        };
        let held = self.session.take();
        // How far the call got, for its message: a failure once connected is the server's
        // answer (or silence), not a failure to reach it; before `op`, it was about the tables.
        let connected = AtomicBool::new(held.is_some());
        let ready = AtomicBool::new(held.is_some());
        let (config, connector) = (&self.config, &self.connector);
        let work = async {
            let session = match held {
                Some(s) => s,
                None => {
                    let s = Session::open(config, connector.clone()).await?;
                    connected.store(true, Ordering::Relaxed);
                    s.create_tables().await?;
                    s
                }
            };
            ready.store(true, Ordering::Relaxed);
            let (session, out) = op(session).await;
            out.map(|v| (session, v))
        };
        // The timer is made inside the runtime: tokio::time panics outside one.
        let limit = self.op_timeout;
        let outcome = block_on(rt, async { tokio::time::timeout(limit, work).await })?;
        let connected = connected.load(Ordering::Relaxed);
        if !ready.load(Ordering::Relaxed) {
            what = "look for or create its tables";
        }
        match outcome {
            Ok(Ok((session, v))) => {
                self.session = Some(session);
                Ok(v)
            }
            Ok(Err(fail)) => Err(self.explain(fail, what, connected)),
            Err(_elapsed) => {
                let ms = self.op_timeout.as_millis();
                let url = &self.shown;
                Err(Error::new(
                    ErrorKind::Lease,
                    if connected {
                        format!("PostgreSQL at {url} did not answer ({what}) within {ms} ms")
                    } else {
                        format!("PostgreSQL at {url} could not be reached within {ms} ms")
                    },
                ))
            }
        }
    }

    /// Drops a session whose server has closed it while it was idle (a restart, an idle
    /// timeout), so this call opens a new one instead of failing on the old one. Best effort:
    /// the connection task only sees the server's goodbye once it has run, and when it has not,
    /// the call fails and the next one reconnects.
    fn drop_if_closed(&mut self) {
        let (Some(session), Some(rt)) = (&self.session, &self.rt) else {
            return;
        };
        // Each yield lets the runtime poll its sockets and run the tasks they woke.
        let settled = block_on(rt, async {
            for _ in 0..3 {
                tokio::task::yield_now().await;
            }
        });
        if settled.is_err() || session.client.is_closed() {
            self.session = None;
        }
    }
}

/// Runs `f` to its end on `rt`. Called from inside another tokio runtime (an async caller),
/// `block_on` would panic; there a helper thread blocks instead.
fn block_on<F>(rt: &Runtime, f: F) -> Result<F::Output>
where
    F: Future + Send,
    F::Output: Send,
{
    if tokio::runtime::Handle::try_current().is_err() {
        return Ok(rt.block_on(f));
    }
    std::thread::scope(|scope| {
        let helper = std::thread::Builder::new()
            .name("rimeflake-postgres".into())
            .spawn_scoped(scope, || rt.block_on(f))
            .map_err(|e| {
                Error::new(
                    ErrorKind::Lease,
                    format!("cannot start a thread to wait for PostgreSQL: {e}"),
                )
            })?;
        // A panic in there is a bug of ours: let it go on up.
        Ok(helper
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p)))
    })
}

impl Session {
    /// Connects and starts the task that drives the socket.
    async fn open(config: &Config, connector: MakeRustlsConnect) -> Done<Session> {
        let (client, connection) = config.connect(connector).await?;
        let driver = tokio::spawn(async move {
            // Its error reaches the client as a closed connection.
            let _ = connection.await;
        });
        let session = Session {
            client,
            driver,
            statements: HashMap::new(),
        };
        Ok(session)
    }

    /// Creates the tables when missing. They are looked for first, so a user allowed to use
    /// them but not to create tables can still connect.
    async fn create_tables(&self) -> Done<()> {
        let row = self.client.query_one(TABLES_EXIST, &[]).await?;
        if row.try_get::<_, Option<bool>>(0)? == Some(true) {
            return Ok(());
        }
        for attempt in 0..2 {
            match self.client.batch_execute(SCHEMA).await {
                Ok(()) => return Ok(()),
                // Two first connections raced to create them: the other one did; try once
                // more, which finds them.
                Err(e) if attempt == 0 && is_creation_race(&e) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }

    /// The statement for `sql`, prepared once per connection.
    async fn prepared(&mut self, sql: &'static str) -> Done<Statement> {
        if let Some(s) = self.statements.get(sql) {
            return Ok(s.clone());
        }
        let s = self.client.prepare(sql).await?;
        self.statements.insert(sql, s.clone());
        Ok(s)
    }

    async fn query(&mut self, sql: &'static str, params: &[&(dyn ToSql + Sync)]) -> Done<Vec<Row>> {
        let s = self.prepared(sql).await?;
        Ok(self.client.query(&s, params).await?)
    }

    async fn execute(&mut self, sql: &'static str, params: &[&(dyn ToSql + Sync)]) -> Done<u64> {
        let s = self.prepared(sql).await?;
        Ok(self.client.execute(&s, params).await?)
    }

    /// Why a conditional write of `(namespace, worker_id)` changed nothing.
    async fn why_not(
        &mut self,
        namespace: &str,
        worker_id: i64,
        token: Option<&str>,
    ) -> Done<Saved> {
        let rows = self.query(LOOK, &[&namespace, &worker_id]).await?;
        let Some(row) = rows.first() else {
            // No row: no lease to hold, and no stored version to match.
            return Ok(if token.is_some() {
                Saved::NotHolder
            } else {
                Saved::Moved
            });
        };
        let owner: Option<String> = col(row, 0)?;
        let live: Option<bool> = col(row, 1)?;
        match token {
            // save: the lease must be this token's (expired or not: see SAVE).
            Some(t) if owner.as_deref() != Some(t) => Ok(Saved::NotHolder),
            // reset: nobody may hold a live lease.
            None if live == Some(true) => Ok(Saved::NotHolder),
            // The lease allowed the write, so the version did not match (or moved on between
            // the write and this look, which is the same story).
            _ => Ok(Saved::Moved),
        }
    }
}

/// Column `i` of `row`, as `T`; a type the server should not have sent is an error, not a panic.
fn col<'a, T: FromSql<'a>>(row: &'a Row, i: usize) -> Done<T> {
    Ok(row.try_get(i)?)
}

/// A number the server stores as bigint.
fn to_i64(value: u64, what: &str) -> Result<i64> {
    i64::try_from(value)
        .map_err(|_| Error::config(format!("{what} {value} is too large for PostgreSQL")))
}

/// A bigint the server sent that must not be negative.
fn to_u64(value: i64, what: &str) -> Done<u64> {
    u64::try_from(value).map_err(|_| {
        Fail::Ours(Error::new(
            ErrorKind::State,
            format!("PostgreSQL sent a negative {what} ({value}); rimeflake writes none"),
        ))
    })
}

impl Conn for PgConn {
    fn settle_layout(&mut self, namespace: &str, record: &str) -> Result<String> {
        self.call("store the layout", |mut s| async move {
            let out = async {
                s.execute(INSERT_LAYOUT, &[&namespace, &record]).await?;
                let rows = s.query(SELECT_LAYOUT, &[&namespace]).await?;
                match rows.first() {
                    Some(row) => col::<String>(row, 0),
                    None => Err(Fail::Ours(Error::new(
                        ErrorKind::Lease,
                        format!("the layout of namespace {namespace} vanished as it was stored"),
                    ))),
                }
            }
            .await;
            (s, out)
        })
    }

    fn layout(&mut self, namespace: &str) -> Result<Option<String>> {
        self.call("read the layout", |mut s| async move {
            let out = async {
                let rows = s.query(SELECT_LAYOUT, &[&namespace]).await?;
                rows.first().map(|row| col::<String>(row, 0)).transpose()
            }
            .await;
            (s, out)
        })
    }

    fn acquire(
        &mut self,
        namespace: &str,
        worker_id: u64,
        token: &str,
        ttl_ms: u64,
    ) -> Result<bool> {
        Ok(self
            .acquire_first(namespace, &[worker_id], token, ttl_ms)?
            .is_some())
    }

    /// One statement picks and takes a free worker ID. When another transaction took the one
    /// it picked in between, it asks again: each round either takes one, finds none free, or
    /// saw one more worker ID taken by someone else, so there are at most as many rounds as
    /// candidates.
    fn acquire_first(
        &mut self,
        namespace: &str,
        candidates: &[u64],
        token: &str,
        ttl_ms: u64,
    ) -> Result<Option<Taken>> {
        let ids = candidates
            .iter()
            .map(|&id| to_i64(id, "worker ID"))
            .collect::<Result<Vec<i64>>>()?;
        let ttl = to_i64(ttl_ms, "lease TTL (ms)")?;
        let required = self.replicas.get();
        for _ in 0..candidates.len() {
            let sent_boottime_ns = crate::clock::boottime_ns();
            let ids = &ids;
            let refused = self.unsynchronous();
            let (picked, taken) = self.call("acquire", |mut s| async move {
                let out = async {
                    if required > 0 && !s.synchronous().await? {
                        return Err(Fail::Ours(refused));
                    }
                    let row = s
                        .query(ACQUIRE_FIRST, &[&namespace, ids, &token, &ttl])
                        .await?;
                    let row = row.first().ok_or_else(|| {
                        Fail::Ours(Error::new(ErrorKind::Lease, "acquire returned no row"))
                    })?;
                    let taken = col::<Option<i64>>(row, 1)?;
                    let taken = taken.map(|id| to_u64(id, "worker ID")).transpose()?;
                    Ok((col::<Option<i64>>(row, 0)?, taken))
                }
                .await;
                (s, out)
            })?;
            match (picked, taken) {
                (_, Some(worker_id)) => {
                    return Ok(Some(Taken {
                        worker_id,
                        sent_boottime_ns,
                    }))
                }
                (None, None) => return Ok(None),
                (Some(_), None) => continue,
            }
        }
        Ok(None)
    }

    fn renew(&mut self, namespace: &str, worker_id: u64, token: &str, ttl_ms: u64) -> Result<bool> {
        let id = to_i64(worker_id, "worker ID")?;
        let ttl = to_i64(ttl_ms, "lease TTL (ms)")?;
        let required = i64::from(self.replicas.get());
        let refused = self.unsynchronous();
        self.call("renew", |mut s| async move {
            let out = async {
                if s.execute(RENEW, &[&namespace, &id, &token, &ttl, &required])
                    .await?
                    == 1
                {
                    return Ok(true);
                }
                if required > 0 && !s.synchronous().await? {
                    return Err(Fail::Ours(refused));
                }
                Ok(false)
            }
            .await;
            (s, out)
        })
    }

    fn release(&mut self, namespace: &str, worker_id: u64, token: &str) -> Result<()> {
        let id = to_i64(worker_id, "worker ID")?;
        self.call("release", |mut s| async move {
            let out = s.execute(RELEASE, &[&namespace, &id, &token]).await;
            (s, out.map(|_| ()))
        })
    }

    fn load(&mut self, namespace: &str, worker_id: u64) -> Result<Option<Versioned>> {
        let id = to_i64(worker_id, "worker ID")?;
        self.call("load", |mut s| async move {
            let out = async {
                let rows = s.query(LOAD, &[&namespace, &id]).await?;
                let Some(row) = rows.first() else {
                    return Ok(None);
                };
                let text: Option<String> = col(row, 0)?;
                let version = to_u64(col(row, 1)?, "state version")?;
                Ok(text.map(|text| Versioned { version, text }))
            }
            .await;
            (s, out)
        })
    }

    fn save(
        &mut self,
        namespace: &str,
        worker_id: u64,
        token: &str,
        expected: u64,
        next: &Versioned,
    ) -> Result<Saved> {
        let id = to_i64(worker_id, "worker ID")?;
        let expected = to_i64(expected, "state version")?;
        let version = to_i64(next.version, "state version")?;
        let text = next.text.as_str();
        let required = i64::from(self.replicas.get());
        let refused = self.unsynchronous();
        self.call("save", |mut s| async move {
            let out = async {
                let params: [&(dyn ToSql + Sync); 7] = [
                    &namespace, &id, &token, &expected, &text, &version, &required,
                ];
                if s.execute(SAVE, &params).await? == 1 {
                    return Ok(Saved::Yes);
                }
                if required > 0 && !s.synchronous().await? {
                    return Err(Fail::Ours(refused));
                }
                s.why_not(namespace, id, Some(token)).await
            }
            .await;
            (s, out)
        })
    }

    fn reset(
        &mut self,
        namespace: &str,
        worker_id: u64,
        expected: u64,
        next: &Versioned,
    ) -> Result<Saved> {
        let id = to_i64(worker_id, "worker ID")?;
        let expected = to_i64(expected, "state version")?;
        let version = to_i64(next.version, "state version")?;
        let text = next.text.as_str();
        self.call("reset", |mut s| async move {
            let out = async {
                let written = if expected == 0 {
                    let rows = s
                        .query(RESET_NEW, &[&namespace, &id, &text, &version])
                        .await?;
                    !rows.is_empty()
                } else {
                    let params: [&(dyn ToSql + Sync); 5] =
                        [&namespace, &id, &text, &version, &expected];
                    s.execute(RESET, &params).await? == 1
                };
                if written {
                    return Ok(Saved::Yes);
                }
                s.why_not(namespace, id, None).await
            }
            .await;
            (s, out)
        })
    }

    fn server_time_ms(&mut self) -> Result<u64> {
        self.call("read the clock", |mut s| async move {
            let out = async {
                let rows = s.query(SERVER_TIME, &[]).await?;
                match rows.first() {
                    Some(row) => to_u64(col(row, 0)?, "clock reading"),
                    None => Err(Fail::Ours(Error::new(
                        ErrorKind::Lease,
                        "PostgreSQL sent no clock reading",
                    ))),
                }
            }
            .await;
            (s, out)
        })
    }

    fn mark_used(
        &mut self,
        namespace: &str,
        worker_id: u64,
        reach_ms: u64,
    ) -> Result<super::Usage> {
        let id = worker_id.to_string();
        let reach = to_i64(reach_ms, "reach (ms)")?;
        self.call("mark the worker ID used", |mut s| async move {
            let out = async {
                let rows = s.query(MARK_USED, &[&namespace, &id, &reach]).await?;
                let Some(row) = rows.first() else {
                    return Err(Fail::Ours(Error::new(
                        ErrorKind::Lease,
                        format!("the record of namespace {namespace} vanished as it was marked"),
                    )));
                };
                let age_ms = to_u64(col(row, 0)?, "age")?;
                let before = to_u64(col(row, 1)?, "reach")?;
                Ok(super::Usage {
                    age_ms,
                    used_before: before > 0,
                    reach_ms: before.max(reach_ms),
                })
            }
            .await;
            (s, out)
        })
    }

    fn workers(&mut self, namespace: &str) -> Result<Vec<RemoteWorker>> {
        self.call("list the worker IDs", |mut s| async move {
            let out = async {
                let rows = s.query(WORKERS, &[&namespace]).await?;
                let mut workers = Vec::with_capacity(rows.len());
                for row in &rows {
                    let state: Option<String> = col(row, 3)?;
                    workers.push(RemoteWorker {
                        worker_id: to_u64(col(row, 0)?, "worker ID")?,
                        holder: col(row, 1)?,
                        expires_in_ms: col(row, 2)?,
                        // An undecodable state shows as none; its version still tells it apart.
                        state: state.as_deref().and_then(decode_state),
                        version: to_u64(col(row, 4)?, "state version")?,
                    });
                }
                Ok(workers)
            }
            .await;
            (s, out)
        })
    }

    fn namespaces(&mut self, limit: usize) -> Result<super::Listed> {
        let ask = to_i64(limit.saturating_add(1) as u64, "namespace limit")?;
        self.call("list the namespaces", |mut s| async move {
            let out = async {
                let rows = s.query(NAMESPACES, &[&ask]).await?;
                let mut names = rows
                    .iter()
                    .map(|row| col::<String>(row, 0))
                    .collect::<Done<Vec<String>>>()?;
                let complete = names.len() <= limit;
                names.truncate(limit);
                Ok(super::Listed { names, complete })
            }
            .await;
            (s, out)
        })
    }

    fn check_settings(&mut self) -> Result<Vec<String>> {
        let url = self.shown.clone();
        self.call("read its settings", |mut s| async move {
            let out = async {
                let rows = s.query(SETTINGS, &[]).await?;
                let mut warnings = Vec::new();
                if let Some(row) = rows.first() {
                    for (i, name) in ["fsync"].into_iter().enumerate() {
                        let value: Option<String> = col(row, i)?;
                        if value.as_deref() == Some("off") {
                            warnings.push(format!(
                                "PostgreSQL at {url} runs with {name} = off: a state it \
                                 acknowledged may be lost in a crash, and IDs issued after it \
                                 may repeat; turn {name} on"
                            ));
                        }
                    }
                }
                Ok(warnings)
            }
            .await;
            (s, out)
        })
    }

    fn server(&mut self) -> Result<ServerView> {
        self.server_view()
    }

    fn settle_settings(&mut self, namespace: &str, ours: &Proposal<'_>) -> Result<Settings> {
        self.settle(namespace, ours)
    }

    fn new_epoch(&mut self, namespace: &str) -> Result<u64> {
        self.raise_epoch(namespace)
    }

    fn set_replicas(&mut self, namespace: &str, replicas: u32) -> Result<()> {
        let n = i64::from(replicas);
        self.call("set the replicas required", |mut s| async move {
            let out = s.execute(SET_REPLICAS, &[&namespace, &n]).await;
            (s, out.map(|_| ()))
        })
    }

    fn require(&mut self, replicas: Arc<Replicas>) {
        self.replicas = replicas;
    }
}

#[cfg(test)]
mod tests;
