//! PostgreSQL's errors in words: config errors for what a user must fix (credentials, rights,
//! certificates, TLS the server lacks), lease errors for what may pass (a server down or slow).

use super::{Fail, PgConn};
use crate::error::{Error, ErrorKind};
use crate::lease::remote::tls;
use tokio_postgres::error::SqlState;

impl PgConn {
    /// A failure told in rimeflake's terms: the kind says whether a person must fix something
    /// (config) or the server is unavailable (lease). Never holds the password.
    pub(super) fn explain(&self, fail: Fail, what: &str, connected: bool) -> Error {
        let e = match fail {
            Fail::Ours(e) => return e,
            Fail::Pg(e) => e,
        };
        let url = &self.shown;
        if let Some(e) = tls::explain(&e, &format!("PostgreSQL at {url}"), &self.tls) {
            return e;
        }
        let text = self.scrub(chain(&e));
        let code = e.code();
        let is = |state: &SqlState| code == Some(state);
        if is(&SqlState::INVALID_PASSWORD) {
            Error::config(format!(
                "PostgreSQL at {url} refused the login: wrong password ({text})"
            ))
        } else if is(&SqlState::INVALID_AUTHORIZATION_SPECIFICATION)
            && text.contains("client certificate")
            && self.tls.client.is_none()
        {
            Error::config(format!(
                "PostgreSQL at {url} refused the login: it wants a client certificate; give \
                 one with sslcert=PATH&sslkey=PATH ({text})"
            ))
        } else if is(&SqlState::INVALID_AUTHORIZATION_SPECIFICATION) {
            Error::config(format!(
                "PostgreSQL at {url} refused the login: unknown user, or no pg_hba.conf entry \
                 lets it in ({text})"
            ))
        } else if is(&SqlState::INVALID_CATALOG_NAME) {
            Error::config(format!(
                "PostgreSQL at {url}: unknown database ({text}); create it, or name another in \
                 the URL"
            ))
        } else if is(&SqlState::INSUFFICIENT_PRIVILEGE) {
            Error::config(format!(
                "PostgreSQL at {url}: permission denied ({what}: {text}); grant the user the \
                 rights it lacks, or create rimeflake's tables beforehand (see the schema in \
                 the docs)"
            ))
        } else if code.is_none() && text.contains("server does not support TLS") {
            Error::config(format!(
                "PostgreSQL at {url} does not take TLS connections, and the URL's sslmode \
                 requires TLS: turn ssl on at the server, or use sslmode=prefer or disable on \
                 a trusted network"
            ))
        } else if code.is_none()
            && (text.starts_with("invalid configuration")
                || text.starts_with("authentication error"))
        {
            // tokio-postgres names these kinds only in its messages: a password the server
            // wants and the URL lacks, TLS the URL requires, an authentication it cannot do.
            Error::config(format!("PostgreSQL at {url}: {text}"))
        } else if connected {
            Error::new(
                ErrorKind::Lease,
                format!("PostgreSQL at {url} failed ({what}): {text}"),
            )
        } else {
            Error::new(
                ErrorKind::Lease,
                format!("cannot connect to PostgreSQL at {url}: {text}"),
            )
        }
    }

    /// `text` with the password replaced, in case a driver or server message ever repeats it.
    pub(super) fn scrub(&self, text: String) -> String {
        match self.config.get_password().map(String::from_utf8_lossy) {
            Some(pw) if !pw.is_empty() && text.contains(pw.as_ref()) => {
                text.replace(pw.as_ref(), "***")
            }
            _ => text,
        }
    }
}

/// An error with its causes, which tokio-postgres keeps apart ("db error" alone says little).
pub(super) fn chain(e: &tokio_postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return db.to_string().replace('\n', "; ");
    }
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// A unique or duplicate-object error from concurrent `CREATE TABLE IF NOT EXISTS`: the catalog
/// row of the other creator's table collided with ours.
pub(super) fn is_creation_race(e: &tokio_postgres::Error) -> bool {
    [
        SqlState::UNIQUE_VIOLATION,
        SqlState::DUPLICATE_TABLE,
        SqlState::DUPLICATE_OBJECT,
    ]
    .iter()
    .any(|s| e.code() == Some(s))
}
