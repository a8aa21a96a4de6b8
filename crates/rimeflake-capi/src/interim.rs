//! INTERIM, removed when branch wt/usability (issue 9) is merged: stand-ins for the core's
//! `Layout::from_spec`, `Backend::parse`, `Builder::backend` and `Builder::on_warning`, so the
//! rest of the crate builds and is tested meanwhile. Presets only; warnings are dropped.

use core_rimeflake::{Builder, Error, Layout, Result};

pub(crate) trait LayoutSpec: Sized {
    fn from_spec(spec: &str) -> Result<Self>;
}

impl LayoutSpec for Layout {
    fn from_spec(spec: &str) -> Result<Self> {
        match spec.strip_prefix("baidu,epoch_ms=") {
            Some(ms) => Layout::baidu(ms.parse().map_err(|_| {
                Error::new(core_rimeflake::ErrorKind::Config, "epoch_ms: not a number")
            })?),
            None => Layout::preset(spec),
        }
    }
}

pub(crate) enum Backend {
    Local,
    Memory,
}

impl Backend {
    pub(crate) fn parse(s: &str) -> Result<Self> {
        match s {
            "local" => Ok(Backend::Local),
            "memory" => Ok(Backend::Memory),
            other => Err(Error::new(
                core_rimeflake::ErrorKind::Config,
                format!("backend: {other:?} is not available"),
            )),
        }
    }
}

pub(crate) trait BuilderExt: Sized {
    fn backend(self, backend: Backend) -> Self;
    fn on_warning(self, f: impl Fn(&Warning) + Send + Sync + 'static) -> Self;
}

impl BuilderExt for Builder {
    fn backend(self, backend: Backend) -> Self {
        match backend {
            Backend::Local => self,
            Backend::Memory => self.in_memory(),
        }
    }
    fn on_warning(self, _f: impl Fn(&Warning) + Send + Sync + 'static) -> Self {
        self
    }
}

pub(crate) struct Warning;

impl Warning {
    pub(crate) fn kind(&self) -> &str {
        ""
    }
    pub(crate) fn message(&self) -> &str {
        ""
    }
}
