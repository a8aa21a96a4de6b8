//! The endpoints: routing and what each answers. Their refusals (a 4xx with a one-line reason,
//! a 503 with the generator's error kind, a 429 or 503 with `Retry-After` past a limit) are
//! made in `answer.rs`.

use crate::admission::{Flow, BYTES_PER_ID};
use crate::answer::{
    answered, content_type, refuse, respond, shorten, text, Asked, Refusal, Refused, JSON,
};
use crate::issue;
use crate::log::one_line;
use crate::text::{json_string, percent_decode, query_value, same_secret};
use crate::{Response, Shared};
use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{HeaderValue, ACCEPT, ALLOW, AUTHORIZATION, CONTENT_LENGTH, WWW_AUTHENTICATE};
use hyper::{Method, Request, StatusCode};
use rimeflake::frontend::{iso8601, DecimalDigits};
use rimeflake::{format, parse, Encoding, Generator, Layout};
use std::sync::Arc;

/// The paths served, as a refusal lists them.
pub(crate) const PATHS: &str = "/id, /ids?n=N, /api/snowflake/get/{key}, /decode/{id}, \
    /decodeSnowflakeId?snowflakeId=ID, /metrics, /healthz, /readyz";

pub async fn handle<B>(shared: &Shared, flow: &Arc<Flow>, req: Request<B>) -> Response {
    let asked = Asked {
        json: wants_json(&req),
        head: req.method() == Method::HEAD,
        req: &req,
        flow,
    };
    let response = match route(shared, &asked).await {
        Ok(r) => r,
        Err(refusal) => {
            if let Some(why) = refusal.refused {
                shared.counts.refused(why);
            }
            refuse(refusal, asked.json)
        }
    };
    shared.counts.count(response.status());
    // Counted until the socket takes it (see `admission::Flow`).
    let len = hyper::body::Body::size_hint(response.body())
        .exact()
        .unwrap_or(0);
    flow.settle(0, if asked.head { 0 } else { len });
    if asked.head {
        without_body(response)
    } else {
        response
    }
}

async fn route<B>(shared: &Shared, a: &Asked<'_, B>) -> Result<Response, Refusal> {
    let req = a.req;
    if req.method() != Method::GET && req.method() != Method::HEAD {
        let mut r = refuse(
            Refusal::new(
                StatusCode::METHOD_NOT_ALLOWED,
                format!(
                    "method {} not allowed: only GET and HEAD are served",
                    req.method()
                ),
            ),
            a.json,
        );
        r.headers_mut()
            .insert(ALLOW, HeaderValue::from_static("GET, HEAD"));
        return Ok(r);
    }
    let path = req.uri().path();
    let query = req.uri().query();
    let authorized = match &shared.config.token {
        Some(token) => authorized(req, token),
        None => true,
    };
    // The probes answer without the token, and past the limit of requests in flight.
    match path {
        "/healthz" => return Ok(text(StatusCode::OK, "ok\n")),
        "/readyz" => return ready(shared, authorized).await,
        _ => {}
    }
    let Some(_in_flight) = shared.limits.enter() else {
        return Err(Refusal::busy(
            Refused::Requests,
            format!(
                "busy: {} requests in flight (--max-requests)",
                shared.limits.max_requests
            ),
            1000,
        ));
    };
    if !authorized {
        let mut r = refuse(
            Refusal::new(
                StatusCode::UNAUTHORIZED,
                "a bearer token is needed: Authorization: Bearer <RIMEFLAKE_SERVE_TOKEN>",
            ),
            a.json,
        );
        r.headers_mut()
            .insert(WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        return Ok(r);
    }
    let main = &shared.main;
    match path {
        "/id" => {
            let encoding = encoding(query)?;
            if a.head {
                return Ok(respond(StatusCode::OK, content_type(a.json), Vec::new()));
            }
            let id = answered(a, BYTES_PER_ID + 12, issue::one(&shared.limits, main)).await?;
            let mut body = Vec::with_capacity(32);
            if a.json {
                body.extend_from_slice(b"{\"id\":\"");
            }
            put(&mut body, id, encoding);
            body.extend_from_slice(if a.json { b"\"}\n" } else { b"\n" });
            Ok(respond(StatusCode::OK, content_type(a.json), body))
        }
        "/ids" => {
            let n = count(query, shared.config.max_n)?;
            let encoding = encoding(query)?;
            if a.head {
                return Ok(respond(StatusCode::OK, content_type(a.json), Vec::new()));
            }
            let bytes = n as u64 * (BYTES_PER_ID + 3) + 16;
            let ids = answered(a, bytes, issue::many(&shared.limits, main, n)).await?;
            Ok(ids_body(&ids, encoding, a.json))
        }
        "/metrics" => Ok(crate::metrics::render(shared)),
        "/decodeSnowflakeId" => crate::leaf::decode(shared, query),
        _ => {
            if let Some(key) = path.strip_prefix("/api/snowflake/get/") {
                crate::leaf::get(shared, a, key).await
            } else if let Some(id) = path.strip_prefix("/decode/") {
                decode(&main.generator, id, query)
            } else {
                Err(Refusal::new(
                    StatusCode::NOT_FOUND,
                    format!("no such path {:?}: the paths are {PATHS}", shorten(path)),
                ))
            }
        }
    }
}

fn wants_json<B>(req: &Request<B>) -> bool {
    req.headers()
        .get_all(ACCEPT)
        .iter()
        .any(|v| v.to_str().is_ok_and(|v| v.contains("application/json")))
}

fn authorized<B>(req: &Request<B>, token: &str) -> bool {
    let Some(given) = req.headers().get(AUTHORIZATION) else {
        return false;
    };
    let given = given.as_bytes();
    let Some(secret) = given
        .strip_prefix(b"Bearer ")
        .or_else(|| given.strip_prefix(b"bearer "))
    else {
        return false;
    };
    same_secret(secret, token.as_bytes())
}

/// `?format=`: dec (the default), hex, base62 or base32.
fn encoding(query: Option<&str>) -> Result<Encoding, Refusal> {
    match query_value(query, "format").map_err(Refusal::bad)? {
        None => Ok(Encoding::Decimal),
        Some(name) => Encoding::from_name(&name).map_err(|e| Refusal::bad(e.message())),
    }
}

/// `?n=`: 1 to `max`.
fn count(query: Option<&str>, max: usize) -> Result<usize, Refusal> {
    let Some(text) = query_value(query, "n").map_err(Refusal::bad)? else {
        return Err(Refusal::bad("n is needed: /ids?n=N"));
    };
    let too_many = || Refusal::bad(format!("n={text} is too many: at most {max} (--max-n)"));
    match text.parse::<u64>() {
        Ok(0) => Err(Refusal::bad("n=0: ask for 1 or more IDs")),
        Ok(n) if n > max as u64 => Err(too_many()),
        Ok(n) => Ok(n as usize),
        Err(_) if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) => Err(too_many()),
        Err(_) => Err(Refusal::bad(format!(
            "n={:?} is not a count: give a whole number from 1 to {max}",
            shorten(&text)
        ))),
    }
}

/// Appends `id` in `encoding`.
fn put(body: &mut Vec<u8>, id: u64, encoding: Encoding) {
    match encoding {
        Encoding::Decimal => body.extend_from_slice(DecimalDigits::new(id).as_bytes()),
        e => body.extend_from_slice(format(id, e).as_bytes()),
    }
}

/// `/ids`: the IDs a line each, or JSON `{"ids":[...]}`.
fn ids_body(ids: &[u64], encoding: Encoding, json: bool) -> Response {
    let mut body = Vec::with_capacity(ids.len() * 23 + 16);
    if json {
        body.extend_from_slice(b"{\"ids\":[");
        for (i, &id) in ids.iter().enumerate() {
            if i > 0 {
                body.push(b',');
            }
            body.push(b'"');
            put(&mut body, id, encoding);
            body.push(b'"');
        }
        body.extend_from_slice(b"]}\n");
    } else {
        for &id in ids {
            put(&mut body, id, encoding);
            body.push(b'\n');
        }
    }
    respond(StatusCode::OK, content_type(json), body)
}

/// `/decode/{id}?layout=&format=`: the ID's parts as JSON, as the bindings give them. Read
/// with the server's layout when none is given, and then, as the CLI and the bindings do, it
/// says so when the time it reads lies well in the future (an ID of another layout, likely).
fn decode(main: &Generator, id: &str, query: Option<&str>) -> Result<Response, Refusal> {
    let id_text = percent_decode(id).map_err(Refusal::bad)?;
    let encoding = encoding(query)?;
    let id = parse(&id_text, encoding).map_err(|e| Refusal::bad(one_line(e.message())))?;
    let given = query_value(query, "layout").map_err(Refusal::bad)?;
    let layout = match &given {
        Some(spec) => Layout::from_spec(spec).map_err(|e| Refusal::bad(one_line(e.message())))?,
        None => main.layout().clone(),
    };
    let parts = layout
        .decode(id)
        .map_err(|e| Refusal::bad(one_line(e.message())))?;
    let mut body = format!(
        "{{\"id\":\"{id}\",\"clock_id\":{},\"timestamp_ms\":{},\"time\":\"{}\"",
        parts.clock_id,
        parts.timestamp_ms,
        iso8601(parts.timestamp_ms)
    );
    if let Some(dc) = parts.datacenter_id {
        body.push_str(&format!(",\"datacenter_id\":{dc}"));
    }
    body.push_str(&format!(
        ",\"worker_id\":{},\"sequence\":{}",
        parts.worker_id, parts.sequence
    ));
    let future = parts.is_well_in_the_future();
    body.push_str(&format!(
        ",\"layout\":{},\"in_the_future\":{future}",
        json_string(layout.name())
    ));
    if future {
        let plausible = Layout::plausible_presets_now(id);
        let names: Vec<String> = plausible.iter().map(|p| json_string(p)).collect();
        body.push_str(&format!(",\"plausible_presets\":[{}]", names.join(",")));
        if given.is_none() {
            let warning = format!(
                "{id} was read with the server's layout {}, as no layout= was given: by it, the \
                 ID was made at {}, in the future; {}",
                layout.name(),
                iso8601(parts.timestamp_ms),
                match plausible.first() {
                    Some(p) => format!("the {p} preset reads it as a past time: try ?layout={p}"),
                    None => "no preset reads it as a past time: give the layout it was made with"
                        .to_string(),
                }
            );
            body.push_str(&format!(",\"warning\":{}", json_string(&warning)));
        }
    }
    body.push_str("}\n");
    Ok(respond(StatusCode::OK, JSON, body.into_bytes()))
}

/// `/readyz`: 200 when every generator can issue an ID, re-checked without spending one (a
/// generator whose worker ID another process took moves off it, as the next request would
/// make it); else 503 naming the first that cannot and why. With a token set, only a caller
/// that carries it sees which namespace and why (the error names hosts and worker IDs).
async fn ready(shared: &Shared, authorized: bool) -> Result<Response, Refusal> {
    for issuer in shared.issuers() {
        let g = issuer.generator.clone();
        let checked = match g.ready() {
            Ok(()) => Ok(()),
            // Moving takes a lease: on the blocking pool, within max_wait.
            Err(_) => issue::blocking(move || g.recheck(&mut || false)).await,
        };
        if let Err(e) = checked {
            let mut refusal = Refusal::from(e);
            refusal.reason = if authorized {
                format!(
                    "not ready: namespace {:?}: {}",
                    issuer.namespace, refusal.reason
                )
            } else {
                "not ready (the reason is shown with the token)".to_string()
            };
            return Err(refusal);
        }
    }
    Ok(text(StatusCode::OK, "ready\n"))
}

/// The answer to a HEAD: GET's headers (its length among them, when it has a body), no body.
fn without_body(response: Response) -> Response {
    let (mut parts, body) = response.into_parts();
    let size = hyper::body::Body::size_hint(&body).exact().unwrap_or(0);
    if size > 0 {
        parts
            .headers
            .insert(CONTENT_LENGTH, HeaderValue::from(size));
    }
    hyper::Response::from_parts(parts, Full::new(Bytes::new()))
}
