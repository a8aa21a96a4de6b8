//! [`Backend`]: where worker IDs and their state live, named by one string that every front end
//! passes through ([`Backend::parse`]).

use crate::error::{Error, Result};
use crate::state::StateStore;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

#[cfg(feature = "mysql")]
pub(crate) mod mysql_url;
pub(crate) mod sentinel;
pub(crate) mod tls;
#[cfg(feature = "zookeeper")]
pub(crate) mod zookeeper_url;

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
    /// for a CA of your own, `sslcert=PATH&sslkey=PATH` for a client certificate); or a
    /// primary found through Redis Sentinel,
    /// `redis+sentinel://[[user]:password@]host[:port][,host[:port]...]/service[/db]` (the
    /// Sentinels, the primary's name; `sentinel_password=` for the Sentinels' own password;
    /// `rediss+sentinel://` for TLS). Needs the cargo feature `redis`.
    Redis(String),
    /// Leases and state in PostgreSQL: a `postgresql://` or `postgres://` URL, with libpq's
    /// `sslmode`, `sslrootcert`, `sslcert` and `sslkey` for TLS. Needs the cargo feature
    /// `postgres`.
    Postgres(String),
    /// Leases and state in MySQL or MariaDB: a `mysql://` or `mariadb://` URL
    /// (`mysql://user:password@host:port/database`), with MySQL's `ssl-mode`, `ssl-ca`,
    /// `ssl-cert` and `ssl-key` for TLS. Needs the cargo feature `mysql`.
    Mysql(String),
    /// Leases and state in a ZooKeeper ensemble: a `zookeeper://host:port[,host:port...]/chroot`
    /// URL (`user:password@` for digest authentication). Needs the cargo feature `zookeeper`.
    ZooKeeper(String),
}

impl Backend {
    /// The backend a string names: `local`, `memory`, a `redis://`, `rediss://`,
    /// `redis+sentinel://` or `rediss+sentinel://` URL, a `postgresql://` (`postgres://`) URL, a
    /// `mysql://` (`mariadb://`) URL or a `zookeeper://` URL. A URL whose backend this build lacks
    /// is refused,
    /// naming the cargo feature it needs; so is a TLS parameter its backend does not take. The
    /// server is not contacted, and the certificate files named are read only when a generator
    /// connects.
    ///
    /// # Example
    /// ```
    /// use rimeflake::Backend;
    ///
    /// assert_eq!(Backend::parse("memory")?, Backend::Memory);
    /// assert!(Backend::parse("mongodb://localhost").is_err());
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
            Some("redis+sentinel" | "rediss+sentinel") if cfg!(feature = "redis") => {
                tls::split(&sentinel::parse(t)?.primary)?;
                Ok(Backend::Redis(t.to_string()))
            }
            Some("postgres" | "postgresql") if cfg!(feature = "postgres") => {
                tls::split(t)?;
                Ok(Backend::Postgres(t.to_string()))
            }
            #[cfg(feature = "mysql")]
            Some("mysql" | "mariadb") => {
                mysql_url::MysqlUrl::parse(t)?;
                Ok(Backend::Mysql(t.to_string()))
            }
            #[cfg(feature = "zookeeper")]
            Some("zookeeper") => {
                zookeeper_url::ZkUrl::parse(t)?;
                Ok(Backend::ZooKeeper(t.to_string()))
            }
            // The arms above take what this build has.
            #[allow(unreachable_patterns)]
            Some(
                s @ ("redis" | "rediss" | "redis+sentinel" | "rediss+sentinel" | "postgres"
                | "postgresql" | "mysql" | "mariadb" | "zookeeper"),
            ) => Err(Error::config(format!(
                "backend: {s}:// needs rimeflake built with the cargo feature \"{}\"",
                match s {
                    "postgres" | "postgresql" => "postgres",
                    "zookeeper" => "zookeeper",
                    "mysql" | "mariadb" => "mysql",
                    _ => "redis",
                }
            ))),
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

    /// The backend's kind: `local`, `memory`, `redis`, `postgres`, `mysql` or `zookeeper`.
    pub fn name(&self) -> &'static str {
        match self {
            Backend::Local => "local",
            Backend::Memory => "memory",
            Backend::Redis(_) => "redis",
            Backend::Postgres(_) => "postgres",
            Backend::Mysql(_) => "mysql",
            Backend::ZooKeeper(_) => "zookeeper",
        }
    }

    /// Whether leases and state live on a server.
    pub fn is_remote(&self) -> bool {
        self.url().is_some()
    }

    /// The URL without its password, for messages: `redis://:***@host:6379/0`.
    pub fn redacted(&self) -> String {
        match self.url() {
            Some(url) => redact(url),
            None => self.name().to_string(),
        }
    }

    /// The URL of a server backend.
    fn url(&self) -> Option<&str> {
        match self {
            Backend::Redis(url)
            | Backend::Postgres(url)
            | Backend::Mysql(url)
            | Backend::ZooKeeper(url) => Some(url),
            Backend::Local | Backend::Memory => None,
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
const USE: &str = "use \"local\", \"memory\", redis://, rediss://, redis+sentinel://, \
                   rediss+sentinel://, postgresql://, postgres://, mysql://, mariadb:// or \
                   zookeeper://";

/// `url` as its driver reads it, for messages: built from the driver's own parse of the URL
/// (its decoded user, hosts, ports and database, and rimeflake's TLS parameters), never from
/// the URL's text, so a password reaches no message in whatever form the driver takes it
/// (percent-encoded, in the user part or as a `password=` parameter, whose key may itself be
/// percent-encoded). A password shows as `***`; the driver's other parameters are left out. A
/// host or database holding `@` (the rest of a password with an unencoded `@`) is shown as
/// `***`. A URL the driver cannot read, or whose driver this build lacks, is shown by
/// [`redact_text`].
pub(crate) fn redact(url: &str) -> String {
    if sentinel::is_sentinel(url) {
        return match sentinel::parse(url) {
            Ok(u) => sentinel::shown(&u, &redact(&u.primary)),
            Err(_) => redact_text("redis+sentinel", url),
        };
    }
    let scheme = match url.split_once("://") {
        Some((s, _)) if is_word(s) => s.to_ascii_lowercase(),
        _ => "backend".to_string(),
    };
    let parsed = match scheme.as_str() {
        #[cfg(feature = "mysql")]
        "mysql" | "mariadb" => mysql_url::MysqlUrl::parse(url)
            .ok()
            .map(|(u, tls)| u.shown(&tls)),
        #[cfg(feature = "zookeeper")]
        "zookeeper" => zookeeper_url::ZkUrl::parse(url).ok().map(|u| u.shown()),
        _ => None,
    };
    let parsed = parsed.or_else(|| {
        tls::split(url)
            .ok()
            .and_then(|(driver_url, tls)| match scheme.as_str() {
                #[cfg(feature = "redis")]
                "redis" | "rediss" => shown::redis(&driver_url, &tls),
                #[cfg(feature = "postgres")]
                "postgres" | "postgresql" => shown::postgres(&scheme, &driver_url, &tls),
                _ => {
                    let _ = (driver_url, tls);
                    None
                }
            })
    });
    parsed.unwrap_or_else(|| redact_text(&scheme, url))
}

/// A URL no driver read, for messages (to show where a typo is): its host and path with the
/// user part's password hidden, and no query or fragment (a parameter may be a password, under
/// a key in any encoding). The user part ends at the *last* `@`, and one holding `/`, `?` or `#`
/// is hidden whole, so a URL that is not plainly one shows too little rather than a password.
fn redact_text(scheme: &str, url: &str) -> String {
    let Some((_, rest)) = url.split_once("://") else {
        return format!("{scheme}://(not shown)");
    };
    let (user, rest) = match rest.rsplit_once('@') {
        Some((user, rest)) => (Some(user), rest),
        None => (None, rest),
    };
    let end = rest.find(['?', '#']).unwrap_or(rest.len());
    let (head, tail) = rest.split_at(end);
    let user = match user {
        None => String::new(),
        Some(u) if u.contains(['/', '?', '#']) => "***@".to_string(),
        Some(u) => match u.split_once(':') {
            Some((name, _)) => format!("{name}:***@"),
            None => format!("{u}@"),
        },
    };
    let dropped = if tail.is_empty() {
        ""
    } else {
        "?(parameters not shown)"
    };
    format!("{scheme}://{user}{head}{dropped}")
}

/// The parts of [`redact`] that need a driver.
mod shown {
    #[allow(unused_imports)]
    use super::tls::{Roots, SslMode, Tls};

    /// A host or database name as shown: `***` when it holds an `@`.
    #[allow(dead_code)]
    fn part(text: &str) -> &str {
        if text.contains('@') {
            "***"
        } else {
            text
        }
    }

    /// The user part: `user@`, `user:***@`, `:***@` or nothing.
    #[allow(dead_code)]
    fn creds(user: Option<&str>, has_password: bool) -> String {
        let user = user.map_or("", part);
        match (user.is_empty(), has_password) {
            (true, false) => String::new(),
            (_, true) => format!("{user}:***@"),
            (false, false) => format!("{user}@"),
        }
    }

    /// rimeflake's TLS parameters as a query (`sslmode` only when not the default).
    #[allow(dead_code)]
    fn query(tls: &Tls, postgres: bool) -> String {
        let mut q = Vec::new();
        if postgres {
            let mode = match tls.mode {
                SslMode::Disable => Some("disable"),
                SslMode::Prefer => None,
                SslMode::Require => Some("require"),
                SslMode::VerifyCa => Some("verify-ca"),
                SslMode::VerifyFull => Some("verify-full"),
            };
            q.extend(mode.map(|m| format!("sslmode={m}")));
        }
        match &tls.roots {
            Some(Roots::System) => q.push("sslrootcert=system".into()),
            Some(Roots::File(p)) => q.push(format!("sslrootcert={}", p.display())),
            None => {}
        }
        if let Some((cert, key)) = &tls.client {
            q.push(format!(
                "sslcert={}&sslkey={}",
                cert.display(),
                key.display()
            ));
        }
        if q.is_empty() {
            String::new()
        } else {
            format!("?{}", q.join("&"))
        }
    }

    #[cfg(feature = "redis")]
    pub(super) fn redis(url: &str, tls: &Tls) -> Option<String> {
        use redis::{ConnectionAddr, IntoConnectionInfo};
        let info = url.into_connection_info().ok()?;
        let (scheme, host, port) = match &info.addr {
            ConnectionAddr::Tcp(host, port) => ("redis", host, port),
            ConnectionAddr::TcpTls { host, port, .. } => ("rediss", host, port),
            _ => return None,
        };
        let host = match part(host) {
            h if h.contains(':') => format!("[{h}]"),
            h => h.to_string(),
        };
        let password = info
            .redis
            .password
            .as_deref()
            .is_some_and(|p| !p.is_empty());
        Some(format!(
            "{scheme}://{}{host}:{port}/{}{}",
            creds(info.redis.username.as_deref(), password),
            info.redis.db,
            query(tls, false)
        ))
    }

    #[cfg(feature = "postgres")]
    pub(super) fn postgres(scheme: &str, url: &str, tls: &Tls) -> Option<String> {
        use tokio_postgres::config::Host;
        let config: tokio_postgres::Config = url.parse().ok()?;
        let ports = config.get_ports();
        let hosts: Vec<String> = config
            .get_hosts()
            .iter()
            .enumerate()
            .map(|(i, host)| {
                let host = match host {
                    Host::Tcp(h) if h.contains(':') => format!("[{}]", part(h)),
                    Host::Tcp(h) => part(h).to_string(),
                    Host::Unix(path) => part(&path.display().to_string()).replace('/', "%2F"),
                };
                match ports.get(i).or(ports.first()) {
                    Some(port) => format!("{host}:{port}"),
                    None => host,
                }
            })
            .collect();
        let password = config.get_password().is_some_and(|p| !p.is_empty());
        let db = config
            .get_dbname()
            .map_or(String::new(), |d| format!("/{}", part(d)));
        Some(format!(
            "{scheme}://{}{}{db}{}",
            creds(config.get_user(), password),
            hosts.join(","),
            query(tls, true)
        ))
    }
}

/// Where a generator keeps its durable state: a [`Backend`] as `settings` resolves it, its
/// variants named as the backend's (a local backend with its directory, memory, a server), or a
/// caller's own store, which no backend names.
#[derive(Clone, Debug)]
pub(crate) enum Storage {
    /// [`Backend::Local`]: in this state directory (docs/configuration.md, `RIMEFLAKE_STATE_DIR`).
    Local(PathBuf),
    /// [`Backend::Memory`]: nowhere; not restart-safe, asked for explicitly.
    Memory,
    /// [`Backend::Redis`] or [`Backend::Postgres`]: on a server, with the worker ID leased there.
    Remote(Backend),
    /// In a store the caller provides, for a fixed worker ID it has already made exclusive.
    Caller(Arc<dyn StateStore>),
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
        for (url, shown) in [
            ("redis://h:6379/0", "redis://h:6379/0"),
            (
                "rediss://:pw@h:6380/0?sslrootcert=/ca.pem",
                "rediss://:***@h:6380/0?sslrootcert=/ca.pem",
            ),
            (
                "postgres://u@h/db?sslmode=verify-full",
                "postgres://u@h:5432/db?sslmode=verify-full",
            ),
            ("postgresql://h", "postgresql://h:5432"),
        ] {
            match Backend::parse(url) {
                Ok(b) => {
                    assert!(b.is_remote());
                    assert_eq!(b.redacted(), shown);
                }
                Err(e) => {
                    assert_eq!(e.kind(), ErrorKind::Config);
                    assert!(e.message().contains("cargo feature"), "{e}");
                }
            }
        }
        // Refused for its sslmode with the redis feature, for the missing feature without it.
        let e = Backend::parse("rediss://:pw@h?sslmode=require").unwrap_err();
        let why = if cfg!(feature = "redis") {
            "sslmode"
        } else {
            "cargo feature"
        };
        assert!(
            e.message().contains(why) && !e.message().contains("pw"),
            "{e}"
        );
        let e = Backend::parse("mysql://user:secret@h").unwrap_err();
        assert!(!e.message().contains("secret"), "{e}");
        assert!(Backend::parse("Local").is_err());
        assert!(Backend::parse("").is_err());
    }

    /// Every form in which a driver takes a password: the text shown is built from what the
    /// driver parsed, and holds none of it.
    #[cfg(all(feature = "redis", feature = "postgres"))]
    #[test]
    fn passwords_never_show() {
        for (url, shown) in [
            ("redis://:s3cret@h:1/0", "redis://:***@h:1/0"),
            ("redis://user:s3cret@h", "redis://user:***@h:6379/0"),
            ("redis://:%73%33%63%72%65%74@h:1/2", "redis://:***@h:1/2"),
            ("redis://u%73er:s3cret@h:1", "redis://user:***@h:1/0"),
            (
                "postgresql://u:p%40ss@h:5432/db?sslmode=disable&password=x",
                "postgresql://u:***@h:5432/db?sslmode=disable",
            ),
            (
                "postgresql://postgres@h:1/db?sslmode=disable&pass%77ord=s3cret",
                "postgresql://postgres:***@h:1/db?sslmode=disable",
            ),
            (
                "postgresql://postgres@h:1/db?%70assword=%73%33cret",
                "postgresql://postgres:***@h:1/db",
            ),
            (
                "postgresql://h/db?user=u&password=s3cret&host=h2&port=7",
                "postgresql://u:***@h:5432,h2:7/db",
            ),
            ("postgres://u@h/db", "postgres://u@h:5432/db"),
            ("redis://h", "redis://h:6379/0"),
            // Unencoded `/`, `?`, `#`, `@` in a password: what the driver makes of it.
            (
                "postgresql://app:s3/cret@db/app",
                "postgresql://app:***@db:5432/app",
            ),
            ("redis://:s3?cret@h:1", "redis://***@h:1"),
            ("redis://:s3#cret@h", "redis://***@h"),
            (
                "postgresql://u:s3@cret@h/db",
                "postgresql://u:***@***:5432/db",
            ),
            (
                "postgresql://u:s3@cr/et@h",
                "postgresql://u:***@cr:5432/***",
            ),
            (
                "postgresql://u:s3cret@h/db?application_name=a@b",
                "postgresql://u:***@h:5432/db",
            ),
            (
                "postgresql://u:s3cret@h/db?port=x&password=s3cret",
                "postgresql://u:***@h/db?(parameters not shown)",
            ),
            ("redis://:s3cret@h:port/0", "redis://:***@h:port/0"),
        ] {
            assert_eq!(redact(url), shown, "{url}");
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
