//! The same administration for a server backend: one namespace ([`inspect`], [`render`],
//! [`reset`]) or every namespace on the server ([`inspect_all`], [`render_all`]), as the CLI's
//! `state show --backend` and `state reset --backend` do it: list a server's namespaces and
//! their worker IDs, and replace a corrupt state with one bounded by the operator's evidence.
//! After a restore from a backup, [`restored`] (`state restored`) makes the next start of every
//! worker ID wait out what a stale copy could repeat; [`require_replicas`] (`state replicas`)
//! sets how many replicas must acknowledge every write, when one is gone for good.
//! Without the `redis` or `postgres` feature these fail with
//! [`ErrorKind::Config`].

use crate::backend::Backend;
use crate::error::{Error, ErrorKind, Result};
use crate::layout::Layout;
use crate::lease::namespace::LayoutRecord;
use crate::lease::remote::{
    connect, decode_state, encode_state, RemoteWorker, Saved, Timing, Versioned, DEFAULT_LEASE_TTL,
};
use crate::state::WorkerState;

/// A namespace on a server, as [`inspect`] finds it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RemoteNamespace {
    /// The namespace's layout record, if a generator stored one (and it can be read).
    pub layout: Option<LayoutRecord>,
    /// Every worker ID with a lease or a state.
    pub workers: Vec<RemoteWorker>,
}

/// The layout and every worker ID of `namespace` on the server `backend` names: holders,
/// expiry, clock-ids and reservations (`rimeflake state show --backend`). Reads only.
///
/// # Errors
/// As connecting: a config error for a URL that cannot be used, a lease error when the server
/// cannot be reached.
pub fn inspect(backend: &Backend, namespace: &str) -> Result<RemoteNamespace> {
    crate::lease::local::validate_namespace(namespace)?;
    let timing = Timing {
        ttl: DEFAULT_LEASE_TTL,
    };
    let mut conn = connect(backend, timing)?;
    let layout = conn.layout(namespace)?;
    Ok(RemoteNamespace {
        layout: layout.as_deref().and_then(LayoutRecord::parse),
        workers: conn.workers(namespace)?,
    })
}

/// Every namespace on a server, as [`inspect_all`] finds them.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RemoteServer {
    /// The namespaces, sorted by name, each as [`inspect`] finds it.
    pub namespaces: Vec<(String, RemoteNamespace)>,
    /// `false` when the listing stopped before the end, so the server may hold more namespaces:
    /// past [`MAX_NAMESPACES`], or past the keys one listing of a Redis server reads.
    pub complete: bool,
}

/// The most namespaces [`inspect_all`] lists.
pub const MAX_NAMESPACES: usize = 1_000;

/// Every namespace on the server `backend` names, with its layout and worker IDs (`rimeflake
/// state show --backend` without `--namespace`). Reads only: Redis is searched with `SCAN`, a
/// bounded number of keys at a time, never `KEYS`; PostgreSQL's table of namespaces is read.
///
/// # Errors
/// As [`inspect`].
pub fn inspect_all(backend: &Backend) -> Result<RemoteServer> {
    let timing = Timing {
        ttl: DEFAULT_LEASE_TTL,
    };
    let mut conn = connect(backend, timing)?;
    let listed = conn.namespaces(MAX_NAMESPACES)?;
    let mut namespaces = Vec::with_capacity(listed.names.len());
    for ns in listed.names {
        let layout = conn.layout(&ns)?;
        let found = RemoteNamespace {
            layout: layout.as_deref().and_then(LayoutRecord::parse),
            workers: conn.workers(&ns)?,
        };
        namespaces.push((ns, found));
    }
    Ok(RemoteServer {
        namespaces,
        complete: listed.complete,
    })
}

/// What [`inspect_all`] found, as `rimeflake state show --backend` prints it: each namespace as
/// [`render`] shows one.
pub fn render_all(backend: &Backend, found: &RemoteServer) -> String {
    let mut out = format!("{backend}\n");
    if found.namespaces.is_empty() {
        out.push_str("  no namespace: no generator has used this server yet\n");
    }
    for (ns, one) in &found.namespaces {
        render_namespace(&mut out, ns, one);
    }
    if !found.complete {
        out.push_str(&format!(
            "  (the listing stopped before the end, after {} namespaces: the server may hold \
             more; give --namespace NS for one not listed)\n",
            found.namespaces.len()
        ));
    }
    out
}

/// What [`inspect`] found, as `rimeflake state show --backend --namespace NS` prints it:
/// reservations in the layout's time units, and as UTC dates when the namespace's layout is
/// known.
pub fn render(backend: &Backend, namespace: &str, found: &RemoteNamespace) -> String {
    let mut out = format!("{backend}\n");
    render_namespace(&mut out, namespace, found);
    out
}

fn render_namespace(out: &mut String, namespace: &str, found: &RemoteNamespace) {
    let layout = found
        .layout
        .as_ref()
        .map_or("no layout stored", |l| l.description.as_str());
    out.push_str(&format!("  namespace {namespace}: {layout}\n"));
    if found.workers.is_empty() {
        out.push_str("    no worker ID has been leased here\n");
    }
    for w in &found.workers {
        let holder = match (&w.holder, w.expires_in_ms) {
            (Some(h), Some(ms)) => format!("held by {h}, expires in {ms} ms"),
            (Some(h), None) => format!("held by {h}"),
            (None, _) => "free".to_string(),
        };
        out.push_str(&format!("    worker {:5}  {holder}\n", w.worker_id));
        match &w.state {
            None if w.version > 0 => out.push_str(&format!(
                "      state version {}: CORRUPT (see `rimeflake state reset --backend`)\n",
                w.version
            )),
            None => out.push_str("      no state stored\n"),
            Some(s) => {
                let closed = match s.closed_at {
                    Some(_) => "closed cleanly",
                    None => "running, or stopped without close",
                };
                out.push_str(&format!(
                    "      state version {}: clock-id {}, {closed}\n",
                    w.version, s.clock_id
                ));
                for (cid, r) in s.reserved.iter().enumerate() {
                    let Some(r) = r else { continue };
                    let when = match found.layout.as_ref().and_then(|l| l.unix_ms(*r)) {
                        Some(ms) => format!(" ({})", crate::utc::iso8601(ms)),
                        None => String::new(),
                    };
                    out.push_str(&format!("        clock-id {cid}: reserved to {r}{when}\n"));
                }
            }
        }
    }
}

/// What [`reset`] stored.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RemoteReset {
    /// The new state.
    pub state: WorkerState,
    /// What bounded the lost state (the evidence given).
    pub basis: String,
    /// The corrupt text it replaced (at most 200 characters), to keep in the operator's notes.
    pub replaced: String,
}

/// Replaces the CORRUPT state of `worker_id` in `namespace` on the server `backend` names
/// (`rimeflake state reset --backend`) with one reserved past anything the lost state can have
/// held, as `options`' evidence bounds it (a server keeps no high-water marks: evidence is
/// required). Refused while a process holds the worker ID, and when the state is readable.
///
/// # Errors
/// [`ErrorKind::State`] when there is no state or no evidence; [`ErrorKind::Config`] for a
/// readable state or a layout that is not the namespace's; [`ErrorKind::Lease`] while the worker
/// ID is held, or when the server cannot be reached.
pub fn reset(
    backend: &Backend,
    namespace: &str,
    layout: &Layout,
    worker_id: u64,
    options: &super::ResetOptions,
) -> Result<RemoteReset> {
    crate::lease::local::validate_namespace(namespace)?;
    let timing = Timing {
        ttl: DEFAULT_LEASE_TTL,
    };
    let mut conn = connect(backend, timing)?;
    let what = format!("worker ID {worker_id} of namespace {namespace} on {backend}");
    let found = conn.load(namespace, worker_id)?.ok_or_else(|| {
        Error::new(
            ErrorKind::State,
            format!("{what} has no state: nothing to reset (check --worker and --namespace)"),
        )
    })?;
    let clock_ids = layout.max_clock_id() as usize + 1;
    if let Some(s) = decode_state(&found.text) {
        return Err(Error::config(if s.reserved.len() == clock_ids {
            format!(
                "{what} holds a valid state (clock-id {}): there is nothing to reset",
                s.clock_id
            )
        } else {
            format!(
                "{what} holds a valid state of a layout with {} clock-ids, not this layout's \
                 {clock_ids}: use the namespace's own layout",
                s.reserved.len()
            )
        }));
    }
    let ours = LayoutRecord::of(layout);
    match LayoutRecord::parse(&conn.settle_layout(namespace, &ours.to_text())?) {
        Some(t) if t.fingerprint == ours.fingerprint => {}
        _ => {
            return Err(Error::config(format!(
                "namespace {namespace} on {backend} has another layout than {}: give its layout",
                ours.description
            )))
        }
    }
    let now_ms = crate::clock::Clock::now_ms(&crate::clock::SystemClock);
    let (state, basis) =
        super::reset::bounded_state(layout, now_ms, None, options)?.ok_or_else(|| {
            Error::new(
                ErrorKind::State,
                format!(
                    "cannot reset {what} safely: its state is corrupt and a server keeps no \
                     high-water marks, so nothing bounds the reservations it held. Give \
                     evidence: the highest ID this worker ID is known to have issued \
                     (`--above-id ID`), or a time no ID of it has reached on any clock-id \
                     (`--reserve-until 2030-01-01T00:00:00Z`)"
                ),
            )
        })?;
    let next = Versioned {
        version: found.version + 1,
        text: encode_state(&state),
    };
    match conn.reset(namespace, worker_id, found.version, &next)? {
        Saved::Yes => Ok(RemoteReset {
            state,
            basis,
            replaced: found.text.chars().take(200).collect(),
        }),
        Saved::NotHolder => Err(Error::new(
            ErrorKind::Lease,
            format!("{what} is held by a running process: stop it, then reset"),
        )),
        Saved::Moved => Err(Error::new(
            ErrorKind::State,
            format!("the state of {what} changed while it was being reset: run the reset again"),
        )),
    }
}

/// What [`restored`] did: each namespace marked, with its new restore epoch.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Restored {
    /// The namespaces, sorted by name, each with its restore epoch now.
    pub namespaces: Vec<(String, u64)>,
    /// `false` when the listing of the server's namespaces stopped before the end (past
    /// [`MAX_NAMESPACES`]): give the others by name.
    pub complete: bool,
}

/// Declares that the server's data was restored from a backup (`rimeflake state restored
/// --backend URL [--namespace NS]`): `namespace`, or every namespace on the server when `None`,
/// gets a new restore epoch, and the next start of each of its worker IDs takes the state it
/// finds for what it may be, a stale copy, and starts a holder's reach ahead of the clock
/// (`max_drift` plus `reserve_ahead`: its first ID then comes `reserve_ahead` after the start).
/// Later starts of that worker ID pay nothing. Run it once the restore is done, before the
/// generators start again; a restore made after it undoes it.
///
/// # Errors
/// [`ErrorKind::State`] for a namespace the server does not have; as [`inspect`] otherwise.
pub fn restored(backend: &Backend, namespace: Option<&str>) -> Result<Restored> {
    let mut conn = connect(backend, admin_timing())?;
    let (names, complete) = chosen(&mut *conn, backend, namespace)?;
    let mut namespaces = Vec::with_capacity(names.len());
    for ns in names {
        let epoch = conn.new_epoch(&ns)?;
        namespaces.push((ns, epoch));
    }
    Ok(Restored {
        namespaces,
        complete,
    })
}

/// Sets how many replicas must acknowledge every lease and state write in `namespace` (every
/// namespace on the server when `None`): `rimeflake state replicas --backend URL --require N`.
/// Generators raise it by themselves when more replicas are online, and a promoted replica's
/// lineage needs one less; an operator lowers it when a replica is gone for good (writes wait
/// for it, and fail, until then), or to 0 to take a server as standalone. Running generators
/// take the new value at their next look at the server (a renewal, a reconnect); a start takes
/// it at once.
///
/// # Errors
/// As [`restored`].
pub fn require_replicas(
    backend: &Backend,
    namespace: Option<&str>,
    replicas: u32,
) -> Result<Restored> {
    let mut conn = connect(backend, admin_timing())?;
    let (names, complete) = chosen(&mut *conn, backend, namespace)?;
    let mut namespaces = Vec::with_capacity(names.len());
    for ns in names {
        conn.set_replicas(&ns, replicas)?;
        namespaces.push((ns, u64::from(replicas)));
    }
    Ok(Restored {
        namespaces,
        complete,
    })
}

/// `namespace`, which the server must have, or every namespace on the server (and whether the
/// listing was complete).
fn chosen(
    conn: &mut dyn crate::lease::remote::Conn,
    backend: &Backend,
    namespace: Option<&str>,
) -> Result<(Vec<String>, bool)> {
    match namespace {
        Some(ns) => {
            crate::lease::local::validate_namespace(ns)?;
            if conn.layout(ns)?.is_none() {
                return Err(Error::new(
                    ErrorKind::State,
                    format!("namespace {ns} has no record on {backend}: check --namespace"),
                ));
            }
            Ok((vec![ns.to_string()], true))
        }
        None => {
            let listed = conn.namespaces(MAX_NAMESPACES)?;
            Ok((listed.names, listed.complete))
        }
    }
}

fn admin_timing() -> Timing {
    Timing {
        ttl: DEFAULT_LEASE_TTL,
    }
}

// The URL is shown as PostgreSQL's driver parses it (with its default port): the feature.
#[cfg(all(test, feature = "postgres"))]
mod tests {
    use super::*;

    #[test]
    fn a_server_renders_each_namespace_and_says_when_the_listing_stopped() {
        let backend = Backend::Postgres("postgresql://u@h/db".into());
        let empty = RemoteNamespace {
            layout: None,
            workers: Vec::new(),
        };
        let mut server = RemoteServer {
            namespaces: vec![("a".into(), empty.clone()), ("b".into(), empty)],
            complete: true,
        };
        let text = render_all(&backend, &server);
        assert!(text.starts_with("postgresql://u@h:5432/db\n"), "{text}");
        let (a, b) = (
            text.find("  namespace a: no layout stored\n"),
            text.find("  namespace b: no layout stored\n"),
        );
        assert!(a.is_some() && a < b, "{text}");
        assert!(!text.contains("stopped"), "{text}");
        server.complete = false;
        let text = render_all(&backend, &server);
        assert!(
            text.contains("stopped before the end, after 2 namespaces"),
            "{text}"
        );
        server.namespaces.clear();
        server.complete = true;
        let text = render_all(&backend, &server);
        assert!(
            text.contains("no namespace: no generator has used this server"),
            "{text}"
        );
    }
}
