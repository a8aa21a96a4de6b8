//! `rimeflake serve`: the HTTP service (crate rimeflake-serve) with generators built exactly as
//! `gen` builds its one: the main generator from the flags and environment, and one per key
//! with the key as its namespace.

use crate::args::{ServeArgs, SERVE_TOKEN_ENV};
use crate::fail::Failure;
use std::sync::Arc;
use std::time::Duration;

pub fn run(args: &ServeArgs) -> Result<(), Failure> {
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
        .namespace()
        .map_or_else(|| main.layout().default_namespace(), str::to_string);
    let worker = main.worker_id();
    let base = args.generator.clone();
    let factory: rimeflake_serve::Factory =
        Arc::new(move |key: &str| base.with_namespace(key).build_generator());
    let ns = namespace.clone();
    rimeflake_serve::run(config, main, namespace, factory, move |addr| {
        eprintln!(
            "rimeflake: serving on http://{addr} (HTTP/1.1 and h2c), namespace {ns}, worker {worker}"
        );
    })?;
    Ok(())
}
