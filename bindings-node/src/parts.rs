//! `Parts`: an ID's clock-id, time, worker and sequence, as `decode` (the function, and the
//! `decode` methods of `Layout` and `Generator`) returns them.

use crate::args::Arg;
use crate::errors::throw;
use napi::{Env, JsDate, Result};

/// The parts of an ID.
#[napi_derive::napi(object, object_from_js = false)]
pub struct Parts<'e> {
    /// The clock-id (0 on layouts without clock-id bits).
    pub clock_id: u32,
    /// When the ID was made, in Unix milliseconds (rounded down to the layout's time unit).
    pub timestamp_ms: f64,
    /// `timestampMs` as a `Date`.
    pub date: JsDate<'e>,
    /// The datacenter part of the worker field, on a layout that names one (`twitter`).
    pub datacenter_id: Option<u32>,
    pub worker_id: u32,
    pub sequence: u32,
}

pub fn parts<'e>(env: &'e Env, layout: &rimeflake::Layout, id: Arg) -> Result<Parts<'e>> {
    let id = id.word(i64::MAX as u64)?;
    let p = layout.decode(id).map_err(|e| throw(env.raw(), &e))?;
    Ok(Parts {
        clock_id: p.clock_id as u32,
        timestamp_ms: p.timestamp_ms as f64,
        date: env.create_date(p.timestamp_ms as f64)?,
        datacenter_id: p.datacenter_id.map(|d| d as u32),
        worker_id: p.worker_id as u32,
        sequence: p.sequence as u32,
    })
}
