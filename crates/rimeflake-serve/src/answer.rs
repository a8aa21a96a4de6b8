//! What every answer is made of: the content types, plain and JSON bodies, a refusal (its
//! status, reason and what it counts as), and what a request asked for, with the answer's
//! size taken on for its connection while it is made. Below the endpoints, the Leaf path and
//! `/metrics`, which all answer with these.

use crate::admission::{Flow, Full as Overfull};
use crate::log::one_line;
use crate::text::json_string;
use crate::Response;
use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{HeaderValue, CONTENT_TYPE, RETRY_AFTER};
use hyper::{Request, StatusCode};
use rimeflake::{Error, ErrorKind};
use std::sync::Arc;

/// The header that names a generator error's kind on a 503.
pub const ERROR_KIND_HEADER: &str = "rimeflake-error";

pub(crate) const TEXT: &str = "text/plain; charset=utf-8";
pub(crate) const JSON: &str = "application/json";

/// Why a request was refused past a limit (the `reason` label).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refused {
    /// Past `--max-requests` in flight.
    Requests,
    /// Its connection's answers were not being read (429).
    Connection,
    /// All connections' unread answers were at `--max-ids-in-flight`.
    Answers,
    /// Too many requests already waited for a generator.
    Waiting,
    /// It could not be served within `--wait-deadline`.
    Deadline,
}

impl Refused {
    pub(crate) const ALL: [Refused; 5] = [
        Refused::Requests,
        Refused::Connection,
        Refused::Answers,
        Refused::Waiting,
        Refused::Deadline,
    ];

    pub(crate) fn label(self) -> &'static str {
        match self {
            Refused::Requests => "requests",
            Refused::Connection => "connection",
            Refused::Answers => "answers",
            Refused::Waiting => "waiting",
            Refused::Deadline => "deadline",
        }
    }
}

/// A refusal or failure: its status and one-line reason (and the error kind, for a 503 of a
/// generator; when to retry, for one past a limit).
pub(crate) struct Refusal {
    pub(crate) status: StatusCode,
    pub(crate) reason: String,
    kind: Option<ErrorKind>,
    retry_after_s: Option<u64>,
    pub(crate) refused: Option<Refused>,
}

impl Refusal {
    pub(crate) fn new(status: StatusCode, reason: impl Into<String>) -> Self {
        Refusal {
            status,
            reason: reason.into(),
            kind: None,
            retry_after_s: None,
            refused: None,
        }
    }

    pub(crate) fn bad(reason: impl Into<String>) -> Self {
        Refusal::new(StatusCode::BAD_REQUEST, reason)
    }

    /// Past a limit of the service: 503 with `Retry-After` (the seconds `wait_ms` rounds up to,
    /// at least 1), counted as refused for `why`.
    pub(crate) fn busy(why: Refused, reason: impl Into<String>, wait_ms: u64) -> Self {
        Refusal {
            retry_after_s: Some(wait_ms.div_ceil(1000).max(1)),
            refused: Some(why),
            ..Refusal::new(StatusCode::SERVICE_UNAVAILABLE, reason)
        }
    }
}

impl From<Error> for Refusal {
    /// A generator's error: the service cannot issue now (503), with the kind.
    fn from(e: Error) -> Self {
        Refusal {
            kind: Some(e.kind()),
            ..Refusal::new(
                StatusCode::SERVICE_UNAVAILABLE,
                format!("{}: {}", e.kind().name(), one_line(e.message())),
            )
        }
    }
}

/// What a request asked for, as the handlers read it.
pub(crate) struct Asked<'a, B> {
    pub(crate) req: &'a Request<B>,
    pub(crate) json: bool,
    /// HEAD: the headers GET would give, no body, and no ID spent.
    pub(crate) head: bool,
    pub(crate) flow: &'a Arc<Flow>,
}

/// Issues with an answer of about `bytes` taken on for the connection: a 429 when this
/// connection's answers are not being read, a 503 when all connections' unread answers are at
/// the service's bound. The answer's size is settled by the caller's response, or freed on a
/// refusal.
pub(crate) async fn answered<B, T>(
    a: &Asked<'_, B>,
    bytes: u64,
    issuing: impl std::future::Future<Output = Result<T, Refusal>>,
) -> Result<T, Refusal> {
    match a.flow.reserve(bytes) {
        Ok(()) => {}
        Err(Overfull::Connection) => {
            return Err(Refusal {
                status: StatusCode::TOO_MANY_REQUESTS,
                ..Refusal::busy(
                    Refused::Connection,
                    "too many answers unread on this connection: read them, or use another \
                     connection (--max-ids-in-flight)",
                    1000,
                )
            })
        }
        Err(Overfull::Service) => {
            return Err(Refusal::busy(
                Refused::Answers,
                "busy: the answers in flight are at the service's bound (--max-ids-in-flight)",
                1000,
            ))
        }
    }
    let issued = issuing.await;
    // What was reserved is let go: the response is counted, as it is, once made (`handle`).
    a.flow.settle(bytes, 0);
    issued
}

pub(crate) fn content_type(json: bool) -> &'static str {
    if json {
        JSON
    } else {
        TEXT
    }
}

pub(crate) fn respond(status: StatusCode, content_type: &'static str, body: Vec<u8>) -> Response {
    let mut r = hyper::Response::new(Full::new(Bytes::from(body)));
    *r.status_mut() = status;
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    r
}

pub fn text(status: StatusCode, body: impl Into<String>) -> Response {
    respond(status, TEXT, body.into().into_bytes())
}

pub(crate) fn refuse(refusal: Refusal, json: bool) -> Response {
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
    if let Some(s) = refusal.retry_after_s {
        r.headers_mut().insert(RETRY_AFTER, HeaderValue::from(s));
    }
    r
}

/// A path named in a refusal, cut at 100 characters.
pub(crate) fn shorten(path: &str) -> String {
    match path.char_indices().nth(100) {
        Some((at, _)) => format!("{}...", &path[..at]),
        None => path.to_string(),
    }
}
