//! `rimeflake serve`: the HTTP service (crate rimeflake-serve) with generators built exactly as
//! `gen` builds its one: the main generator from the flags and environment, and the Leaf
//! path's (one for every key, or one per key with the key as its namespace) in Leaf's layout
//! unless told otherwise.

use crate::args::ServeArgs;
use crate::fail::Failure;
#[cfg(feature = "serve")]
use {
    crate::args::{GeneratorArgs, LeafKeys, LogArg, SERVE_TOKEN_ENV},
    crate::warn::Warnings,
    rimeflake::frontend::Setting,
    rimeflake::{Generator, Layout},
    rimeflake_serve::log::Value,
    rimeflake_serve::{LeafPath, Log, LogFormat, Stop},
    std::net::{SocketAddr, ToSocketAddrs},
    std::sync::Arc,
    std::time::Duration,
};

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
    let log = Log::new(match args.log {
        LogArg::Text => LogFormat::Text,
        LogArg::Json => LogFormat::Json,
    });
    let token = std::env::var(SERVE_TOKEN_ENV)
        .ok()
        .filter(|t| !t.is_empty());
    let config = rimeflake_serve::Config {
        listen: resolve(&args.listen)?,
        max_n: args.max_n as usize,
        max_keys: args.max_keys as usize,
        keys: args.keys.clone(),
        max_connections: args.max_connections as usize,
        max_requests: args.max_requests as usize,
        max_ids_in_flight: args.max_ids_in_flight,
        wait_deadline: Duration::from_secs_f64(args.wait_deadline),
        max_streams: args.max_streams,
        token,
        header_timeout: Duration::from_secs_f64(args.header_timeout),
        idle_timeout: Duration::from_secs_f64(args.idle_timeout),
        shutdown_timeout: Duration::from_secs_f64(args.shutdown_timeout),
    };
    let warnings = move || Warnings::to(Arc::new(move |m: &str| log.warn("core_warning", m, &[])));
    let above_failed = |e: rimeflake::Error| -> Failure {
        match args.above {
            // An ID that is not one of the layout is a bad argument (exit 2), as a bad layout.
            Some(id) => Failure::from(rimeflake::Error::new(
                match e.kind() {
                    rimeflake::ErrorKind::InvalidId => rimeflake::ErrorKind::Config,
                    kind => kind,
                },
                format!("--above {id}: {}", e.message()),
            )),
            None => e.into(),
        }
    };

    // The Leaf path: its layout and namespace, and whether the main generator is it.
    let leaf_spec = args.leaf_layout.clone().unwrap_or_else(|| "twitter".into());
    let leaf_layout = Layout::from_spec(&leaf_spec)?;
    let leaf_namespace = args
        .leaf_namespace
        .clone()
        .unwrap_or_else(|| leaf_layout.default_namespace());
    let main_layout = rimeflake::frontend::layout(args.generator.text(Setting::Layout))?;
    let main_namespace = args
        .generator
        .namespace()
        .map_or_else(|| main_layout.default_namespace(), str::to_string);
    let main_is_leaf = args.leaf_keys == LeafKeys::Shared
        && main_layout == leaf_layout
        && main_namespace == leaf_namespace;

    let main = args
        .generator
        .build_with(warnings(), args.above.filter(|_| main_is_leaf))
        .map_err(above_failed)?;
    let leaf_args = args
        .generator
        .with(Setting::Layout, &leaf_spec)
        .with(Setting::Namespace, &leaf_namespace);
    if let (Some(id), false) = (args.above, main_is_leaf) {
        // Refused now rather than at the path's first request: the core's own check.
        Generator::builder()
            .layout(leaf_layout.clone())
            .worker_id(0)
            .in_memory()
            .start_above(id)
            .build()
            .map_err(above_failed)?
            .close()?;
    }
    let above = args.above;
    let factory: rimeflake_serve::Factory = Arc::new(move |namespace: &str| {
        leaf_args
            .with(Setting::Namespace, namespace)
            .build_with(warnings(), above)
    });
    let leaf = match args.leaf_keys {
        LeafKeys::Shared if main_is_leaf => LeafPath::Main,
        LeafKeys::Shared => LeafPath::Shared {
            factory,
            layout: leaf_layout.clone(),
            namespace: leaf_namespace.clone(),
        },
        LeafKeys::Separate => LeafPath::Separate {
            factory,
            layout: leaf_layout.clone(),
        },
    };

    let about = About {
        main: format!(
            "namespace {main_namespace} (layout {}), worker {}",
            main.layout().name(),
            main.worker_id()
        ),
        leaf: match &leaf {
            LeafPath::Main => "the main generator, every key one ID space".to_string(),
            LeafPath::Shared { .. } => format!(
                "namespace {leaf_namespace} (layout {}, its generator made on the first \
                 request), every key one ID space",
                leaf_layout.name(),
            ),
            _ => format!(
                "a namespace per key (layout {}, each made on its first request), at most {} \
                 keys",
                leaf_layout.name(),
                args.max_keys
            ),
        },
        backend: backend(&args.generator),
        worker: main.worker_id(),
    };
    let token_on = config.token.is_some();
    let config_c = config.clone();
    let stopped = rimeflake_serve::run(
        config,
        (main_namespace, main),
        leaf,
        log,
        move |addr, files| started(&log, &config_c, &about, addr, files, token_on, args),
    )?;
    match stopped {
        Stop::Closed { .. } => Ok(()),
        // The service said so in its log; the status is the signal's, as a shell reports it.
        Stop::Abandoned { signal } => std::process::exit(128 + signal),
    }
}

#[cfg(feature = "serve")]
/// What the start line says of the generators and where they keep their state.
struct About {
    main: String,
    leaf: String,
    backend: String,
    worker: u64,
}

#[cfg(feature = "serve")]
/// The start line, with the whole configuration; and a warning when other hosts can reach a
/// service that asks for no token.
fn started(
    log: &Log,
    config: &rimeflake_serve::Config,
    about: &About,
    addr: SocketAddr,
    files: u64,
    token_on: bool,
    args: &ServeArgs,
) {
    let keys = config
        .keys
        .as_ref()
        .map_or("any".to_string(), |k| k.join(","));
    let message = format!(
        "serving on http://{addr} (HTTP/1.1 and h2c): {}; Leaf path: {}, keys {keys}{}; \
         backend {}; token {}; limits: {} connections (open files {files}), {} requests, {} \
         streams a connection, {} IDs in flight, n at most {}, wait deadline {} s; timeouts: \
         header {} s, idle {} s, shutdown {} s",
        about.main,
        about.leaf,
        args.above
            .map_or(String::new(), |id| format!(", above {id}")),
        about.backend,
        if token_on { "on" } else { "off" },
        config.max_connections,
        config.max_requests,
        config.max_streams,
        config.max_ids_in_flight,
        config.max_n,
        config.wait_deadline.as_secs_f64(),
        config.header_timeout.as_secs_f64(),
        config.idle_timeout.as_secs_f64(),
        config.shutdown_timeout.as_secs_f64(),
    );
    let fields: Vec<(&str, Value)> = vec![
        ("listen", addr.to_string().into()),
        ("worker", about.worker.into()),
        ("backend", about.backend.clone().into()),
        ("token", token_on.into()),
        ("max_connections", (config.max_connections as u64).into()),
        ("open_files", files.into()),
        ("max_requests", (config.max_requests as u64).into()),
        ("max_ids_in_flight", config.max_ids_in_flight.into()),
    ];
    log.info("start", &message, &fields);
    if !token_on && !addr.ip().is_loopback() {
        log.warn(
            "no_token",
            &format!(
                "{addr} is reachable from other hosts and no token is set: anyone who reaches \
                 it can take IDs and read /metrics; set {SERVE_TOKEN_ENV} (every request but \
                 /healthz and /readyz must then carry it)"
            ),
            &[("listen", addr.to_string().into())],
        );
    }
}

#[cfg(feature = "serve")]
/// Where the generators keep their leases and state, its password masked.
fn backend(args: &GeneratorArgs) -> String {
    if args.in_memory {
        return "memory (no state: not restart-safe)".into();
    }
    let given = match args.text(Setting::Backend) {
        Some(text) => rimeflake::Backend::parse(text).ok(),
        None => rimeflake::frontend::backend_from_env().ok().flatten(),
    };
    match given {
        Some(b) if b.is_remote() => b.to_string(),
        Some(rimeflake::Backend::Memory) => "memory (no state: not restart-safe)".into(),
        _ => match rimeflake::frontend::state_dir(args.state_dir()) {
            Ok(dir) => format!("local (state directory {})", dir.display()),
            Err(_) => "local".into(),
        },
    }
}

#[cfg(feature = "serve")]
/// `--listen`: an IP address or a host name with a port; a name that resolves to several
/// addresses is served on the first, IPv4 first.
fn resolve(listen: &str) -> Result<SocketAddr, Failure> {
    let bad = |why: String| Failure::usage(format!("--listen {listen}: {why}"));
    let addrs: Vec<SocketAddr> = listen
        .to_socket_addrs()
        .map_err(|e| {
            bad(format!(
                "{e} (give HOST:PORT, such as 127.0.0.1:8080 or localhost:8080)"
            ))
        })?
        .collect();
    addrs
        .iter()
        .find(|a| a.is_ipv4())
        .or(addrs.first())
        .copied()
        .ok_or_else(|| bad("the name resolves to no address".into()))
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
