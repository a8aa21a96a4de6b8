//! The keyword arguments of `Generator(...)`, read by the core's table of settings: each name is
//! a row's Python spelling, each value read by the row's kind and handed to the core
//! (`Builder::set`), so a setting added to the core needs nothing here. A name no row has is a
//! `TypeError` with the core's "did you mean".

use crate::errors::Result;
use crate::{args, layout};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyString};
use rimeflake::frontend::{Setting, SettingKind, SettingValue, SETTINGS};
use rimeflake::{Builder, Frontend};

/// `builder` with the worker ID and the keyword arguments given (`None` is left out).
pub fn apply(
    mut builder: Builder,
    worker_id: Option<&Bound<'_, PyAny>>,
    options: Option<&Bound<'_, PyDict>>,
) -> Result<Builder> {
    if let Some(options) = options {
        for key in options.keys() {
            let name = key.cast::<PyString>().map_err(PyErr::from)?.to_cow()?;
            if Frontend::Python.find_setting(&name).is_none() {
                return Err(PyTypeError::new_err(Frontend::Python.unknown_setting(&name)).into());
            }
        }
    }
    for row in SETTINGS {
        let value = match row.setting {
            Setting::WorkerId => worker_id.cloned(),
            _ => match options {
                Some(o) => o.get_item(row.python)?,
                None => None,
            },
        };
        match value {
            Some(v) if !v.is_none() => {
                builder = builder.set(row.setting, read(row.python, row.kind, &v)?)?;
            }
            _ => {}
        }
    }
    Ok(builder)
}

/// `value` as the core takes a setting of `kind`; a `TypeError` naming the argument for a value
/// of the wrong type, a `ConfigError` for a number out of range.
fn read(name: &str, kind: SettingKind, value: &Bound<'_, PyAny>) -> Result<SettingValue> {
    let wrong = |what: &str| -> Result<SettingValue> {
        Err(PyTypeError::new_err(format!(
            "{name} must be {what}, not {}",
            value.get_type().name()?
        ))
        .into())
    };
    Ok(match kind {
        SettingKind::WorkerId | SettingKind::Millis => {
            SettingValue::Number(args::option(name, value, u64::MAX)?)
        }
        SettingKind::Layout => SettingValue::Layout(layout::from_arg(value)?),
        SettingKind::Flag => match value.cast::<PyBool>() {
            Ok(b) => SettingValue::Flag(b.is_true()),
            Err(_) => return wrong("a bool"),
        },
        SettingKind::Path => match value.extract::<std::path::PathBuf>() {
            Ok(path) => SettingValue::Path(path),
            Err(_) => return wrong("a str or an os.PathLike"),
        },
        _ => match value.cast::<PyString>() {
            Ok(text) => SettingValue::Text(text.to_cow()?.into_owned()),
            Err(_) => return wrong("a str"),
        },
    })
}
