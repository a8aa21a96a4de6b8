//! `Layout`: how the 63 bits of an ID are shared; a preset or a layout spec, parsed by the core.

use crate::args::Arg;
use crate::errors::throw;
use crate::parts::{parts, Parts};
use napi::bindgen_prelude::{ClassInstance, FromNapiValue, Object};
use napi::{Env, JsValue, Result, Unknown, ValueType};

/// How the 63 bits of an ID are shared between clock-id, time, worker and sequence.
///
/// `new Layout('twitter')` takes a preset name or a layout spec, the same string the CLI and
/// Python take: `'clock_id=0,time=41,worker=10,sequence=12,epoch_ms=1420070400000'`.
/// Anything invalid throws a `ConfigError` that names the field.
#[napi_derive::napi]
pub struct Layout(pub(crate) rimeflake::Layout);

/// A preset name or a layout spec, as the core reads it.
pub fn parse(text: &str) -> rimeflake::Result<rimeflake::Layout> {
    rimeflake::Layout::from_spec(text)
}

impl Layout {
    /// The core's layout inside a JavaScript value, if it is a `Layout` (napi-rs checks its
    /// type tag, so a look-alike object is refused).
    pub fn core_of(a: &Arg) -> Option<rimeflake::Layout> {
        // SAFETY: the current call's env and value.
        let instance = unsafe { ClassInstance::<Layout>::from_napi_value(a.env, a.value) }.ok()?;
        Some(instance.0.clone())
    }
}

/// A layout argument: a string (preset name or layout spec, parsed by the core) or a `Layout`.
pub fn layout_arg(env: &Env, a: Arg) -> Result<rimeflake::Layout> {
    match a.kind() {
        ValueType::String => {
            let text = a.string()?;
            parse(&text).map_err(|e| throw(env.raw(), &e))
        }
        ValueType::Object => match Layout::core_of(&a) {
            Some(layout) => Ok(layout),
            None => Err(a.wrong_type("a string or a Layout")),
        },
        _ => Err(a.wrong_type("a string or a Layout")),
    }
}

#[napi_derive::napi]
impl Layout {
    /// A preset name (a `LayoutName`; `baidu` needs `epoch_ms=` to generate) or a layout spec
    /// (`Layout.describe()` prints one; it reads back the same).
    #[napi(
        catch_unwind,
        constructor,
        ts_args_type = "spec: LayoutName | (string & {})"
    )]
    pub fn new(env: &Env, spec: Unknown) -> Result<Self> {
        let text = Arg {
            env: env.raw(),
            value: spec.raw(),
            name: "spec",
        }
        .string()?;
        parse(&text).map(Layout).map_err(|e| throw(env.raw(), &e))
    }

    /// Baidu's layout (28 time bits of 1 s, 22 worker, 13 sequence) with the epoch it needs.
    #[napi(catch_unwind)]
    pub fn baidu(env: &Env, epoch_ms: Unknown) -> Result<Self> {
        let epoch = Arg {
            env: env.raw(),
            value: epoch_ms.raw(),
            name: "epochMs",
        }
        .count()?;
        rimeflake::Layout::baidu(epoch)
            .map(Layout)
            .map_err(|e| throw(env.raw(), &e))
    }

    /// The names of the presets (the core's list of them).
    #[napi(catch_unwind, ts_return_type = "Array<LayoutName>")]
    pub fn presets() -> Vec<&'static str> {
        rimeflake::Layout::PRESETS.to_vec()
    }

    /// The preset's name, or `custom`.
    #[napi(catch_unwind, getter)]
    pub fn name(&self) -> &'static str {
        self.0.name()
    }

    #[napi(catch_unwind, getter)]
    pub fn clock_id_bits(&self) -> u32 {
        self.0.clock_id_bits().into()
    }

    #[napi(catch_unwind, getter)]
    pub fn time_bits(&self) -> u32 {
        self.0.time_bits().into()
    }

    #[napi(catch_unwind, getter)]
    pub fn worker_bits(&self) -> u32 {
        self.0.worker_bits().into()
    }

    #[napi(catch_unwind, getter)]
    pub fn sequence_bits(&self) -> u32 {
        self.0.sequence_bits().into()
    }

    /// Bits in use: 63, or 53 for a layout whose IDs are exact as a Number.
    #[napi(catch_unwind, getter)]
    pub fn total_bits(&self) -> u32 {
        self.0.total_bits().into()
    }

    /// Milliseconds per time unit.
    #[napi(catch_unwind, getter)]
    pub fn unit_ms(&self) -> f64 {
        self.0.unit_ms() as f64
    }

    /// The epoch, in Unix milliseconds.
    #[napi(catch_unwind, getter)]
    pub fn epoch_ms(&self) -> f64 {
        self.0.epoch_ms() as f64
    }

    /// `'worker_first'` (worker above sequence, as Twitter) or `'sequence_first'` (Sonyflake's
    /// order): the word the layout spec's `order=` uses.
    #[napi(catch_unwind, getter)]
    pub fn order(&self) -> &'static str {
        self.0.order().spec_name()
    }

    #[napi(catch_unwind, getter)]
    pub fn max_worker_id(&self) -> f64 {
        self.0.max_worker_id() as f64
    }

    #[napi(catch_unwind, getter)]
    pub fn max_clock_id(&self) -> f64 {
        self.0.max_clock_id() as f64
    }

    #[napi(catch_unwind, getter)]
    pub fn max_sequence(&self) -> f64 {
        self.0.max_sequence() as f64
    }

    /// The largest value of the time field, in units.
    #[napi(catch_unwind, getter)]
    pub fn max_time(&self) -> f64 {
        self.0.max_time() as f64
    }

    /// Whether the layout keeps IDs within 53 bits (exact as a Number).
    #[napi(catch_unwind, getter)]
    pub fn is_js_safe(&self) -> bool {
        self.0.is_js_safe()
    }

    /// A 64-bit digest of the fields: a namespace keeps one layout, checked by it.
    #[napi(catch_unwind, getter, ts_return_type = "bigint")]
    pub fn fingerprint(&self) -> u64 {
        self.0.fingerprint()
    }

    /// When the time field runs out, in Unix milliseconds.
    #[napi(catch_unwind, getter)]
    pub fn expires_at_ms(&self) -> f64 {
        self.0.expires_at_ms() as f64
    }

    /// The layout spec of this layout: `new Layout(l.describe())` equals `l`.
    #[napi(catch_unwind)]
    pub fn describe(&self) -> String {
        self.0.describe()
    }

    /// The same as `describe()`, so a layout prints as its spec.
    #[napi(catch_unwind, js_name = "toString")]
    pub fn as_string(&self) -> String {
        self.0.describe()
    }

    /// Whether `other` has the same fields.
    #[napi(catch_unwind)]
    pub fn equals(&self, other: &Layout) -> bool {
        self.0 == other.0
    }

    /// The ID made of `parts` (each a number; `clockId` defaults to 0). Throws `ConfigError` for
    /// a field above its maximum, `TimeRangeError` for a time outside the layout's range.
    #[napi(
        catch_unwind,
        ts_args_type = "parts: { clockId?: number, timestampMs: number, datacenterId?: number, workerId: number, sequence: number }",
        ts_return_type = "bigint"
    )]
    pub fn compose(&self, env: &Env, parts: Object) -> Result<u64> {
        let field = |key: &str, name: &'static str, required: bool| -> Result<u64> {
            let v: Option<Unknown> = parts.get(key)?;
            match v.map(|v| Arg {
                env: env.raw(),
                value: v.raw(),
                name,
            }) {
                Some(a) if !a.is_nullish() => a.count(),
                Some(a) if required => Err(a.wrong_type("a number")),
                None if required => Err(crate::errors::type_error(
                    env.raw(),
                    &format!("{name} must be a number, not undefined"),
                )),
                _ => Ok(0),
            }
        };
        let p = rimeflake::Parts {
            clock_id: field("clockId", "parts.clockId", false)?,
            timestamp_ms: field("timestampMs", "parts.timestampMs", true)?,
            datacenter_id: match parts.get::<Unknown>("datacenterId")? {
                Some(v)
                    if !(Arg {
                        env: env.raw(),
                        value: v.raw(),
                        name: "parts.datacenterId",
                    })
                    .is_nullish() =>
                {
                    Some(field("datacenterId", "parts.datacenterId", true)?)
                }
                _ => None,
            },
            worker_id: field("workerId", "parts.workerId", true)?,
            sequence: field("sequence", "parts.sequence", true)?,
        };
        self.0.compose(&p).map_err(|e| throw(env.raw(), &e))
    }

    /// The parts of an ID of this layout (a bigint, a decimal string or a safe-integer Number).
    #[napi(catch_unwind, ts_args_type = "id: bigint | string | number")]
    pub fn decode<'e>(&self, env: &'e Env, id: Unknown) -> Result<Parts<'e>> {
        parts(
            env,
            &self.0,
            Arg {
                env: env.raw(),
                value: id.raw(),
                name: "id",
            },
        )
    }
}
