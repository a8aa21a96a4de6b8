//! Randomness from the operating system, for the SkyWalking IDs' process part and for lease
//! tokens: `getrandom` on Linux, `arc4random_buf` on the BSDs and macOS, std's randomly keyed
//! hasher elsewhere. Never the clock and never the pid alone, so forked children and hosts that
//! start together draw different values.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Calls of the fallback, mixed into each draw so two draws in one process differ.
#[allow(dead_code)] // only read on some targets
static CALLS: AtomicU64 = AtomicU64::new(0);

/// The getrandom(2) system call itself, not glibc's wrapper of it: the wrapper came in glibc 2.25,
/// and a library that calls it cannot be loaded by an older glibc (2.17 is the oldest the
/// release artifacts run on).
#[cfg(all(not(loom), any(target_os = "linux", target_os = "android")))]
pub(crate) fn os_random(buf: &mut [u8]) {
    let mut filled = 0;
    while filled < buf.len() {
        let rest = &mut buf[filled..];
        let flags: libc::c_uint = 0;
        // SAFETY: the pointer and length describe the unfilled rest of `buf`; getrandom(2) takes
        // a buffer, its length and flags, and writes at most that many bytes.
        let n = unsafe { libc::syscall(libc::SYS_getrandom, rest.as_mut_ptr(), rest.len(), flags) };
        if n > 0 {
            filled += n as usize;
        } else if n < 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted
        {
            // No getrandom(2) (a kernel before 3.17): std's hasher keys come from the OS too.
            return fallback_random(buf);
        }
    }
}

#[cfg(all(
    not(loom),
    any(
        target_os = "macos",
        target_os = "ios",
        target_os = "freebsd",
        target_os = "openbsd",
        target_os = "netbsd",
        target_os = "dragonfly"
    )
))]
pub(crate) fn os_random(buf: &mut [u8]) {
    // SAFETY: the pointer and length describe `buf`; arc4random_buf cannot fail.
    unsafe { libc::arc4random_buf(buf.as_mut_ptr().cast(), buf.len()) }
}

#[cfg(not(any(
    loom,
    target_os = "linux",
    target_os = "android",
    target_os = "macos",
    target_os = "ios",
    target_os = "freebsd",
    target_os = "openbsd",
    target_os = "netbsd",
    target_os = "dragonfly"
)))]
pub(crate) fn os_random(buf: &mut [u8]) {
    fallback_random(buf)
}

/// Under loom's model checker (`--cfg loom`, crates/rimeflake-loom) a fixed pattern: loom runs a
/// model's closure again for every interleaving it explores and needs each run to see the same
/// inputs, and a key drawn afresh (a generator's sequence offsets) sends the runs down different
/// paths, which loom reports as a broken modification order of its own.
#[cfg(loom)]
pub(crate) fn os_random(buf: &mut [u8]) {
    for (i, b) in buf.iter_mut().enumerate() {
        *b = (i as u8).wrapping_mul(0x9d).wrapping_add(0x5b);
    }
}

/// Randomness through std: each `RandomState` is keyed from the operating system's generator
/// (`BCryptGenRandom` on Windows) in a fresh thread, then mixed with a counter.
#[allow(dead_code)] // only reached on some targets
fn fallback_random(buf: &mut [u8]) {
    use std::hash::{BuildHasher, Hasher};
    let state = std::collections::hash_map::RandomState::new();
    for (i, chunk) in buf.chunks_mut(8).enumerate() {
        let mut h = state.build_hasher();
        h.write_u64(i as u64);
        h.write_u64(CALLS.fetch_add(1, Relaxed));
        h.write_u32(std::process::id());
        let v = h.finish().to_le_bytes();
        chunk.copy_from_slice(&v[..chunk.len()]);
    }
}

#[cfg(test)]
mod tests {
    use super::os_random;

    /// Every byte of a long buffer is drawn (not only a first chunk), and two draws differ.
    #[test]
    fn draws_fill_the_buffer_and_differ() {
        let (mut a, mut b) = ([0u8; 4099], [0u8; 4099]);
        os_random(&mut a);
        os_random(&mut b);
        assert_ne!(a, b);
        // A zero in the last 64 bytes of both draws would be a 1 in 2^1024 chance.
        assert!(a[4035..].iter().chain(&b[4035..]).any(|&x| x != 0));
    }
}
