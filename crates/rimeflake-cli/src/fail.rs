//! How the command fails: one line on stderr and an exit status, never a panic trace.

use rimeflake::ErrorKind;
use std::io;
use std::process::ExitCode;

/// Exit status for a runtime failure (an invalid ID, a clock error, state or lease trouble).
pub const EXIT_RUNTIME: u8 = 1;
/// Exit status for bad arguments or configuration.
pub const EXIT_USAGE: u8 = 2;

/// Why the command stopped early.
#[derive(Debug)]
pub enum Failure {
    /// Print `rimeflake: error: <message>` and exit with `code`.
    Error { code: u8, message: String },
    /// The reader of stdout went away (`| head`): nothing more to say, exit 0.
    ClosedPipe,
}

impl Failure {
    pub fn usage(message: impl Into<String>) -> Self {
        Failure::Error {
            code: EXIT_USAGE,
            message: message.into(),
        }
    }

    pub fn runtime(message: impl Into<String>) -> Self {
        Failure::Error {
            code: EXIT_RUNTIME,
            message: message.into(),
        }
    }

    /// Reports the failure and gives the exit status.
    pub fn report(self) -> ExitCode {
        match self {
            Failure::ClosedPipe => ExitCode::SUCCESS,
            Failure::Error { code, message } => {
                eprintln!("rimeflake: error: {}", one_line(&message));
                ExitCode::from(code)
            }
        }
    }
}

impl From<rimeflake::Error> for Failure {
    /// A configuration error is the caller's to fix (exit 2); any other kind is a failure at run
    /// time (exit 1). Kinds added later fall into the second group.
    fn from(e: rimeflake::Error) -> Self {
        let code = match e.kind() {
            ErrorKind::Config => EXIT_USAGE,
            _ => EXIT_RUNTIME,
        };
        Failure::Error {
            code,
            message: e.message().to_string(),
        }
    }
}

impl From<io::Error> for Failure {
    fn from(e: io::Error) -> Self {
        if e.kind() == io::ErrorKind::BrokenPipe {
            Failure::ClosedPipe
        } else {
            Failure::runtime(format!("i/o: {e}"))
        }
    }
}

/// Folds a clap error (usage line, tips, possible values on lines of their own) into one line.
/// The lines a line ending in `:` introduces (the arguments not provided) are its list:
/// `...not provided: --worker <N>, --x <X>`.
pub fn clap_message(rendered: &str) -> String {
    let mut joined = String::new();
    let mut in_list = false;
    for line in rendered.lines().map(str::trim).filter(|l| {
        !l.is_empty() && !l.starts_with("Usage:") && !l.starts_with("For more information")
    }) {
        if line.starts_with("tip:") {
            in_list = false;
        }
        if joined.ends_with(':') {
            joined.push(' ');
            in_list = true;
        } else if in_list {
            joined.push_str(", ");
        } else if !joined.is_empty() {
            joined.push_str("; ");
        }
        joined.push_str(line);
    }
    let joined = joined.strip_prefix("error: ").unwrap_or(&joined);
    format!("{joined} (see rimeflake --help)")
}

/// `message` on one line: any line breaks become `; `.
pub fn one_line(message: &str) -> String {
    message
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clap_errors_fold_into_one_line() {
        let rendered = "error: invalid value 'xml' for '--format <FORMAT>'\n  [possible values: dec, hex]\n\nFor more information, try '--help'.\n";
        assert_eq!(
            clap_message(rendered),
            "invalid value 'xml' for '--format <FORMAT>'; [possible values: dec, hex] (see rimeflake --help)"
        );
    }

    #[test]
    fn a_list_of_missing_arguments_follows_its_colon() {
        let rendered = "error: the following required arguments were not provided:\n  --worker <N>\n  --x <X>\n\nUsage: rimeflake state reset --worker <N>\n\nFor more information, try '--help'.\n";
        assert_eq!(
            clap_message(rendered),
            "the following required arguments were not provided: --worker <N>, --x <X> (see rimeflake --help)"
        );
    }

    #[test]
    fn config_is_usage_and_the_rest_is_runtime() {
        for kind in ErrorKind::ALL {
            let Failure::Error { code, .. } = Failure::from(rimeflake::Error::new(kind, "x"))
            else {
                panic!("{kind:?} must be an error");
            };
            let want = if kind == ErrorKind::Config {
                EXIT_USAGE
            } else {
                EXIT_RUNTIME
            };
            assert_eq!(code, want, "{kind:?}");
        }
    }

    #[test]
    fn a_closed_pipe_is_quiet() {
        let e = io::Error::new(io::ErrorKind::BrokenPipe, "gone");
        assert!(matches!(Failure::from(e), Failure::ClosedPipe));
    }
}
