//! `decode`, `format` and `parse`: reading IDs and their string forms.

use crate::args::Arg;
use crate::errors::throw;
use crate::parts::{parts, Parts};
use napi::{Env, JsValue, Result, Unknown};

/// The parts of `id` (a bigint, a decimal string or a safe-integer Number) under `layout` (a
/// preset name, a layout spec or a `Layout`; default `'default'`).
#[napi_derive::napi(
    catch_unwind,
    ts_args_type = "id: bigint | string | number, layout?: LayoutName | (string & {}) | Layout"
)]
pub fn decode<'e>(env: &'e Env, id: Unknown, layout: Option<Unknown>) -> Result<Parts<'e>> {
    let layout = match layout.map(|l| Arg {
        env: env.raw(),
        value: l.raw(),
        name: "layout",
    }) {
        Some(a) if !a.is_nullish() => crate::layout::layout_arg(env, a)?,
        _ => return decode_assumed(env, id),
    };
    parts(
        env,
        &layout,
        Arg {
            env: env.raw(),
            value: id.raw(),
            name: "id",
        },
    )
}

/// `decode` without a layout: the default is assumed, and said so (a `RimeflakeWarning`) when
/// the ID does not fit it.
fn decode_assumed<'e>(env: &'e Env, id: Unknown) -> Result<Parts<'e>> {
    let arg = Arg {
        env: env.raw(),
        value: id.raw(),
        name: "id",
    };
    let word = arg.word(i64::MAX as u64)?;
    let default = rimeflake::Layout::default();
    let decoded = parts(env, &default, arg)?;
    if let Some(w) = default.decode(word).ok().and_then(|p| {
        rimeflake::frontend::assumed_layout_warning(word, &p, rimeflake::Frontend::Node)
    }) {
        crate::warnings::emit(env, &[w])?;
    }
    Ok(decoded)
}

fn encoding(env: &Env, name: Option<Unknown>) -> Result<rimeflake::Encoding> {
    match name.map(|n| Arg {
        env: env.raw(),
        value: n.raw(),
        name: "encoding",
    }) {
        Some(a) if !a.is_nullish() => {
            rimeflake::Encoding::from_name(&a.string()?).map_err(|e| throw(env.raw(), &e))
        }
        _ => Ok(rimeflake::Encoding::Decimal),
    }
}

/// `id` (any 64-bit unsigned number) as text: `'dec'` (decimal, the default), `'hex'` (16
/// digits), `'base62'` (11 characters) or `'base32'` (13, Crockford). The fixed-width forms sort
/// as the numbers do.
#[napi_derive::napi(
    catch_unwind,
    ts_args_type = "id: bigint | string | number, encoding?: 'dec' | 'hex' | 'base62' | 'base32'"
)]
pub fn format(env: &Env, id: Unknown, encoding_name: Option<Unknown>) -> Result<String> {
    let id = Arg {
        env: env.raw(),
        value: id.raw(),
        name: "id",
    }
    .word(u64::MAX)?;
    Ok(rimeflake::format(id, encoding(env, encoding_name)?))
}

/// The number that `text` spells in `encoding` (see `format`). Throws `InvalidIdError` for
/// text that is not one.
#[napi_derive::napi(
    catch_unwind,
    ts_return_type = "bigint",
    ts_args_type = "text: string, encoding?: 'dec' | 'hex' | 'base62' | 'base32'"
)]
pub fn parse(env: &Env, text: Unknown, encoding_name: Option<Unknown>) -> Result<u64> {
    let text = Arg {
        env: env.raw(),
        value: text.raw(),
        name: "text",
    }
    .string()?;
    rimeflake::parse(&text, encoding(env, encoding_name)?).map_err(|e| throw(env.raw(), &e))
}
