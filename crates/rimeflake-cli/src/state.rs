//! `rimeflake state show`: what the state directory holds, read without disturbing any holder;
//! `rimeflake state reset`: the way out of a corrupt state file; `state restored` and `state
//! replicas`: a server restored from a backup, a replica gone for good.

use crate::args::{StateReplicasArgs, StateResetArgs, StateServerArgs, StateShowArgs};
use crate::fail::Failure;
use rimeflake::admin;
use std::io::Write;

/// Prints every lease of every namespace: holder, layout, clock-id and reservations.
pub fn show(args: &StateShowArgs) -> Result<(), Failure> {
    let backend = server(&args.backend, &args.state_dir)?;
    if backend.is_none() && args.namespace.is_some() {
        return Err(Failure::usage(
            "--namespace is for a server backend (--backend URL or $RIMEFLAKE_BACKEND); on a \
             state directory, state show lists every namespace",
        ));
    }
    if let Some(backend) = backend {
        use rimeflake::admin::remote;
        // One namespace when one is named, or a layout (--layout or $RIMEFLAKE_LAYOUT), which
        // names its own; else every one, as on a state directory.
        let namespace = match &args.namespace {
            Some(ns) => Some(ns.clone()),
            None => rimeflake::frontend::layout_if_given(args.layout.layout.as_deref())?
                .map(|l| l.default_namespace()),
        };
        let text = match namespace {
            Some(ns) => remote::render(&backend, &ns, &remote::inspect(&backend, &ns)?),
            None => remote::render_all(&backend, &remote::inspect_all(&backend)?),
        };
        std::io::stdout().lock().write_all(text.as_bytes())?;
        return Ok(());
    }
    let dir = state_dir(&args.state_dir)?;
    if !dir.exists() {
        return Err(Failure::runtime(format!(
            "no state directory at {} (it is made by the first generator that uses it)",
            dir.display()
        )));
    }
    let infos = admin::inspect(&dir)?;
    let mut out = std::io::stdout().lock();
    out.write_all(admin::render(&dir, &infos).as_bytes())?;
    Ok(())
}

/// Replaces a corrupt state file (see `rimeflake::admin::reset`), says what bounded the lost
/// state, what is reserved now, and where the copy of the corrupt file is.
pub fn reset(args: &StateResetArgs) -> Result<(), Failure> {
    let backend = server(&args.backend, &args.state_dir)?;
    let options = rimeflake::admin::ResetOptions::default()
        .above_id(args.above_id)
        .reserve_until_ms(
            args.reserve_until
                .as_deref()
                .map(rimeflake::frontend::parse_time)
                .transpose()?,
        );
    if let Some(backend) = backend {
        let layout = args.layout.layout()?;
        let namespace = args
            .namespace
            .clone()
            .unwrap_or_else(|| layout.default_namespace());
        let report =
            rimeflake::admin::remote::reset(&backend, &namespace, &layout, args.worker, &options)?;
        let mut out = std::io::stdout().lock();
        writeln!(
            out,
            "reset worker {} of namespace {namespace} on {backend} from {}; now on clock-id {}",
            args.worker, report.basis, report.state.clock_id
        )?;
        for (cid, r) in report.state.reserved.iter().enumerate() {
            if let Some(r) = r {
                writeln!(out, "  clock-id {cid}: reserved to {r}")?;
            }
        }
        writeln!(out, "the corrupt state was: {:?}", report.replaced)?;
        return Ok(());
    }
    let dir = state_dir(&args.state_dir)?;
    // A layout given (flag or $RIMEFLAKE_LAYOUT) names the namespace, as for generators;
    // without one the namespace's own layout file says what it is.
    let layout = rimeflake::frontend::layout_if_given(args.layout.layout.as_deref())?;
    let namespace = match (&args.namespace, &layout) {
        (Some(ns), _) => ns.clone(),
        (None, Some(l)) => l.default_namespace(),
        (None, None) => rimeflake::Layout::default().default_namespace(),
    };
    let reset =
        rimeflake::admin::reset_if_any(&dir, &namespace, layout.as_ref(), args.worker, &options)?;
    let mut out = std::io::stdout().lock();
    let report = match reset {
        rimeflake::admin::Reset::Done(report) => report,
        rimeflake::admin::Reset::NoStateFile { state_path } => {
            // A worker ID that never ran here has no state to be corrupt: done, nothing changed.
            writeln!(
                out,
                "nothing to reset: worker {} of namespace {namespace} has no state file ({} does \
                 not exist); a reset only replaces a corrupt state file",
                args.worker,
                state_path.display()
            )?;
            return Ok(());
        }
        _ => {
            return Err(Failure::runtime(
                "state reset: an outcome this version does not know",
            ))
        }
    };
    writeln!(
        out,
        "reset worker {} of namespace {} from {}; now on clock-id {}",
        args.worker, namespace, report.basis, report.clock_id
    )?;
    for (cid, (r, ms)) in report.reserved.iter().zip(&report.reserved_ms).enumerate() {
        if let Some(r) = r {
            let when = ms.map_or(String::new(), |ms| {
                format!(" ({})", rimeflake::frontend::iso8601(ms))
            });
            writeln!(out, "  clock-id {cid}: reserved to {r}{when}")?;
        }
    }
    writeln!(
        out,
        "the corrupt file was copied to {}",
        report.aside.display()
    )?;
    Ok(())
}

/// Marks the server's namespaces restored (see `rimeflake::admin::remote::restored`) and says
/// which.
pub fn restored(args: &StateServerArgs) -> Result<(), Failure> {
    let backend = server_only(args, "state restored")?;
    let done = rimeflake::admin::remote::restored(&backend, args.namespace.as_deref())?;
    report(&backend, &done, |ns, epoch| {
        format!(
            "namespace {ns}: restore epoch {epoch}; the next start of each worker ID starts \
             above what a stale copy could repeat"
        )
    })
}

/// Sets the replicas every write must be acknowledged by (see
/// `rimeflake::admin::remote::require_replicas`).
pub fn replicas(args: &StateReplicasArgs) -> Result<(), Failure> {
    let backend = server_only(&args.server, "state replicas")?;
    let done = rimeflake::admin::remote::require_replicas(
        &backend,
        args.server.namespace.as_deref(),
        args.require,
    )?;
    report(&backend, &done, |ns, n| {
        format!("namespace {ns}: every lease and state write waits for {n} replica(s)")
    })
}

/// The server of `state restored` and `state replicas`: `--backend`, else `$RIMEFLAKE_BACKEND`.
fn server_only(args: &StateServerArgs, what: &str) -> Result<rimeflake::Backend, Failure> {
    server(&args.backend, &None)?.ok_or_else(|| {
        Failure::usage(format!(
            "{what} is for a server backend: give --backend URL (or $RIMEFLAKE_BACKEND)"
        ))
    })
}

/// One line per namespace, and a word on those the listing left out.
fn report(
    backend: &rimeflake::Backend,
    done: &rimeflake::admin::remote::Restored,
    line: impl Fn(&str, u64) -> String,
) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{backend}")?;
    if done.namespaces.is_empty() {
        writeln!(out, "  no namespace: no generator has used this server yet")?;
    }
    for (ns, n) in &done.namespaces {
        writeln!(out, "  {}", line(ns, *n))?;
    }
    if !done.complete {
        return Err(Failure::runtime(format!(
            "the listing of {backend}'s namespaces stopped after {}: give the others with \
             --namespace NS",
            done.namespaces.len()
        )));
    }
    Ok(())
}

/// The server a `state` command acts on: `--backend`, else (when no `--state-dir` is given)
/// `$RIMEFLAKE_BACKEND`, as the core resolves it; `None` for the state directory.
fn server(
    backend: &Option<String>,
    state_dir: &Option<std::path::PathBuf>,
) -> Result<Option<rimeflake::Backend>, Failure> {
    let backend = match backend {
        Some(text) => Some(rimeflake::Backend::parse(text)?),
        None if state_dir.is_none() => rimeflake::frontend::backend_from_env()?,
        None => None,
    };
    match backend {
        Some(rimeflake::Backend::Memory) => Err(Failure::usage(
            "the memory backend keeps no state to show or reset: give a state directory \
             (--state-dir) or a server's URL (--backend)",
        )),
        other => Ok(other.filter(rimeflake::Backend::is_remote)),
    }
}

fn state_dir(given: &Option<std::path::PathBuf>) -> Result<std::path::PathBuf, Failure> {
    Ok(rimeflake::frontend::state_dir_as(
        given.as_deref(),
        rimeflake::Frontend::Cli,
    )?)
}
