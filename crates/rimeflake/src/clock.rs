//! Where time enters rimeflake: the [`Clock`] trait, the [`SystemClock`], and a [`ManualClock`]
//! that tests move forwards and backwards.
//!
//! This is the only module that reads the operating system's clocks (clippy's
//! `disallowed-methods` enforces it), so every reading of time can be injected.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A source of wall-clock time, monotonic time, and sleep.
///
/// The generator reads [`Clock::now_ms`] on every ID; waits are measured with
/// [`Clock::monotonic_ns`] and slept with [`Clock::sleep`], so a clock under test controls all
/// three. Cloned when a forked child starts its own generator.
pub trait Clock: Send + Sync + Clone + 'static {
    /// Wall-clock time as milliseconds since the Unix epoch. It may jump backwards and forwards.
    fn now_ms(&self) -> u64;
    /// Nanoseconds since an arbitrary origin; never goes backwards.
    fn monotonic_ns(&self) -> u64;
    /// Sleeps for about `duration` (one slice of a bounded wait).
    fn sleep(&self, duration: Duration);
}

impl<C: Clock> Clock for Arc<C> {
    #[inline]
    fn now_ms(&self) -> u64 {
        (**self).now_ms()
    }
    fn monotonic_ns(&self) -> u64 {
        (**self).monotonic_ns()
    }
    fn sleep(&self, duration: Duration) {
        (**self).sleep(duration)
    }
}

/// The operating system's clocks: `CLOCK_REALTIME` for IDs, `CLOCK_MONOTONIC` for waits.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    #[inline]
    fn now_ms(&self) -> u64 {
        system_now_ms()
    }
    fn monotonic_ns(&self) -> u64 {
        monotonic_ns()
    }
    fn sleep(&self, duration: Duration) {
        std::thread::sleep(duration)
    }
}

/// The operating system's *coarse* wall clock (`CLOCK_REALTIME_COARSE` on Linux): about five
/// times cheaper to read than [`SystemClock`], but it only moves once per kernel tick, so IDs
/// carry a time that lags by about [`CoarseClock::resolution`] (4 ms with `HZ=250`; 7 ms seen). IDs stay
/// unique and increasing as with any clock; only their timestamps are that much less precise.
/// Elsewhere than Linux it reads the precise clock.
///
/// # Example
/// ```
/// use rimeflake::{CoarseClock, Generator, Layout};
///
/// let generator = Generator::builder().layout(Layout::twitter()).worker_id(1).in_memory()
///     .clock(CoarseClock).build()?;
/// let (a, b) = (generator.next_id()?, generator.next_id()?);
/// assert!(a < b);
/// # Ok::<(), rimeflake::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct CoarseClock;

impl CoarseClock {
    /// How often the coarse clock moves: about how far its readings lag the precise clock.
    pub fn resolution() -> Duration {
        #[cfg(target_os = "linux")]
        {
            let mut ts = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: `ts` is a valid, writable timespec.
            if unsafe { libc::clock_getres(libc::CLOCK_REALTIME_COARSE, &mut ts) } == 0 {
                return Duration::new(ts.tv_sec.max(0) as u64, ts.tv_nsec.max(0) as u32);
            }
        }
        Duration::from_millis(1)
    }
}

impl Clock for CoarseClock {
    #[inline]
    fn now_ms(&self) -> u64 {
        #[cfg(target_os = "linux")]
        {
            read_ms(libc::CLOCK_REALTIME_COARSE)
        }
        #[cfg(not(target_os = "linux"))]
        {
            system_now_ms()
        }
    }
    fn monotonic_ns(&self) -> u64 {
        monotonic_ns()
    }
    fn sleep(&self, duration: Duration) {
        std::thread::sleep(duration)
    }
}

/// The wall clock as Unix milliseconds (0 for a clock set before 1970).
///
/// On Unix this reads `clock_gettime(CLOCK_REALTIME)` directly: it is a vDSO call, and it skips
/// the `u128` arithmetic of `SystemTime::duration_since`, about a third of the cost of a reading.
#[inline]
pub fn system_now_ms() -> u64 {
    #[cfg(unix)]
    {
        read_ms(libc::CLOCK_REALTIME)
    }
    #[cfg(not(unix))]
    {
        #[allow(clippy::disallowed_methods)] // this is the clock module
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0)
    }
}

/// `clock` read as Unix milliseconds (0 before 1970).
#[cfg(unix)]
#[inline]
fn read_ms(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the callers pass clocks that exist here.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    if ts.tv_sec < 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1000 + ts.tv_nsec as u64 / 1_000_000
}

/// Nanoseconds on `CLOCK_BOOTTIME`, which keeps counting while the machine is suspended (the
/// monotonic clock stops): lease deadlines are measured on it, since a server's TTL runs on
/// through a suspend of its client. (Apple's `CLOCK_MONOTONIC` is that clock: it counts through
/// sleep, by Apple's documentation; no Apple build is tested here.)
pub fn boottime_ns() -> u64 {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    const BOOT_CLOCK: libc::clockid_t = libc::CLOCK_BOOTTIME;
    #[cfg(target_vendor = "apple")]
    const BOOT_CLOCK: libc::clockid_t = libc::CLOCK_MONOTONIC;
    // Elsewhere the monotonic clock, which may stop during a suspend: a lease deadline could
    // then be passed unnoticed across one (no such system is built or tested here).
    #[cfg(not(any(target_os = "linux", target_os = "android", target_vendor = "apple")))]
    const BOOT_CLOCK: libc::clockid_t = libc::CLOCK_MONOTONIC;
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec and the clock exists on this system.
    unsafe { libc::clock_gettime(BOOT_CLOCK, &mut ts) };
    (ts.tv_sec.max(0) as u64) * 1_000_000_000 + ts.tv_nsec.max(0) as u64
}

/// Nanoseconds on the monotonic clock since the first call in this process.
pub fn monotonic_ns() -> u64 {
    use std::sync::OnceLock;
    use std::time::Instant;
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    #[allow(clippy::disallowed_methods)] // this is the clock module
    let now = Instant::now();
    let origin = *ORIGIN.get_or_init(|| now);
    now.saturating_duration_since(origin).as_nanos() as u64
}

/// A clock that moves only when told to, for tests and simulations.
///
/// [`Clock::sleep`] advances both the wall and the monotonic time by the slept duration, as the
/// real clocks would, so a generator that waits on a `ManualClock` finishes at once and
/// deterministically.
///
/// # Example
/// ```
/// use rimeflake::{Generator, Layout, ManualClock};
/// use std::sync::Arc;
/// use std::time::Duration;
///
/// let clock = Arc::new(ManualClock::new(1_767_225_600_000)); // 2026-01-01
/// let generator = Generator::builder()
///     .layout(Layout::default())
///     .worker_id(1)
///     .in_memory()
///     .clock(clock.clone())
///     .build()?;
/// let a = generator.next_id()?;
/// clock.set_back(Duration::from_secs(1)); // a leap second
/// let b = generator.next_id()?;
/// assert!(a < b);
/// # Ok::<(), rimeflake::Error>(())
/// ```
///
/// Clones share one time: keep a clone to move the clock the generator reads.
#[derive(Clone, Debug)]
pub struct ManualClock {
    time: Arc<ManualTime>,
}

#[derive(Debug)]
struct ManualTime {
    wall_ms: AtomicU64,
    mono_ns: AtomicU64,
}

impl ManualClock {
    /// A clock that reads `unix_ms` until it is moved.
    pub fn new(unix_ms: u64) -> Self {
        ManualClock {
            time: Arc::new(ManualTime {
                wall_ms: AtomicU64::new(unix_ms),
                mono_ns: AtomicU64::new(0),
            }),
        }
    }

    /// Sets the wall clock to `unix_ms` (forwards or backwards); monotonic time is unchanged.
    pub fn set_ms(&self, unix_ms: u64) {
        self.time.wall_ms.store(unix_ms, Ordering::SeqCst);
    }

    /// Moves the wall clock forwards by `by` (monotonic time too, as real time passing would).
    pub fn advance(&self, by: Duration) {
        self.time
            .wall_ms
            .fetch_add(by.as_millis() as u64, Ordering::SeqCst);
        self.time
            .mono_ns
            .fetch_add(by.as_nanos() as u64, Ordering::SeqCst);
    }

    /// Sets the wall clock back by `by`, as an NTP step or a leap second would; monotonic time is
    /// unchanged.
    pub fn set_back(&self, by: Duration) {
        let by = by.as_millis() as u64;
        let _ = self
            .time
            .wall_ms
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |ms| {
                Some(ms.saturating_sub(by))
            });
    }
}

impl Clock for ManualClock {
    #[inline]
    fn now_ms(&self) -> u64 {
        self.time.wall_ms.load(Ordering::SeqCst)
    }
    fn monotonic_ns(&self) -> u64 {
        self.time.mono_ns.load(Ordering::SeqCst)
    }
    fn sleep(&self, duration: Duration) {
        self.advance(duration.max(Duration::from_millis(1)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn system_clock_agrees_with_system_time() {
        #[allow(clippy::disallowed_methods)]
        let reference = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64;
        let ours = SystemClock.now_ms();
        assert!(ours.abs_diff(reference) < 1000, "{ours} vs {reference}");
    }

    #[test]
    fn coarse_clock_is_never_ahead_and_lags_only_a_little() {
        // Not a timing bound: how far it lags depends on when the kernel last updated it
        // (4 ms ticks here, and lags of 7 ms seen). It is the same clock, never ahead.
        let before = SystemClock.now_ms();
        let coarse = CoarseClock.now_ms();
        let after = SystemClock.now_ms();
        assert!(
            coarse <= after + 1 && coarse + 1_000 >= before,
            "{before} <= {coarse} (coarse) <= {after}"
        );
    }

    #[test]
    fn monotonic_never_goes_back() {
        let mut last = monotonic_ns();
        for _ in 0..1000 {
            let now = monotonic_ns();
            assert!(now >= last);
            last = now;
        }
    }

    #[test]
    fn manual_clock_moves_both_ways_and_sleep_advances_it() {
        let c = ManualClock::new(10_000);
        c.advance(Duration::from_millis(5));
        assert_eq!(c.now_ms(), 10_005);
        c.set_back(Duration::from_secs(1));
        assert_eq!(c.now_ms(), 9_005);
        let mono = c.monotonic_ns();
        c.sleep(Duration::from_millis(3));
        assert_eq!(c.now_ms(), 9_008);
        assert_eq!(c.monotonic_ns(), mono + 3_000_000);
    }
}
