//! [`WorkerSource`]: where a generator's worker ID comes from.

/// Where the worker ID comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum WorkerSource {
    /// This worker ID.
    Fixed(u64),
}
