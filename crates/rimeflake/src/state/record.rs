//! The record format of a state file's slots: magic, format version, clock-id count, a write
//! sequence number, the current clock-id, the reservation of every clock-id (`u64::MAX` for
//! none), the `closed_at` word and an FNV-1a-64 checksum of all that.

use super::WorkerState;

/// The size of a slot: a record fits in the first 2,080 bytes (256 clock-ids); a slot per 4 KiB
/// page keeps one slot's write away from the other's sectors.
pub const SLOT_SIZE: usize = 4096;
const MAGIC: [u8; 4] = *b"RFST";
/// 2: a `closed_at` word follows the reservations.
const VERSION: u16 = 2;
const HEADER: usize = 4 + 2 + 2 + 8 + 8;
/// The most clock-ids a record holds (8 clock-id bits).
pub(crate) const MAX_CLOCK_IDS: usize = 256;

/// One decoded record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// The write sequence number: higher is newer.
    pub seq: u64,
    /// The state it holds.
    pub state: WorkerState,
}

/// FNV-1a, 64 bits: enough to tell a torn or rotten slot from a whole one.
pub(crate) fn fnv64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Encodes `state` as a record with sequence `seq`.
pub fn encode(seq: u64, state: &WorkerState) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER + 8 * state.reserved.len() + 16);
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&(state.reserved.len() as u16).to_le_bytes());
    out.extend_from_slice(&seq.to_le_bytes());
    out.extend_from_slice(&state.clock_id.to_le_bytes());
    for r in &state.reserved {
        out.extend_from_slice(&r.unwrap_or(u64::MAX).to_le_bytes());
    }
    out.extend_from_slice(&state.closed_at.unwrap_or(u64::MAX).to_le_bytes());
    let sum = fnv64(&out);
    out.extend_from_slice(&sum.to_le_bytes());
    out
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// Decodes the record at the start of `slot`; `Err` says why it is not valid.
pub fn decode(slot: &[u8]) -> std::result::Result<Record, String> {
    if slot.len() < HEADER + 8 {
        return Err("too short".into());
    }
    if slot[..4] != MAGIC {
        return Err("no record (bad magic)".into());
    }
    let version = u16::from_le_bytes([slot[4], slot[5]]);
    if version != VERSION {
        return Err(format!(
            "format version {version}, written by another rimeflake version (this one reads {VERSION})"
        ));
    }
    let count = u16::from_le_bytes([slot[6], slot[7]]) as usize;
    let end = HEADER + 8 * count + 8; // the reservations, then `closed_at`
    if count == 0 || count > MAX_CLOCK_IDS || slot.len() < end + 8 {
        return Err(format!("bad clock-id count {count}"));
    }
    if fnv64(&slot[..end]) != u64_at(slot, end) {
        return Err("checksum mismatch".into());
    }
    let reserved = (0..count)
        .map(|i| Some(u64_at(slot, HEADER + 8 * i)).filter(|&r| r != u64::MAX))
        .collect();
    let clock_id = u64_at(slot, 16);
    if clock_id >= count as u64 {
        return Err(format!("clock-id {clock_id} out of range"));
    }
    Ok(Record {
        seq: u64_at(slot, 8),
        state: WorkerState {
            clock_id,
            reserved,
            closed_at: Some(u64_at(slot, end - 8)).filter(|&c| c != u64::MAX),
        },
    })
}

/// Decodes both slots of a state file: the newest valid record and its slot, or why neither is
/// valid.
pub fn decode_file(bytes: &[u8]) -> std::result::Result<(usize, Record), String> {
    let mut best: Option<(usize, Record)> = None;
    let mut why = Vec::new();
    for slot in 0..2 {
        let start = (slot * SLOT_SIZE).min(bytes.len());
        let end = ((slot + 1) * SLOT_SIZE).min(bytes.len());
        match decode(&bytes[start..end]) {
            Ok(rec) if best.as_ref().is_none_or(|(_, b)| rec.seq > b.seq) => {
                best = Some((slot, rec))
            }
            Ok(_) => {}
            Err(e) => why.push(format!("slot {slot}: {e}")),
        }
    }
    best.ok_or_else(|| why.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(clock_id: u64, reserved: &[Option<u64>]) -> WorkerState {
        WorkerState {
            clock_id,
            reserved: reserved.to_vec(),
            closed_at: None,
        }
    }

    #[test]
    fn records_round_trip_and_every_flipped_byte_is_caught() {
        let s = state(1, &[Some(5), Some(u64::MAX - 1), None, Some(0)]);
        let rec = encode(42, &s);
        assert_eq!(decode(&rec).unwrap(), Record { seq: 42, state: s });
        for i in 0..rec.len() {
            let mut bad = rec.clone();
            bad[i] ^= 0x10;
            assert!(decode(&bad).is_err(), "flip at {i} not caught");
        }
        for len in 0..rec.len() {
            assert!(decode(&rec[..len]).is_err(), "truncated to {len}");
        }
    }

    #[test]
    fn the_newest_valid_slot_wins() {
        let mut file = vec![0u8; 2 * SLOT_SIZE];
        let a = encode(7, &state(0, &[Some(1)]));
        let b = encode(8, &state(0, &[Some(2)]));
        file[..a.len()].copy_from_slice(&a);
        file[SLOT_SIZE..SLOT_SIZE + b.len()].copy_from_slice(&b);
        assert_eq!(decode_file(&file).unwrap().0, 1);
        file[SLOT_SIZE + 20] ^= 1;
        assert_eq!(decode_file(&file).unwrap().1.seq, 7);
        file[3] ^= 1;
        let why = decode_file(&file).unwrap_err();
        assert!(why.contains("slot 0") && why.contains("slot 1"), "{why}");
    }

    #[test]
    fn fnv64_matches_the_reference_vectors() {
        // From the FNV reference (isthe.com/chongo/tech/comp/fnv): FNV-1a 64 of "" and "a".
        assert_eq!(fnv64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv64(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
