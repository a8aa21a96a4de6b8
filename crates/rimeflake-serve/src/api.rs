//! The endpoints: routing, the answers and every refusal (a 4xx with a one-line reason, a 503
//! with the generator's error kind).

use crate::text::{json_string, percent_decode, query_value, same_secret};
use crate::{Response, Shared};
use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{HeaderValue, ACCEPT, ALLOW, AUTHORIZATION, CONTENT_TYPE, WWW_AUTHENTICATE};
use hyper::{Method, Request, StatusCode};
use rimeflake::frontend::{iso8601, DecimalDigits};
use rimeflake::{format, parse, Encoding, Error, ErrorKind, Generator, Layout};
use std::sync::Arc;

/// The paths served, as a refusal lists them.
const PATHS: &str =
    "/id, /ids?n=N, /api/snowflake/get/{key}, /decode/{id}, /metrics, /healthz, /readyz";

/// The header that names a generator error's kind on a 503.
pub const ERROR_KIND_HEADER: &str = "rimeflake-error";

const TEXT: &str = "text/plain; charset=utf-8";
const JSON: &str = "application/json";

/// A refusal or failure: its status and one-line reason (and the error kind, for a 503).
struct Refusal {
    status: StatusCode,
    reason: String,
    kind: Option<ErrorKind>,
}

impl Refusal {
    fn new(status: StatusCode, reason: impl Into<String>) -> Self {
        Refusal {
            status,
            reason: reason.into(),
            kind: None,
        }
    }

    fn bad(reason: impl Into<String>) -> Self {
        Refusal::new(StatusCode::BAD_REQUEST, reason)
    }
}

impl From<Error> for Refusal {
    /// A generator's error: the service cannot issue now (503), with the kind.
    fn from(e: Error) -> Self {
        Refusal {
            status: StatusCode::SERVICE_UNAVAILABLE,
            reason: format!("{}: {}", e.kind().name(), one_line(e.message())),
            kind: Some(e.kind()),
        }
    }
}

fn one_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

pub async fn handle<B>(shared: &Shared, req: Request<B>) -> Response {
    let json = wants_json(&req);
    let answer = route(shared, &req, json).await;
    let response = match answer {
        Ok(r) => r,
        Err(refusal) => refuse(refusal, json),
    };
    shared.counts.count(response.status());
    response
}

async fn route<B>(shared: &Shared, req: &Request<B>, json: bool) -> Result<Response, Refusal> {
    if req.method() != Method::GET {
        let mut r = refuse(
            Refusal::new(
                StatusCode::METHOD_NOT_ALLOWED,
                format!("method {} not allowed: only GET is served", req.method()),
            ),
            json,
        );
        r.headers_mut()
            .insert(ALLOW, HeaderValue::from_static("GET"));
        return Ok(r);
    }
    let path = req.uri().path();
    let query = req.uri().query();
    match path {
        "/healthz" => return Ok(text(StatusCode::OK, "ok\n")),
        "/readyz" => return ready(shared).await,
        _ => {}
    }
    if let Some(token) = &shared.config.token {
        if !authorized(req, token) {
            let mut r = refuse(
                Refusal::new(
                    StatusCode::UNAUTHORIZED,
                    "a bearer token is needed: Authorization: Bearer <RIMEFLAKE_SERVE_TOKEN>",
                ),
                json,
            );
            r.headers_mut()
                .insert(WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            return Ok(r);
        }
    }
    let main = &shared.generators.main;
    match path {
        "/id" => {
            let encoding = encoding(query)?;
            let id = issue_one(main).await?;
            let mut body = Vec::with_capacity(32);
            if json {
                body.extend_from_slice(b"{\"id\":\"");
            }
            put(&mut body, id, encoding);
            body.extend_from_slice(if json { b"\"}\n" } else { b"\n" });
            Ok(respond(
                StatusCode::OK,
                if json { JSON } else { TEXT },
                body,
            ))
        }
        "/ids" => {
            let n = count(query, shared.config.max_n)?;
            ids(main, n, encoding(query)?, json).await
        }
        "/metrics" => Ok(crate::metrics::render(shared)),
        _ => {
            if let Some(key) = path.strip_prefix("/api/snowflake/get/") {
                let key = percent_decode(key).map_err(Refusal::bad)?;
                let generator = keyed(shared, &key).await?;
                // Leaf's answer: the bare decimal ID.
                let id = issue_one(&generator).await?;
                Ok(text(StatusCode::OK, id.to_string()))
            } else if let Some(id) = path.strip_prefix("/decode/") {
                decode(main, id, query)
            } else {
                Err(Refusal::new(
                    StatusCode::NOT_FOUND,
                    format!("no such path {:?}: the paths are {PATHS}", shorten(path)),
                ))
            }
        }
    }
}

/// A path named in a refusal, cut at 100 characters.
fn shorten(path: &str) -> String {
    match path.char_indices().nth(100) {
        Some((at, _)) => format!("{}...", &path[..at]),
        None => path.to_string(),
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

/// `n` IDs from one generator: the non-waiting calls on this thread, and only when they would
/// wait, the waiting ones on the blocking pool.
async fn issue(generator: &Arc<Generator>, n: usize) -> Result<Vec<u64>, Refusal> {
    if n == 1 {
        return Ok(vec![issue_one(generator).await?]);
    }
    let mut ids = vec![0u64; n];
    // A hook that says "interrupted" at once makes the call fail instead of waiting; the IDs it
    // took before that are skipped, never issued twice.
    match generator.fill_with(&mut ids, &mut || true) {
        Ok(()) => Ok(ids),
        Err(e) if e.kind() == ErrorKind::Interrupted => {
            let g = generator.clone();
            blocking(move || g.fill(&mut ids).map(|()| ids))
                .await
                .map_err(Refusal::from)
        }
        Err(e) => Err(e.into()),
    }
}

/// One ID: the hot path on this thread, else the waiting call on the blocking pool.
async fn issue_one(generator: &Arc<Generator>) -> Result<u64, Refusal> {
    if let Some(id) = generator.try_next_id() {
        return Ok(id);
    }
    let g = generator.clone();
    Ok(blocking(move || g.next_id()).await?)
}

/// `call` on the blocking pool.
async fn blocking<T: Send + 'static>(
    call: impl FnOnce() -> rimeflake::Result<T> + Send + 'static,
) -> rimeflake::Result<T> {
    match tokio::task::spawn_blocking(call).await {
        Ok(r) => r,
        Err(_) => Err(Error::new(
            ErrorKind::State,
            "internal error: a generator call did not finish",
        )),
    }
}

/// Appends `id` in `encoding`.
fn put(body: &mut Vec<u8>, id: u64, encoding: Encoding) {
    match encoding {
        Encoding::Decimal => body.extend_from_slice(DecimalDigits::new(id).as_bytes()),
        e => body.extend_from_slice(format(id, e).as_bytes()),
    }
}

/// `/ids`: `n` IDs from one batch step, a line each, or JSON `{"ids":[...]}`.
async fn ids(
    generator: &Arc<Generator>,
    n: usize,
    encoding: Encoding,
    json: bool,
) -> Result<Response, Refusal> {
    let ids = issue(generator, n).await?;
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
        Ok(respond(StatusCode::OK, JSON, body))
    } else {
        for &id in &ids {
            put(&mut body, id, encoding);
            body.push(b'\n');
        }
        Ok(respond(StatusCode::OK, TEXT, body))
    }
}

/// The generator of `key`: the main one for its own namespace, else the key's, made on first
/// use (on the blocking pool: it takes a lease) up to `max_keys`.
async fn keyed(shared: &Shared, key: &str) -> Result<Arc<Generator>, Refusal> {
    let gens = &shared.generators;
    if key == gens.main_namespace {
        return Ok(gens.main.clone());
    }
    if key.is_empty() {
        return Err(Refusal::bad("the key is empty: /api/snowflake/get/{key}"));
    }
    if key.len() > 128 {
        return Err(Refusal::bad("the key is longer than 128 bytes"));
    }
    let found = |gens: &crate::Generators| {
        gens.keyed
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(key)
            .cloned()
    };
    if let Some(g) = found(gens) {
        return Ok(g);
    }
    let _making = gens.making.lock().await;
    if let Some(g) = found(gens) {
        return Ok(g);
    }
    let made = gens.keyed.read().unwrap_or_else(|p| p.into_inner()).len();
    if made >= shared.config.max_keys {
        return Err(Refusal::new(
            StatusCode::FORBIDDEN,
            format!(
                "key {key:?} is new and the service already has its {} keys (--max-keys)",
                shared.config.max_keys
            ),
        ));
    }
    let key_owned = key.to_string();
    let factory = gens.factory.clone();
    let name = key_owned.clone();
    let made = blocking(move || factory(&name)).await;
    match made {
        Ok(g) => {
            let g = Arc::new(g);
            gens.keyed
                .write()
                .unwrap_or_else(|p| p.into_inner())
                .insert(key_owned, g.clone());
            Ok(g)
        }
        Err(e) if e.kind() == ErrorKind::Config => Err(Refusal::bad(format!(
            "key {key:?}: {}",
            one_line(e.message())
        ))),
        Err(e) => Err(e.into()),
    }
}

/// `/decode/{id}?layout=&format=`: the ID's parts as JSON, as the bindings give them.
fn decode(main: &Generator, id: &str, query: Option<&str>) -> Result<Response, Refusal> {
    let id_text = percent_decode(id).map_err(Refusal::bad)?;
    let encoding = encoding(query)?;
    let id = parse(&id_text, encoding).map_err(|e| Refusal::bad(one_line(e.message())))?;
    let layout = match query_value(query, "layout").map_err(Refusal::bad)? {
        Some(spec) => Layout::from_spec(&spec).map_err(|e| Refusal::bad(one_line(e.message())))?,
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
        ",\"worker_id\":{},\"sequence\":{}}}\n",
        parts.worker_id, parts.sequence
    ));
    Ok(respond(StatusCode::OK, JSON, body.into_bytes()))
}

/// `/readyz`: 200 when every generator can issue an ID (lease valid, state stored), asked
/// without spending one, else 503 naming the first that cannot and why.
async fn ready(shared: &Shared) -> Result<Response, Refusal> {
    let gens = &shared.generators;
    let mut all = vec![(gens.main_namespace.clone(), gens.main.clone())];
    all.extend(
        gens.keyed
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .map(|(k, g)| (k.clone(), g.clone())),
    );
    for (namespace, g) in all {
        if let Err(e) = g.ready() {
            let mut refusal = Refusal::from(e);
            refusal.reason = format!("not ready: namespace {namespace:?}: {}", refusal.reason);
            return Err(refusal);
        }
    }
    Ok(text(StatusCode::OK, "ready\n"))
}

fn respond(status: StatusCode, content_type: &'static str, body: Vec<u8>) -> Response {
    let mut r = hyper::Response::new(Full::new(Bytes::from(body)));
    *r.status_mut() = status;
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    r
}

pub fn text(status: StatusCode, body: impl Into<String>) -> Response {
    respond(status, TEXT, body.into().into_bytes())
}

fn refuse(refusal: Refusal, json: bool) -> Response {
    let mut r = if json {
        let mut body = format!("{{\"error\":{}", json_string(&refusal.reason));
        if let Some(kind) = refusal.kind {
            body.push_str(&format!(",\"kind\":\"{}\"", kind.name()));
        }
        body.push_str("}\n");
        respond(refusal.status, JSON, body.into_bytes())
    } else {
        text(refusal.status, format!("{}\n", refusal.reason))
    };
    if let Some(kind) = refusal.kind {
        r.headers_mut()
            .insert(ERROR_KIND_HEADER, HeaderValue::from_static(kind.name()));
    }
    r
}
