//! Settings resolved once, in the core, when a generator is built: what the caller set on the
//! [`Builder`](crate::Builder) wins, then the environment, then the defaults. So a binding sets
//! only what its user passed, and every front end reads the environment the same way.
//!
//! | setting | environment | default |
//! |---|---|---|
//! | layout | [`LAYOUT_ENV`] (a preset or a layout spec, [`Layout::from_spec`]) | `default` |
//! | backend | [`BACKEND_ENV`] ([`Backend::parse`]) | `local` |
//! | worker ID | [`WORKER_ID_ENV`] (a number within the layout's worker IDs, or `ordinal`: a Kubernetes StatefulSet pod's ordinal, from `RIMEFLAKE_POD_INDEX`, else the trailing `-<n>` of `$HOSTNAME`) | a lease |
//! | state directory | [`STATE_DIR_ENV`] | `$XDG_STATE_HOME/rimeflake` or `~/.local/state/rimeflake` |
//! | lease TTL (server backends) | [`LEASE_TTL_ENV`] (milliseconds) | [`DEFAULT_LEASE_TTL`], 10 s |
//! | namespace | — | [`Layout::default_namespace`] of the layout |
//! | durability warnings (server backends) | [`NO_DURABILITY_WARNING_ENV`] (`1` quiets them, for a development server) | shown |
//! | wait at every takeover (server backends) | [`WAIT_AT_TAKEOVER_ENV`] (`1`: for servers restored from backups) | off |
//!
//! A variable set to the empty string counts as unset; a bad value is a
//! [`ErrorKind::Config`](crate::ErrorKind::Config) error that names the variable.

use crate::backend::{Backend, Storage};
use crate::error::{Error, Result};
use crate::layout::Layout;
use crate::lease::remote::{DEFAULT_LEASE_TTL, MAX_LEASE_TTL, MIN_LEASE_TTL};
use crate::lease::{dirs, WorkerSource};
use crate::state::StateStore;
use crate::warning::Warning;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

pub use crate::lease::dirs::STATE_DIR_ENV;
pub use crate::lease::source::WORKER_ID_ENV;

pub use crate::env::{
    BACKEND_ENV, LAYOUT_ENV, LEASE_TTL_ENV, NO_DURABILITY_WARNING_ENV, WAIT_AT_TAKEOVER_ENV,
};

/// What the caller set on the builder (`None`: not set).
#[derive(Clone, Debug, Default)]
pub(crate) struct Given {
    pub(crate) layout: Option<Layout>,
    pub(crate) worker: Option<WorkerSource>,
    pub(crate) backend: Option<Backend>,
    pub(crate) state_dir: Option<PathBuf>,
    pub(crate) store: Option<Arc<dyn StateStore>>,
    pub(crate) namespace: Option<String>,
    pub(crate) lease_ttl: Option<Duration>,
    pub(crate) wait_at_takeover: Option<bool>,
    /// Whose words configuration errors use.
    pub(crate) frontend: crate::contract::Frontend,
}

/// Every setting, decided.
#[derive(Debug)]
pub(crate) struct Resolved {
    pub(crate) layout: Layout,
    /// `None`: lease any free worker ID.
    pub(crate) worker: Option<WorkerSource>,
    pub(crate) storage: Storage,
    pub(crate) namespace: String,
    /// The lease TTL of a server backend (checked whatever the backend).
    pub(crate) lease_ttl: Duration,
    /// No warnings about a server backend's durability settings.
    pub(crate) quiet_durability: bool,
    /// Every start on a server backend stays above what a lost holder may have issued.
    pub(crate) wait_at_takeover: bool,
    pub(crate) warnings: Vec<Warning>,
}

/// The layout a front end that builds no generator (a decoder, a state tool) should use:
/// `spec` when given ([`Layout::from_spec`]), else `$RIMEFLAKE_LAYOUT`, else `default` — the
/// order [`Builder::build`](crate::Builder::build) follows.
///
/// # Errors
/// [`ErrorKind::Config`](crate::ErrorKind::Config): a bad spec, or a bad `RIMEFLAKE_LAYOUT`
/// (the message names it).
pub fn layout(spec: Option<&str>) -> Result<Layout> {
    let given = Given {
        layout: spec.map(Layout::from_spec).transpose()?,
        backend: Some(Backend::Memory), // nothing else is resolved
        worker: Some(WorkerSource::Fixed(0)),
        ..Given::default()
    };
    Ok(resolve(&given, &process_env, &|| false)?.layout)
}

/// As [`layout`], but `None` when neither `spec` nor `$RIMEFLAKE_LAYOUT` names one: for a tool
/// that can read the layout from where the state is (a namespace's layout file).
///
/// # Errors
/// As [`layout`].
pub fn layout_if_given(spec: Option<&str>) -> Result<Option<Layout>> {
    if spec.is_none() && process_env(LAYOUT_ENV).is_none_or(|v| v.is_empty()) {
        return Ok(None);
    }
    layout(spec).map(Some)
}

/// The state directory a front end that builds no generator should use: `dir` when given
/// (an empty path is a config error), else `$RIMEFLAKE_STATE_DIR`, else the XDG default — the
/// order [`Builder::build`](crate::Builder::build) follows.
///
/// # Errors
/// [`ErrorKind::Config`](crate::ErrorKind::Config): an empty `dir`, or no directory at all
/// (no `RIMEFLAKE_STATE_DIR`, `XDG_STATE_HOME` or `HOME`).
pub fn state_dir(dir: Option<&std::path::Path>) -> Result<PathBuf> {
    state_dir_as(dir, crate::contract::Frontend::Rust)
}

/// [`state_dir`], with an error that names the setting as `frontend` spells it.
///
/// # Errors
/// As [`state_dir`].
pub fn state_dir_as(
    dir: Option<&std::path::Path>,
    frontend: crate::contract::Frontend,
) -> Result<PathBuf> {
    if dir.is_some_and(|d| d.as_os_str().is_empty()) {
        return Err(empty_state_dir(frontend));
    }
    local_dir(dir, &process_env, &|| false, &mut Vec::new())
}

/// The error for an empty state directory.
fn empty_state_dir(frontend: crate::contract::Frontend) -> Error {
    Error::config(format!(
        "{}: empty; give a directory, or leave it out for the default",
        frontend.setting(crate::contract::Setting::StateDir)
    ))
}

/// The backend `$RIMEFLAKE_BACKEND` names, or `None` when it is unset or empty: for a tool that
/// reads a server's state when the environment points at one.
///
/// # Errors
/// As [`Backend::parse`], naming the variable.
pub fn backend_from_env() -> Result<Option<Backend>> {
    match process_env(BACKEND_ENV).filter(|v| !v.is_empty()) {
        None => Ok(None),
        Some(v) => {
            let text = v
                .into_string()
                .map_err(|_| Error::config(format!("{BACKEND_ENV} is not valid UTF-8")))?;
            Backend::parse(&text)
                .map(Some)
                .map_err(|e| Error::config(format!("{BACKEND_ENV}: {}", e.message())))
        }
    }
}

/// The directory of a local backend: `given`, else `$RIMEFLAKE_STATE_DIR`, else the XDG
/// default, which in a container earns a warning.
fn local_dir(
    given: Option<&std::path::Path>,
    env: &dyn Fn(&str) -> Option<OsString>,
    in_container: &dyn Fn() -> bool,
    warnings: &mut Vec<Warning>,
) -> Result<PathBuf> {
    if let Some(dir) = given {
        if dir.as_os_str().is_empty() {
            return Err(empty_state_dir(crate::contract::Frontend::Rust));
        }
        return Ok(dir.to_path_buf());
    }
    if let Some(dir) = env(STATE_DIR_ENV).filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    let dir = dirs::default_state_dir_from(env)?;
    let silenced = env(dirs::NO_CONTAINER_WARNING_ENV).is_some_and(|v| v == "1");
    if !silenced && in_container() {
        warnings.push(Warning::new(
            Warning::CONTAINER,
            dirs::container_warning(&dir),
        ));
    }
    Ok(dir)
}

/// The process's environment, as [`resolve`] reads it.
pub(crate) fn process_env(name: &str) -> Option<OsString> {
    std::env::var_os(name)
}

/// Resolves `given` against the environment `env` (`in_container` tells whether to warn about
/// the default state directory).
pub(crate) fn resolve(
    given: &Given,
    env: &dyn Fn(&str) -> Option<OsString>,
    in_container: &dyn Fn() -> bool,
) -> Result<Resolved> {
    let var = |name: &str| -> Result<Option<String>> {
        match env(name).filter(|v| !v.is_empty()) {
            None => Ok(None),
            Some(v) => v
                .into_string()
                .map(Some)
                .map_err(|v| Error::config(format!("{name}={v:?} is not valid UTF-8"))),
        }
    };
    use crate::contract::Setting::{LeaseTtl, StateDir};
    let spell = |setting| given.frontend.setting(setting);
    let in_env = |name: &str, e: Error| Error::config(format!("{name}: {}", e.message()));

    let layout = match &given.layout {
        Some(l) => l.clone(),
        None => match var(LAYOUT_ENV)? {
            Some(spec) => Layout::from_spec(&spec).map_err(|e| in_env(LAYOUT_ENV, e))?,
            None => Layout::default(),
        },
    };

    let backend = match &given.backend {
        Some(b) => b.clone(),
        None if given.store.is_some() => Backend::Local,
        None => match var(BACKEND_ENV)? {
            Some(text) => Backend::parse(&text).map_err(|e| in_env(BACKEND_ENV, e))?,
            None => Backend::Local,
        },
    };

    let worker = match &given.worker {
        Some(w) => Some(w.clone()),
        None => match var(WORKER_ID_ENV)? {
            Some(raw) if raw.trim() == crate::lease::source::ORDINAL => {
                let text = |name: &str| env(name).and_then(|v| v.into_string().ok());
                let (id, from) =
                    crate::lease::source::ordinal(&text, &crate::lease::local::hostname)?;
                if id > layout.max_worker_id() {
                    return Err(Error::config(format!(
                        "worker ID {id} ({from}) is above layout {}'s largest worker ID {}",
                        layout.name(),
                        layout.max_worker_id()
                    )));
                }
                Some(WorkerSource::Fixed(id))
            }
            Some(raw) => {
                let id = crate::lease::source::parse_id(&raw, WORKER_ID_ENV)?;
                if id > layout.max_worker_id() {
                    return Err(Error::config(format!(
                        "{WORKER_ID_ENV}={id} is above layout {}'s largest worker ID {}",
                        layout.name(),
                        layout.max_worker_id()
                    )));
                }
                Some(WorkerSource::Fixed(id))
            }
            None => None,
        },
    };

    if given
        .state_dir
        .as_ref()
        .is_some_and(|d| d.as_os_str().is_empty())
    {
        return Err(empty_state_dir(given.frontend));
    }
    let mut warnings = Vec::new();
    let storage = match (&given.store, backend) {
        (Some(_), Backend::Memory) => {
            return Err(Error::config(
                "backend: a memory backend keeps no state; it cannot take a state store",
            ))
        }
        (Some(_), b) if b.is_remote() => {
            return Err(Error::config(format!(
                "backend: a {} backend keeps the state on its server; it cannot take a state store",
                b.name()
            )))
        }
        (Some(store), _) => Storage::Caller(Arc::clone(store)),
        (None, Backend::Memory) => {
            if given.state_dir.is_some() {
                return Err(Error::config(format!(
                    "{0}: a memory backend keeps no state; leave {0} out",
                    spell(StateDir)
                )));
            }
            Storage::Memory
        }
        (None, b) if b.is_remote() => {
            if given.state_dir.is_some() {
                return Err(Error::config(format!(
                    "{0}: a {1} backend keeps the state on its server; leave {0} out",
                    spell(StateDir),
                    b.name()
                )));
            }
            Storage::Remote(b)
        }
        (None, _) => Storage::Local(local_dir(
            given.state_dir.as_deref(),
            env,
            in_container,
            &mut warnings,
        )?),
    };

    let namespace = match &given.namespace {
        Some(ns) => ns.clone(),
        None => layout.default_namespace(),
    };
    // One rule for every backend, the same `state show` and `state reset` apply: a namespace
    // a generator may use is one they can reach.
    crate::lease::local::validate_namespace(&namespace)?;
    let lease_ttl = match given.lease_ttl {
        Some(ttl) => check_lease_ttl(ttl, spell(LeaseTtl))?,
        None => match var(LEASE_TTL_ENV)? {
            Some(raw) => {
                let ms: u64 = raw.trim().parse().map_err(|_| {
                    Error::config(format!(
                        "{LEASE_TTL_ENV}={raw:?} is not a number of milliseconds"
                    ))
                })?;
                check_lease_ttl(Duration::from_millis(ms), LEASE_TTL_ENV)?
            }
            None => DEFAULT_LEASE_TTL,
        },
    };
    let quiet_durability = match var(NO_DURABILITY_WARNING_ENV)?.as_deref().map(str::trim) {
        None | Some("0") => false,
        Some("1") => true,
        Some(other) => {
            return Err(Error::config(format!(
                "{NO_DURABILITY_WARNING_ENV}={other:?}: expected 1 (quiet the warnings about a \
                 server's durability settings) or 0"
            )))
        }
    };
    let wait_at_takeover = match given.wait_at_takeover {
        Some(on) => on,
        None => match var(WAIT_AT_TAKEOVER_ENV)?.as_deref().map(str::trim) {
            None | Some("0") => false,
            Some("1") => true,
            Some(other) => {
                return Err(Error::config(format!(
                    "{WAIT_AT_TAKEOVER_ENV}={other:?}: expected 1 (every start on a server \
                     backend waits out what a lost holder may have issued) or 0"
                )))
            }
        },
    };
    Ok(Resolved {
        layout,
        worker,
        storage,
        namespace,
        lease_ttl,
        quiet_durability,
        wait_at_takeover,
        warnings,
    })
}

/// `ttl` when it is within the bounds of a lease TTL; else a config error naming `what`.
fn check_lease_ttl(ttl: Duration, what: &str) -> Result<Duration> {
    if (MIN_LEASE_TTL..=MAX_LEASE_TTL).contains(&ttl) {
        return Ok(ttl);
    }
    Err(Error::config(format!(
        "{what}: {} ms is out of range: a lease TTL is from {} ms (each server call may take a \
         tenth of it) to {} ms (a day)",
        ttl.as_millis(),
        MIN_LEASE_TTL.as_millis(),
        MAX_LEASE_TTL.as_millis()
    )))
}

#[cfg(test)]
mod tests;
