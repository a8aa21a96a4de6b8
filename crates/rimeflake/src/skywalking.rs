//! IDs for tracing agents: the string format of the SkyWalking Java agent's `GlobalIdGenerator`,
//! `{process}.{thread}.{time}`, made safe where the original is not.
//!
//! A trace or segment ID there is three parts joined by dots: 32 hex digits drawn once per
//! process (a random UUID without dashes), the Java thread's ID, and
//! `epoch_ms * 10000 + seq` with a per-thread `seq` from 0 to 9,999. An agent that replaces
//! `str(uuid.uuid1()).replace('-', '')` or that must stay compatible with SkyWalking's format
//! calls [`global_id`] instead.
//!
//! Guarantees, by name (each one is a way the original can repeat an ID):
//! - **Tokens are never reused**: the thread part is a per-process counter handed to a thread on
//!   its first call, not the operating system's or the runtime's thread ID, which are reused
//!   once a thread ends.
//! - **No wrap in a busy millisecond**: the third part of a thread strictly increases. More than
//!   10,000 IDs in one millisecond borrow the next millisecond (as the generator borrows time)
//!   instead of wrapping the sequence to 0.
//! - **Rollback-safe**: when the clock goes back, the third part keeps counting from the last
//!   value, so it never repeats (it runs ahead of the clock until the clock catches up).
//! - **Fresh after fork**: the process part comes from the operating system's randomness
//!   (`getrandom` on Linux, `arc4random_buf` on the BSDs and macOS) and is drawn anew in a
//!   forked child, so a child never continues its parent's IDs. The process's generation lives
//!   in a page that reads as zero in a child (`MADV_WIPEONFORK`, Linux 4.14+), which catches
//!   every fork, even one that skips the at-fork handlers (a raw `clone`); where the system
//!   offers no such page, each call compares the pid instead. An at-fork handler armed with
//!   `pthread_atfork` catches every `fork()` that runs handlers; bindings may also call
//!   [`after_fork_in_child`] from their own hooks.
//!
//! The hot path takes no lock: one thread-local borrow, one clock reading, two acquire loads.
//!
//! # Example
//! ```
//! let a = rimeflake::skywalking::global_id();
//! let b = rimeflake::skywalking::global_id();
//! let parts: Vec<&str> = a.split('.').collect();
//! assert_eq!(parts.len(), 3);
//! assert_eq!(parts[0].len(), 32);
//! assert_ne!(a, b);
//! ```

use crate::clock::system_now_ms;
use crate::fork::WipeOnFork;
use std::cell::RefCell;
use std::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64, Ordering::*};

/// How many IDs of one thread fit in one millisecond of the third part.
pub const PER_MS: u64 = 10_000;

/// The last generation handed out in this process (and, copied by a fork, in its children):
/// a child's first generation is above its parent's at the fork.
static LAST_GENERATION: AtomicU64 = AtomicU64::new(0);
/// Where the process's current generation lives (a leaked box, set once).
static LINEAGE: AtomicPtr<WipeOnFork<Lineage>> = AtomicPtr::new(std::ptr::null_mut());
/// The next thread token. Starts at 1; a thread keeps its token for life, none is handed twice.
static NEXT_TOKEN: AtomicU64 = AtomicU64::new(1);
/// The process part of the current generation (leaked boxes: one per process and fork).
static PROCESS: AtomicPtr<ProcessPart> = AtomicPtr::new(std::ptr::null_mut());

struct ProcessPart {
    generation: u64,
    hex: [u8; 32],
}

/// The current generation, in memory that reads as zero in a forked child. Threads compare it
/// with the generation their prefix was made for.
#[derive(Default)]
struct Lineage {
    /// 0: none yet in this process (its first call, or a fork wiped it).
    generation: AtomicU64,
    /// The process the generation belongs to: checked where the page is not wiped on fork.
    pid: AtomicU32,
}

struct ThreadState {
    generation: u64,
    token: u64,
    /// The thread's last ID as text, `{process}.{token}.{last}`: the next one usually differs
    /// in its last digits only, so it is updated in place instead of formatted anew.
    text: [u8; TEXT_MAX],
    prefix_len: usize,
    len: usize,
    /// The last third part this thread issued.
    last: u64,
}

/// 32 hex digits, two dots, at most 20 digits of token and 20 of the third part.
const TEXT_MAX: usize = 32 + 2 + 20 + 20;

thread_local! {
    static STATE: RefCell<Option<ThreadState>> = const { RefCell::new(None) };
}

/// A new ID in the SkyWalking agent's format: `{32 hex digits}.{thread token}.{ms * 10000 + seq}`.
///
/// # Example
/// ```
/// let ids: std::collections::HashSet<String> =
///     (0..50_000).map(|_| rimeflake::skywalking::global_id()).collect();
/// assert_eq!(ids.len(), 50_000); // more than 10,000 in a millisecond never repeat
/// ```
pub fn global_id() -> String {
    with_global_id(str::to_owned)
}

/// Calls `f` with a new ID in the format of [`global_id`], formatted on the stack: no
/// allocation, for bindings that copy the text into their own string type.
pub fn with_global_id<R>(f: impl FnOnce(&str) -> R) -> R {
    let mut buf = [0u8; TEXT_MAX];
    let len = STATE.with(|cell| {
        let mut slot = cell.borrow_mut();
        let generation = generation();
        if slot.as_ref().is_none_or(|s| s.generation != generation) {
            let fresh = ThreadState::refresh(slot.take(), generation);
            *slot = Some(fresh);
        }
        let state = slot.as_mut().expect("set just above");
        state.advance(next_value(state.last, system_now_ms()));
        buf[..state.len].copy_from_slice(&state.text[..state.len]);
        state.len
    });
    // The text is ASCII: hex digits, decimal digits and dots.
    f(std::str::from_utf8(&buf[..len]).expect("ASCII"))
}

/// The process part of the IDs this process makes now: 32 lower-case hex digits, a random
/// (version 4) UUID without dashes, drawn anew after a fork.
pub fn process_id() -> String {
    let part = process_part(generation());
    String::from_utf8(part.hex.to_vec()).expect("hex is ASCII")
}

/// Tells this module that the process is a freshly forked child: the next ID of every thread
/// uses a new process part. Async-signal-safe (one atomic store), so it may run in an at-fork
/// handler. Called by the core's own `pthread_atfork` child handler; bindings may call it from
/// their hooks as well (calling it twice, or outside a child, only draws once more). A fork
/// that runs no handler is caught all the same (see the module's guarantees).
pub fn after_fork_in_child() {
    // SAFETY: LINEAGE only ever holds null or a leaked, never-freed box.
    if let Some(lineage) = unsafe { LINEAGE.load(Acquire).as_ref() } {
        lineage.generation.store(0, Release);
    }
}

/// This process's generation: the one in the wipe-on-fork page, unless a fork wiped it (or,
/// where pages are not wiped, the pid changed), in which case the first caller starts a new one.
#[inline]
fn generation() -> u64 {
    let lineage = lineage();
    loop {
        let g = lineage.generation.load(Acquire);
        if g != 0 && (lineage.wipes_on_fork() || lineage.pid.load(Relaxed) == std::process::id()) {
            return g;
        }
        if let Some(g) = new_generation(lineage, g) {
            return g;
        }
    }
}

/// Starts a generation where `seen` was found stale; `None` when another thread moved first.
#[cold]
fn new_generation(lineage: &Lineage, seen: u64) -> Option<u64> {
    crate::fork::arm_with(after_fork_in_child);
    let fresh = LAST_GENERATION.fetch_add(1, AcqRel) + 1;
    // The pid before the generation: a reader that sees the generation sees the pid.
    lineage.pid.store(std::process::id(), Relaxed);
    lineage
        .generation
        .compare_exchange(seen, fresh, AcqRel, Acquire)
        .ok()
        .map(|_| fresh)
}

/// The lineage page, mapped by the first caller. Lock-free (a `OnceLock` caught mid-init by a
/// fork would block the child forever).
#[inline]
fn lineage() -> &'static WipeOnFork<Lineage> {
    // SAFETY: LINEAGE only ever holds null or a leaked, never-freed box.
    match unsafe { LINEAGE.load(Acquire).as_ref() } {
        Some(lineage) => lineage,
        None => map_lineage(),
    }
}

#[cold]
fn map_lineage() -> &'static WipeOnFork<Lineage> {
    let fresh = Box::into_raw(Box::new(WipeOnFork::new(Lineage::default())));
    match LINEAGE.compare_exchange(std::ptr::null_mut(), fresh, AcqRel, Acquire) {
        // SAFETY: leaked from here on.
        Ok(_) => unsafe { &*fresh },
        Err(current) => {
            // Another thread mapped it first: ours was never shared.
            // SAFETY: from Box::into_raw above; `current` is a leaked box.
            drop(unsafe { Box::from_raw(fresh) });
            // SAFETY: the exchange failed, so `current` is what LINEAGE holds: not null (the
            // exchange expected null) and a leaked, never-freed box.
            unsafe { &*current }
        }
    }
}

/// The third part after `last` at clock reading `now_ms`: the clock's value, or `last + 1` when
/// that is not higher (a busy millisecond, which borrows the next one, or a clock that went
/// back, where counting on keeps the part unique).
fn next_value(last: u64, now_ms: u64) -> u64 {
    (last + 1).max(now_ms.saturating_mul(PER_MS))
}

impl ThreadState {
    /// The state for a thread's first call, or for its first call after a fork.
    #[cold]
    fn refresh(old: Option<ThreadState>, generation: u64) -> ThreadState {
        crate::fork::arm_with(after_fork_in_child);
        let (token, last) = match old {
            // The forking thread keeps its token and its count: with a new process part its
            // IDs are new whatever they continue from.
            Some(s) => (s.token, s.last),
            None => (NEXT_TOKEN.fetch_add(1, Relaxed), 0),
        };
        let part = process_part(generation);
        let mut text = [0u8; TEXT_MAX];
        text[..32].copy_from_slice(&part.hex);
        text[32] = b'.';
        let mut at = 33 + write_decimal(&mut text[33..], token);
        text[at] = b'.';
        at += 1;
        let len = at + write_decimal(&mut text[at..], last);
        ThreadState {
            generation,
            token,
            text,
            prefix_len: at,
            len,
            last,
        }
    }

    /// Moves to third part `next` (above `last`), updating the text.
    #[inline]
    fn advance(&mut self, next: u64) {
        let step_by_one = next == self.last + 1;
        self.last = next;
        if step_by_one {
            // Add one to the decimal digits in place; a carry past the first digit (999 to
            // 1000) needs one more digit, so that case is written anew.
            for d in self.text[self.prefix_len..self.len].iter_mut().rev() {
                if *d == b'9' {
                    *d = b'0';
                } else {
                    *d += 1;
                    return;
                }
            }
        }
        self.len = self.prefix_len + write_decimal(&mut self.text[self.prefix_len..], next);
    }
}

/// The process part for `generation`, drawn by the first thread that asks after a fork.
fn process_part(generation: u64) -> &'static ProcessPart {
    loop {
        let current = PROCESS.load(Acquire);
        // SAFETY: PROCESS only ever holds null or a leaked, never-freed box.
        if let Some(part) = unsafe { current.as_ref() } {
            if part.generation >= generation {
                return part;
            }
        }
        let fresh = Box::into_raw(Box::new(ProcessPart {
            generation,
            hex: random_uuid_hex(),
        }));
        match PROCESS.compare_exchange(current, fresh, AcqRel, Acquire) {
            // The old part may still be read by a thread that loaded it: leak it.
            // SAFETY: `fresh` came from Box::into_raw above and is never freed now that
            // PROCESS holds it (parts are leaked, never replaced by a free).
            Ok(_) => return unsafe { &*fresh },
            // Another thread drew first: ours was never shared, so free it and use theirs.
            // SAFETY: `fresh` came from Box::into_raw above and the failed exchange published
            // it nowhere: this is its only owner.
            Err(_) => drop(unsafe { Box::from_raw(fresh) }),
        }
    }
}

/// 32 hex digits of a version 4 UUID from the operating system's randomness.
fn random_uuid_hex() -> [u8; 32] {
    let mut bytes = [0u8; 16];
    crate::random::os_random(&mut bytes);
    bytes[6] = (bytes[6] & 0x0f) | 0x40; // version 4
    bytes[8] = (bytes[8] & 0x3f) | 0x80; // RFC 4122 variant
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = [0u8; 32];
    for (i, b) in bytes.iter().enumerate() {
        out[2 * i] = HEX[(b >> 4) as usize];
        out[2 * i + 1] = HEX[(b & 15) as usize];
    }
    out
}

/// Writes `v` in decimal at the start of `out`, returning the number of digits.
fn write_decimal(out: &mut [u8], mut v: u64) -> usize {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    let n = tmp.len() - i;
    out[..n].copy_from_slice(&tmp[i..]);
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn has_the_skywalking_shape() {
        let id = global_id();
        let parts: Vec<&str> = id.split('.').collect();
        assert_eq!(parts.len(), 3, "{id}");
        assert_eq!(parts[0].len(), 32);
        assert!(parts[0]
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
        assert_eq!(&parts[0][12..13], "4", "a version 4 UUID: {id}");
        let token: u64 = parts[1].parse().unwrap();
        assert!(token >= 1);
        let third: u64 = parts[2].parse().unwrap();
        let ms = third / PER_MS;
        assert!(ms.abs_diff(system_now_ms()) < 60_000, "{id}");
    }

    #[test]
    fn a_busy_millisecond_borrows_the_next_instead_of_wrapping() {
        let now = 1_767_225_600_000;
        let mut last = 0;
        let mut seen = HashSet::new();
        for _ in 0..25_000 {
            let next = next_value(last, now);
            assert!(next > last);
            assert!(seen.insert(next));
            last = next;
        }
        assert_eq!(last, now * PER_MS + 24_999); // two and a half milliseconds borrowed
        assert_eq!(next_value(last, now + 10), (now + 10) * PER_MS); // the clock overtakes
    }

    #[test]
    fn a_clock_rollback_keeps_counting() {
        let now = 1_767_225_600_000;
        let a = next_value(0, now);
        let b = next_value(a, now - 3_600_000); // an hour back
        let c = next_value(b, now - 3_600_000 + 1);
        assert!(a < b && b < c);
        assert_eq!(b, a + 1);
    }

    #[test]
    fn thread_tokens_differ_and_ids_are_unique_across_threads() {
        let handles: Vec<_> = (0..4)
            .map(|_| std::thread::spawn(|| (0..20_000).map(|_| global_id()).collect::<Vec<_>>()))
            .collect();
        let mut all = HashSet::new();
        let mut tokens = HashSet::new();
        for h in handles {
            let ids = h.join().unwrap();
            tokens.insert(ids[0].split('.').nth(1).unwrap().to_string());
            for id in ids {
                assert!(all.insert(id));
            }
        }
        assert_eq!(tokens.len(), 4);
        assert_eq!(all.len(), 80_000);
    }

    #[test]
    fn a_thread_token_is_never_handed_out_twice() {
        let mut tokens = HashSet::new();
        for _ in 0..50 {
            let id = std::thread::spawn(global_id).join().unwrap();
            assert!(tokens.insert(id.split('.').nth(1).unwrap().to_string()));
        }
    }

    #[test]
    fn a_fork_draws_a_new_process_part() {
        let before = global_id();
        let old = process_id();
        after_fork_in_child(); // what the child handler does
        let after = global_id();
        assert_ne!(process_id(), old);
        assert_eq!(after.split('.').next().unwrap(), process_id());
        // Same thread, same token: the new process part alone keeps the IDs apart.
        assert_eq!(before.split('.').nth(1), after.split('.').nth(1));
    }

    #[test]
    fn the_text_follows_the_value_through_carries_and_jumps() {
        let mut state = ThreadState::refresh(None, generation());
        for next in [
            8,
            9,
            10,
            11,
            99,
            100,
            101,
            999_999,
            1_000_000,
            17_954_104_298_730_000,
        ] {
            for value in [next, next + 1] {
                state.advance(value);
                let text = std::str::from_utf8(&state.text[..state.len]).unwrap();
                assert_eq!(text.rsplit('.').next().unwrap(), value.to_string());
            }
        }
    }

    #[test]
    fn decimal_writer_matches_std() {
        let mut buf = [0u8; 20];
        for v in [0, 9, 10, 12345, u64::MAX] {
            let n = write_decimal(&mut buf, v);
            assert_eq!(std::str::from_utf8(&buf[..n]).unwrap(), v.to_string());
        }
    }
}
