//! `/metrics`: Prometheus's text format, from `stats()` of every generator (a family per field
//! of the core's table, `Stats::FIELDS`) and the service's own counts of answers.

use crate::answer::{text, Refused};
use crate::text::label_value;
use crate::{Response, Shared};
use hyper::StatusCode;
use rimeflake::frontend::{StatUnit, StatValue};
use rimeflake::{Generator, LeaseState, Stats};
use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// The service's own counts: answers by status class, and what it refused past its limits.
#[derive(Default)]
pub struct Counts {
    by_class: [AtomicU64; 6],
    refused: [AtomicU64; Refused::ALL.len()],
    /// Connections past `--max-connections`, answered 503 (or closed, past the refusals a
    /// moment can hold).
    pub(crate) connections_refused: AtomicU64,
    /// Accepts that failed (out of file descriptors, say).
    pub(crate) accept_errors: AtomicU64,
}

impl Counts {
    pub fn count(&self, status: StatusCode) {
        let class = (status.as_u16() / 100).min(5) as usize;
        self.by_class[class].fetch_add(1, Relaxed);
    }

    pub(crate) fn refused(&self, why: Refused) {
        self.refused[why as usize].fetch_add(1, Relaxed);
    }
}

/// A family of the service's own, beside the core's table of `Stats` fields: its help, type
/// and a sample per generator.
struct Family {
    name: &'static str,
    kind: &'static str,
    help: &'static str,
    value: fn(&Generator) -> f64,
}

const FAMILIES: &[Family] = &[
    Family {
        name: "rimeflake_worker_id",
        kind: "gauge",
        help: "The worker ID the namespace's generator issues with.",
        value: |g| g.worker_id() as f64,
    },
    Family {
        name: "rimeflake_generator_open",
        kind: "gauge",
        help: "1 while the namespace's generator is open, 0 once closed.",
        value: |g| if g.is_closed() { 0.0 } else { 1.0 },
    },
];

pub fn render(shared: &Shared) -> Response {
    let mut all: Vec<_> = shared.issuers();
    all.sort_by(|a, b| a.namespace.cmp(&b.namespace));
    // One snapshot per generator, so every family of a scrape reads the same moment.
    let all: Vec<(String, std::sync::Arc<Generator>, Stats)> = all
        .into_iter()
        .map(|i| {
            (
                i.namespace.clone(),
                i.generator.clone(),
                i.generator.stats(),
            )
        })
        .collect();
    let mut out = String::with_capacity(4096);
    // The core's table of counters: a family each, in seconds where a field is in ms or ns.
    for field in Stats::FIELDS {
        let per_state = if field.unit == StatUnit::Lease {
            ": 1 for the state it is in"
        } else {
            ""
        };
        let _ = writeln!(out, "# HELP {} {}{per_state}.", field.metric, field.help);
        let _ = writeln!(out, "# TYPE {} {}", field.metric, field.kind.as_str());
        for (namespace, _, stats) in &all {
            let ns = label_value(namespace);
            match field.value(stats) {
                StatValue::Lease(now) => {
                    for state in [LeaseState::None, LeaseState::Held, LeaseState::Lost] {
                        let _ = writeln!(
                            out,
                            "{}{{namespace=\"{ns}\",state=\"{}\"}} {}",
                            field.metric,
                            state.as_str(),
                            u8::from(state == now)
                        );
                    }
                }
                v => {
                    let value = v.metric_value(field.unit).unwrap_or_default();
                    let _ = writeln!(out, "{}{{namespace=\"{ns}\"}} {value}", field.metric);
                }
            }
        }
    }
    for f in FAMILIES {
        let _ = writeln!(out, "# HELP {} {}", f.name, f.help);
        let _ = writeln!(out, "# TYPE {} {}", f.name, f.kind);
        for (namespace, g, _) in &all {
            let _ = writeln!(
                out,
                "{}{{namespace=\"{}\"}} {}",
                f.name,
                label_value(namespace),
                (f.value)(g)
            );
        }
    }
    let _ = writeln!(
        out,
        "# HELP rimeflake_http_responses_total HTTP answers given, by status class.\n\
         # TYPE rimeflake_http_responses_total counter"
    );
    for (class, n) in shared.counts.by_class.iter().enumerate().skip(1) {
        let _ = writeln!(
            out,
            "rimeflake_http_responses_total{{code=\"{class}xx\"}} {}",
            n.load(Relaxed)
        );
    }
    let _ = writeln!(
        out,
        "# HELP rimeflake_http_requests_refused_total Requests refused past a limit (503 or 429 with Retry-After), by the limit.\n\
         # TYPE rimeflake_http_requests_refused_total counter"
    );
    for why in Refused::ALL {
        let _ = writeln!(
            out,
            "rimeflake_http_requests_refused_total{{reason=\"{}\"}} {}",
            why.label(),
            shared.counts.refused[why as usize].load(Relaxed)
        );
    }
    let l = &shared.limits;
    let gauges: [(&str, &str, &str, u64); 6] = [
        (
            "rimeflake_http_connections_open",
            "gauge",
            "Connections open now.",
            shared.connections_open.load(Relaxed),
        ),
        (
            "rimeflake_http_connections_refused_total",
            "counter",
            "Connections refused past --max-connections (a 503, or closed).",
            shared.counts.connections_refused.load(Relaxed),
        ),
        (
            "rimeflake_http_accept_errors_total",
            "counter",
            "Connections that could not be accepted (out of file descriptors, say).",
            shared.counts.accept_errors.load(Relaxed),
        ),
        (
            "rimeflake_http_requests_in_flight",
            "gauge",
            "Requests being answered now.",
            l.requests_now(),
        ),
        (
            "rimeflake_http_requests_waiting",
            "gauge",
            "Requests waiting for a generator now (the clock, a reservation).",
            l.waiting_now(),
        ),
        (
            "rimeflake_http_ids_in_flight",
            "gauge",
            "Answers made and not yet written to their clients, in IDs (20 bytes each).",
            l.unsent_ids(),
        ),
    ];
    for (name, kind, help, value) in gauges {
        let _ = writeln!(
            out,
            "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}"
        );
    }
    let mut r = text(StatusCode::OK, out);
    r.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    r
}
