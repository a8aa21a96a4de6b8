//! Redis's errors in words: config errors for what a user must fix (credentials, permissions,
//! certificates), lease errors for what may pass (a server down, slow, loading or full).

use super::RedisConn;
use crate::error::{Error, ErrorKind};
use crate::lease::remote::tls;
use redis::RedisError;

impl RedisConn {
    /// Our error for a failed `doing`: config errors for credentials and permissions, lease
    /// errors for everything that may pass (a server down, slow, loading or full).
    pub(super) fn error(&self, e: &RedisError, doing: &str) -> Error {
        let url = &self.url;
        let code = e.code().unwrap_or("");
        // Text from the server or the crate, with the password hidden should it ever echo it.
        let detail = self.scrub(e.detail().unwrap_or("").to_string());
        let said = self.scrub(plain(e));
        let lease = |m: String| Error::new(ErrorKind::Lease, m);

        if let Some(e) = tls::explain(e, &format!("Redis at {url}"), &self.tls) {
            return e;
        }
        if e.kind() == redis::ErrorKind::AuthenticationFailed || code == "WRONGPASS" {
            return Error::config(format!(
                "Redis at {url}: authentication failed: the password in the URL is wrong, or the \
                 user does not exist (or the URL gives a password and the server has none)"
            ));
        }
        if code == "NOAUTH" {
            return Error::config(format!(
                "Redis at {url}: the server requires a password and the URL has none: use \
                 redis://:password@host:port/db"
            ));
        }
        if code == "NOPERM" {
            return Error::config(format!(
                "Redis at {url}: the user is not allowed to {doing} ({detail}): grant it the \
                 commands GET SET PEXPIRE DEL EXISTS HGET HSET HMGET SADD SMEMBERS PTTL TIME \
                 EVAL EVALSHA on the keys rimeflake:*"
            ));
        }
        if e.to_string().contains("refused to switch database") {
            return Error::config(format!(
                "Redis at {url}: the server has no such database ({detail})"
            ));
        }
        if e.is_io_error() {
            let why = if e.is_connection_refusal() {
                "connection refused"
            } else if e.is_timeout() {
                "no answer in time"
            } else if e.is_connection_dropped() {
                "the connection was closed"
            } else {
                &said
            };
            return lease(format!(
                "could not reach Redis at {url} within {} ms ({doing}: {why})",
                self.timeout.as_millis()
            ));
        }
        match (code, e.kind()) {
            ("WRONGTYPE", _) => Error::new(
                ErrorKind::State,
                format!(
                    "Redis at {url}: {doing}: a key under rimeflake:* holds another type than \
                     rimeflake stores there: something else writes these keys"
                ),
            ),
            ("OOM", _) => lease(format!(
                "Redis at {url} is out of memory ({doing}: {said}): raise maxmemory or free memory"
            )),
            (_, redis::ErrorKind::BusyLoadingError) => lease(format!(
                "Redis at {url} is still loading its data ({doing}): try again shortly"
            )),
            (_, redis::ErrorKind::ReadOnly) => lease(format!(
                "Redis at {url} is a read-only replica ({doing}): use the primary"
            )),
            _ => lease(format!("Redis at {url}: {doing} failed: {said}")),
        }
    }

    /// `text` with the password hidden, should a server ever have echoed it.
    pub(super) fn scrub(&self, text: String) -> String {
        match &self.password {
            Some(pw) if text.contains(pw.as_str()) => text.replace(pw.as_str(), "***"),
            _ => text,
        }
    }
}

/// A redis error as plain text: the server's code and message, the I/O error, or the crate's
/// description.
pub(super) fn plain(e: &RedisError) -> String {
    match (e.code(), e.detail()) {
        (Some(code), Some(detail)) => format!("{code} {detail}"),
        (_, Some(detail)) => format!("{}: {detail}", description(e)),
        _ => description(e),
    }
}

/// The crate's text for `e` without the kind it appends (`"text- Kind"`, `"text - Kind: detail"`).
fn description(e: &RedisError) -> String {
    let text = e.to_string();
    if e.is_io_error() {
        return text;
    }
    match text.split_once("- ") {
        Some((head, _)) => head.trim_end().to_string(),
        None => text,
    }
}

/// Whether the server refused a command with an error reply (unknown command, no permission),
/// as opposed to a failed connection or wrong credentials.
pub(super) fn is_refusal(e: &RedisError) -> bool {
    let auth = e.kind() == redis::ErrorKind::AuthenticationFailed
        || matches!(e.code(), Some("NOAUTH" | "WRONGPASS"));
    // A server still loading its data refuses everything: that says nothing about CONFIG.
    let loading = e.kind() == redis::ErrorKind::BusyLoadingError;
    !auth && !loading && !breaks_connection(e)
}

/// Whether the connection may be out of step after `e`: anything but an error the server
/// replied with.
pub(super) fn breaks_connection(e: &RedisError) -> bool {
    e.is_io_error()
        || e.is_unrecoverable_error()
        || matches!(
            e.kind(),
            redis::ErrorKind::ParseError
                | redis::ErrorKind::ClientError
                | redis::ErrorKind::TypeError
        )
}
