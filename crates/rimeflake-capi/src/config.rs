//! `rimeflake_config`: what a C program passes to `rimeflake_generator_new`, in a struct that
//! can grow without breaking programs built against an older header (`struct_size`).

use crate::boundary::{bad_pointer, ffi_boundary, optional_text, Failure};
use crate::status::rimeflake_status;
use crate::warnings::rimeflake_warning_fn;
use core_rimeflake::frontend::{DEFAULT_MAX_DRIFT, DEFAULT_MAX_WAIT};
use core_rimeflake::{Builder, Layout, RollbackPolicy};
use std::ffi::{c_char, c_void};
use std::time::Duration;

/// How to make a generator. Fill it with rimeflake_config_init(), then set what you need; every
/// text field may stay NULL, which leaves that setting to the environment (RIMEFLAKE_LAYOUT,
/// RIMEFLAKE_WORKER_ID, RIMEFLAKE_BACKEND, RIMEFLAKE_STATE_DIR) and then the defaults, as in every
/// other front end. Text fields are read during rimeflake_generator_new only.
#[repr(C)]
#[allow(non_camel_case_types)]
pub struct rimeflake_config {
    /// sizeof(rimeflake_config) of the header the program was built with (set by
    /// rimeflake_config_init). Fields a newer header adds come after the old ones.
    pub struct_size: usize,
    /// A preset name (`"twitter"`) or a layout spec
    /// (`"clock_id=0,time=41,worker=10,sequence=12,epoch_ms=1420070400000"`). NULL: default.
    pub layout: *const c_char,
    /// A fixed worker ID (locked and kept durable like a leased one), or -1 (the default):
    /// `$RIMEFLAKE_WORKER_ID`, else lease a free one (the lowest of the state directory, or one
    /// from a random start on a server backend). `RIMEFLAKE_WORKER_ID=ordinal`: a Kubernetes
    /// StatefulSet pod's ordinal (`$RIMEFLAKE_POD_INDEX`, else the `-<n>` ending `$HOSTNAME`).
    pub worker_id: i64,
    /// Worker IDs and state are separate per namespace. NULL: one per layout.
    pub namespace_name: *const c_char,
    /// The state directory. NULL: $RIMEFLAKE_STATE_DIR, else $XDG_STATE_HOME/rimeflake or
    /// ~/.local/state/rimeflake.
    pub state_dir: *const c_char,
    /// `"local"` (the embedded default), `"memory"` (no state at all: NOT restart-safe), or a
    /// server that many hosts share: `"redis://[:password@]host[:port][/db]"` (`rediss://` for
    /// TLS) or `"postgresql://user[:password]@host[:port]/db"` (TLS by libpq's `sslmode`,
    /// `sslrootcert`, `sslcert`, `sslkey`); then leave `state_dir` NULL. The server backends are
    /// build options of the library (both in the release tarball): a library built without one
    /// (`--no-default-features`) fails rimeflake_generator_new for its URL with
    /// RIMEFLAKE_CONFIG and a message naming the cargo feature it needs.
    pub backend: *const c_char,
    /// Clock steps back up to this are absorbed by counting on (default 2000).
    pub max_drift_ms: u64,
    /// The longest any call waits before it fails (default 5000).
    pub max_wait_ms: u64,
    /// After a larger step back: `"bump"` (next clock-id), `"wait"` or `"error"`. NULL: `bump`
    /// when the layout has clock-id bits, else `wait`.
    pub on_rollback: *const c_char,
    /// Never reuse an older clock-id, so IDs always increase (default false).
    pub strict_monotonic: bool,
    /// Called with each warning (such as a container on the default state directory). NULL (the
    /// default): each warning is printed on stderr, one line `rimeflake: warning: <message>`;
    /// rimeflake_warning_ignore drops them. May be called from any thread, during
    /// rimeflake_generator_new and at any later time until rimeflake_generator_free returns:
    /// rimeflake_next_id and rimeflake_fill call it too when the generator takes a worker ID
    /// again (in a forked child, or after a server backend moved its lease).
    pub on_warning: rimeflake_warning_fn,
    /// Passed to on_warning as it is. What it points to must stay valid until
    /// rimeflake_generator_free returns (not only during rimeflake_generator_new): the generator
    /// keeps the pointer.
    pub warning_user_data: *mut c_void,
    /// With a server backend: how long a lease lasts without renewal, 200 to 86400000 ms. 0
    /// (the default): $RIMEFLAKE_LEASE_TTL_MS, else 10000. A killed process's worker ID is free
    /// again after it.
    pub lease_ttl_ms: u64,
    /// Start each time unit's sequence at a random offset rather than 0, so that id % N spreads
    /// evenly over N shards at any rate (default false; refused, RIMEFLAKE_CONFIG, by a layout
    /// with the sequence above the worker, as sonyflake's).
    pub random_sequence_start: bool,
}

/// The size of the struct before `lease_ttl_ms` was added: the smallest one accepted. A program
/// built against that header gets the defaults of the fields added since.
const FIRST_SIZE: usize = std::mem::offset_of!(rimeflake_config, lease_ttl_ms);

impl rimeflake_config {
    fn defaults(struct_size: usize) -> Self {
        rimeflake_config {
            struct_size,
            layout: std::ptr::null(),
            worker_id: -1,
            namespace_name: std::ptr::null(),
            state_dir: std::ptr::null(),
            backend: std::ptr::null(),
            max_drift_ms: DEFAULT_MAX_DRIFT.as_millis() as u64,
            max_wait_ms: DEFAULT_MAX_WAIT.as_millis() as u64,
            on_rollback: std::ptr::null(),
            strict_monotonic: false,
            on_warning: None,
            warning_user_data: std::ptr::null_mut(),
            lease_ttl_ms: 0,
            random_sequence_start: false,
        }
    }

    /// A copy of the caller's config, checked against `struct_size`: an older header's smaller
    /// struct gets the defaults of the fields it lacks.
    ///
    /// # Safety
    /// A non-NULL `config` must point to `config.struct_size` readable bytes. It is never
    /// taken as a reference: an older header's struct is smaller than ours.
    pub(crate) unsafe fn read(
        config: *const rimeflake_config,
    ) -> Result<rimeflake_config, Failure> {
        if config.is_null() || !config.is_aligned() {
            return Err(bad_pointer("config", config.is_null()));
        }
        let ours = size_of::<rimeflake_config>();
        // SAFETY: non-NULL and aligned (checked above); struct_size comes first and every
        // header has it, within the readable bytes the caller vouches for. Read through a raw
        // place, never a reference to the (maybe smaller) struct.
        let theirs = unsafe { std::ptr::addr_of!((*config).struct_size).read() };
        if theirs < FIRST_SIZE {
            return Err(Failure::invalid(format!(
                "config.struct_size is {theirs}, less than any rimeflake_config ({FIRST_SIZE} \
                 bytes or more): fill the config with rimeflake_config_init"
            )));
        }
        // A newer header's fields, which this library cannot honour: all must be left unset.
        // SAFETY: the caller vouches for `struct_size` (`theirs`) readable bytes at `config`,
        // which nothing writes during the call (it is `const` to us and to them).
        let bytes = unsafe { std::slice::from_raw_parts(config.cast::<u8>(), theirs) };
        if bytes
            .get(ours..)
            .is_some_and(|extra| extra.iter().any(|&b| b != 0))
        {
            return Err(Failure::invalid(format!(
                "config sets fields past the {ours} bytes this library (rimeflake {}) knows: \
                 link a newer librimeflake",
                env!("CARGO_PKG_VERSION")
            )));
        }
        // The fields the caller's header has, over the defaults of any it lacks. The copy
        // ends on a field's boundary (FIRST_SIZE or later, as offsets of our fields are).
        let mut copy = rimeflake_config::defaults(theirs);
        let known = theirs.min(ours);
        // SAFETY: `known` <= `theirs` bytes are readable in `bytes` and <= size_of bytes are
        // writable in `copy`, a local (so they cannot overlap); every field is plain data
        // (integers, a bool written by C as 0 or 1, pointers, an optional function pointer) and
        // the copy ends on a field boundary, so `copy` holds valid values throughout.
        unsafe {
            std::ptr::copy_nonoverlapping(
                bytes.as_ptr(),
                (&mut copy as *mut rimeflake_config).cast::<u8>(),
                known,
            );
        }
        Ok(copy)
    }

    /// The core's builder with what this config sets; the rest the core resolves itself.
    ///
    /// # Safety
    /// The text fields must be NULL or NUL-terminated strings.
    pub(crate) unsafe fn builder(&self) -> Result<Builder, Failure> {
        let mut b = core_rimeflake::Generator::builder().frontend(core_rimeflake::Frontend::C);
        // SAFETY: the text fields are NULL or NUL-terminated strings (this function's contract).
        if let Some(spec) = unsafe { optional_text(self.layout, "config.layout") }? {
            b = b.layout(Layout::from_spec(spec)?);
        }
        match self.worker_id {
            -1 => {}
            id if id < 0 => {
                return Err(Failure::invalid(format!(
                    "config.worker_id is {id}: give a worker ID (0 or more) or -1 for none"
                )))
            }
            id => b = b.worker_id(id as u64),
        }
        // SAFETY: as for config.layout above.
        if let Some(ns) = unsafe { optional_text(self.namespace_name, "config.namespace_name") }? {
            b = b.namespace(ns);
        }
        // SAFETY: as for config.layout above.
        if let Some(dir) = unsafe { optional_text(self.state_dir, "config.state_dir") }? {
            b = b.state_dir(dir);
        }
        // SAFETY: as for config.layout above.
        if let Some(backend) = unsafe { optional_text(self.backend, "config.backend") }? {
            b = b.backend(core_rimeflake::Backend::parse(backend)?);
        }
        // SAFETY: as for config.layout above.
        if let Some(policy) = unsafe { optional_text(self.on_rollback, "config.on_rollback") }? {
            b = b.rollback_policy(RollbackPolicy::from_name(policy)?);
        }
        b = b
            .max_drift(Duration::from_millis(self.max_drift_ms))
            .max_wait(Duration::from_millis(self.max_wait_ms))
            .strict_monotonic(self.strict_monotonic)
            .random_sequence_start(self.random_sequence_start);
        if self.lease_ttl_ms != 0 {
            b = b.lease_ttl(Duration::from_millis(self.lease_ttl_ms));
        }
        Ok(crate::warnings::route(
            b,
            self.on_warning,
            self.warning_user_data,
        ))
    }
}

/// Fills `*config` with the defaults and sets `struct_size` to `size`. Call it through
/// rimeflake_config_init(), which passes the size of your header's struct.
///
/// # Safety
/// `config` must point to `size` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn rimeflake_config_init_sized(
    config: *mut rimeflake_config,
    size: usize,
) -> rimeflake_status {
    ffi_boundary!({
        if size < FIRST_SIZE {
            return Err(Failure::invalid(format!(
                "size is {size}, less than any rimeflake_config ({FIRST_SIZE} bytes or more)"
            )));
        }
        if config.is_null() || !config.is_aligned() {
            return Err(bad_pointer("config", config.is_null()));
        }
        // The defaults of the fields the caller's header has (an older one has fewer), and
        // zeros after ours (a newer one's fields, unset).
        let defaults = rimeflake_config::defaults(size);
        let known = size.min(size_of::<rimeflake_config>());
        // SAFETY: non-NULL and aligned (checked above); the caller vouches for `size` writable
        // bytes at `config`; `known` <= size and <= size_of our struct, so both writes stay
        // inside, and `defaults` is a local (no overlap). Never a reference: an older header's
        // struct is smaller than ours.
        unsafe {
            let bytes = config.cast::<u8>();
            std::ptr::write_bytes(bytes, 0, size);
            std::ptr::copy_nonoverlapping(
                (&defaults as *const rimeflake_config).cast::<u8>(),
                bytes,
                known,
            );
        }
        Ok(())
    })
}
