//! `rimeflake_config`: what a C program passes to `rimeflake_generator_new`, in a struct that
//! can grow without breaking programs built against an older header (`struct_size`). The struct,
//! its defaults and the hand-over of each field to the core's builder are written from the core's
//! table of settings in the order of its `C_CONFIG` (which only grows at its end) by `make
//! contract`; this file reads a caller's struct of any size and translates each kind of field.

use crate::boundary::{bad_pointer, ffi_boundary, optional_text, Failure};
use crate::status::rimeflake_status;
use crate::warnings::rimeflake_warning_fn;
use core_rimeflake::frontend::{Setting, SettingValue};
use core_rimeflake::Builder;
use std::ffi::{c_char, c_void};

/// How to make a generator. Fill it with rimeflake_config_init(), then set what you need; every
/// text field may stay NULL, which leaves that setting to the environment (RIMEFLAKE_LAYOUT,
/// RIMEFLAKE_WORKER_ID, RIMEFLAKE_BACKEND, RIMEFLAKE_STATE_DIR) and then the defaults, as in every
/// other front end. Text fields are read during rimeflake_generator_new only. The server
/// backends are build options of the library (all four in the release tarball): a library built
/// without one (`--no-default-features`) fails rimeflake_generator_new for its URL with
/// RIMEFLAKE_CONFIG and a message naming the cargo feature it needs. TLS: `rediss://`, and
/// libpq's `sslmode`, `sslrootcert`, `sslcert` and `sslkey` for PostgreSQL.
// <contract:config> generated from the core's tables by `make contract`: do not edit
#[repr(C)]
#[allow(non_camel_case_types)]
pub struct rimeflake_config {
    /// sizeof(rimeflake_config) of the header the program was built with (set by
    /// rimeflake_config_init). Fields a newer header adds come after the old ones.
    pub struct_size: usize,
    /// The bit layout: a preset or a layout spec such as
    /// clock_id=0,time=41,worker=10,sequence=12,epoch_ms=1420070400000. NULL (the default):
    /// `RIMEFLAKE_LAYOUT`, else default.
    pub layout: *const c_char,
    /// A fixed worker ID, locked and kept durable like a leased one (RIMEFLAKE_WORKER_ID=ordinal
    /// takes a Kubernetes StatefulSet pod's ordinal). -1 (the default): `RIMEFLAKE_WORKER_ID`, else
    /// lease a free one: the lowest of the state directory, or one from a random start on a server
    /// backend.
    pub worker_id: i64,
    /// The namespace: worker IDs and state are separate per namespace, and a namespace keeps one
    /// layout. NULL (the default): the layout's own: default, twitter, ..., custom-<fingerprint>.
    pub namespace_name: *const c_char,
    /// The state directory: worker leases and durable state, for the local backend. NULL (the
    /// default): `RIMEFLAKE_STATE_DIR`, else $XDG_STATE_HOME/rimeflake or ~/.local/state/rimeflake.
    pub state_dir: *const c_char,
    /// Where leases and state live: local (the state directory), memory (no state: not
    /// restart-safe, needs a worker ID), or a server many hosts share:
    /// redis[s]://[:PASSWORD@]HOST[:PORT][/DB], redis[s]+sentinel://HOST[:PORT][,...]/MASTER[/DB],
    /// postgresql://USER[:PASSWORD]@HOST[:PORT]/DB, mysql://USER[:PASSWORD]@HOST[:PORT]/DB or
    /// zookeeper://HOST:PORT[,HOST:PORT...]/CHROOT. NULL (the default): `RIMEFLAKE_BACKEND`, else
    /// local.
    pub backend: *const c_char,
    /// How far the clock may step back and still be absorbed by counting on, in ms, at most 300000
    /// (five minutes); on a server backend the namespace keeps the first generator's, and refuses
    /// another. Default 2000.
    pub max_drift_ms: u64,
    /// The longest any call waits (for the clock, a reservation or a lease) before it fails, in ms.
    /// Default 5000.
    pub max_wait_ms: u64,
    /// After a larger step back: bump (to the next clock-id), wait (for the clock, at most the
    /// longest wait) or error. NULL (the default): bump when the layout has clock-id bits, else
    /// wait.
    pub on_rollback: *const c_char,
    /// Never reuse an older clock-id, so IDs always increase (at the cost of waiting when no higher
    /// one is free). Default false.
    pub strict_monotonic: bool,
    /// Called with each warning (such as a container on the default state directory). NULL (the
    /// default): each warning is printed on stderr, one line `rimeflake: warning: <message>`;
    /// rimeflake_warning_ignore drops them. May be called from any thread, during
    /// rimeflake_generator_new and at any later time until rimeflake_generator_free returns:
    /// rimeflake_next_id and rimeflake_fill call it too when the generator takes a worker ID again
    /// (in a forked child, or after a server backend moved its lease).
    pub on_warning: rimeflake_warning_fn,
    /// Passed to on_warning as it is. What it points to must stay valid until
    /// rimeflake_generator_free returns (not only during rimeflake_generator_new): the generator
    /// keeps the pointer.
    pub warning_user_data: *mut c_void,
    /// With a server backend: how long a lease lasts without renewal, 200 ms to a day, in ms; a
    /// killed process's worker ID is free again after it. 0 (the default):
    /// `RIMEFLAKE_LEASE_TTL_MS`, else 10000.
    pub lease_ttl_ms: u64,
    /// Start each time unit's sequence at a random offset rather than 0, so that id % N spreads
    /// evenly over N shards at any rate (layouts with the sequence below the worker). Default
    /// false.
    pub random_sequence_start: bool,
    /// With a server backend: begin every start past what a lost holder of the worker ID may have
    /// issued, even when the server has its state (the first ID about a second later): for servers
    /// restored from backups where nobody runs rimeflake state restored. false (the default):
    /// `RIMEFLAKE_WAIT_AT_TAKEOVER`, else off: only where the server shows the state may have been
    /// lost or copied.
    pub wait_at_takeover: bool,
}

impl rimeflake_config {
    /// What rimeflake_config_init writes: every setting unset.
    fn defaults(struct_size: usize) -> Self {
        rimeflake_config {
            struct_size,
            layout: std::ptr::null(),
            worker_id: -1,
            namespace_name: std::ptr::null(),
            state_dir: std::ptr::null(),
            backend: std::ptr::null(),
            max_drift_ms: 2000,
            max_wait_ms: 5000,
            on_rollback: std::ptr::null(),
            strict_monotonic: false,
            on_warning: None,
            warning_user_data: std::ptr::null_mut(),
            lease_ttl_ms: 0,
            random_sequence_start: false,
            wait_at_takeover: false,
        }
    }

    /// `b` with each setting this config sets.
    ///
    /// # Safety
    /// The text fields must be NULL or NUL-terminated strings.
    unsafe fn settings(&self, mut b: Builder) -> Result<Builder, Failure> {
        // SAFETY: the text fields are NULL or NUL-terminated strings (this function's
        // contract).
        unsafe {
            b = text(b, Setting::Layout, self.layout)?;
            b = worker_id(b, Setting::WorkerId, self.worker_id)?;
            b = text(b, Setting::Namespace, self.namespace_name)?;
            b = text(b, Setting::StateDir, self.state_dir)?;
            b = text(b, Setting::Backend, self.backend)?;
            b = millis(b, Setting::MaxDrift, self.max_drift_ms)?;
            b = millis(b, Setting::MaxWait, self.max_wait_ms)?;
            b = text(b, Setting::OnRollback, self.on_rollback)?;
            b = flag(b, Setting::StrictMonotonic, self.strict_monotonic)?;
            b = millis(b, Setting::LeaseTtl, self.lease_ttl_ms)?;
            b = flag(b, Setting::RandomSequenceStart, self.random_sequence_start)?;
            b = flag(b, Setting::WaitAtTakeover, self.wait_at_takeover)?;
        }
        Ok(b)
    }
}
// </contract:config>

/// The size of the struct before `lease_ttl_ms` was added: the smallest one accepted. A program
/// built against that header gets the defaults of the fields added since.
const FIRST_SIZE: usize = std::mem::offset_of!(rimeflake_config, lease_ttl_ms);

impl rimeflake_config {
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
        let b = core_rimeflake::Generator::builder().frontend(core_rimeflake::Frontend::C);
        // SAFETY: as this function's contract.
        let b = unsafe { self.settings(b) }?;
        Ok(crate::warnings::route(
            b,
            self.on_warning,
            self.warning_user_data,
        ))
    }
}

/// The field of `setting`, for a message.
fn field(setting: Setting) -> String {
    format!("config.{}", setting.info().c)
}

/// A text field: NULL leaves the setting to the environment and the defaults.
///
/// # Safety
/// `ptr` must be NULL or a NUL-terminated string.
unsafe fn text(b: Builder, setting: Setting, ptr: *const c_char) -> Result<Builder, Failure> {
    // SAFETY: this function's contract.
    Ok(match unsafe { optional_text(ptr, &field(setting)) }? {
        Some(text) => b.set(setting, SettingValue::Text(text.into()))?,
        None => b,
    })
}

/// A worker ID: -1 leaves it to the environment (else a leased one); another negative number
/// is refused.
fn worker_id(b: Builder, setting: Setting, id: i64) -> Result<Builder, Failure> {
    match id {
        -1 => Ok(b),
        id if id < 0 => Err(Failure::invalid(format!(
            "{} is {id}: give a worker ID (0 or more) or -1 for none",
            field(setting)
        ))),
        id => Ok(b.set(setting, SettingValue::Number(id as u64))?),
    }
}

/// Milliseconds. For a setting the environment may give, 0 leaves it to the environment, then
/// the default; any other is always set (rimeflake_config_init writes its default).
fn millis(b: Builder, setting: Setting, ms: u64) -> Result<Builder, Failure> {
    if ms == 0 && setting.info().env.is_some() {
        return Ok(b);
    }
    Ok(b.set(setting, SettingValue::Number(ms))?)
}

/// On or off. For a setting the environment may give, false leaves it to the environment,
/// then the default; any other is always set.
fn flag(b: Builder, setting: Setting, on: bool) -> Result<Builder, Failure> {
    if !on && setting.info().env.is_some() {
        return Ok(b);
    }
    Ok(b.set(setting, SettingValue::Flag(on))?)
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
