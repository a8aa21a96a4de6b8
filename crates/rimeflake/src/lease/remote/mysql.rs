//! Remote leases in MySQL or MariaDB (cargo feature `mysql`): a [`Conn`] over the client
//! protocol of [`wire`], on a blocking socket.
//!
//! Every lease time comes from the server's clock (`NOW(3)`), never from this host's. Every
//! call, connecting included, ends within the connection's timeout: a server that hangs
//! (paused, or a host that vanished) gives a lease error instead of a hang, and the connection
//! is dropped and opened again by the next call. Each statement is a transaction of its own
//! (InnoDB, autocommit): the conditional ones check the newest version of the row they lock.

use super::net::{self, Deadline, Lookup};
use super::replication::StoredSettings;
use super::{decode_state, tls, Conn, RemoteWorker, Replicas, Saved, Taken, Versioned};
use super::{Proposal, ServerView, Settings};
use crate::backend::tls::{SslMode, Tls};
use crate::error::{Error, ErrorKind, Result};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

mod replicas;
mod sql;
pub(crate) mod wire;
use crate::backend::mysql_url::MysqlUrl;
pub(crate) use sql::SCHEMA;
use sql::{bind, Val};
use wire::{Answer, Done, Fail, Wire};

/// A connection to MySQL for the lease protocol.
pub(crate) struct MyConn {
    /// The open session; `None` after an error, until the next call opens a new one.
    wire: Option<Wire>,
    url: MysqlUrl,
    tls: Tls,
    /// The rustls configuration the URL's TLS settings make (none for `ssl-mode=DISABLED`).
    tls_config: Option<Arc<rustls::ClientConfig>>,
    /// The URL without its password, for messages.
    shown: String,
    op_timeout: Duration,
    lookup: Lookup,
    /// The replica acknowledgements every lease and state write needs (the namespace's).
    replicas: Arc<Replicas>,
    /// The acknowledgements each commit waits for, as the last look at the server found.
    wait_for: Option<u32>,
}

impl std::fmt::Debug for MyConn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MyConn")
            .field("url", &self.shown)
            .field("connected", &self.wire.is_some())
            .finish_non_exhaustive()
    }
}

impl Drop for MyConn {
    fn drop(&mut self) {
        if let Some(mut wire) = self.wire.take() {
            wire.quit(Deadline::after(
                Duration::from_millis(20).min(self.op_timeout),
            ));
        }
    }
}

/// The least time the creation of the tables may take.
const DDL_TIME: Duration = Duration::from_secs(2);

impl MyConn {
    /// Connects to the server `url` names (`mysql://user:password@host:port/database`, or
    /// `mariadb://`) and creates the tables of [`SCHEMA`] if they are missing. Every later
    /// call, and this one, ends within `op_timeout`.
    ///
    /// # Errors
    /// [`ErrorKind::Config`] for a URL that cannot be used, a wrong password or an unknown
    /// database; [`ErrorKind::Lease`] when the server cannot be reached in time. The messages
    /// show the URL without its password.
    pub(crate) fn open(url: &str, op_timeout: Duration) -> Result<MyConn> {
        MyConn::open_with(url, op_timeout, net::system_resolver)
    }

    /// [`MyConn::open`] with another resolver.
    pub(crate) fn open_with(
        url: &str,
        op_timeout: Duration,
        resolver: net::Resolver,
    ) -> Result<MyConn> {
        let (parsed, tls) = MysqlUrl::parse(url)?;
        let shown = parsed.shown(&tls);
        let tls_config = match tls.mode {
            SslMode::Disable => None,
            _ => Some(Arc::new(tls::client_config(&tls)?)),
        };
        let mut conn = MyConn {
            wire: None,
            url: parsed,
            tls,
            tls_config,
            shown,
            op_timeout: op_timeout.max(Duration::from_millis(1)),
            lookup: Lookup::new(resolver),
            replicas: Arc::default(),
            wait_for: None,
        };
        // Connect now, so a wrong URL or password shows at once rather than at the first use.
        conn.call("connect", |_, _| Ok(()))?;
        Ok(conn)
    }

    /// Runs `op` on an open session (opening one first if there is none), all within the
    /// timeout. After any failure the session is dropped, so the next call starts on a fresh
    /// connection.
    fn call<T>(
        &mut self,
        what: &str,
        op: impl FnOnce(&mut Wire, Deadline) -> Done<T>,
    ) -> Result<T> {
        let deadline = Deadline::after(self.op_timeout);
        if self.wire.as_ref().is_some_and(Wire::closed) {
            self.wire = None;
        }
        let mut wire = match self.wire.take() {
            Some(w) => w,
            None => self.connect(deadline)?,
        };
        match op(&mut wire, deadline) {
            Ok(v) => {
                self.wire = Some(wire);
                Ok(v)
            }
            Err(fail) => Err(self.explain(fail, what, true)),
        }
    }

    /// A new session: the name resolved, TCP, TLS as the URL asks, the login, the session's
    /// settings and the tables, by `deadline`.
    fn connect(&mut self, deadline: Deadline) -> Result<Wire> {
        let MysqlUrl { host, port, .. } = &self.url;
        let sock = self
            .lookup
            .connect(host, *port, deadline)
            .map_err(|e| self.unreachable(&e.to_string()))?;
        let tls = self.tls_config.as_ref().map(|config| wire::TlsAsk {
            config: Arc::clone(config),
            host: &self.url.host,
            required: self.tls.mode != SslMode::Prefer,
        });
        let who = wire::Login {
            user: &self.url.user,
            password: self.url.password.as_deref().unwrap_or(""),
            database: &self.url.database,
        };
        let mut wire = match Wire::login(sock, &who, tls, deadline) {
            Ok(w) => w,
            Err(Fail::Io(e)) if timed_out(&e) => return Err(self.unreachable("no answer in time")),
            Err(fail) => return Err(self.explain(fail, "connect", false)),
        };
        let setup = (|| {
            wire.query(sql::SESSION, deadline)?;
            let found = wire.query(sql::TABLES_EXIST, deadline)?;
            if cell(&found, 0, 0).as_deref() != Some("4") {
                // Once per database: InnoDB syncs each new table's files, which may take longer
                // than one call (a tenth of the TTL) on a busy server.
                let ddl_deadline = Deadline::after(self.op_timeout.max(DDL_TIME));
                for ddl in SCHEMA.split(';').filter(|d| !d.trim().is_empty()) {
                    wire.query(ddl, ddl_deadline)?;
                }
            }
            Ok(())
        })();
        match setup {
            Ok(()) => Ok(wire),
            Err(fail) => Err(self.explain(fail, "look for or create its tables", true)),
        }
    }

    fn unreachable(&self, why: &str) -> Error {
        Error::new(
            ErrorKind::Lease,
            format!(
                "MySQL at {} could not be reached within {} ms ({why})",
                self.shown,
                self.op_timeout.as_millis()
            ),
        )
    }

    /// A failure told in rimeflake's terms: config errors for what a person must fix
    /// (credentials, rights, certificates, TLS the server lacks), lease errors for what may
    /// pass (a server down or slow). Never holds the password.
    fn explain(&self, fail: Fail, what: &str, logged_in: bool) -> Error {
        let url = &self.shown;
        let ms = self.op_timeout.as_millis();
        match fail {
            Fail::Io(e) => {
                if let Some(e) = tls::explain(&e, &format!("MySQL at {url}"), &self.tls) {
                    return e;
                }
                if timed_out(&e) {
                    return Error::new(
                        ErrorKind::Lease,
                        format!("MySQL at {url} did not answer ({what}) within {ms} ms"),
                    );
                }
                Error::new(
                    ErrorKind::Lease,
                    format!(
                        "MySQL at {url} failed ({what}): {}",
                        self.scrub(e.to_string())
                    ),
                )
            }
            Fail::Login(why) => Error::config(format!("MySQL at {url}: {why}")),
            Fail::Protocol(why) => {
                Error::new(ErrorKind::Lease, format!("MySQL at {url} ({what}): {why}"))
            }
            Fail::Server { code, message } => {
                let text = self.scrub(message);
                match code {
                    // ER_ACCESS_DENIED_ERROR, ER_ACCESS_DENIED_NO_PASSWORD_ERROR
                    1045 | 1698 => Error::config(format!(
                        "MySQL at {url} refused the login: wrong password, unknown user, a \
                         host it may not log in from{} ({text})",
                        if self.tls.mode == SslMode::Disable {
                            ", or a connection without TLS (ssl-mode=DISABLED) where it \
                             requires TLS"
                        } else {
                            ", or a client certificate it wants (ssl-cert, ssl-key)"
                        }
                    )),
                    // ER_BAD_DB_ERROR
                    1049 => Error::config(format!(
                        "MySQL at {url}: unknown database ({text}); create it, or name another \
                         in the URL"
                    )),
                    // ER_DBACCESS_DENIED_ERROR, ER_TABLEACCESS_DENIED_ERROR,
                    // ER_SPECIFIC_ACCESS_DENIED_ERROR, ER_COLUMNACCESS_DENIED_ERROR
                    1044 | 1142 | 1227 | 1143 => Error::config(format!(
                        "MySQL at {url}: permission denied ({what}: {text}); grant the user the \
                         rights it lacks, or create rimeflake's tables beforehand (see the \
                         schema in the docs)"
                    )),
                    // ER_SECURE_TRANSPORT_REQUIRED (MySQL's number, then MariaDB's)
                    3159 | 4188 => Error::config(format!(
                        "MySQL at {url} refuses connections without TLS \
                         (require_secure_transport): use ssl-mode=REQUIRED or a verifying \
                         mode ({text})"
                    )),
                    // ER_HOST_NOT_PRIVILEGED, ER_HOST_IS_BLOCKED
                    1130 | 1129 => {
                        Error::config(format!("MySQL at {url} refused the connection ({text})"))
                    }
                    _ if !logged_in => Error::new(
                        ErrorKind::Lease,
                        format!("cannot connect to MySQL at {url}: {text}"),
                    ),
                    _ => Error::new(
                        ErrorKind::Lease,
                        format!("MySQL at {url} failed ({what}): {text} (error {code})"),
                    ),
                }
            }
        }
    }

    /// `text` with the password replaced, in case a server message ever repeats it.
    fn scrub(&self, text: String) -> String {
        match self.url.password.as_deref() {
            Some(pw) if !pw.is_empty() && text.contains(pw) => text.replace(pw, "***"),
            _ => text,
        }
    }

    /// Runs `sql` with `vals` in one call.
    fn run(&mut self, what: &str, sql: &'static str, vals: &[Val<'_>]) -> Result<Answer> {
        let text = bind(sql, vals);
        self.call(what, |w, d| w.query(&text, d))
    }

    /// [`MyConn::run`] for a lease or state write: then an error unless the replicas the
    /// namespace requires acknowledged it (see `replicas.rs`).
    fn write(&mut self, what: &str, sql: &'static str, vals: &[Val<'_>]) -> Result<Answer> {
        let answer = self.run(what, sql, vals)?;
        self.acknowledged(what, self.replicas.get())?;
        Ok(answer)
    }

    /// Why a conditional write of `(namespace, worker_id)` changed nothing: `token` must hold
    /// the lease for a save; nobody may hold it live for a reset.
    fn why_not(&mut self, namespace: &str, worker_id: u64, token: Option<&str>) -> Result<Saved> {
        let found = self.run(
            "look",
            sql::LOOK,
            &[Val::Text(namespace), Val::Num(worker_id)],
        )?;
        let Some(row) = found.rows.first() else {
            // No row: no lease to hold, and no stored version to match.
            return Ok(if token.is_some() {
                Saved::NotHolder
            } else {
                Saved::Moved
            });
        };
        let owner = row.first().cloned().flatten();
        let live = row.get(1).cloned().flatten().as_deref() == Some("1");
        Ok(match token {
            Some(t) if owner.as_deref() != Some(t) => Saved::NotHolder,
            None if live => Saved::NotHolder,
            // The lease allowed the write, so the version did not match (or moved on between
            // the write and this look, which is the same story).
            _ => Saved::Moved,
        })
    }

    /// Takes the lease of `worker_id` if nobody else holds it live: the row updated, or made.
    fn take(
        &mut self,
        namespace: &str,
        worker_id: u64,
        token: &str,
        ttl_ms: u64,
        row: bool,
    ) -> Result<bool> {
        let (ns, id, tok, ttl) = (
            Val::Text(namespace),
            Val::Num(worker_id),
            Val::Text(token),
            Val::Num(ttl_ms),
        );
        if row
            && self
                .write("acquire", sql::TAKE, &[tok, ttl, ns, id, tok])?
                .affected
                == 1
        {
            return Ok(true);
        }
        if self
            .write("acquire", sql::TAKE_NEW, &[ns, id, tok, ttl])?
            .affected
            == 1
        {
            return Ok(true);
        }
        // The row appeared since it was not found (another racer's), and may be free.
        Ok(!row
            && self
                .write("acquire", sql::TAKE, &[tok, ttl, ns, id, tok])?
                .affected
                == 1)
    }
}

/// A socket timeout: `EAGAIN` (which std calls `WouldBlock`) from a read or write that timed
/// out, or our own deadline.
fn timed_out(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock
    )
}

/// Row `r`, column `c` of an answer.
fn cell(a: &Answer, r: usize, c: usize) -> Option<String> {
    a.rows.get(r).and_then(|row| row.get(c)).cloned().flatten()
}

/// A number the server sent; anything else is an error, not a panic.
fn num<T: std::str::FromStr>(text: Option<&str>, what: &str) -> Result<T> {
    text.and_then(|t| t.parse().ok()).ok_or_else(|| {
        Error::new(
            ErrorKind::State,
            format!("MySQL sent {text:?} as a {what}; rimeflake writes none such"),
        )
    })
}

impl Conn for MyConn {
    fn settle_layout(&mut self, namespace: &str, record: &str) -> Result<String> {
        self.run(
            "store the layout",
            sql::INSERT_LAYOUT,
            &[Val::Text(namespace), Val::Text(record)],
        )?;
        let found = self.layout(namespace)?;
        found.ok_or_else(|| {
            Error::new(
                ErrorKind::Lease,
                format!("the layout of namespace {namespace} vanished as it was stored"),
            )
        })
    }

    fn layout(&mut self, namespace: &str) -> Result<Option<String>> {
        let a = self.run(
            "read the layout",
            sql::SELECT_LAYOUT,
            &[Val::Text(namespace)],
        )?;
        Ok(cell(&a, 0, 0))
    }

    fn acquire(
        &mut self,
        namespace: &str,
        worker_id: u64,
        token: &str,
        ttl_ms: u64,
    ) -> Result<bool> {
        self.take(namespace, worker_id, token, ttl_ms, true)
    }

    /// One statement reads which worker IDs have a row and which are held; then the free ones
    /// are taken in order, each by a statement that checks again on the newest row, so a racer
    /// that took one in between costs one more statement, never a shared worker ID.
    fn acquire_first(
        &mut self,
        namespace: &str,
        candidates: &[u64],
        token: &str,
        ttl_ms: u64,
    ) -> Result<Option<Taken>> {
        if candidates.is_empty() {
            return Ok(None);
        }
        let rows = self.run(
            "acquire",
            sql::ROWS,
            &[Val::Text(token), Val::Text(namespace)],
        )?;
        let mut held: HashMap<u64, bool> = HashMap::with_capacity(rows.rows.len());
        for row in &rows.rows {
            let id = num(row.first().cloned().flatten().as_deref(), "worker ID")?;
            held.insert(id, row.get(1).cloned().flatten().as_deref() == Some("1"));
        }
        for &worker_id in candidates {
            let row = match held.get(&worker_id) {
                Some(true) => continue,
                Some(false) => true,
                None => false,
            };
            let sent_boottime_ns = crate::clock::boottime_ns();
            if self.take(namespace, worker_id, token, ttl_ms, row)? {
                return Ok(Some(Taken {
                    worker_id,
                    sent_boottime_ns,
                }));
            }
        }
        Ok(None)
    }

    fn renew(&mut self, namespace: &str, worker_id: u64, token: &str, ttl_ms: u64) -> Result<bool> {
        let vals = [
            Val::Num(ttl_ms),
            Val::Text(namespace),
            Val::Num(worker_id),
            Val::Text(token),
        ];
        Ok(self.write("renew", sql::RENEW, &vals)?.affected == 1)
    }

    fn release(&mut self, namespace: &str, worker_id: u64, token: &str) -> Result<()> {
        let vals = [Val::Text(namespace), Val::Num(worker_id), Val::Text(token)];
        self.run("release", sql::RELEASE, &vals).map(drop)
    }

    fn load(&mut self, namespace: &str, worker_id: u64) -> Result<Option<Versioned>> {
        let a = self.run(
            "load",
            sql::LOAD,
            &[Val::Text(namespace), Val::Num(worker_id)],
        )?;
        let Some(text) = cell(&a, 0, 0) else {
            return Ok(None);
        };
        let version = num(cell(&a, 0, 1).as_deref(), "state version")?;
        Ok(Some(Versioned { version, text }))
    }

    fn save(
        &mut self,
        namespace: &str,
        worker_id: u64,
        token: &str,
        expected: u64,
        next: &Versioned,
    ) -> Result<Saved> {
        let vals = [
            Val::Text(&next.text),
            Val::Num(next.version),
            Val::Text(namespace),
            Val::Num(worker_id),
            Val::Text(token),
            Val::Num(expected),
        ];
        if self.write("save", sql::SAVE, &vals)?.affected == 1 {
            return Ok(Saved::Yes);
        }
        self.why_not(namespace, worker_id, Some(token))
    }

    fn reset(
        &mut self,
        namespace: &str,
        worker_id: u64,
        expected: u64,
        next: &Versioned,
    ) -> Result<Saved> {
        let (ns, id) = (Val::Text(namespace), Val::Num(worker_id));
        let (text, version) = (Val::Text(&next.text), Val::Num(next.version));
        let vals = [text, version, ns, id, Val::Num(expected)];
        if self.write("reset", sql::RESET, &vals)?.affected == 1 {
            return Ok(Saved::Yes);
        }
        if expected == 0
            && self
                .write("reset", sql::RESET_NEW, &[ns, id, text, version])?
                .affected
                == 1
        {
            return Ok(Saved::Yes);
        }
        self.why_not(namespace, worker_id, None)
    }

    fn server_time_ms(&mut self) -> Result<u64> {
        let a = self.run("read the clock", sql::SERVER_TIME, &[])?;
        num(cell(&a, 0, 0).as_deref(), "clock reading")
    }

    fn mark_used(
        &mut self,
        namespace: &str,
        worker_id: u64,
        reach_ms: u64,
    ) -> Result<super::Usage> {
        let (ns, id) = (Val::Text(namespace), Val::Num(worker_id));
        let what = "mark the worker ID used";
        let marked = self.write(what, sql::MARK_USED, &[id, Val::Num(reach_ms), ns])?;
        let a = self.run(what, sql::MARKED, &[ns, id])?;
        if marked.affected == 0 || a.rows.is_empty() {
            return Err(Error::new(
                ErrorKind::Lease,
                format!("the record of namespace {namespace} vanished as it was marked"),
            ));
        }
        Ok(super::Usage {
            age_ms: num(cell(&a, 0, 0).as_deref(), "age")?,
            used_before: marked.affected != 1,
            reach_ms: num::<u64>(cell(&a, 0, 1).as_deref(), "reach")?.max(reach_ms),
        })
    }

    fn workers(&mut self, namespace: &str) -> Result<Vec<RemoteWorker>> {
        let a = self.run("list the worker IDs", sql::WORKERS, &[Val::Text(namespace)])?;
        a.rows
            .iter()
            .map(|row| {
                let at = |i: usize| row.get(i).cloned().flatten();
                Ok(RemoteWorker {
                    worker_id: num(at(0).as_deref(), "worker ID")?,
                    holder: at(1),
                    expires_in_ms: at(2).map(|t| num(Some(&t), "lease expiry")).transpose()?,
                    // An undecodable state shows as none; its version still tells it apart.
                    state: at(3).as_deref().and_then(decode_state),
                    version: num(at(4).as_deref(), "state version")?,
                })
            })
            .collect()
    }

    fn namespaces(&mut self, limit: usize) -> Result<super::Listed> {
        let ask = limit.saturating_add(1) as u64;
        let a = self.run("list the namespaces", sql::NAMESPACES, &[Val::Num(ask)])?;
        let mut names: Vec<String> = a.rows.iter().filter_map(|r| r[0].clone()).collect();
        let complete = names.len() <= limit;
        names.truncate(limit);
        Ok(super::Listed { names, complete })
    }

    fn check_settings(&mut self) -> Result<Vec<String>> {
        let a = self.run("read its settings", sql::SETTINGS, &[])?;
        let url = &self.shown;
        let mut warnings = Vec::new();
        let flush = cell(&a, 0, 0);
        if flush.as_deref().is_some_and(|f| f != "1") {
            warnings.push(format!(
                "MySQL at {url} runs with innodb_flush_log_at_trx_commit = {}: a state it \
                 acknowledged may be lost in a crash, and IDs issued after it may repeat; set it \
                 to 1",
                flush.unwrap_or_default()
            ));
        }
        let sync = cell(&a, 0, 2);
        if cell(&a, 0, 1).as_deref() == Some("1") && sync.as_deref().is_some_and(|s| s != "1") {
            warnings.push(format!(
                "MySQL at {url} writes a binary log with sync_binlog = {}: after a crash its \
                 replicas may lack states it acknowledged; set it to 1",
                sync.unwrap_or_default()
            ));
        }
        Ok(warnings)
    }

    fn server(&mut self) -> Result<ServerView> {
        self.server_view()
    }

    fn settle_settings(&mut self, namespace: &str, ours: &Proposal<'_>) -> Result<Settings> {
        self.settle_stored(namespace, ours)
    }

    fn new_epoch(&mut self, namespace: &str) -> Result<u64> {
        self.raise_stored_epoch(namespace)
    }

    fn set_replicas(&mut self, namespace: &str, replicas: u32) -> Result<()> {
        self.set_stored_replicas(namespace, replicas)
    }

    fn require(&mut self, replicas: Arc<Replicas>) {
        self.replicas = replicas;
    }
}

#[cfg(test)]
mod tests;
