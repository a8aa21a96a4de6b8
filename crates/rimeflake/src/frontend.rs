//! What the front ends (the CLI, the bindings, the C library) need beyond the crate's API, in
//! one place: the front ends' contract (which front end a [`Builder`](crate::Builder) serves,
//! the table of the settings every front end offers and how each spells them, the one "did
//! you mean"), the settings they resolve the way every front end does (a layout, a state
//! directory or a backend given or taken from the environment), the warning for an ID decoded
//! on an assumed layout, the hook a binding calls in a forked child, the worker ID a forked
//! child will take, the defaults a binding documents, the UTC times the command prints and
//! parses, and decimal digits without an allocation. A Rust program using the generator needs
//! none of it.
//!
//! The tables of the counters and the presets are beside what they describe:
//! [`Stats::FIELDS`](crate::Stats::FIELDS) and [`Layout::PRESET_LIST`](crate::Layout::PRESET_LIST).
//!
//! This module is the top layer's facade (docs/architecture.md): the contract itself sits in
//! the bottom layer, where every layer can name a setting as its user typed it.

use crate::clock::Clock;
use crate::error::Result;
use crate::generator::Generator;

pub use crate::contract::{
    camel_case, edit_distance, nearest, CField, Frontend, Setting, SettingDefault, SettingInfo,
    SettingKind, C_CONFIG, SETTINGS,
};
pub use crate::encoding::DecimalDigits;
pub use crate::fork::after_fork_in_child;
pub use crate::generator::{
    MetricKind, SettingValue, StatField, StatUnit, StatValue, DEFAULT_MAX_DRIFT, DEFAULT_MAX_WAIT,
};
pub use crate::layout::guess::assumed_layout_warning;
pub use crate::lease::dirs::in_container;
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
