//! `rimeflake serve`: the HTTP service (crate rimeflake-serve) with generators built exactly as
//! `gen` builds its one: the main generator from the flags and environment, and one per key
//! with the key as its namespace.

use crate::args::ServeArgs;
use crate::fail::Failure;

/// A build without the `serve` feature (`make demo`'s) has the subcommand and its arguments, so
/// that `rimeflake serve` says what is missing rather than that no such command exists.
#[cfg(not(feature = "serve"))]
pub fn run(_args: &ServeArgs) -> Result<(), Failure> {
    Err(Failure::usage(
        "serve is not in this build of rimeflake: it was built without the cargo feature \"serve\" \
         (cargo build -p rimeflake-cli builds every feature; so do the release and cargo install)",
    ))
}

#[cfg(feature = "serve")]
pub fn run(args: &ServeArgs) -> Result<(), Failure> {
    use crate::args::SERVE_TOKEN_ENV;
    use std::sync::Arc;
    use std::time::Duration;

    let token = std::env::var(SERVE_TOKEN_ENV)
        .ok()
        .filter(|t| !t.is_empty());
    let config = rimeflake_serve::Config {
        listen: args.listen,
        max_n: args.max_n as usize,
        max_keys: args.max_keys as usize,
        max_connections: args.max_connections as usize,
        token,
        header_timeout: Duration::from_secs_f64(args.header_timeout),
        idle_timeout: Duration::from_secs_f64(args.idle_timeout),
        shutdown_timeout: Duration::from_secs_f64(args.shutdown_timeout),
    };
    let main = args.generator.build()?;
    let namespace = args
        .generator
        .namespace
        .clone()
        .unwrap_or_else(|| main.layout().default_namespace());
    let worker = main.worker_id();
    let base = args.generator.clone();
    let factory: rimeflake_serve::Factory = Arc::new(move |key: &str| {
        let mut keyed = base.clone();
        keyed.namespace = Some(key.to_string());
        keyed.build_generator()
    });
    let ns = namespace.clone();
    rimeflake_serve::run(config, main, namespace, factory, move |addr| {
        eprintln!(
            "rimeflake: serving on http://{addr} (HTTP/1.1 and h2c), namespace {ns}, worker {worker}"
        );
    })?;
    Ok(())
}

/// What a build without the `serve` feature (`make demo`'s) says when asked to serve:
/// `cargo test -p rimeflake-cli --no-default-features --bins` runs it. (A server URL in such a
/// build is the core's to refuse: its tests without the backends' features check the message.)
#[cfg(all(test, not(feature = "serve")))]
mod tests {
    use crate::args::{Cli, Command};
    use crate::fail::{Failure, EXIT_USAGE};
    use clap::Parser;

    #[test]
    fn serve_says_it_was_left_out() {
        let cli = Cli::try_parse_from(["rimeflake", "serve", "--listen", "127.0.0.1:0"]).unwrap();
        let Command::Serve(args) = &cli.command else {
            panic!("not serve: {:?}", cli.command)
        };
        match super::run(args) {
            Err(Failure::Error { code, message }) => {
                assert_eq!(code, EXIT_USAGE, "{message}");
                assert!(message.contains("cargo feature \"serve\""), "{message}");
            }
            other => panic!("not a usage error: {other:?}"),
        }
    }
}
