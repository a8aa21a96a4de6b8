//! `rimeflake state show`: what the state directory holds, read without disturbing any holder.

use crate::args::StateShowArgs;
use crate::fail::Failure;
use rimeflake::state::inspect;
use rimeflake::worker::default_state_dir;
use std::io::Write;

/// Prints every lease of every namespace: holder, layout, clock-id and reservations.
pub fn show(args: &StateShowArgs) -> Result<(), Failure> {
    let dir = match &args.state_dir {
        Some(dir) => dir.clone(),
        None => default_state_dir()?,
    };
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
