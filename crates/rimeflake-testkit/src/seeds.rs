//! The runner of the seeded simulations: which seeds a run takes, from the environment, and
//! what it reports. A simulation gives it one function, a seed to a result; the runner counts
//! the failures and stops after five.
//!
//! With a prefix such as `RIMEFLAKE_SIM`, the variables are:
//! - `<PREFIX>_SEED=N`: that seed alone, its log printed (a replay);
//! - `<PREFIX>_SEEDS=N`: how many seeds (else the simulation's budget for CI);
//! - `<PREFIX>_FIRST_SEED=N`: where they start (else 0);
//! - `<PREFIX>_SECONDS=S`: a soak: fresh seeds, from a start drawn from the clock and printed,
//!   until S seconds have passed.

use crate::now_ns;

/// How a run ended: the seeds it covered, the failed ones, and whether it replayed one.
#[derive(Debug)]
pub struct Ran {
    /// The first seed run.
    pub first: u64,
    /// One past the last seed run.
    pub end: u64,
    /// The seeds that failed (at most five: the run stops there).
    pub failed: Vec<u64>,
    /// `<PREFIX>_SEED` named one seed.
    pub single: bool,
    /// Seconds the run took.
    pub seconds: f64,
}

/// `name`'s value as a number, if set; a value that is not one fails the test, naming it.
pub fn env_u64(name: &str) -> Option<u64> {
    let text = std::env::var(name).ok()?;
    Some(
        text.trim()
            .parse()
            .unwrap_or_else(|e| panic!("{name}={text:?}: {e}")),
    )
}

/// Runs the seeds the environment asks for under `prefix` (`budget` of them by default),
/// calling `one` for each. `one` returns `Err` with the whole failure report (printed here), or
/// `Ok` with the run's log, printed when a single seed is replayed.
pub fn run(
    prefix: &str,
    budget: u64,
    mut one: impl FnMut(u64) -> Result<Vec<String>, String>,
) -> Ran {
    let var = |suffix: &str| env_u64(&format!("{prefix}_{suffix}"));
    let single = var("SEED");
    let soak_ns = var("SECONDS").map(|s| s.saturating_mul(1_000_000_000));
    let first = single.unwrap_or_else(|| {
        var("FIRST_SEED").unwrap_or(match soak_ns {
            // A soak explores fresh seeds each time; it prints where it started.
            Some(_) => fresh_start(),
            None => 0,
        })
    });
    let count = var("SEEDS").unwrap_or(budget);
    let started = now_ns();
    let mut failed = Vec::new();
    let mut seed = first;
    loop {
        match one(seed) {
            Ok(log) => {
                if single.is_some() {
                    eprintln!("{}", log.join("\n"));
                }
            }
            Err(report) => {
                eprintln!("{report}");
                failed.push(seed);
            }
        }
        seed += 1;
        let done = match (single, soak_ns) {
            (Some(_), _) => true,
            (None, Some(budget_ns)) => now_ns() - started >= budget_ns,
            (None, None) => seed - first >= count,
        };
        if done || failed.len() >= 5 {
            break;
        }
    }
    Ran {
        first,
        end: seed,
        failed,
        single: single.is_some(),
        seconds: (now_ns() - started) as f64 / 1e9,
    }
}

/// A start for a soak's seeds, different at each run: the wall clock's nanoseconds, mixed.
fn fresh_start() -> u64 {
    #[allow(clippy::disallowed_methods)] // a seed, not the library's clock
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    now.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 16
}
