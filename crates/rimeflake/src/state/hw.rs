//! The high-water record: a second, independent bound on every reservation of a state file, so
//! that [`reset`](super::reset) knows how far a lost state can have reached.
//!
//! `worker-00005.hw` beside `worker-00005.state` holds, per clock-id, a time that no reservation
//! of the state file has ever passed. [`FileStore`](super::FileStore) raises it *before* a
//! state whose reservation would pass it is written, rounded up by a step (default 5 s of time
//! units), so it is rewritten about once per step, never per save. It only ever rises. It is
//! replaced whole (temporary file, sync, rename, sync of the directory), so a reader sees an
//! old or a new record, never a torn one; a checksum catches rot.

use super::disk::Disk;
use super::record::fnv64;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

const MAGIC: [u8; 4] = *b"RFHW";
const VERSION: u16 = 1;
/// The most a high-water file may hold: a record of 256 clock-ids is 2,064 bytes.
pub const MAX_BYTES: usize = 4096;
/// How far past a reservation the high-water mark is set, in ms, so it is rewritten about once
/// per this much time: often enough to cost nothing, small enough that a reset after its state
/// was lost does not reserve much past the truth.
pub const STEP_MS: u64 = 5_000;

/// The high-water file of the state file `state_path`: its extension replaced by `hw`.
pub fn path_of(state_path: &Path) -> PathBuf {
    state_path.with_extension("hw")
}

/// Encodes the per-clock-id marks (`None`: never reserved).
pub fn encode(marks: &[Option<u64>]) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 + 8 * marks.len() + 8);
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&(marks.len() as u16).to_le_bytes());
    for m in marks {
        out.extend_from_slice(&m.unwrap_or(u64::MAX).to_le_bytes());
    }
    let sum = fnv64(&out);
    out.extend_from_slice(&sum.to_le_bytes());
    out
}

/// Decodes a high-water record; `Err` says why it is not valid.
pub fn decode(bytes: &[u8]) -> Result<Vec<Option<u64>>, String> {
    if bytes.len() < 16 || bytes[..4] != MAGIC {
        return Err("no high-water record (bad magic or too short)".into());
    }
    let version = u16::from_le_bytes([bytes[4], bytes[5]]);
    if version != VERSION {
        return Err(format!(
            "high-water format version {version}, not {VERSION}"
        ));
    }
    let count = u16::from_le_bytes([bytes[6], bytes[7]]) as usize;
    let end = 8 + 8 * count;
    if count == 0 || count > 256 || bytes.len() != end + 8 {
        return Err(format!(
            "bad clock-id count {count} or length {}",
            bytes.len()
        ));
    }
    let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
    if fnv64(&bytes[..end]) != word(end) {
        return Err("checksum mismatch".into());
    }
    Ok((0..count)
        .map(|i| Some(word(8 + 8 * i)).filter(|&m| m != u64::MAX))
        .collect())
}

/// Reads the high-water record of `state_path`: `Ok(None)` when there is no file, `Err` with
/// why when it cannot be read or is not valid.
pub fn read<D: Disk>(disk: &D, state_path: &Path) -> Result<Option<Vec<Option<u64>>>, String> {
    let path = path_of(state_path);
    let file = match disk.open(&path) {
        Ok(Some(f)) => f,
        Ok(None) => return Ok(None),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    let bytes = disk
        .read_all(&file, MAX_BYTES)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    decode(&bytes)
        .map(Some)
        .map_err(|why| format!("{}: {why}", path.display()))
}

/// A temporary name beside `path`, unique per process and call; created with `O_EXCL`, so a
/// name someone planted is refused rather than written through.
pub(crate) fn temp_name(path: &Path, tag: &str) -> PathBuf {
    static CALLS: AtomicU64 = AtomicU64::new(0);
    let call = CALLS.fetch_add(1, Ordering::Relaxed);
    let mut name = path.as_os_str().to_os_string();
    name.push(format!(".{tag}.{}.{call}", std::process::id()));
    PathBuf::from(name)
}

/// The directory of `path`, for syncing its entries.
pub(crate) fn dir_of(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// Writes `bytes` durably as the new content of `path`: a temporary file (exclusive), sync,
/// rename over `path`, sync of the directory. At every instant `path` holds the old content
/// or the new, synced one. The temporary file is removed when a step fails.
pub(crate) fn replace_durably<D: Disk>(disk: &D, path: &Path, bytes: &[u8]) -> io::Result<()> {
    let tmp = temp_name(path, "tmp");
    let file = disk.create_new(&tmp)?;
    let written = disk
        .write_at(&file, 0, bytes)
        .and_then(|()| disk.sync_file(&file))
        .and_then(|()| disk.rename(&tmp, path));
    if let Err(e) = written {
        let _ = disk.remove(&tmp);
        return Err(e);
    }
    disk.sync_dir(dir_of(path))
}

/// Writes the marks as the high-water record of `state_path`, durably.
///
/// # Errors
/// Any I/O error; the old record (if any) is then still in place.
pub fn write<D: Disk>(disk: &D, state_path: &Path, marks: &[Option<u64>]) -> io::Result<()> {
    replace_durably(disk, &path_of(state_path), &encode(marks))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_flips_are_caught() {
        let marks = vec![Some(7), None, Some(u64::MAX - 1)];
        let rec = encode(&marks);
        assert_eq!(decode(&rec).unwrap(), marks);
        for i in 0..rec.len() {
            let mut bad = rec.clone();
            bad[i] ^= 0x04;
            assert!(decode(&bad).is_err(), "flip at {i}");
        }
        assert!(decode(&rec[..rec.len() - 1]).is_err());
    }

    #[test]
    fn the_hw_file_sits_beside_the_state() {
        assert_eq!(
            path_of(Path::new("/s/ns/worker-00005.state")),
            Path::new("/s/ns/worker-00005.hw")
        );
    }
}
