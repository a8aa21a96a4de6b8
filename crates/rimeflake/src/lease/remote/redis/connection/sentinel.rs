//! The primary of a `redis+sentinel://` URL, asked of its Sentinels at each connect (so a
//! connection broken by a failover reconnects to the promoted replica), and checked to be a
//! primary before it is used: a Sentinel may still name the old one for a moment.

use super::{connect_to, Resolver};
use crate::backend::sentinel::SentinelUrl;
use redis::{Connection, ConnectionAddr, ConnectionInfo, RedisConnectionInfo, RedisResult, Value};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// `template` (the primary's user, password, database and TLS settings) with the address the
/// first Sentinel that answers gives for the primary of `url`'s service.
pub(super) fn primary(
    template: &ConnectionInfo,
    url: &SentinelUrl,
    timeout: Duration,
    resolver: Resolver,
    resolved: &AtomicBool,
) -> RedisResult<ConnectionInfo> {
    let mut last = None;
    for (host, port) in &url.sentinels {
        match ask(template, url, host, *port, timeout, resolver, resolved) {
            Ok((h, p)) => {
                let addr = match &template.addr {
                    ConnectionAddr::TcpTls {
                        insecure,
                        tls_params,
                        ..
                    } => ConnectionAddr::TcpTls {
                        host: h,
                        port: p,
                        insecure: *insecure,
                        tls_params: tls_params.clone(),
                    },
                    _ => ConnectionAddr::Tcp(h, p),
                };
                return Ok(ConnectionInfo {
                    addr,
                    redis: template.redis.clone(),
                });
            }
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| (redis::ErrorKind::InvalidClientConfig, "no Sentinel").into()))
}

/// `SENTINEL get-master-addr-by-name` of one Sentinel.
fn ask(
    template: &ConnectionInfo,
    url: &SentinelUrl,
    host: &str,
    port: u16,
    timeout: Duration,
    resolver: Resolver,
    resolved: &AtomicBool,
) -> RedisResult<(String, u16)> {
    let addr = match &template.addr {
        ConnectionAddr::TcpTls {
            insecure,
            tls_params,
            ..
        } => ConnectionAddr::TcpTls {
            host: host.to_string(),
            port,
            insecure: *insecure,
            tls_params: tls_params.clone(),
        },
        _ => ConnectionAddr::Tcp(host.to_string(), port),
    };
    let info = ConnectionInfo {
        addr,
        redis: RedisConnectionInfo {
            db: 0,
            username: url.sentinel_user.clone(),
            password: url.sentinel_password.clone(),
            protocol: template.redis.protocol,
        },
    };
    let mut conn = connect_to(&info, timeout, resolver, resolved)?;
    let reply: Option<(String, u16)> = redis::cmd("SENTINEL")
        .arg("get-master-addr-by-name")
        .arg(&url.service)
        .query(&mut conn)?;
    reply.ok_or_else(|| {
        (
            redis::ErrorKind::ResponseError,
            "the Sentinel knows no primary by the URL's service name",
        )
            .into()
    })
}

/// `conn` once `ROLE` says it is a primary.
pub(super) fn check_role(mut conn: Connection) -> RedisResult<Connection> {
    let role: Value = redis::cmd("ROLE").query(&mut conn)?;
    let first = match &role {
        Value::Array(items) => items
            .first()
            .and_then(|v| redis::from_redis_value::<String>(v).ok()),
        _ => None,
    };
    if first.as_deref() == Some("master") {
        Ok(conn)
    } else {
        Err((
            redis::ErrorKind::ResponseError,
            "the server the Sentinels named is not a primary (a failover is under way)",
        )
            .into())
    }
}
