//! A namespace directory: created durably, and its `layout` file, written once, that refuses
//! generators with another layout.

use crate::error::{Error, ErrorKind, Result};
use crate::layout::Layout;
use std::fs::OpenOptions;
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use crate::state::disk::{create_exclusive, read_regular};

/// What a namespace's layout file holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayoutRecord {
    /// [`Layout::fingerprint`] of the namespace's layout.
    pub fingerprint: u64,
    /// [`Layout::summary`] of it (its name, spec, epoch and expiry).
    pub description: String,
    /// Its number of clock-ids.
    pub clock_ids: usize,
    /// Its time unit, in ms.
    pub unit_ms: u64,
    /// Its epoch, in Unix ms.
    pub epoch_ms: u64,
}

impl LayoutRecord {
    pub(crate) fn of(layout: &Layout) -> Self {
        LayoutRecord {
            fingerprint: layout.fingerprint(),
            description: layout.summary(),
            clock_ids: layout.max_clock_id() as usize + 1,
            unit_ms: layout.unit_ms(),
            epoch_ms: layout.epoch_ms(),
        }
    }

    /// The Unix ms at which `units` time units of this layout end (units count from the start
    /// of the epoch's unit, Unix-aligned); `None` past the range of a `u64`.
    pub fn unix_ms(&self, units: u64) -> Option<u64> {
        let start = self.epoch_ms - self.epoch_ms % self.unit_ms.max(1);
        start.checked_add(units.checked_mul(self.unit_ms)?)
    }

    pub(crate) fn to_text(&self) -> String {
        format!(
            "# rimeflake namespace layout: written once; generators with another layout are \
             refused\nfingerprint {:016x}\nclock_ids {}\nunit_ms {}\nepoch_ms {}\ndescription {}\n",
            self.fingerprint, self.clock_ids, self.unit_ms, self.epoch_ms, self.description
        )
    }

    pub(crate) fn parse(text: &str) -> Option<Self> {
        let field = |key: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(key)?.strip_prefix(' '))
                .map(str::to_string)
        };
        Some(LayoutRecord {
            fingerprint: u64::from_str_radix(&field("fingerprint")?, 16).ok()?,
            clock_ids: field("clock_ids")?.parse().ok()?,
            unit_ms: field("unit_ms")?.parse().ok()?,
            epoch_ms: field("epoch_ms")?.parse().ok()?,
            description: field("description")?,
        })
    }
}

/// Reads the layout file of the namespace directory `ns_dir`; `None` when there is none.
///
/// # Errors
/// [`ErrorKind::State`] when it cannot be read or parsed.
pub fn read_layout_file(ns_dir: &Path) -> Result<Option<LayoutRecord>> {
    let path = ns_dir.join("layout");
    // No symlink, no FIFO, at most 4 KiB: a layout file is a few short lines.
    match read_regular(&path, 4096) {
        Ok(None) => Ok(None),
        Ok(Some(bytes)) => {
            let text = String::from_utf8_lossy(&bytes);
            LayoutRecord::parse(&text).map(Some).ok_or_else(|| {
                Error::new(
                    ErrorKind::State,
                    format!(
                    "layout file {} is unreadable: restore it, or move the namespace directory \
                     aside (its reservations go with it)",
                    path.display()
                ),
                )
            })
        }
        Err(e) => Err(Error::new(
            ErrorKind::State,
            format!("layout file {}: {e}", path.display()),
        )),
    }
}

fn sync_dir(dir: &Path) -> io::Result<()> {
    let d = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_CLOEXEC | libc::O_DIRECTORY)
        .open(dir)?;
    crate::state::disk::full_sync(&d)
}

/// `create_dir_all`, then syncs the parent of every directory it created, so the namespace
/// directory (and the state in it) cannot vanish in a power loss.
pub(crate) fn create_dir_durable(dir: &Path) -> io::Result<()> {
    let missing: Vec<&Path> = dir
        .ancestors()
        .take_while(|a| !a.as_os_str().is_empty() && !a.exists())
        .collect();
    // 0700: only this user reads or writes what rimeflake creates.
    std::os::unix::fs::DirBuilderExt::mode(std::fs::DirBuilder::new().recursive(true), 0o700)
        .create(dir)?;
    for created in missing {
        // A relative path's first component lives in the working directory.
        let parent = match created.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        sync_dir(parent)?;
    }
    Ok(())
}

/// The layout a namespace's layout record describes, rebuilt from its description's widths and
/// order and the record's unit and epoch, and checked against the record's fingerprint; `None`
/// when the description cannot be read back.
pub fn layout_from_record(record: &LayoutRecord) -> Option<Layout> {
    // Two forms: "name: clock-id 3, time 41, ..." and the spec form "clock_id=3,time=41,...".
    let desc = &record.description;
    let width = |keys: &[&str]| -> Option<u8> {
        keys.iter().find_map(|key| {
            [format!("{key} "), format!("{key}=")].iter().find_map(|k| {
                let at = desc.find(k.as_str())? + k.len();
                let digits: String = desc[at..]
                    .chars()
                    .take_while(|c| c.is_ascii_digit())
                    .collect();
                digits.parse().ok()
            })
        })
    };
    let order = if desc.contains("(sequence above worker)") || desc.contains("sequence_first") {
        crate::layout::FieldOrder::SequenceAboveWorker
    } else {
        crate::layout::FieldOrder::SequenceBelowWorker
    };
    let (clock_id, time, worker, sequence) = (
        width(&["clock-id", "clock_id"])?,
        width(&["time"])?,
        width(&["worker"])?,
        width(&["sequence"])?,
    );
    [false, true].into_iter().find_map(|js_safe| {
        let layout = Layout::builder()
            .clock_id_bits(clock_id)
            .time_bits(time)
            .worker_bits(worker)
            .sequence_bits(sequence)
            .order(order)
            .unit_ms(record.unit_ms)
            .epoch_ms(record.epoch_ms)
            .js_safe(js_safe)
            .build()
            .ok()?;
        (layout.fingerprint() == record.fingerprint).then_some(layout)
    })
}

/// Writes the layout file once, atomically (temp file, sync, link into place, sync the
/// directory), or checks the one there. `link` fails when the file exists, so of two processes
/// creating the namespace with different layouts, one is refused.
pub(crate) fn settle_layout(ns_dir: &Path, namespace: &str, layout: &Layout) -> Result<()> {
    let ours = LayoutRecord::of(layout);
    let path = ns_dir.join("layout");
    // Unique per process and call: threads of one process may create a namespace at once.
    static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = ns_dir.join(format!(".layout.tmp.{}.{call}", std::process::id()));
    for _ in 0..3 {
        if let Some(theirs) = read_layout_file(ns_dir)? {
            if theirs.fingerprint == ours.fingerprint {
                return Ok(());
            }
            return Err(Error::config(format!(
                "namespace {namespace} in {} was created with layout {} (fingerprint {:016x}); \
                 this generator uses {} (fingerprint {:016x}): use that layout, or another \
                 namespace",
                ns_dir.display(),
                theirs.description,
                theirs.fingerprint,
                ours.description,
                ours.fingerprint
            )));
        }
        let written = (|| {
            // Exclusive: a name planted here (a link to a file elsewhere) is refused.
            let mut f = create_exclusive(&tmp)?;
            f.write_all(ours.to_text().as_bytes())?;
            crate::state::disk::full_sync(&f)
        })();
        written.map_err(|e| Error::new(ErrorKind::State, format!("{}: {e}", tmp.display())))?;
        let linked = std::fs::hard_link(&tmp, &path);
        let _ = std::fs::remove_file(&tmp);
        match linked {
            Ok(()) => {
                return sync_dir(ns_dir).map_err(|e| {
                    Error::new(ErrorKind::State, format!("{}: {e}", ns_dir.display()))
                })
            }
            // Another process created it first: read theirs and compare.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => {
                return Err(Error::new(
                    ErrorKind::State,
                    format!("{}: {e}", path.display()),
                ))
            }
        }
    }
    Err(Error::new(
        ErrorKind::State,
        format!("layout file {} keeps changing", path.display()),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_is_rebuilt_from_its_record() {
        let baidu = Layout::baidu(1_463_673_600_000);
        for layout in [
            Layout::default(),
            Layout::twitter(),
            Layout::sonyflake(),
            Layout::js_safe(),
        ]
        .into_iter()
        .chain(baidu.ok())
        {
            let record = LayoutRecord::of(&layout);
            let back = layout_from_record(&record).unwrap_or_else(|| panic!("{}", layout.name()));
            assert_eq!(
                back.fingerprint(),
                layout.fingerprint(),
                "{}",
                layout.name()
            );
        }
    }
}
