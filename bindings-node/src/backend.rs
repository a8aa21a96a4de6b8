//! The backend option. Until the core parses backend strings (`rimeflake::Backend::parse`, on
//! its way from issue 9), the two backends the core has are chosen here.

use rimeflake::{Builder, Error, ErrorKind};

pub fn apply(b: Builder, backend: &str) -> rimeflake::Result<Builder> {
    match backend {
        "local" => Ok(b),
        "memory" => Ok(b.in_memory()),
        other => Err(Error::new(
            ErrorKind::Config,
            format!("backend: unknown {other:?}; use 'local' (the default) or 'memory'"),
        )),
    }
}
