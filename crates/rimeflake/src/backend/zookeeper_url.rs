//! `zookeeper://[user:password@]host[:port][,host[:port]…][/chroot]`: the ensemble's servers
//! (port 2181 unless given), the digest credentials (`addauth digest user:password`, and nodes
//! made with the creator's rights only) and the path under which rimeflake keeps its nodes
//! (`/rimeflake` when the URL gives none).

use super::tls::decode;
use crate::error::{Error, Result};

/// The parts of a ZooKeeper URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ZkUrl {
    pub(crate) hosts: Vec<(String, u16)>,
    /// `user:password`, for the digest scheme.
    pub(crate) auth: Option<(String, String)>,
    /// Where rimeflake's nodes live: an absolute path without a trailing `/`.
    pub(crate) root: String,
}

const FORM: &str = "the form is zookeeper://host:port[,host:port...]/chroot";

impl ZkUrl {
    /// Parses `url`. Messages never hold its password.
    pub(crate) fn parse(url: &str) -> Result<ZkUrl> {
        let bad = |why: &str| {
            Error::config(format!(
                "backend {}: not a usable ZooKeeper URL ({why}); {FORM}",
                super::redact_text("zookeeper", url)
            ))
        };
        let rest = url
            .split_once("://")
            .map(|(_, r)| r)
            .ok_or_else(|| bad("no scheme"))?;
        if rest.contains(['?', '#']) {
            return Err(bad("it takes no ?parameters or #fragment"));
        }
        let (authority, path) = match rest.find('/') {
            Some(i) => rest.split_at(i),
            None => (rest, ""),
        };
        let (userinfo, hosts) = match authority.rsplit_once('@') {
            Some((u, h)) => (Some(u), h),
            None => (None, authority),
        };
        let auth = match userinfo {
            None => None,
            Some(u) => {
                let (user, pw) = u.split_once(':').unwrap_or((u, ""));
                let user = decode(user).ok_or_else(|| bad("the user's percent-encoding"))?;
                let pw = decode(pw).ok_or_else(|| bad("the password's percent-encoding"))?;
                if user.is_empty() || user.contains(':') {
                    return Err(bad("a digest user must be a name without ':'"));
                }
                Some((user, pw))
            }
        };
        let hosts = hosts
            .split(',')
            .map(|hp| {
                let (host, port) = if let Some(v6) = hp.strip_prefix('[') {
                    let (h, after) = v6.split_once(']').ok_or_else(|| bad("an unclosed ["))?;
                    (h.to_string(), after.strip_prefix(':'))
                } else {
                    match hp.rsplit_once(':') {
                        Some((h, p)) => (h.to_string(), Some(p)),
                        None => (hp.to_string(), None),
                    }
                };
                if host.is_empty() {
                    return Err(bad("an empty host"));
                }
                let port = match port {
                    None => 2181,
                    Some(p) => p.parse().map_err(|_| bad("a port that is not a number"))?,
                };
                Ok((host, port))
            })
            .collect::<Result<Vec<_>>>()?;
        let root = match path.trim_end_matches('/') {
            "" => "/rimeflake".to_string(),
            p => p.to_string(),
        };
        let components_ok = root[1..].split('/').all(|c| {
            !c.is_empty()
                && c != "."
                && c != ".."
                && !c.chars().any(|ch| ch.is_control() || ch == '%')
        });
        if !components_ok || root == "/zookeeper" || root.starts_with("/zookeeper/") {
            return Err(bad(
                "a chroot of plain path components (not /zookeeper, no '.' or '..', no empty one)",
            ));
        }
        Ok(ZkUrl { hosts, auth, root })
    }

    /// The URL as messages show it: the password as `***`.
    pub(crate) fn shown(&self) -> String {
        let auth = match &self.auth {
            Some((user, _)) if user.contains('@') => "***@".to_string(),
            Some((user, _)) => format!("{user}:***@"),
            None => String::new(),
        };
        let hosts: Vec<String> = self
            .hosts
            .iter()
            .map(|(h, p)| match h {
                h if h.contains(':') => format!("[{h}]:{p}"),
                h if h.contains('@') => format!("***:{p}"),
                h => format!("{h}:{p}"),
            })
            .collect();
        format!("zookeeper://{auth}{}{}", hosts.join(","), self.root)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_parse_and_show_without_their_password() {
        let u = ZkUrl::parse("zookeeper://app:s%3Acret@a:1,b,[::1]:3/apps/ids/").unwrap();
        assert_eq!(
            u.hosts,
            [("a".into(), 1), ("b".into(), 2181), ("::1".into(), 3)]
        );
        assert_eq!(u.auth, Some(("app".into(), "s:cret".into())));
        assert_eq!(u.root, "/apps/ids");
        assert_eq!(u.shown(), "zookeeper://app:***@a:1,b:2181,[::1]:3/apps/ids");
        assert_eq!(ZkUrl::parse("zookeeper://h").unwrap().root, "/rimeflake");
        for (url, says) in [
            ("zookeeper://u:pw-xyz@h:x/r", "not a number"),
            ("zookeeper://u:pw-xyz@h,/r", "empty host"),
            ("zookeeper://u:pw-xyz@h/a//b", "plain path"),
            ("zookeeper://u:pw-xyz@h/a/../b", "plain path"),
            ("zookeeper://u:pw-xyz@h/zookeeper", "plain path"),
            ("zookeeper://u:pw-xyz@h/r?x=pw-xyz", "no ?parameters"),
        ] {
            let e = ZkUrl::parse(url).unwrap_err();
            assert!(e.message().contains(says), "{url}: {e}");
            assert!(!e.message().contains("pw-xyz"), "{url}: {e}");
        }
    }
}
