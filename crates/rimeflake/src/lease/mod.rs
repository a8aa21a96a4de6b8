//! [`WorkerSource`]: where a generator's worker ID comes from, and the local leases that hold it.
//!
//! Every worker ID, whatever its source, is locked in the state directory
//! ([`LocalLease`]) and keeps its durable state beside the lock, so two
//! processes on one host cannot run the same worker ID and a restart continues safely.

pub mod dirs;
pub mod local;
pub mod namespace;
pub mod remote;
pub mod source;

pub use local::{LeaseOptions, LeaseRequest, LocalLease};

use crate::fork::Lease;
use std::ops::RangeInclusive;

impl Lease for LocalLease {
    fn lock_fd(&self) -> Option<i32> {
        LocalLease::lock_fd(self)
    }
    fn release(self: Box<Self>) {
        LocalLease::release(*self)
    }
    fn forget_after_fork(mut self: Box<Self>) {
        LocalLease::forget_after_fork(&mut self)
    }
}

/// Where the worker ID comes from. The generator turns it into the request for a local lease.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum WorkerSource {
    /// This worker ID.
    Fixed(u64),
    /// The worker ID in the environment variable `RIMEFLAKE_WORKER_ID`.
    FromEnv,
    /// The pod index of a Kubernetes StatefulSet: `RIMEFLAKE_POD_INDEX` if set (expose the
    /// pod's `apps.kubernetes.io/pod-index` label there with the downward API:
    /// `valueFrom: { fieldRef: { fieldPath: "metadata.labels['apps.kubernetes.io/pod-index']" } }`),
    /// else the `<n>` of a host name `<statefulset>-<n>`, which needs the set's name. A
    /// Deployment's pods have no stable index and are refused.
    KubernetesOrdinal {
        /// The StatefulSet's name, to read the index from the host name.
        statefulset: Option<String>,
    },
    /// The lowest free worker ID of the state directory, in `range` (default: all of the
    /// layout's worker IDs). The embedded default.
    LocalLease {
        /// The worker IDs this directory may lease.
        range: Option<RangeInclusive<u64>>,
    },
}
