//! `GeneratorOptions`: what the user passed, checked and named; everything left out is resolved
//! by the core (environment, defaults) when the generator is built.

use crate::args::Arg;
use crate::errors::{throw, type_error};
use crate::layout::Layout;
use napi::bindgen_prelude::FromNapiValue;
use napi::{sys, Env, JsValue, Result, Unknown};
use rimeflake::{Backend, Frontend, Warning};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Options of `new Generator(options)` and `Generator.shared(options)`. Every one is optional:
/// with none, the generator is the embedded default (a worker ID leased in the state directory,
/// `RIMEFLAKE_STATE_DIR`, `RIMEFLAKE_WORKER_ID`), as in every other front end.
#[napi_derive::napi(object, object_to_js = false)]
pub struct GeneratorOptions<'a> {
    /// A fixed worker ID (else `RIMEFLAKE_WORKER_ID`, else one is leased).
    /// `RIMEFLAKE_WORKER_ID=ordinal`: a Kubernetes StatefulSet pod's ordinal
    /// (`RIMEFLAKE_POD_INDEX`, else the `-<n>` ending `HOSTNAME`).
    #[napi(ts_type = "number")]
    pub worker_id: Option<Unknown<'a>>,
    /// A preset name (`'default'`, `'twitter'`, `'sonyflake'`, `'js_safe'`, ...), a layout spec
    /// such as `'clock_id=0,time=41,worker=10,sequence=12,epoch_ms=1420070400000'`, or a `Layout`
    /// (else `RIMEFLAKE_LAYOUT`, else `'default'`).
    #[napi(ts_type = "string | Layout")]
    pub layout: Option<Unknown<'a>>,
    /// The namespace whose worker IDs and state this generator uses (default: follows the layout).
    #[napi(ts_type = "string")]
    pub namespace: Option<Unknown<'a>>,
    /// Where leases and durable state live (default: `RIMEFLAKE_STATE_DIR`, else the XDG state directory).
    #[napi(ts_type = "string")]
    pub state_dir: Option<Unknown<'a>>,
    /// `'local'` (the default: leases and state in the state directory), `'memory'` (no state;
    /// not restart-safe; needs a `workerId`), or a server that many hosts share:
    /// `'redis://[:password@]host[:port][/db]'` (`rediss://` for TLS) or
    /// `'postgresql://user[:password]@host[:port]/db'` (TLS by libpq's `sslmode`, `sslrootcert`,
    /// `sslcert`, `sslkey`); parsed by the core, as in every front end (else `RIMEFLAKE_BACKEND`).
    #[napi(ts_type = "string")]
    pub backend: Option<Unknown<'a>>,
    /// A clock that goes back by at most this much is absorbed by counting on (default 2000).
    #[napi(ts_type = "number")]
    pub max_drift_ms: Option<Unknown<'a>>,
    /// The longest any call waits for the clock before it fails (default 5000).
    #[napi(ts_type = "number")]
    pub max_wait_ms: Option<Unknown<'a>>,
    /// After a large rollback: `'bump'` (the next clock-id; the default when the layout has
    /// clock-id bits), `'wait'` (the default otherwise) or `'error'`.
    #[napi(ts_type = "'bump' | 'wait' | 'error'")]
    pub on_rollback: Option<Unknown<'a>>,
    /// Refuse to reuse a clock-id (IDs then strictly increase, at the cost of waiting).
    #[napi(ts_type = "boolean")]
    pub strict_monotonic: Option<Unknown<'a>>,
    /// With a server backend: how long a lease lasts without renewal, from 200 ms to a day
    /// (default `RIMEFLAKE_LEASE_TTL_MS`, else 10000). A killed process's worker ID is free
    /// again after it.
    #[napi(ts_type = "number")]
    pub lease_ttl_ms: Option<Unknown<'a>>,
}

/// The options, checked. Its `Debug` form is the key of `Generator.shared`.
#[derive(Debug, Default)]
pub struct Options {
    worker_id: Option<u64>,
    layout: Option<rimeflake::Layout>,
    namespace: Option<String>,
    state_dir: Option<String>,
    backend: Option<String>,
    max_drift_ms: Option<u64>,
    max_wait_ms: Option<u64>,
    on_rollback: Option<String>,
    strict_monotonic: Option<bool>,
    lease_ttl_ms: Option<u64>,
}

fn arg<'a>(env: &Env, value: &Option<Unknown<'a>>, name: &'static str) -> Option<Arg> {
    let a = Arg {
        env: env.raw(),
        value: value.as_ref()?.raw(),
        name,
    };
    (!a.is_nullish()).then_some(a)
}

/// The option names as JavaScript spells them (the fields of `GeneratorOptions`).
const KNOWN: [&str; 10] = [
    "workerId",
    "layout",
    "namespace",
    "stateDir",
    "backend",
    "maxDriftMs",
    "maxWaitMs",
    "onRollback",
    "strictMonotonic",
    "leaseTtlMs",
];

impl Options {
    /// The options argument: left out, `undefined` or `null` is no options; anything but a
    /// plain object, or an object with a key that is no option, is a `TypeError` saying so.
    pub fn from_js(env: &Env, options: Option<Unknown>) -> Result<Options> {
        let Some(value) = options else {
            return Ok(Options::default());
        };
        let a = Arg {
            env: env.raw(),
            value: value.raw(),
            name: "options",
        };
        if a.is_nullish() {
            return Ok(Options::default());
        }
        check_shape(env, a)?;
        check_keys(a)?;
        // SAFETY: the current call's env and value (an object, checked by check_shape).
        let o = unsafe { GeneratorOptions::from_napi_value(env.raw(), a.value) }?;
        let string = |v, n| arg(env, v, n).map(|a| a.string()).transpose();
        Ok(Options {
            worker_id: arg(env, &o.worker_id, "options.workerId")
                .map(|a| a.count())
                .transpose()?,
            layout: arg(env, &o.layout, "options.layout")
                .map(|a| layout_arg(env, a))
                .transpose()?,
            namespace: string(&o.namespace, "options.namespace")?,
            state_dir: string(&o.state_dir, "options.stateDir")?,
            backend: string(&o.backend, "options.backend")?,
            max_drift_ms: arg(env, &o.max_drift_ms, "options.maxDriftMs")
                .map(|a| a.count())
                .transpose()?,
            max_wait_ms: arg(env, &o.max_wait_ms, "options.maxWaitMs")
                .map(|a| a.count())
                .transpose()?,
            on_rollback: string(&o.on_rollback, "options.onRollback")?,
            strict_monotonic: arg(env, &o.strict_monotonic, "options.strictMonotonic")
                .map(|a| a.boolean())
                .transpose()?,
            lease_ttl_ms: arg(env, &o.lease_ttl_ms, "options.leaseTtlMs")
                .map(|a| a.count())
                .transpose()?,
        })
    }

    /// The core generator these options describe, and the warnings the core gave while
    /// building it (to be shown with `process.emitWarning` on this thread).
    pub fn build(&self) -> rimeflake::Result<(rimeflake::Generator, Vec<Warning>)> {
        let seen: Arc<Mutex<Vec<Warning>>> = Arc::default();
        let sink = seen.clone();
        let mut b = rimeflake::Generator::builder().on_warning(move |w| {
            sink.lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(w.clone())
        });
        b = b.frontend(Frontend::Node);
        if let Some(l) = &self.layout {
            b = b.layout(l.clone());
        }
        if let Some(id) = self.worker_id {
            b = b.worker_id(id);
        }
        if let Some(ns) = &self.namespace {
            b = b.namespace(ns.as_str());
        }
        if let Some(ms) = self.max_drift_ms {
            b = b.max_drift(Duration::from_millis(ms));
        }
        if let Some(ms) = self.max_wait_ms {
            b = b.max_wait(Duration::from_millis(ms));
        }
        if let Some(name) = &self.on_rollback {
            b = b.rollback_policy(Frontend::Node.rollback_policy(name)?);
        }
        if let Some(strict) = self.strict_monotonic {
            b = b.strict_monotonic(strict);
        }
        if let Some(ms) = self.lease_ttl_ms {
            b = b.lease_ttl(Duration::from_millis(ms));
        }
        if let Some(backend) = &self.backend {
            b = b.backend(Backend::parse(backend)?);
        }
        if let Some(dir) = &self.state_dir {
            b = b.state_dir(dir);
        }
        let core = b.build()?;
        let warnings = std::mem::take(&mut *seen.lock().unwrap_or_else(|e| e.into_inner()));
        Ok((core, warnings))
    }
}

/// A layout option: a string (preset name or layout spec, parsed by the core) or a `Layout`.
pub fn layout_arg(env: &Env, a: Arg) -> Result<rimeflake::Layout> {
    match a.kind() {
        sys::ValueType::napi_string => {
            let text = a.string()?;
            crate::layout::parse(&text).map_err(|e| throw(env.raw(), &e))
        }
        // SAFETY: the current call's env and value.
        sys::ValueType::napi_object => match unsafe { Layout::unwrap(env.raw(), a.value) } {
            Some(l) => Ok(l.0.clone()),
            None => Err(a.wrong_type("a string or a Layout")),
        },
        _ => Err(a.wrong_type("a string or a Layout")),
    }
}

/// A plain object: a string, a number, an array or a `Layout` in its place is a `TypeError`
/// that shows the object it should have been.
fn check_shape(env: &Env, a: Arg) -> Result<()> {
    const EXAMPLE: &str = "options must be an object such as { layout: 'twitter', workerId: 1 }";
    match a.kind() {
        sys::ValueType::napi_object => {}
        sys::ValueType::napi_string => {
            // `new Generator('twitter')`: most likely a layout meant as `{ layout: ... }`.
            let text: String = a.string()?.chars().take(80).collect();
            let text = text.replace('\\', "\\\\").replace('\'', "\\'");
            return Err(type_error(
                a.env,
                &format!(
                    "{EXAMPLE}, not a string: for the layout '{text}', pass {{ layout: '{text}' }}"
                ),
            ));
        }
        _ => return Err(a.wrong_type("an object such as { layout: 'twitter', workerId: 1 }")),
    }
    let mut is_array = false;
    // SAFETY: the current call's env and value; `is_array` is a local.
    unsafe { sys::napi_is_array(a.env, a.value, &mut is_array) };
    if is_array {
        return Err(type_error(a.env, &format!("{EXAMPLE}, not an array")));
    }
    // SAFETY: the current call's env and value.
    if unsafe { Layout::unwrap(env.raw(), a.value) }.is_some() {
        return Err(type_error(
            a.env,
            &format!("{EXAMPLE}, not a Layout: pass {{ layout: theLayout }}"),
        ));
    }
    Ok(())
}

/// Every own enumerable key of the options object is an option; an unknown one is a
/// `TypeError` naming it and the nearest option (a misspelt option would otherwise be ignored).
fn check_keys(a: Arg) -> Result<()> {
    let mut keys = std::ptr::null_mut();
    let mut len = 0u32;
    // SAFETY: the current call's env and value (an object, checked by check_shape); `keys`
    // and `len` are locals, `keys` an array of this call once the first call succeeded.
    unsafe {
        napi::check_status!(sys::napi_get_all_property_names(
            a.env,
            a.value,
            sys::KeyCollectionMode::own_only,
            sys::KeyFilter::enumerable | sys::KeyFilter::skip_symbols,
            sys::KeyConversion::numbers_to_strings,
            &mut keys,
        ))?;
        napi::check_status!(sys::napi_get_array_length(a.env, keys, &mut len))?;
    }
    for i in 0..len {
        let mut key = std::ptr::null_mut();
        // SAFETY: the current call's env and the array of keys above; `key` is a local.
        unsafe { napi::check_status!(sys::napi_get_element(a.env, keys, i, &mut key))? };
        let name = Arg {
            env: a.env,
            value: key,
            name: "options key",
        }
        .string()?;
        if !KNOWN.contains(&name.as_str()) {
            return Err(type_error(a.env, &unknown_option(&name)));
        }
    }
    Ok(())
}

/// The message for an unknown option key: the nearest option when one is near (a different
/// case, a snake_case spelling or a typo or two), else the list of options.
fn unknown_option(key: &str) -> String {
    let fold = |s: &str| s.replace(['_', '-'], "").to_lowercase();
    let nearest = KNOWN
        .iter()
        .map(|k| (edit_distance(&fold(key), &fold(k)), *k))
        .min()
        .filter(|(d, k)| *d <= 2.max(k.len() / 4));
    match nearest {
        Some((_, k)) => format!("options: unknown option '{key}'; did you mean '{k}'?"),
        None => format!(
            "options: unknown option '{key}'; the options are {}",
            KNOWN.join(", ")
        ),
    }
}

/// Levenshtein distance, by characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (row[j + 1] + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}
