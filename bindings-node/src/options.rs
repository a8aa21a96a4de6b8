//! The options of `new Generator(options)` and `Generator.shared(options)`, read by the core's
//! table of settings: each key is a row's Node spelling, each value read by the row's kind and
//! handed to the core (`Builder::set`), so a setting added to the core needs nothing here. A key
//! no row has is a `TypeError` with the core's "did you mean"; everything left out is resolved
//! by the core (environment, defaults) when the generator is built.

use crate::args::Arg;
use crate::errors::type_error;
use crate::layout::{layout_arg, Layout};
use napi::bindgen_prelude::{Array, FromNapiValue, JsObjectValue, KeyCollectionMode};
use napi::bindgen_prelude::{KeyConversion, KeyFilter};
use napi::{Env, JsValue, Result, Unknown, ValueType};
use rimeflake::frontend::{Setting, SettingKind, SettingValue, SETTINGS};
use rimeflake::{Frontend, Warning};
use std::sync::{Arc, Mutex};

/// The options, checked: each setting given and its value, in the table's order (whatever the
/// order of the object's keys). Its `Debug` form is the key of `Generator.shared`.
#[derive(Debug, Default)]
pub struct Options {
    given: Vec<(Setting, SettingValue)>,
}

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
        check_shape(&a)?;
        let object = a.object()?;
        check_keys(&a, &object)?;
        let mut given = Vec::new();
        for row in SETTINGS {
            let Some(v) = object.get::<Unknown>(row.node)? else {
                continue;
            };
            let name = format!("options.{}", row.node);
            let a = Arg {
                env: env.raw(),
                value: v.raw(),
                name: &name,
            };
            if a.is_nullish() {
                continue;
            }
            let value = match row.kind {
                SettingKind::WorkerId | SettingKind::Millis => SettingValue::Number(a.count()?),
                SettingKind::Layout => SettingValue::Layout(layout_arg(env, a)?),
                SettingKind::Flag => SettingValue::Flag(a.boolean()?),
                _ => SettingValue::Text(a.string()?),
            };
            given.push((row.setting, value));
        }
        Ok(Options { given })
    }

    /// The core generator these options describe, and the warnings the core gave while
    /// building it (to be shown with `process.emitWarning` on this thread).
    pub fn build(&self) -> rimeflake::Result<(rimeflake::Generator, Vec<Warning>)> {
        let seen: Arc<Mutex<Vec<Warning>>> = Arc::default();
        let sink = seen.clone();
        let mut b = rimeflake::Generator::builder()
            .frontend(Frontend::Node)
            .on_warning(move |w| {
                sink.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(w.clone())
            });
        for (setting, value) in &self.given {
            b = b.set(*setting, value.clone())?;
        }
        let core = b.build()?;
        let warnings = std::mem::take(&mut *seen.lock().unwrap_or_else(|e| e.into_inner()));
        Ok((core, warnings))
    }
}

/// A plain object: a string, a number, an array or a `Layout` in its place is a `TypeError`
/// that shows the object it should have been.
fn check_shape(a: &Arg) -> Result<()> {
    const EXAMPLE: &str = "options must be an object such as { layout: 'twitter', workerId: 1 }";
    match a.kind() {
        ValueType::Object => {}
        ValueType::String => {
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
    if a.unknown().is_array()? {
        return Err(type_error(a.env, &format!("{EXAMPLE}, not an array")));
    }
    if Layout::core_of(a).is_some() {
        return Err(type_error(
            a.env,
            &format!("{EXAMPLE}, not a Layout: pass {{ layout: theLayout }}"),
        ));
    }
    Ok(())
}

/// Every own enumerable key of the options object is an option; an unknown one is a
/// `TypeError` with the core's message (a misspelt option would otherwise be ignored).
fn check_keys(a: &Arg, object: &napi::bindgen_prelude::Object) -> Result<()> {
    let keys = object.get_all_property_names(
        KeyCollectionMode::OwnOnly,
        KeyFilter::Enumerable,
        KeyConversion::NumbersToStrings,
    )?;
    // SAFETY: the current call's env, and the array napi just returned for it.
    let keys = unsafe { Array::from_napi_value(a.env, keys.raw()) }?;
    for i in 0..keys.len() {
        // Symbol keys are no option's, and no misspelling of one: left alone.
        let Some(key) = keys.get::<Unknown>(i)? else {
            continue;
        };
        if key.get_type()? != ValueType::String {
            continue;
        }
        // SAFETY: the current call's env, and a string (checked above).
        let name = unsafe { key.cast::<String>() }?;
        if Frontend::Node.find_setting(&name).is_none() {
            return Err(type_error(a.env, &Frontend::Node.unknown_setting(&name)));
        }
    }
    Ok(())
}
