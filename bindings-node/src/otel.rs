//! The IDs of `rimeflake/otel`'s `IdGenerator` (otel.js), made by the core's `otel` module from
//! a generator's IDs, as lower-case hex: the form OpenTelemetry's JavaScript API takes.

use crate::generator::Generator;
use napi::{Env, Result};

/// A span ID from `generator`: its next ID that is not 0, as 16 hex digits.
#[napi_derive::napi(js_name = "_otelSpanId", skip_typescript)]
pub fn otel_span_id(env: &Env, generator: &Generator) -> Result<String> {
    let id = rimeflake::otel::span_id(|| generator.one(env))?;
    Ok(rimeflake::otel::span_id_hex(id))
}

/// A trace ID from `generator`: its next ID, then 64 random bits from the operating system, as
/// 32 hex digits.
#[napi_derive::napi(js_name = "_otelTraceId", skip_typescript)]
pub fn otel_trace_id(env: &Env, generator: &Generator) -> Result<String> {
    let id = rimeflake::otel::trace_id(|| generator.one(env))?;
    Ok(rimeflake::otel::trace_id_hex(id))
}
