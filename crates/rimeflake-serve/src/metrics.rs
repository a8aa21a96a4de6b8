//! `/metrics`: Prometheus's text format, from `stats()` of every generator and the service's
//! own counts of answers.

use crate::text::label_value;
use crate::{Response, Shared};
use hyper::StatusCode;
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
    const ALL: [Refused; 5] = [
        Refused::Requests,
        Refused::Connection,
        Refused::Answers,
        Refused::Waiting,
        Refused::Deadline,
    ];

    fn label(self) -> &'static str {
        match self {
            Refused::Requests => "requests",
            Refused::Connection => "connection",
            Refused::Answers => "answers",
            Refused::Waiting => "waiting",
            Refused::Deadline => "deadline",
        }
    }
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

/// One metric family: its help, type and a sample per generator.
struct Family {
    name: &'static str,
    kind: &'static str,
    help: &'static str,
    /// From the generator and one snapshot of its stats, taken once per scrape.
    value: fn(&Generator, &Stats) -> f64,
}

const FAMILIES: &[Family] = &[
    Family {
        name: "rimeflake_ids_issued_total",
        kind: "counter",
        help: "IDs handed out by the namespace's generator.",
        value: |_, s| s.ids_issued as f64,
    },
    Family {
        name: "rimeflake_clock_rollbacks_total",
        kind: "counter",
        help: "Times the clock was seen to go back (each step back counts once).",
        value: |_, s| s.rollbacks as f64,
    },
    Family {
        name: "rimeflake_clock_rollback_largest_seconds",
        kind: "gauge",
        help: "The largest step back of the clock seen.",
        value: |_, s| s.largest_rollback_ms as f64 / 1000.0,
    },
    Family {
        name: "rimeflake_clock_id_switches_total",
        kind: "counter",
        help: "Switches to another clock-id after a large rollback.",
        value: |_, s| s.clock_id_bumps as f64,
    },
    Family {
        name: "rimeflake_clock_id_reuses_total",
        kind: "counter",
        help: "Of the switches, those to a lower clock-id whose IDs all lie in the past.",
        value: |_, s| s.clock_id_reuses as f64,
    },
    Family {
        name: "rimeflake_clock_id",
        kind: "gauge",
        help: "The clock-id in use.",
        value: |_, s| s.clock_id as f64,
    },
    Family {
        name: "rimeflake_waits_total",
        kind: "counter",
        help: "Calls that had to wait (for the clock to catch up, or for a reservation).",
        value: |_, s| s.waits as f64,
    },
    Family {
        name: "rimeflake_wait_seconds_total",
        kind: "counter",
        help: "Time spent in those waits.",
        value: |_, s| s.waited_ms as f64 / 1000.0,
    },
    Family {
        name: "rimeflake_borrowed_seconds_total",
        kind: "counter",
        help: "Time units the counter moved ahead of the clock when a unit's sequence ran out.",
        value: |_, s| s.borrowed_ms as f64 / 1000.0,
    },
    Family {
        name: "rimeflake_server_skew_seconds",
        kind: "gauge",
        help: "On a server backend: the server's clock minus this host's when the lease was taken.",
        value: |_, s| s.server_skew_ms as f64 / 1000.0,
    },
    Family {
        name: "rimeflake_reservation_writes_total",
        kind: "counter",
        help: "Writes of the durable state (reservations, clock-id switches, start and close), failed ones included.",
        value: |_, s| s.reservation_writes as f64,
    },
    Family {
        name: "rimeflake_reservation_write_failures_total",
        kind: "counter",
        help: "Writes of the durable state that failed.",
        value: |_, s| s.reservation_write_failures as f64,
    },
    Family {
        name: "rimeflake_reservation_write_seconds_total",
        kind: "counter",
        help: "Time spent in writes of the durable state (over the writes: their mean latency).",
        value: |_, s| s.reservation_write_ns as f64 / 1e9,
    },
    Family {
        name: "rimeflake_lease_remaining_seconds",
        kind: "gauge",
        help: "While the server's lease is held: how long it stays valid without another renewal; 0 otherwise.",
        value: |_, s| s.lease_remaining_ms as f64 / 1000.0,
    },
    Family {
        name: "rimeflake_lease_renewals_total",
        kind: "counter",
        help: "Renewals of the server's lease answered, failed ones included.",
        value: |_, s| s.lease_renewals as f64,
    },
    Family {
        name: "rimeflake_lease_renewal_failures_total",
        kind: "counter",
        help: "Renewals of the server's lease that failed (an error, or the server refused).",
        value: |_, s| s.lease_renewal_failures as f64,
    },
    Family {
        name: "rimeflake_worker_id",
        kind: "gauge",
        help: "The worker ID the namespace's generator issues with.",
        value: |g, _| g.worker_id() as f64,
    },
    Family {
        name: "rimeflake_generator_open",
        kind: "gauge",
        help: "1 while the namespace's generator is open, 0 once closed.",
        value: |g, _| if g.is_closed() { 0.0 } else { 1.0 },
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
    for f in FAMILIES {
        let _ = writeln!(out, "# HELP {} {}", f.name, f.help);
        let _ = writeln!(out, "# TYPE {} {}", f.name, f.kind);
        for (namespace, g, stats) in &all {
            let _ = writeln!(
                out,
                "{}{{namespace=\"{}\"}} {}",
                f.name,
                label_value(namespace),
                (f.value)(g, stats)
            );
        }
    }
    let _ = writeln!(
        out,
        "# HELP rimeflake_lease_state The server lease's state: 1 for the state it is in.\n\
         # TYPE rimeflake_lease_state gauge"
    );
    for (namespace, _, stats) in &all {
        let now = stats.lease;
        for state in [LeaseState::None, LeaseState::Held, LeaseState::Lost] {
            let _ = writeln!(
                out,
                "rimeflake_lease_state{{namespace=\"{}\",state=\"{}\"}} {}",
                label_value(namespace),
                state.as_str(),
                u8::from(state == now)
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
    let mut r = crate::api::text(StatusCode::OK, out);
    r.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    r
}
