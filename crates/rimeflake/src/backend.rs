//! [`Backend`]: where worker IDs and their state live, named by one string that every front end
//! passes through ([`Backend::parse`]).

use crate::error::{Error, Result};
use std::fmt;

/// Where a generator keeps its worker lease and durable state.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Backend {
    /// The embedded default: file leases and state in the state directory.
    Local,
    /// No state at all: **not restart-safe**, needs a fixed worker ID (see
    /// [`Builder::in_memory`](crate::Builder::in_memory)).
    Memory,
}

impl Backend {
    /// The backend a string names: `local` or `memory`. `redis://`, `rediss://`, `postgres://`
    /// and `postgresql://` URLs are recognised and refused until those backends exist.
    ///
    /// # Example
    /// ```
    /// use rimeflake::Backend;
    ///
    /// assert_eq!(Backend::parse("memory")?, Backend::Memory);
    /// assert!(Backend::parse("redis://localhost").is_err());
    /// # Ok::<(), rimeflake::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::Config`](crate::ErrorKind::Config) naming the backend: not available yet,
    /// or unknown.
    pub fn parse(text: &str) -> Result<Backend> {
        let t = text.trim();
        match t {
            "local" => return Ok(Backend::Local),
            "memory" => return Ok(Backend::Memory),
            _ => {}
        }
        let scheme = t.split_once("://").map(|(s, _)| s.to_ascii_lowercase());
        match scheme.as_deref() {
            Some(s @ ("redis" | "rediss" | "postgres" | "postgresql")) => {
                Err(Error::config(format!(
                    "backend: {s}:// is not available yet in this version of rimeflake; use \
                     \"local\" (the state directory) with fixed worker IDs or disjoint worker \
                     ranges across hosts"
                )))
            }
            // The text may hold a password: show only its scheme.
            Some(s) => Err(Error::config(format!(
                "backend: unknown scheme {s}://; use \"local\" or \"memory\""
            ))),
            None => Err(Error::config(format!(
                "backend: unknown {t:?}; use \"local\" or \"memory\""
            ))),
        }
    }

    /// The backend's name, as [`Backend::parse`] reads it.
    pub fn name(&self) -> &'static str {
        match self {
            Backend::Local => "local",
            Backend::Memory => "memory",
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    #[test]
    fn names_and_urls() {
        assert_eq!(Backend::parse("local").unwrap(), Backend::Local);
        assert_eq!(Backend::parse(" memory ").unwrap(), Backend::Memory);
        for b in [Backend::Local, Backend::Memory] {
            assert_eq!(Backend::parse(b.name()).unwrap(), b);
        }
        for url in [
            "redis://h:6379/0",
            "rediss://h",
            "postgres://u@h/db",
            "postgresql://h",
        ] {
            let e = Backend::parse(url).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Config);
            assert!(e.message().contains("not available yet"), "{e}");
        }
        let e = Backend::parse("mysql://user:secret@h").unwrap_err();
        assert!(!e.message().contains("secret"), "{e}");
        assert!(Backend::parse("Local").is_err());
        assert!(Backend::parse("").is_err());
    }
}
