//! The core's warnings on stderr: held while a generator is built, so that a build that fails
//! says only its error, then shown; the container warning once per state directory.

use rimeflake::Warning;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

/// The file in a state directory that says its container warning was shown.
pub const CONTAINER_WARNING_SHOWN: &str = ".container-warning-shown";

/// Where a warning's one-line message goes.
pub type Output = Arc<dyn Fn(&str) + Send + Sync>;

/// Warnings held until the generator has started (`Some`), then shown as they come (`None`).
#[derive(Clone)]
pub struct Warnings(Arc<Mutex<Option<Vec<Warning>>>>, Output);

impl Default for Warnings {
    /// Shown on stderr as `rimeflake: warning: <message>`.
    fn default() -> Self {
        Warnings::to(Arc::new(|m: &str| eprintln!("rimeflake: warning: {m}")))
    }
}

impl Warnings {
    /// Warnings whose one-line messages go to `out` (`serve`'s log, say).
    pub fn to(out: Output) -> Self {
        Warnings(Arc::new(Mutex::new(Some(Vec::new()))), out)
    }

    fn held(&self) -> MutexGuard<'_, Option<Vec<Warning>>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The callback for `Builder::on_warning`.
    pub fn sink(&self) -> impl Fn(&Warning) + Send + Sync + 'static {
        let this = self.clone();
        move |w| match this.held().as_mut() {
            Some(held) => held.push(w.clone()),
            None => (this.1)(&crate::fail::one_line(w.message())),
        }
    }

    /// The generator started: show what was held, and from now on show warnings at once.
    pub fn started(&self) {
        let held = self.held().take().unwrap_or_default();
        for w in &held {
            if w.kind() == Warning::CONTAINER {
                // Only the default state directory is warned about, so it is this one.
                match rimeflake::frontend::state_dir(None) {
                    Ok(dir) => container_once(w, &dir, &self.1),
                    Err(_) => (self.1)(&crate::fail::one_line(w.message())),
                }
            } else {
                (self.1)(&crate::fail::one_line(w.message()));
            }
        }
    }
}

/// Shows the container warning unless `dir` remembers showing it; then remembers.
fn container_once(w: &Warning, dir: &Path, out: &Output) {
    let marker = dir.join(CONTAINER_WARNING_SHOWN);
    // Only a regular file remembers; a link planted there is neither followed nor trusted.
    if std::fs::symlink_metadata(&marker).is_ok_and(|m| m.is_file()) {
        return;
    }
    out(&format!(
        "{} (said once for this state directory: delete {} to see it again)",
        crate::fail::one_line(w.message()),
        marker.display()
    ));
    // Not remembered (a read-only directory, say): said again next time, which is no harm.
    // create_new (O_CREAT | O_EXCL) writes nothing through a link already at that name.
    let _ = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&marker);
}
