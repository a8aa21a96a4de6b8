//! The TLS settings of a backend URL: rimeflake's own query parameters, split off before the URL
//! reaches its driver, with libpq's names and meanings so that a PostgreSQL URL that works with
//! `psql` works here.
//!
//! - `sslmode` (PostgreSQL only): `disable`, `prefer` (the default), `require`, `verify-ca`,
//!   `verify-full`. Redis URLs choose by scheme: `redis://` is plain, `rediss://` is TLS with the
//!   certificate and the host name checked (as `verify-full`), with no weaker mode.
//! - `sslrootcert=PATH`: the CA certificates (PEM) to trust instead of the system's store;
//!   `sslrootcert=system` names the system's store.
//! - `sslcert=PATH` and `sslkey=PATH`: a client certificate and its key (PEM), for servers that
//!   ask for one.

use crate::error::{Error, Result};
use std::path::PathBuf;

/// How much of TLS a connection insists on, as libpq's `sslmode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SslMode {
    /// Plain TCP.
    Disable,
    /// TLS when the server offers it, plain otherwise; the certificate is checked only when
    /// `sslrootcert` is given (and then as `verify-ca`).
    Prefer,
    /// TLS or no connection; the certificate is checked only when `sslrootcert` is given (and
    /// then as `verify-ca`).
    Require,
    /// TLS with a certificate signed by a trusted CA, whatever host name it names.
    VerifyCa,
    /// TLS with a certificate signed by a trusted CA for the host name the URL gives.
    VerifyFull,
}

/// Where the trusted CA certificates come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Roots {
    /// The system's store (`/etc/ssl/certs` and friends).
    System,
    /// A PEM file of one or more certificates.
    File(PathBuf),
}

/// The TLS settings of one backend URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Tls {
    pub(crate) mode: SslMode,
    /// `None`: the system's store for the verifying modes, no check for the others.
    pub(crate) roots: Option<Roots>,
    /// A client certificate and its key.
    pub(crate) client: Option<(PathBuf, PathBuf)>,
    /// How the URL spells the parameters, for messages.
    pub(crate) names: &'static Names,
}

/// How a URL spells the TLS parameters: libpq's names (PostgreSQL, Redis) or MySQL's.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Names {
    pub(crate) rootcert: &'static str,
    pub(crate) cert: &'static str,
    pub(crate) key: &'static str,
    /// The mode that checks the chain and not the host name.
    pub(crate) verify_ca: &'static str,
}

pub(crate) const LIBPQ: Names = Names {
    rootcert: "sslrootcert",
    cert: "sslcert",
    key: "sslkey",
    verify_ca: "sslmode=verify-ca",
};

#[cfg_attr(not(feature = "mysql"), allow(dead_code))]
pub(crate) const MYSQL: Names = Names {
    rootcert: "ssl-ca",
    cert: "ssl-cert",
    key: "ssl-key",
    verify_ca: "ssl-mode=VERIFY_CA",
};

impl Tls {
    /// Whether the server's certificate is checked against trusted CAs.
    #[cfg_attr(not(any(feature = "postgres", feature = "mysql")), allow(dead_code))]
    pub(crate) fn verifies_chain(&self) -> bool {
        match self.mode {
            SslMode::Disable => false,
            SslMode::Prefer | SslMode::Require => self.roots.is_some(),
            SslMode::VerifyCa | SslMode::VerifyFull => true,
        }
    }
}

const PARAMS: [&str; 4] = ["sslmode", "sslrootcert", "sslcert", "sslkey"];

/// `url` without rimeflake's TLS parameters (the URL its driver gets), and the settings they
/// make. `url` starts with `redis://`, `rediss://`, `postgres://` or `postgresql://`.
///
/// # Errors
/// [`ErrorKind::Config`](crate::ErrorKind::Config) for a parameter its backend does not take
/// (`sslmode` on Redis, certificates on plain `redis://`), an unknown `sslmode`, `sslcert`
/// without `sslkey` or the other way round, an empty path, a value that is not valid
/// percent-encoding, and `rediss://…#insecure`. Messages name parameters, never the password.
pub(crate) fn split(url: &str) -> Result<(String, Tls)> {
    let scheme = url
        .split_once("://")
        .map(|(s, _)| s.to_ascii_lowercase())
        .unwrap_or_default();
    let redis = scheme.starts_with("redis");
    let (rest, fragment) = match url.split_once('#') {
        Some((rest, fragment)) => (rest, Some(fragment)),
        None => (url, None),
    };
    if redis && fragment.is_some() {
        return Err(Error::config(
            "backend: a Redis URL takes no #fragment; rediss://…#insecure (no certificate check) \
             is refused: give the CA that signed the server's certificate with sslrootcert=PATH",
        ));
    }
    let (base, query) = rest.split_once('?').unwrap_or((rest, ""));
    let (mut mode, mut roots, mut cert, mut key) = (None, None, None, None);
    let mut kept = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        if !PARAMS.contains(&k) {
            kept.push(pair);
            continue;
        }
        let v = decode(v)
            .ok_or_else(|| Error::config(format!("backend: {k}= is not valid percent-encoding")))?;
        if v.is_empty() {
            return Err(Error::config(format!("backend: {k}= is empty")));
        }
        match k {
            "sslmode" => mode = Some(v),
            "sslrootcert" if v == "system" => roots = Some(Roots::System),
            "sslrootcert" => roots = Some(Roots::File(v.into())),
            "sslcert" => cert = Some(PathBuf::from(v)),
            _ => key = Some(PathBuf::from(v)),
        }
    }
    let client = match (cert, key) {
        (Some(cert), Some(key)) => Some((cert, key)),
        (None, None) => None,
        _ => {
            return Err(Error::config(
                "backend: sslcert= and sslkey= go together (a client certificate and its key)",
            ))
        }
    };
    let mode = if redis {
        if mode.is_some() {
            return Err(Error::config(
                "backend: sslmode= is for PostgreSQL URLs; a Redis URL chooses TLS by its \
                 scheme: rediss:// (certificate and host name checked) or redis:// (plain)",
            ));
        }
        if scheme == "rediss" || scheme == "rediss+sentinel" {
            SslMode::VerifyFull
        } else if roots.is_some() || client.is_some() {
            return Err(Error::config(
                "backend: sslrootcert=, sslcert= and sslkey= need TLS: use rediss://",
            ));
        } else {
            SslMode::Disable
        }
    } else {
        match mode.as_deref() {
            None | Some("prefer") => SslMode::Prefer,
            Some("disable") => SslMode::Disable,
            Some("require") => SslMode::Require,
            Some("verify-ca") => SslMode::VerifyCa,
            Some("verify-full") => SslMode::VerifyFull,
            Some(other) => {
                return Err(Error::config(format!(
                    "backend: sslmode={other} is not one rimeflake takes; use disable, prefer, \
                     require, verify-ca or verify-full"
                )))
            }
        }
    };
    let url = if kept.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    let url = match fragment {
        Some(f) => format!("{url}#{f}"),
        None => url,
    };
    Ok((
        url,
        Tls {
            mode,
            roots,
            client,
            names: &LIBPQ,
        },
    ))
}

/// Percent-decoding of one query value or URL part (`+` stays a `+`, as in a path).
pub(crate) fn decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tls(mode: SslMode, roots: Option<Roots>, client: Option<(&str, &str)>) -> Tls {
        Tls {
            mode,
            roots,
            client: client.map(|(c, k)| (c.into(), k.into())),
            names: &LIBPQ,
        }
    }

    #[test]
    fn parameters_are_split_off_and_the_rest_is_kept() {
        let file = |p: &str| Some(Roots::File(p.into()));
        for (url, driver, want) in [
            (
                "postgresql://u:pw@h/db",
                "postgresql://u:pw@h/db",
                tls(SslMode::Prefer, None, None),
            ),
            (
                "postgres://h/db?sslmode=verify-full&sslrootcert=/etc/ca%20x.pem&application_name=a",
                "postgres://h/db?application_name=a",
                tls(SslMode::VerifyFull, file("/etc/ca x.pem"), None),
            ),
            (
                "postgres://h/db?connect_timeout=2&sslmode=require&sslcert=c.pem&sslkey=k.pem",
                "postgres://h/db?connect_timeout=2",
                tls(SslMode::Require, None, Some(("c.pem", "k.pem"))),
            ),
            (
                "postgres://h?sslmode=verify-ca&sslrootcert=system",
                "postgres://h",
                tls(SslMode::VerifyCa, Some(Roots::System), None),
            ),
            (
                "postgres://h?sslmode=disable",
                "postgres://h",
                tls(SslMode::Disable, None, None),
            ),
            ("redis://:pw@h:1/0", "redis://:pw@h:1/0", tls(SslMode::Disable, None, None)),
            (
                "rediss://:pw@h:1/0?sslrootcert=ca.pem&protocol=resp3",
                "rediss://:pw@h:1/0?protocol=resp3",
                tls(SslMode::VerifyFull, file("ca.pem"), None),
            ),
            (
                "REDISS://h?sslcert=c&sslkey=k",
                "REDISS://h",
                tls(SslMode::VerifyFull, None, Some(("c", "k"))),
            ),
        ] {
            let (got_url, got) = split(url).unwrap();
            assert_eq!(got_url, driver, "{url}");
            assert_eq!(got, want, "{url}");
        }
    }

    #[test]
    fn refusals_name_the_parameter() {
        for (url, says) in [
            ("redis://h?sslmode=require", "sslmode= is for PostgreSQL"),
            (
                "rediss://h?sslmode=verify-full",
                "sslmode= is for PostgreSQL",
            ),
            ("redis://h?sslrootcert=ca.pem", "use rediss://"),
            ("rediss://:pw@h/#insecure", "#insecure"),
            ("postgres://h?sslmode=allow", "sslmode=allow"),
            ("postgres://h?sslmode=VERIFY-FULL", "sslmode=VERIFY-FULL"),
            ("postgres://h?sslcert=c.pem", "go together"),
            ("rediss://h?sslkey=k.pem", "go together"),
            ("postgres://h?sslrootcert=", "sslrootcert= is empty"),
            ("postgres://h?sslrootcert=%zz", "percent-encoding"),
        ] {
            let e = split(url).unwrap_err();
            assert_eq!(e.kind(), crate::ErrorKind::Config);
            assert!(e.message().contains(says), "{url}: {e}");
            assert!(!e.message().contains("pw"), "{e}");
        }
    }

    #[test]
    fn which_modes_check_the_chain() {
        let ca = Some(Roots::File("ca.pem".into()));
        assert!(!tls(SslMode::Disable, ca.clone(), None).verifies_chain());
        assert!(!tls(SslMode::Require, None, None).verifies_chain());
        assert!(tls(SslMode::Require, ca.clone(), None).verifies_chain());
        assert!(tls(SslMode::Prefer, ca, None).verifies_chain());
        assert!(tls(SslMode::VerifyCa, None, None).verifies_chain());
        assert!(tls(SslMode::VerifyFull, None, None).verifies_chain());
    }
}
