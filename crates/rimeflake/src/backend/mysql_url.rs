//! `mysql://user[:password]@host[:port]/database[?ssl-mode=…&ssl-ca=…&ssl-cert=…&ssl-key=…]`
//! (or `mariadb://`): the user, password and database percent-decoded, the TLS parameters with
//! the names and values of MySQL's own client (`ssl-mode`: `DISABLED`, `PREFERRED` (the
//! default), `REQUIRED`, `VERIFY_CA`, `VERIFY_IDENTITY`).

use super::tls::{decode, Roots, SslMode, Tls, MYSQL};
use crate::error::{Error, Result};
use std::path::PathBuf;

/// The parts of a MySQL URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct MysqlUrl {
    pub(crate) scheme: String,
    pub(crate) user: String,
    pub(crate) password: Option<String>,
    pub(crate) host: String,
    pub(crate) port: u16,
    pub(crate) database: String,
}

const FORM: &str = "the form is mysql://user:password@host:port/database";

impl MysqlUrl {
    /// Parses `url`. Messages never hold its password.
    pub(crate) fn parse(url: &str) -> Result<(MysqlUrl, Tls)> {
        let shown_scheme = match url.split_once("://") {
            Some((s, _)) if s.eq_ignore_ascii_case("mariadb") => "mariadb",
            _ => "mysql",
        };
        let bad = |why: &str| {
            Error::config(format!(
                "backend {}: not a usable MySQL URL ({why}); {FORM}",
                super::redact_text(shown_scheme, url)
            ))
        };
        let (scheme, rest) = url.split_once("://").ok_or_else(|| bad("no scheme"))?;
        let scheme = scheme.to_ascii_lowercase();
        if rest.contains('#') {
            return Err(bad("a #fragment"));
        }
        let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
        let (authority, database) = rest.split_once('/').unwrap_or((rest, ""));
        let (userinfo, hostport) = match authority.rsplit_once('@') {
            Some((u, h)) => (Some(u), h),
            None => (None, authority),
        };
        let (user, password) = match userinfo {
            None => (None, None),
            Some(u) => match u.split_once(':') {
                Some((name, pw)) => (Some(name), Some(pw)),
                None => (Some(u), None),
            },
        };
        let user = decode(user.unwrap_or("")).ok_or_else(|| bad("the user's percent-encoding"))?;
        if user.is_empty() {
            return Err(bad("no user"));
        }
        let password = password
            .map(|p| decode(p).ok_or_else(|| bad("the password's percent-encoding")))
            .transpose()?;
        let (host, port) = if let Some(v6) = hostport.strip_prefix('[') {
            let (h, after) = v6
                .split_once(']')
                .ok_or_else(|| bad("an unclosed [ in the host"))?;
            (h.to_string(), after.strip_prefix(':'))
        } else {
            match hostport.rsplit_once(':') {
                Some((h, p)) => (h.to_string(), Some(p)),
                None => (hostport.to_string(), None),
            }
        };
        if host.is_empty() {
            return Err(bad("no host"));
        }
        let port = match port {
            None => 3306,
            Some(p) => p.parse().map_err(|_| bad("a port that is not a number"))?,
        };
        let database = decode(database).ok_or_else(|| bad("the database's percent-encoding"))?;
        if database.is_empty() || database.contains('/') {
            return Err(bad("no database to keep rimeflake's tables in"));
        }
        let tls = tls_params(query)?;
        Ok((
            MysqlUrl {
                scheme,
                user,
                password,
                host,
                port,
                database,
            },
            tls,
        ))
    }

    /// The URL as messages show it: the password as `***`, and rimeflake's TLS parameters.
    pub(crate) fn shown(&self, tls: &Tls) -> String {
        let part = |t: &str| {
            if t.contains('@') {
                "***".to_string()
            } else {
                t.to_string()
            }
        };
        let pw = if self.password.as_deref().is_some_and(|p| !p.is_empty()) {
            ":***"
        } else {
            ""
        };
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            part(&self.host)
        };
        let mut q = Vec::new();
        let mode = match tls.mode {
            SslMode::Disable => Some("DISABLED"),
            SslMode::Prefer => None,
            SslMode::Require => Some("REQUIRED"),
            SslMode::VerifyCa => Some("VERIFY_CA"),
            SslMode::VerifyFull => Some("VERIFY_IDENTITY"),
        };
        q.extend(mode.map(|m| format!("ssl-mode={m}")));
        match &tls.roots {
            Some(Roots::System) => q.push("ssl-ca=system".into()),
            Some(Roots::File(p)) => q.push(format!("ssl-ca={}", p.display())),
            None => {}
        }
        if let Some((cert, key)) = &tls.client {
            q.push(format!(
                "ssl-cert={}&ssl-key={}",
                cert.display(),
                key.display()
            ));
        }
        let query = if q.is_empty() {
            String::new()
        } else {
            format!("?{}", q.join("&"))
        };
        format!(
            "{}://{}{pw}@{host}:{}/{}{query}",
            self.scheme,
            part(&self.user),
            self.port,
            part(&self.database)
        )
    }
}

/// The TLS settings of a MySQL URL's query; any other parameter is refused (rimeflake is the
/// driver here: an unknown parameter is a typo).
fn tls_params(query: &str) -> Result<Tls> {
    let (mut mode, mut roots, mut cert, mut key) = (None, None, None, None);
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let name = decode(k).unwrap_or_default();
        let v = decode(v).ok_or_else(|| {
            Error::config(format!("backend: {name}= is not valid percent-encoding"))
        })?;
        if v.is_empty() {
            return Err(Error::config(format!("backend: {name}= is empty")));
        }
        match name.as_str() {
            "ssl-mode" => mode = Some(v),
            "ssl-ca" if v == "system" => roots = Some(Roots::System),
            "ssl-ca" => roots = Some(Roots::File(v.into())),
            "ssl-cert" => cert = Some(PathBuf::from(v)),
            "ssl-key" => key = Some(PathBuf::from(v)),
            "sslmode" | "sslrootcert" | "sslcert" | "sslkey" => {
                return Err(Error::config(format!(
                    "backend: {name}= is PostgreSQL's name; a MySQL URL takes MySQL's: ssl-mode, \
                     ssl-ca, ssl-cert, ssl-key"
                )))
            }
            // A key that may be a password's is not shown.
            _ => {
                return Err(Error::config(
                    "backend: a MySQL URL takes no parameter but ssl-mode, ssl-ca, ssl-cert and \
                     ssl-key (give the user and password before the host)",
                ))
            }
        }
    }
    let client =
        match (cert, key) {
            (Some(c), Some(k)) => Some((c, k)),
            (None, None) => None,
            _ => return Err(Error::config(
                "backend: ssl-cert= and ssl-key= go together (a client certificate and its key)",
            )),
        };
    let mode = match mode.as_deref().map(str::to_ascii_uppercase).as_deref() {
        None | Some("PREFERRED") => SslMode::Prefer,
        Some("DISABLED") => SslMode::Disable,
        Some("REQUIRED") => SslMode::Require,
        Some("VERIFY_CA") => SslMode::VerifyCa,
        Some("VERIFY_IDENTITY") => SslMode::VerifyFull,
        Some(other) => {
            return Err(Error::config(format!(
                "backend: ssl-mode={other} is not one rimeflake takes; use DISABLED, PREFERRED, \
                 REQUIRED, VERIFY_CA or VERIFY_IDENTITY"
            )))
        }
    };
    Ok(Tls {
        mode,
        roots,
        client,
        names: &MYSQL,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_parse_and_show_without_their_password() {
        let (u, tls) = MysqlUrl::parse(
            "mariadb://app:p%40ss@db.example:3307/ids?ssl-mode=verify_identity&ssl-ca=/ca.pem",
        )
        .unwrap();
        assert_eq!(
            (
                u.user.as_str(),
                u.password.as_deref(),
                u.host.as_str(),
                u.port
            ),
            ("app", Some("p@ss"), "db.example", 3307)
        );
        assert_eq!(tls.mode, SslMode::VerifyFull);
        assert_eq!(
            u.shown(&tls),
            "mariadb://app:***@db.example:3307/ids?ssl-mode=VERIFY_IDENTITY&ssl-ca=/ca.pem"
        );
        let (u, tls) = MysqlUrl::parse("mysql://root@[::1]/x").unwrap();
        assert_eq!((u.host.as_str(), u.port), ("::1", 3306));
        assert_eq!(u.shown(&tls), "mysql://root@[::1]:3306/x");
        for (url, says) in [
            ("mysql://h/db", "no user"),
            ("mysql://u:pw-xyz@h:port/db", "not a number"),
            ("mysql://u:pw-xyz@h", "no database"),
            ("mysql://u:pw-xyz@h/db?password=pw-xyz", "no parameter but"),
            ("mysql://u:pw-xyz@h/db?sslmode=require", "PostgreSQL's name"),
            ("mysql://u:pw-xyz@h/db?ssl-mode=allow", "ssl-mode=ALLOW"),
            ("mysql://u:pw-xyz@h/db?ssl-cert=c.pem", "go together"),
            ("mysql://u:pw-xyz@h/db#frag", "fragment"),
        ] {
            let e = MysqlUrl::parse(url).unwrap_err();
            assert!(e.message().contains(says), "{url}: {e}");
            assert!(!e.message().contains("pw-xyz"), "{url}: {e}");
        }
    }
}
