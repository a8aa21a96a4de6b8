//! `rimeflake_generator`: the core's generator behind an opaque handle.

use crate::boundary::{arg, ffi_boundary, out, out_ptr, Failure};
use crate::config::rimeflake_config;
use crate::layout::rimeflake_layout;
use crate::stats::rimeflake_generator_stats;
use crate::status::rimeflake_status;
use core_rimeflake::Generator;

/// A generator of IDs (opaque). Thread-safe: any number of threads may call rimeflake_next_id,
/// rimeflake_fill, rimeflake_stats and rimeflake_generator_close on one generator at once; only
/// rimeflake_generator_free must come after all of them.
///
/// After fork(): in the child, a generator made before the fork with a leased worker ID (the
/// default) takes a new worker ID at its first call, so the child's IDs never collide with the
/// parent's; one with a fixed worker_id refuses with RIMEFLAKE_LEASE (make a new generator in the
/// child instead); a closed one stays closed. The child's close and free never touch the
/// parent's lease or state.
#[allow(non_camel_case_types)]
pub struct rimeflake_generator(Generator);

/// Makes a generator as `config` says (NULL: every default, as rimeflake_config_init gives)
/// and stores it in `*generator`. Free it with rimeflake_generator_free.
///
/// # Safety
/// `config` NULL or a config filled by rimeflake_config_init; `generator` writable.
#[no_mangle]
pub unsafe extern "C" fn rimeflake_generator_new(
    config: *const rimeflake_config,
    generator: *mut *mut rimeflake_generator,
) -> rimeflake_status {
    ffi_boundary!({
        // SAFETY: `generator` is writable for one pointer (this function's contract).
        let generator = unsafe { out(generator, "generator") }?;
        let builder = if config.is_null() {
            core_rimeflake::Generator::builder().frontend(core_rimeflake::Frontend::C)
        } else {
            // SAFETY: `config` is filled by rimeflake_config_init (this function's contract),
            // so its struct_size bytes are readable.
            let config = unsafe { rimeflake_config::read(config) }?;
            // SAFETY: the caller vouches for the text fields: NULL or NUL-terminated strings.
            unsafe { config.builder() }?
        };
        let made = builder.build()?;
        *generator = Box::into_raw(Box::new(rimeflake_generator(made)));
        Ok(())
    })
}

/// Closes the generator if needed and frees it. NULL is ignored.
///
/// # Safety
/// `generator` NULL or from rimeflake_generator_new, not yet freed, and no longer in use by any
/// thread.
#[no_mangle]
pub unsafe extern "C" fn rimeflake_generator_free(generator: *mut rimeflake_generator) {
    if generator.is_null() {
        return;
    }
    // A panic in the close that dropping does is caught: nothing crosses the boundary.
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // SAFETY: the caller vouches that it came from rimeflake_generator_new's
        // Box::into_raw, is freed once, and that no thread uses it any more.
        drop(unsafe { Box::from_raw(generator) })
    }));
}

/// Closes the generator: later calls fail with RIMEFLAKE_CLOSED. A durable generator stores its
/// last reservation and frees its worker lease; a "memory" one waits (at most max_wait_ms)
/// until the clock has passed its last ID. Closing twice is harmless.
///
/// # Safety
/// `generator` from rimeflake_generator_new, not freed.
#[no_mangle]
pub unsafe extern "C" fn rimeflake_generator_close(
    generator: *const rimeflake_generator,
) -> rimeflake_status {
    ffi_boundary!({
        // SAFETY: `generator` is from rimeflake_generator_new and not freed (this function's
        // contract), and a generator is Sync: any thread may share it.
        unsafe { arg(generator, "generator") }?.0.close()?;
        Ok(())
    })
}

/// The next ID, into `*id`. IDs of one generator strictly increase (except across a clock-id
/// reuse, see rimeflake_generator_stats) and never repeat, across threads, restarts and forks.
///
/// # Safety
/// `generator` from rimeflake_generator_new, not freed; `id` writable.
#[no_mangle]
pub unsafe extern "C" fn rimeflake_next_id(
    generator: *const rimeflake_generator,
    id: *mut u64,
) -> rimeflake_status {
    ffi_boundary!({
        // SAFETY: `generator` is from rimeflake_generator_new and not freed (this function's
        // contract), and a generator is Sync: any thread may share it.
        let generator = unsafe { arg(generator, "generator") }?;
        // SAFETY: `id` is writable for a u64 (this function's contract).
        let id = unsafe { out(id, "id") }?;
        *id = generator.0.next_id()?;
        Ok(())
    })
}

/// Fills `ids[0..n]` with increasing IDs, in one atomic step per chunk. `ids` may be NULL when
/// `n` is 0. On failure the IDs already written to `ids` (if any) are issued all the same and
/// will not come again; a batch that cannot fit in the layout's time range fails before any.
///
/// # Safety
/// `generator` from rimeflake_generator_new, not freed; `ids` writable for `n` IDs.
#[no_mangle]
pub unsafe extern "C" fn rimeflake_fill(
    generator: *const rimeflake_generator,
    ids: *mut u64,
    n: usize,
) -> rimeflake_status {
    ffi_boundary!({
        // SAFETY: `generator` is from rimeflake_generator_new and not freed (this function's
        // contract), and a generator is Sync: any thread may share it.
        let generator = unsafe { arg(generator, "generator") }?;
        if n == 0 {
            return Ok(());
        }
        let first = out_ptr(ids, "ids")?;
        if n > isize::MAX as usize / size_of::<u64>() {
            return Err(Failure::invalid(format!(
                "n is {n}: no buffer holds that many IDs"
            )));
        }
        // SAFETY: non-NULL and aligned (out_ptr), `n * 8` bytes fit in isize (checked above),
        // and the caller vouches for `n` writable u64s at `ids` that nothing else accesses
        // during the call. The slice is made from the caller's pointer itself, never from a
        // reference to its first element (whose provenance would cover that one alone).
        let ids = unsafe { std::slice::from_raw_parts_mut(first, n) };
        generator.0.fill(ids)?;
        Ok(())
    })
}

/// Reads the counters into `*stats`. Call it through rimeflake_stats(), which passes the size
/// of your header's struct.
///
/// # Safety
/// `generator` from rimeflake_generator_new, not freed; `stats` writable for `size` bytes.
#[no_mangle]
pub unsafe extern "C" fn rimeflake_stats_sized(
    generator: *const rimeflake_generator,
    stats: *mut rimeflake_generator_stats,
    size: usize,
) -> rimeflake_status {
    ffi_boundary!({
        // SAFETY: `generator` is from rimeflake_generator_new and not freed (this function's
        // contract), and a generator is Sync: any thread may share it.
        let generator = unsafe { arg(generator, "generator") }?;
        let ours = size_of::<rimeflake_generator_stats>();
        // The first header's struct ended at `server_skew_ms`: a program built with it reads
        // that much, and no more is written.
        let first = std::mem::offset_of!(rimeflake_generator_stats, reservation_writes);
        if size < first {
            return Err(Failure::invalid(format!(
                "size is {size}, less than any header's rimeflake_generator_stats ({first} bytes)"
            )));
        }
        let stats = out_ptr(stats, "stats")?;
        let value = rimeflake_generator_stats::from(&generator.0.stats());
        // Fields of a newer header read as zero; an older header's struct gets its own fields.
        // SAFETY: `stats` is non-NULL and aligned (out_ptr), and the caller vouches for `size`
        // writable bytes there, so every write stays inside: the whole struct when `size` >=
        // ours, else its first `size` bytes (a prefix of fields, shorter than the struct, so
        // without its trailing padding). All go through the caller's pointer, whose
        // provenance covers all `size` bytes.
        unsafe {
            std::ptr::write_bytes(stats.cast::<u8>(), 0, size);
            if size >= ours {
                std::ptr::write(stats, value);
            } else {
                std::ptr::copy_nonoverlapping(
                    (&raw const value).cast::<u8>(),
                    stats.cast::<u8>(),
                    size,
                );
            }
        }
        Ok(())
    })
}

/// The worker ID the generator's next ID carries, into `*worker_id`. In a forked child that
/// has issued no ID yet, the child takes its own worker ID now, as its first ID would (waiting
/// at most max_wait_ms): never the parent's. A fixed worker_id in a forked child fails with
/// RIMEFLAKE_LEASE, as rimeflake_next_id does there; a closed generator in a forked child
/// with RIMEFLAKE_CLOSED.
///
/// # Safety
/// `generator` from rimeflake_generator_new, not freed; `worker_id` writable.
#[no_mangle]
pub unsafe extern "C" fn rimeflake_generator_worker_id(
    generator: *const rimeflake_generator,
    worker_id: *mut u64,
) -> rimeflake_status {
    ffi_boundary!({
        // SAFETY: `generator` is from rimeflake_generator_new and not freed (this function's
        // contract), and a generator is Sync: any thread may share it.
        let generator = unsafe { arg(generator, "generator") }?;
        // SAFETY: `worker_id` is writable for a u64 (this function's contract).
        let worker_id = unsafe { out(worker_id, "worker_id") }?;
        *worker_id = core_rimeflake::frontend::current_worker_id(&generator.0, &mut || false)?;
        Ok(())
    })
}

/// A copy of the generator's layout, into `*layout` (free it with rimeflake_layout_free).
///
/// # Safety
/// `generator` from rimeflake_generator_new, not freed; `layout` writable.
#[no_mangle]
pub unsafe extern "C" fn rimeflake_generator_layout(
    generator: *const rimeflake_generator,
    layout: *mut *mut rimeflake_layout,
) -> rimeflake_status {
    ffi_boundary!({
        // SAFETY: `generator` is from rimeflake_generator_new and not freed (this function's
        // contract), and a generator is Sync: any thread may share it.
        let generator = unsafe { arg(generator, "generator") }?;
        // SAFETY: `layout` is writable for one pointer (this function's contract).
        let layout = unsafe { out(layout, "layout") }?;
        *layout = rimeflake_layout::boxed(generator.0.layout().clone());
        Ok(())
    })
}
