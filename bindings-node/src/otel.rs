//! The `otel` namespace: OpenTelemetry span and trace IDs from a generator, made by the core's
//! `otel` module, as lower-case hex (the form OpenTelemetry's JavaScript API takes). The
//! `IdGenerator` of `rimeflake/otel` (otel.js) calls them.

use crate::generator::Generator;
use napi::{Env, Result};

/// A span ID from `generator`: its next ID that is not 0, as 16 lower-case hex digits.
#[napi_derive::napi(namespace = "otel")]
pub fn span_id(env: &Env, generator: &Generator) -> Result<String> {
    let id = rimeflake::otel::span_id(|| generator.one(env))?;
    Ok(rimeflake::otel::span_id_hex(id))
}

/// A trace ID from `generator`: its next ID, then 64 random bits from the operating system, as
/// 32 lower-case hex digits (W3C Trace Context Level 2: the rightmost 7 bytes are random).
#[napi_derive::napi(namespace = "otel")]
pub fn trace_id(env: &Env, generator: &Generator) -> Result<String> {
    let id = rimeflake::otel::trace_id(|| generator.one(env))?;
    Ok(rimeflake::otel::trace_id_hex(id))
}
