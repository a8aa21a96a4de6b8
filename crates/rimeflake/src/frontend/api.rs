//! What the front ends (the CLI, the bindings, the C library) alone need beyond the crate's
//! API, re-exported by [`frontend`](crate::frontend): settings resolved as every front end
//! resolves them, the warning for an ID decoded on an assumed layout, the hook a binding calls in
//! a forked child, the worker ID a forked child will take, the defaults a binding documents, and
//! the UTC times the command prints and parses. It sits above the generator and the settings
//! (docs/architecture.md), where the spelling in `frontend.rs` sits below everything.

use crate::clock::Clock;
use crate::error::Result;
use crate::generator::Generator;

pub use crate::fork::after_fork_in_child;
pub use crate::generator::{DEFAULT_MAX_DRIFT, DEFAULT_MAX_WAIT};
pub use crate::layout::guess::assumed_layout_warning;
pub use crate::settings::{backend_from_env, layout, layout_if_given, state_dir, state_dir_as};
pub use crate::utc::{iso8601, parse_time};

/// The worker ID `generator`'s next ID carries. In a forked child that has issued no ID yet, it
/// first takes the child's own worker ID, as its first ID would (waiting at most `max_wait`,
/// calling `interrupted` between slices of the wait); elsewhere it is
/// [`Generator::worker_id`].
///
/// # Errors
/// As [`Generator::next_id`] in a forked child: [`ErrorKind::Lease`](crate::ErrorKind::Lease)
/// for a fixed worker ID or a lease not taken within `max_wait`,
/// [`ErrorKind::Closed`](crate::ErrorKind::Closed) when closed.
pub fn current_worker_id<C: Clock>(
    generator: &Generator<C>,
    interrupted: &mut dyn FnMut() -> bool,
) -> Result<u64> {
    generator.current_worker_id(interrupted)
}
