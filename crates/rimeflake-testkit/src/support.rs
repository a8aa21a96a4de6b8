//! Helpers shared by the test binaries of `rimeflake`, `rimeflake-cli` and `rimeflake-serve`.

use std::path::PathBuf;
use std::time::Duration;

/// A fresh directory under the system's temporary directory, removed when dropped. Its name
/// holds the tag, the pid and a monotonic reading, so tests running at once never share one.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        let path = std::env::temp_dir().join(format!(
            "rimeflake-test-{tag}-{}-{}",
            std::process::id(),
            crate::now_ns()
        ));
        std::fs::create_dir_all(&path).expect("a temporary directory");
        TempDir(path)
    }

    /// The path as text, for command-line arguments.
    pub fn path(&self) -> &str {
        self.0.to_str().expect("a UTF-8 temporary path")
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// splitmix64: small and seeded, so a failing run's choices replay from its seed.
#[derive(Clone, Debug)]
pub struct Rng(pub u64);

impl Rng {
    /// The next draw. (Not an `Iterator`: the stream never ends, and every caller wants one
    /// number at a time.)
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }

    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    /// Spread evenly over the orders of magnitude of `lo..=hi` (1 ms is as likely as 1 day's
    /// order of magnitude), in integers only.
    pub fn log_range(&mut self, lo: u64, hi: u64) -> u64 {
        let bits = |v: u64| 64 - v.max(1).leading_zeros() as u64;
        let b = self.range(bits(lo), bits(hi));
        let (a, z) = ((1u64 << (b - 1)).max(lo), ((1u64 << b) - 1).min(hi));
        self.range(a, z.max(a))
    }

    pub fn weighted<T: Copy>(&mut self, items: &[(u64, T)]) -> T {
        let mut at = self.below(items.iter().map(|i| i.0).sum());
        for &(w, item) in items {
            if at < w {
                return item;
            }
            at -= w;
        }
        unreachable!("weights add up")
    }
}

/// A point on the monotonic clock, to measure waits.
#[derive(Clone, Copy)]
pub struct Since(u64);

impl Since {
    pub fn now() -> Since {
        Since(crate::now_ns())
    }
    pub fn elapsed(self) -> Duration {
        Duration::from_nanos(crate::now_ns() - self.0)
    }
}

/// libfaketime's library: `FAKETIME_LIB`, else where Debian's `faketime` package puts it.
pub fn libfaketime() -> PathBuf {
    if let Some(lib) = std::env::var_os("FAKETIME_LIB") {
        return PathBuf::from(lib);
    }
    let mut dirs = vec![
        PathBuf::from("/usr/lib/faketime"),
        PathBuf::from("/usr/local/lib/faketime"),
        PathBuf::from("/usr/lib64/faketime"),
    ];
    if let Ok(entries) = std::fs::read_dir("/usr/lib") {
        dirs.extend(entries.flatten().map(|e| e.path().join("faketime")));
    }
    for dir in &dirs {
        // The multi-threaded variant: `gen` has a reservation thread.
        for name in ["libfaketimeMT.so.1", "libfaketime.so.1"] {
            if dir.join(name).is_file() {
                return dir.join(name);
            }
        }
    }
    panic!(
        "libfaketime is not installed, and this test needs it to move a process's clock: run \
         `make test`, which installs it (apt-get install faketime), or set FAKETIME_LIB to \
         libfaketime.so.1"
    );
}

/// Removes rimeflake's variables (every `RIMEFLAKE_*` this test process has) and the base of
/// the default state directory (`XDG_STATE_HOME`) from what `cmd` inherits, so a run of the
/// binary sees only what its test gives it.
pub fn without_rimeflake_env(cmd: &mut std::process::Command) -> &mut std::process::Command {
    for (name, _) in std::env::vars_os() {
        if name.to_str().is_some_and(|n| n.starts_with("RIMEFLAKE_")) {
            cmd.env_remove(&name);
        }
    }
    cmd.env_remove("XDG_STATE_HOME")
}
