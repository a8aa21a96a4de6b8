//! [`Warning`]: what the core has to say that is not an error. The core prints nothing; a
//! front end passes a callback to [`Builder::on_warning`](crate::Builder::on_warning) and shows
//! warnings its own way (the CLI on stderr, Python with `warnings.warn`, Node with
//! `process.emitWarning`, C through a callback).

use std::fmt;
use std::sync::Arc;

/// A warning: a stable [`Warning::kind`] to filter on, and a message for people.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    kind: &'static str,
    message: String,
}

impl Warning {
    /// The kind of warning about a container's private default state directory.
    pub const CONTAINER: &'static str = "container";
    /// The kind of warning about a remote backend: its server's settings, or a clock skew
    /// between this host and the server.
    pub const BACKEND: &'static str = "backend";
    /// The kind of warning of a decoder that assumed the default layout (none was given) and
    /// read a time well in the future: another layout made the ID
    /// ([`frontend::assumed_layout_warning`](crate::frontend::assumed_layout_warning)).
    pub const ASSUMED_LAYOUT: &'static str = "assumed_layout";

    pub(crate) fn new(kind: &'static str, message: impl Into<String>) -> Self {
        Warning {
            kind,
            message: message.into(),
        }
    }

    /// A stable name of what the warning is about, such as `container` ([`Warning::CONTAINER`]).
    pub fn kind(&self) -> &'static str {
        self.kind
    }

    /// The message, without a prefix such as "warning:".
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// The callback a builder keeps (`Debug` and `Clone` so the builder stays both).
#[derive(Clone)]
pub(crate) struct WarningSink(pub(crate) Arc<dyn Fn(&Warning) + Send + Sync>);

impl WarningSink {
    pub(crate) fn emit(sink: Option<&WarningSink>, warning: Warning) {
        if let Some(sink) = sink {
            (sink.0)(&warning);
        }
    }
}

impl fmt::Debug for WarningSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("WarningSink")
    }
}
