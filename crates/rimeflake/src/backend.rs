//! [`Backend`]: where worker IDs and their state live, named by one string that every front end
//! passes through ([`Backend::parse`]).

use crate::error::{Error, Result};
use std::fmt;

pub(crate) mod tls;

/// Where a generator keeps its worker lease and durable state.
#[derive(Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Backend {
    /// The embedded default: file leases and state in the state directory.
    Local,
    /// No state at all: **not restart-safe**, needs a fixed worker ID (see
    /// [`Builder::in_memory`](crate::Builder::in_memory)).
    Memory,
    /// Leases and state in Redis: a `redis://` URL (`redis://[[user]:password@]host[:port][/db]`)
    /// or, over TLS, a `rediss://` one (certificate and host name checked; `sslrootcert=PATH`
    /// for a CA of your own, `sslcert=PATH&sslkey=PATH` for a client certificate). Needs the
    /// cargo feature `redis`.
    Redis(String),
    /// Leases and state in PostgreSQL: a `postgresql://` or `postgres://` URL, with libpq's
    /// `sslmode`, `sslrootcert`, `sslcert` and `sslkey` for TLS. Needs the cargo feature
    /// `postgres`.
    Postgres(String),
}

impl Backend {
    /// The backend a string names: `local`, `memory`, a `redis://` or `rediss://` URL or a
    /// `postgresql://` (`postgres://`) URL. A URL whose backend this build lacks is refused,
    /// naming the cargo feature it needs; so is a TLS parameter its backend does not take. The
    /// server is not contacted, and the certificate files named are read only when a generator
    /// connects.
    ///
    /// # Example
    /// ```
    /// use rimeflake::Backend;
    ///
    /// assert_eq!(Backend::parse("memory")?, Backend::Memory);
    /// assert!(Backend::parse("mysql://localhost").is_err());
    /// # Ok::<(), rimeflake::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::Config`](crate::ErrorKind::Config) naming the backend: unknown, or not built
    /// in, or a TLS parameter it cannot take. The message never holds the URL's password.
    pub fn parse(text: &str) -> Result<Backend> {
        let t = text.trim();
        match t {
            "local" => return Ok(Backend::Local),
            "memory" => return Ok(Backend::Memory),
            _ => {}
        }
        let scheme = t.split_once("://").map(|(s, _)| s.to_ascii_lowercase());
        match scheme.as_deref() {
            Some("redis" | "rediss") if cfg!(feature = "redis") => {
                tls::split(t)?;
                Ok(Backend::Redis(t.to_string()))
            }
            Some("postgres" | "postgresql") if cfg!(feature = "postgres") => {
                tls::split(t)?;
                Ok(Backend::Postgres(t.to_string()))
            }
            Some(s @ ("redis" | "rediss" | "postgres" | "postgresql")) => {
                Err(Error::config(format!(
                    "backend: {s}:// needs rimeflake built with the cargo feature \"{}\"",
                    if s.starts_with("redis") {
                        "redis"
                    } else {
                        "postgres"
                    }
                )))
            }
            // The text may hold a password: show only its scheme.
            Some(s) => Err(Error::config(format!(
                "backend: unknown scheme {s}://; {USE}"
            ))),
            // A word (a typo of a name) is shown; other text may be a connection string with a
            // password (`host=db password=...`), and only a leading word of it is shown.
            None if is_word(t) => Err(Error::config(format!("backend: unknown {t:?}; {USE}"))),
            None => {
                let start = match t.split_once(':') {
                    Some((word, _)) if is_word(word) => format!(", starting {word:?}:"),
                    _ => String::new(),
                };
                Err(Error::config(format!(
                    "backend: unknown backend{start} (its {} characters are not shown: they may \
                     hold a password); {USE}",
                    t.chars().count()
                )))
            }
        }
    }

    /// The backend's kind: `local`, `memory`, `redis` or `postgres`.
    pub fn name(&self) -> &'static str {
        match self {
            Backend::Local => "local",
            Backend::Memory => "memory",
            Backend::Redis(_) => "redis",
            Backend::Postgres(_) => "postgres",
        }
    }

    /// Whether leases and state live on a server.
    pub fn is_remote(&self) -> bool {
        matches!(self, Backend::Redis(_) | Backend::Postgres(_))
    }

    /// The URL without its password, for messages: `redis://:***@host:6379/0`.
    pub fn redacted(&self) -> String {
        match self {
            Backend::Redis(url) | Backend::Postgres(url) => redact(url),
            other => other.name().to_string(),
        }
    }
}

/// A short word of letters, digits, `_` and `-`: safe to show (no password looks like a typo
/// of a backend's name).
fn is_word(t: &str) -> bool {
    !t.is_empty()
        && t.len() <= 32
        && t.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// What a backend may be, for messages.
const USE: &str = "use \"local\", \"memory\", redis://, rediss://, postgresql:// or postgres://";

/// `url` with the password of its user part replaced by `***`.
///
/// The user part ends at the *last* `@`: a password may hold `/`, `?`, `#` or `@` without
/// percent-encoding, and drivers still take it (PostgreSQL's splits at an `@`). A user part
/// holding `/`, `?` or `#` is hidden whole, so a URL that is not plainly one shows too little
/// rather than a password.
pub(crate) fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let (user, rest) = match rest.rsplit_once('@') {
        Some((user, rest)) => (Some(user), rest),
        None => (None, rest),
    };
    let host_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (host, tail) = rest.split_at(host_end);
    let user = match user {
        None => String::new(),
        Some(u) if u.contains(['/', '?', '#']) => "***@".to_string(),
        Some(u) => match u.split_once(':') {
            Some((name, _)) => format!("{name}:***@"),
            None => format!("{u}@"),
        },
    };
    format!("{scheme}://{user}{host}{}", redact_query(tail))
}

/// A query part with any `password=` value hidden.
fn redact_query(tail: &str) -> String {
    match tail.split_once('?') {
        None => tail.to_string(),
        Some((path, query)) => {
            let q: Vec<String> = query
                .split('&')
                .map(|kv| match kv.split_once('=') {
                    Some((k, _)) if k.eq_ignore_ascii_case("password") => format!("{k}=***"),
                    _ => kv.to_string(),
                })
                .collect();
            format!("{path}?{}", q.join("&"))
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.redacted())
    }
}

impl fmt::Debug for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Backend({})", self.redacted())
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
            "rediss://:pw@h:6380/0?sslrootcert=/ca.pem",
            "postgres://u@h/db?sslmode=verify-full",
            "postgresql://h",
        ] {
            match Backend::parse(url) {
                Ok(b) => {
                    assert!(b.is_remote());
                    assert_eq!(b.redacted(), url.replace(":pw@", ":***@"));
                }
                Err(e) => {
                    assert_eq!(e.kind(), ErrorKind::Config);
                    assert!(e.message().contains("cargo feature"), "{e}");
                }
            }
        }
        let e = Backend::parse("rediss://:pw@h?sslmode=require").unwrap_err();
        assert!(
            e.message().contains("sslmode") && !e.message().contains("pw"),
            "{e}"
        );
        let e = Backend::parse("mysql://user:secret@h").unwrap_err();
        assert!(!e.message().contains("secret"), "{e}");
        assert!(Backend::parse("Local").is_err());
        assert!(Backend::parse("").is_err());
    }

    #[test]
    fn passwords_never_show() {
        for (url, shown) in [
            ("redis://:s3cret@h:1/0", "redis://:***@h:1/0"),
            ("redis://user:s3cret@h", "redis://user:***@h"),
            (
                "postgresql://u:p%40ss@h:5432/db?sslmode=disable&password=x",
                "postgresql://u:***@h:5432/db?sslmode=disable&password=***",
            ),
            ("postgres://u@h/db", "postgres://u@h/db"),
            ("redis://h", "redis://h"),
            // Unencoded `/`, `?`, `#`, `@` in a password: the user part ends at the last `@`.
            ("postgresql://app:s3/cret@db/app", "postgresql://***@db/app"),
            ("redis://:s3?cret@h:1", "redis://***@h:1"),
            ("redis://:s3#cret@h", "redis://***@h"),
            ("postgresql://u:s3@cret@h/db", "postgresql://u:***@h/db"),
            (
                "postgresql://u:s3cret@h/db?application_name=a@b",
                "postgresql://***@b",
            ),
        ] {
            assert_eq!(redact(url), shown);
            let b = Backend::Redis(url.into());
            assert!(!format!("{b} {b:?}").contains("s3cret"));
            assert!(!format!("{b}").contains("cret"), "{b}");
        }
    }

    #[test]
    fn an_unknown_backend_is_shown_only_when_it_is_a_word() {
        let msg = |t: &str| Backend::parse(t).unwrap_err().to_string();
        assert!(msg("memroy").contains("\"memroy\""), "{}", msg("memroy"));
        for secret in [
            "host=db user=app password=s3cret",
            "redis:/:s3cret@h",
            "s3cret-but-far-too-long-to-be-a-name-of-a-backend",
        ] {
            let m = msg(secret);
            assert!(!m.contains("s3cret"), "{m}");
            assert!(m.contains("not shown"), "{m}");
        }
        assert!(msg("redis:/:s3cret@h").contains("starting \"redis\":"));
        assert!(msg("mysql://u:s3cret@h").contains("mysql://"));
        assert!(!msg("mysql://u:s3cret@h").contains("s3cret"));
    }
}
