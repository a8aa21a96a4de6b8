//! `rimeflake state show`: what the state directory holds, read without disturbing any holder;
//! `rimeflake state reset`: the way out of a corrupt state file.

use crate::args::{StateResetArgs, StateShowArgs};
use crate::fail::Failure;
use rimeflake::state::inspect;
use std::io::Write;

/// Prints every lease of every namespace: holder, layout, clock-id and reservations.
pub fn show(args: &StateShowArgs) -> Result<(), Failure> {
    let dir = state_dir(&args.state_dir)?;
    if !dir.exists() {
        return Err(Failure::runtime(format!(
            "no state directory at {} (it is made by the first generator that uses it)",
            dir.display()
        )));
    }
    let infos = inspect::inspect(&dir)?;
    let mut out = std::io::stdout().lock();
    out.write_all(inspect::render(&dir, &infos).as_bytes())?;
    Ok(())
}

/// Replaces a corrupt state file (see `rimeflake::state::reset`) and says where the old one went.
pub fn reset(args: &StateResetArgs) -> Result<(), Failure> {
    let dir = state_dir(&args.state_dir)?;
    let layout = args.layout.layout()?;
    let namespace = args
        .namespace
        .clone()
        .unwrap_or_else(|| layout.default_namespace());
    let aside = rimeflake::state::reset(&dir, &namespace, &layout, args.worker)?;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "reset worker {} of namespace {}: every clock-id reserved past the lost state; the \
         corrupt file is now {}",
        args.worker,
        namespace,
        aside.display()
    )?;
    Ok(())
}

/// The directory given, else the environment's, else the default (the core decides).
fn state_dir(given: &Option<std::path::PathBuf>) -> Result<std::path::PathBuf, Failure> {
    Ok(rimeflake::settings::state_dir(given.as_deref())?)
}
