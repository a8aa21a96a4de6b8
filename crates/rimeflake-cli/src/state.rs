//! `rimeflake state show`: what the state directory holds, read without disturbing any holder;
//! `rimeflake state reset`: the way out of a corrupt state file.

use crate::args::{StateResetArgs, StateShowArgs};
use crate::fail::Failure;
use rimeflake::state::inspect;
use rimeflake::worker::default_state_dir;
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

/// Replaces a corrupt state file (see `rimeflake::state::reset`), says what bounded the lost
/// state, what is reserved now, and where the copy of the corrupt file is.
pub fn reset(args: &StateResetArgs) -> Result<(), Failure> {
    let dir = state_dir(&args.state_dir)?;
    let layout = match &args.layout {
        Some(name) => Some(
            crate::args::LayoutArgs {
                layout: name.clone(),
                baidu_epoch_ms: args.baidu_epoch_ms,
            }
            .layout()?,
        ),
        None => None,
    };
    let options = rimeflake::state::ResetOptions {
        above_id: args.above_id,
        reserve_until_ms: args
            .reserve_until
            .as_deref()
            .map(rimeflake::utc::parse_time)
            .transpose()?,
    };
    let report = rimeflake::state::reset(
        &dir,
        &args.namespace,
        layout.as_ref(),
        args.worker,
        &options,
    )?;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "reset worker {} of namespace {} from {}; now on clock-id {}",
        args.worker, args.namespace, report.basis, report.clock_id
    )?;
    for (cid, (r, ms)) in report.reserved.iter().zip(&report.reserved_ms).enumerate() {
        if let Some(r) = r {
            let when = ms.map_or(String::new(), |ms| {
                format!(" ({})", rimeflake::utc::iso8601(ms))
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

fn state_dir(given: &Option<std::path::PathBuf>) -> Result<std::path::PathBuf, Failure> {
    Ok(match given {
        Some(dir) => dir.clone(),
        None => default_state_dir()?,
    })
}
