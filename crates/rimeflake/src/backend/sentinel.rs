//! `redis+sentinel://` and `rediss+sentinel://` URLs: a Redis primary found through Redis
//! Sentinel, as operators deploy it.
//!
//! `redis+sentinel://[[user]:password@]host[:port][,host[:port]...]/service[/db][?params]`
//!
//! - the hosts are the Sentinels (port 26379 unless given), asked in turn for the primary of
//!   `service` (the name their `sentinel monitor` line gives it);
//! - the user and password are the primary's, as in a `redis://` URL;
//! - `sentinel_password=` (and `sentinel_user=`) are the Sentinels' own, when they ask for one
//!   (`requirepass` in sentinel.conf);
//! - `rediss+sentinel://` speaks TLS to the Sentinels and the primary alike, with the
//!   parameters of `rediss://` (`sslrootcert`, `sslcert`, `sslkey`).

use crate::error::{Error, Result};

/// The Sentinels' default port.
pub(crate) const SENTINEL_PORT: u16 = 26379;

/// A `redis+sentinel://` URL, taken apart.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SentinelUrl {
    /// The Sentinels, in the URL's order.
    pub(crate) sentinels: Vec<(String, u16)>,
    /// The name the Sentinels know the primary by.
    pub(crate) service: String,
    /// The primary's URL with the first Sentinel's address in place of its own (which the
    /// Sentinels give at each connect): `redis://` or `rediss://`, its user, password and
    /// database, and the URL's other parameters (TLS).
    pub(crate) primary: String,
    /// The Sentinels' own user and password.
    pub(crate) sentinel_user: Option<String>,
    pub(crate) sentinel_password: Option<String>,
}

/// Whether `url` is a Sentinel URL (by its scheme).
pub(crate) fn is_sentinel(url: &str) -> bool {
    url.split_once("://").is_some_and(|(s, _)| {
        s.eq_ignore_ascii_case("redis+sentinel") || s.eq_ignore_ascii_case("rediss+sentinel")
    })
}

/// The form of a Sentinel URL, for messages.
const FORM: &str =
    "the form is redis+sentinel://[[user]:password@]host[:port][,host[:port]...]/service[/db]";

/// Takes a Sentinel URL apart. Messages name its parts, never a password.
///
/// # Errors
/// [`ErrorKind::Config`](crate::ErrorKind::Config): no Sentinel, a port that is not a number,
/// no service name, a database that is not a number, a parameter that is not valid
/// percent-encoding.
pub(crate) fn parse(url: &str) -> Result<SentinelUrl> {
    let bad = |why: &str| {
        Error::config(format!(
            "backend: not a usable Sentinel URL ({why}); {FORM}"
        ))
    };
    let (scheme, rest) = url.split_once("://").ok_or_else(|| bad("no scheme"))?;
    let tls = scheme.eq_ignore_ascii_case("rediss+sentinel");
    let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    let (userinfo, hosts) = match authority.rsplit_once('@') {
        Some((u, h)) => (Some(u), h),
        None => (None, authority),
    };
    let mut sentinels = Vec::new();
    for host in hosts.split(',').filter(|h| !h.is_empty()) {
        let (name, port) = match host.strip_prefix('[') {
            // [IPv6]:port
            Some(v6) => {
                let (name, after) = v6.split_once(']').ok_or_else(|| bad("an unclosed ["))?;
                (name, after.strip_prefix(':'))
            }
            None => match host.rsplit_once(':') {
                Some((name, port)) => (name, Some(port)),
                None => (host, None),
            },
        };
        let port = match port {
            Some(p) => p
                .parse()
                .map_err(|_| bad("a Sentinel's port is not a number"))?,
            None => SENTINEL_PORT,
        };
        if name.is_empty() {
            return Err(bad("a Sentinel without a host"));
        }
        sentinels.push((name.to_string(), port));
    }
    if sentinels.is_empty() {
        return Err(bad("no Sentinel"));
    }
    let mut parts = path.split('/');
    let service = parts.next().filter(|s| !s.is_empty()).ok_or_else(|| {
        bad("no service name: the primary's name in the Sentinels' `sentinel monitor`")
    })?;
    let service =
        decode(service).ok_or_else(|| bad("the service name is not valid percent-encoding"))?;
    let db: i64 = match parts.next().filter(|d| !d.is_empty()) {
        Some(d) => d.parse().map_err(|_| bad("the database is not a number"))?,
        None => 0,
    };
    if parts.next().is_some() {
        return Err(bad("more than a service name and a database in the path"));
    }
    let (mut sentinel_user, mut sentinel_password, mut kept) = (None, None, Vec::new());
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let value = || decode(v).ok_or_else(|| bad(&format!("{k}= is not valid percent-encoding")));
        match k {
            "sentinel_password" => sentinel_password = Some(value()?),
            "sentinel_user" => sentinel_user = Some(value()?),
            _ => kept.push(pair),
        }
    }
    let (host, port) = sentinels[0].clone();
    let host = if host.contains(':') {
        format!("[{host}]")
    } else {
        host
    };
    let user = userinfo.map_or(String::new(), |u| format!("{u}@"));
    let query = if kept.is_empty() {
        String::new()
    } else {
        format!("?{}", kept.join("&"))
    };
    let scheme = if tls { "rediss" } else { "redis" };
    Ok(SentinelUrl {
        sentinels,
        service,
        primary: format!("{scheme}://{user}{host}:{port}/{db}{query}"),
        sentinel_user: sentinel_user.filter(|u| !u.is_empty()),
        sentinel_password: sentinel_password.filter(|p| !p.is_empty()),
    })
}

use super::tls::decode;

/// A Sentinel URL as messages show it: its Sentinels, service and database, the primary's user
/// with `***` for its password, `sentinel_password=***`, and the TLS parameters (the others
/// left out). `primary_shown` is the primary's URL as [`super::redact`] shows it.
pub(crate) fn shown(url: &SentinelUrl, primary_shown: &str) -> String {
    let (scheme, rest) = primary_shown
        .split_once("://")
        .unwrap_or(("redis", primary_shown));
    // The user part of the primary's shown URL: `user:***@`, `:***@`, `user@` or nothing.
    let user = match rest.split_once('@') {
        Some((u, _)) if !u.contains('/') => format!("{u}@"),
        _ => String::new(),
    };
    let query = rest
        .split_once('?')
        .map_or(String::new(), |(_, q)| q.to_string());
    let db = rest
        .split_once('/')
        .map(|(_, p)| p.split('?').next().unwrap_or(""))
        .unwrap_or("0");
    let hosts: Vec<String> = url
        .sentinels
        .iter()
        .map(|(h, p)| {
            let h = if h.contains('@') { "***" } else { h.as_str() };
            if h.contains(':') {
                format!("[{h}]:{p}")
            } else {
                format!("{h}:{p}")
            }
        })
        .collect();
    let mut params: Vec<String> = Vec::new();
    if let Some(u) = &url.sentinel_user {
        params.push(format!("sentinel_user={u}"));
    }
    if url.sentinel_password.is_some() {
        params.push("sentinel_password=***".into());
    }
    if !query.is_empty() {
        params.push(query);
    }
    let service = if url.service.contains('@') {
        "***"
    } else {
        url.service.as_str()
    };
    format!(
        "{scheme}+sentinel://{user}{}/{service}/{db}{}",
        hosts.join(","),
        if params.is_empty() {
            String::new()
        } else {
            format!("?{}", params.join("&"))
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sentinel_url_is_taken_apart() {
        let u =
            parse("redis+sentinel://:pw@s1,s2:26380,[::1]:7/mymaster/2?sentinel_password=s%21&x=1")
                .unwrap();
        assert_eq!(
            u.sentinels,
            [
                ("s1".to_string(), 26379),
                ("s2".to_string(), 26380),
                ("::1".to_string(), 7)
            ]
        );
        assert_eq!(u.service, "mymaster");
        assert_eq!(u.primary, "redis://:pw@s1:26379/2?x=1");
        assert_eq!(u.sentinel_password.as_deref(), Some("s!"));
        let t = parse("rediss+sentinel://h/m?sslrootcert=/ca.pem").unwrap();
        assert_eq!(t.primary, "rediss://h:26379/0?sslrootcert=/ca.pem");
        for bad in [
            "redis+sentinel:///m",
            "redis+sentinel://h",
            "redis+sentinel://h/",
            "redis+sentinel://h:x/m",
            "redis+sentinel://h/m/x",
            "redis+sentinel://h/m/1/2",
            "redis+sentinel://h/m?sentinel_password=%zz",
        ] {
            let e = parse(bad).unwrap_err();
            assert!(e.message().contains("Sentinel URL"), "{bad}: {e}");
        }
        assert!(is_sentinel("REDIS+SENTINEL://h/m") && !is_sentinel("redis://h"));
    }
}
