//! The command line, as clap reads it, and the two things every subcommand builds from it: a
//! [`Layout`] and a [`Generator`].

use crate::fail::Failure;
use clap::{Args, Parser, Subcommand, ValueEnum};
use rimeflake::{Backend, Encoding, Frontend, Generator, Layout};
use std::path::PathBuf;

const AFTER_HELP: &str = "What is not given comes from the environment: RIMEFLAKE_LAYOUT, \
RIMEFLAKE_WORKER_ID, RIMEFLAKE_BACKEND, RIMEFLAKE_STATE_DIR (an empty one counts as unset), and \
RIMEFLAKE_LEASE_TTL_MS (a server backend's lease, 200 ms to a day; default 10 s). \
RIMEFLAKE_NO_DURABILITY_WARNING=1 quiets the warnings about a development server's durability \
settings (Redis appendonly, appendfsync, maxmemory-policy; PostgreSQL fsync, synchronous_commit). \
RIMEFLAKE_WAIT_AT_TAKEOVER=1 makes every start on a server backend begin past what a lost holder \
may have issued (up to a 1 s wait with the defaults), for servers restored from backups.

Exit status: 0 on success, 1 when rimeflake fails (an invalid ID, a clock \
that went back too far, a state or lease error), 2 for bad arguments or configuration.";

/// 64-bit, time-ordered, unique IDs that survive clock rollbacks, restarts, forks and moving
/// workers.
#[derive(Debug, Parser)]
#[command(name = "rimeflake", version, after_help = AFTER_HELP)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Generate IDs, one a line.
    Gen(GenArgs),
    /// Show the clock-id, UTC time, worker and sequence of IDs.
    Decode(DecodeArgs),
    /// Measure how many IDs a second threads sharing one generator get.
    Bench(BenchArgs),
    /// Serve IDs over HTTP (HTTP/1.1 and HTTP/2 cleartext) until SIGTERM or SIGINT.
    Serve(ServeArgs),
    /// Inspect the state directory.
    #[command(subcommand)]
    State(StateCommand),
}

/// What `rimeflake state` does.
#[derive(Debug, Subcommand)]
pub enum StateCommand {
    /// List leases, their holders, clock-ids and reservations, per namespace.
    Show(StateShowArgs),
    /// Replace a worker ID's CORRUPT state with one reserved past anything the lost state can
    /// have held (its high-water file, or the evidence you give); the corrupt file is copied
    /// aside. Refused while a process holds the worker ID.
    Reset(StateResetArgs),
    /// After a server's data was restored from a backup: the next start of every worker ID of
    /// the namespace (of every namespace on the server, without --namespace) takes the state it
    /// finds for a possibly stale copy and waits out what its last holder may have issued since
    /// (reserve_ahead, 1 s by default). Run it once the restore is done.
    Restored(StateServerArgs),
    /// Set how many replicas must acknowledge every lease and state write on a server (of the
    /// namespace, or of every namespace on the server without --namespace): lower it when a
    /// replica is gone for good, or 0 for a standalone server.
    Replicas(StateReplicasArgs),
}

/// Arguments of `rimeflake state restored`.
#[derive(Debug, Args)]
pub struct StateServerArgs {
    /// The server: a redis://, redis+sentinel:// or postgresql:// URL [default:
    /// $RIMEFLAKE_BACKEND]
    #[arg(long, value_name = "URL")]
    pub backend: Option<String>,
    /// Only this namespace [default: every namespace on the server]
    #[arg(long, value_name = "NS")]
    pub namespace: Option<String>,
}

/// Arguments of `rimeflake state replicas`.
#[derive(Debug, Args)]
pub struct StateReplicasArgs {
    #[command(flatten)]
    pub server: StateServerArgs,
    /// The replicas that must acknowledge every write (on PostgreSQL, 1: commits go through a
    /// synchronous standby; 0: they need not)
    #[arg(long, value_name = "N")]
    pub require: u32,
}

/// Arguments of `rimeflake state reset`.
#[derive(Debug, Args)]
pub struct StateResetArgs {
    /// The worker ID whose state file is corrupt.
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = parse_worker)]
    pub worker: u64,
    /// The namespace [default: the layout's own, as generators use: default, twitter, ...]
    #[arg(long, value_name = "NS")]
    pub namespace: Option<String>,
    /// The layout [default: $RIMEFLAKE_LAYOUT, else the one in the namespace's layout file]
    #[command(flatten)]
    pub layout: LayoutArgs,
    /// The state directory [default: $RIMEFLAKE_STATE_DIR, else $XDG_STATE_HOME/rimeflake or
    /// ~/.local/state/rimeflake]
    #[arg(long, value_name = "DIR", value_parser = any_path, conflicts_with = "backend")]
    pub state_dir: Option<PathBuf>,
    /// A server backend whose state to reset instead: a redis:// or postgresql:// URL (a server
    /// keeps no high-water marks: give --above-id or --reserve-until) [default:
    /// $RIMEFLAKE_BACKEND when it names a server]
    #[arg(long, value_name = "URL")]
    pub backend: Option<String>,
    /// Evidence when the high-water file is lost too: an ID at least as high as every ID this
    /// worker ID issued (the highest in your logs or database).
    #[arg(long, value_name = "ID")]
    pub above_id: Option<u64>,
    /// Evidence when the high-water file is lost too: a time no ID of this worker ID has
    /// reached, on any clock-id (ISO 8601 UTC, e.g. 2026-01-01T00:00:00Z, or Unix ms).
    #[arg(long, value_name = "TIME")]
    pub reserve_until: Option<String>,
}

/// Arguments of `rimeflake state show`.
#[derive(Debug, Args)]
pub struct StateShowArgs {
    /// The state directory (default: $RIMEFLAKE_STATE_DIR, else $XDG_STATE_HOME/rimeflake or
    /// ~/.local/state/rimeflake).
    #[arg(long, value_name = "DIR", value_parser = any_path, conflicts_with = "backend")]
    pub state_dir: Option<PathBuf>,
    /// A server backend to read instead of the state directory: a redis:// or postgresql:// URL
    /// [default: $RIMEFLAKE_BACKEND when it names a server]
    #[arg(long, value_name = "URL")]
    pub backend: Option<String>,
    /// With a server backend: list only this namespace [default: every namespace on the server,
    /// or with a layout (--layout or $RIMEFLAKE_LAYOUT) that layout's own]
    #[arg(long, value_name = "NS")]
    pub namespace: Option<String>,
    /// With a server backend: list only this layout's own namespace (default, twitter, ...)
    /// [default: $RIMEFLAKE_LAYOUT]
    #[command(flatten)]
    pub layout: LayoutArgs,
}

/// The layout: a preset name or a layout spec, parsed by the core.
#[derive(Clone, Debug, Args)]
pub struct LayoutArgs {
    /// A preset (default, twitter, sonyflake, sonyflake_v2, baidu, js_safe) or a layout spec
    /// such as `clock_id=0,time=41,worker=10,sequence=12,epoch_ms=1420070400000`, or a preset
    /// changed by pairs: `baidu,epoch=2025-01-01T00:00:00Z` [default: $RIMEFLAKE_LAYOUT, else
    /// default]
    #[arg(long, value_name = "PRESET|SPEC")]
    pub layout: Option<String>,
}

impl LayoutArgs {
    /// The layout given, else the environment's, else `default` (the core decides).
    pub fn layout(&self) -> Result<Layout, Failure> {
        Ok(rimeflake::frontend::layout(self.layout.as_deref())?)
    }
}

/// Where the generator's worker ID and state come from.
#[derive(Clone, Debug, Args)]
pub struct GeneratorArgs {
    #[command(flatten)]
    pub layout: LayoutArgs,
    /// A fixed worker ID [default: $RIMEFLAKE_WORKER_ID, else lease a free one: the lowest of
    /// the state directory, or one from a random start on a server backend].
    /// RIMEFLAKE_WORKER_ID=ordinal takes a Kubernetes StatefulSet pod's ordinal:
    /// $RIMEFLAKE_POD_INDEX, else the -<n> ending $HOSTNAME (web-3 is 3)
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = parse_worker)]
    pub worker: Option<u64>,
    /// The state directory [default: $RIMEFLAKE_STATE_DIR, else the user's state directory]
    #[arg(long, value_name = "DIR", conflicts_with = "in_memory", value_parser = any_path)]
    pub state_dir: Option<PathBuf>,
    /// The namespace: worker IDs and state are separate per namespace, and a namespace keeps
    /// one layout [default: the layout's own: default, twitter, ..., custom-<fingerprint>]
    #[arg(long, value_name = "NS")]
    pub namespace: Option<String>,
    /// Where leases and state live: local (the state directory), memory (no state: NOT
    /// restart-safe, needs a worker ID), or a server shared by many hosts:
    /// redis[s]://[:PASSWORD@]HOST[:PORT][/DB] or postgresql://USER[:PASSWORD]@HOST[:PORT]/DB
    /// (TLS: ?sslmode=verify-full&sslrootcert=CA.pem) [default: $RIMEFLAKE_BACKEND, else local]
    #[arg(long, value_name = "BACKEND", conflicts_with = "in_memory")]
    pub backend: Option<String>,
    /// The same as --backend memory.
    #[arg(long)]
    pub in_memory: bool,
}

/// `--worker`: a clear message for `-1` or `abc`, which clap would call an unknown argument.
fn parse_worker(text: &str) -> Result<u64, String> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "{text:?} is not a worker ID: expected a non-negative integer"
        ));
    }
    text.parse()
        .map_err(|_| format!("{text} is too large for a worker ID"))
}

impl GeneratorArgs {
    /// A generator with what these arguments give; the core resolves the rest (environment,
    /// defaults) and reports warnings, which go to stderr.
    pub fn build(&self) -> Result<Generator, Failure> {
        Ok(self.build_generator()?)
    }

    /// [`GeneratorArgs::build`] with the core's error as it is (its kind kept).
    pub fn build_generator(&self) -> rimeflake::Result<Generator> {
        let warnings = crate::warn::Warnings::default();
        let mut builder = Generator::builder()
            .frontend(Frontend::Cli)
            .on_warning(warnings.sink());
        if let Some(spec) = &self.layout.layout {
            builder = builder.layout(Layout::from_spec(spec)?);
        }
        if let Some(worker) = self.worker {
            builder = builder.worker_id(worker);
        }
        if let Some(dir) = &self.state_dir {
            builder = builder.state_dir(dir);
        }
        if let Some(namespace) = &self.namespace {
            builder = builder.namespace(namespace);
        }
        if let Some(backend) = &self.backend {
            builder = builder.backend(Backend::parse(backend)?);
        }
        if self.in_memory {
            builder = builder.in_memory();
        }
        // An error is the one thing said: the warnings of a build that failed are dropped. A
        // signal (taken by `gen` and `bench`) ends a start-up wait.
        let generator = builder.build_with(&mut crate::signals::interrupted)?;
        warnings.started();
        Ok(generator)
    }
}

/// How `gen` prints an ID.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Decimal.
    Dec,
    /// 16 hex digits.
    Hex,
    /// 11 characters of 0-9A-Za-z.
    Base62,
    /// 13 characters of Crockford's base32.
    Base32,
    /// One JSON object a line: the ID as a decimal string and its parts.
    Json,
}

/// How `decode` reads an ID.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum InputFormat {
    /// Decimal.
    Dec,
    /// 16 hex digits.
    Hex,
    /// 11 characters of 0-9A-Za-z.
    Base62,
    /// 13 characters of Crockford's base32.
    Base32,
}

impl InputFormat {
    pub fn encoding(self) -> Encoding {
        match self {
            InputFormat::Dec => Encoding::Decimal,
            InputFormat::Hex => Encoding::Hex,
            InputFormat::Base62 => Encoding::Base62,
            InputFormat::Base32 => Encoding::Base32,
        }
    }
}

#[derive(Debug, Args)]
pub struct GenArgs {
    /// How many IDs (1 or more).
    #[arg(short = 'n', long = "count", value_name = "COUNT", default_value_t = 1,
          allow_negative_numbers = true, value_parser = parse_count)]
    pub count: u64,
    /// How to print them.
    #[arg(long, value_enum, default_value_t = Format::Dec)]
    pub format: Format,
    #[command(flatten)]
    pub generator: GeneratorArgs,
}

#[derive(Debug, Args)]
pub struct DecodeArgs {
    /// IDs to decode; without any (or with `-`), whitespace-separated IDs are read from stdin.
    #[arg(value_name = "ID")]
    pub ids: Vec<String>,
    #[command(flatten)]
    pub layout: LayoutArgs,
    /// The encoding of the IDs given.
    #[arg(long, value_enum, default_value_t = InputFormat::Dec)]
    pub format: InputFormat,
    /// One JSON object a line (with the layout's expiry) instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Threads sharing the one generator.
    #[arg(long, value_name = "T", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub threads: u32,
    /// How long to run, in seconds.
    #[arg(long, value_name = "S", default_value_t = 5.0, value_parser = parse_seconds)]
    pub seconds: f64,
    #[command(flatten)]
    pub generator: GeneratorArgs,
}

/// The environment variable of `serve`'s bearer token (empty counts as unset).
pub const SERVE_TOKEN_ENV: &str = "RIMEFLAKE_SERVE_TOKEN";

#[derive(Debug, Args)]
#[command(
    after_help = "A bearer token comes from RIMEFLAKE_SERVE_TOKEN: when set, every \
request but /healthz and /readyz must carry `Authorization: Bearer <token>`. The API is in \
docs/serve.md."
)]
pub struct ServeArgs {
    /// The address and port to listen on (0 for any free port; the one taken is printed)
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:8080")]
    pub listen: std::net::SocketAddr,
    /// The most IDs one /ids request may ask for
    #[arg(long, value_name = "N", default_value_t = 10_000,
          value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub max_n: u64,
    /// The most keys /api/snowflake/get/{key} may create (a generator and a lease each)
    #[arg(long, value_name = "K", default_value_t = 64,
          value_parser = clap::value_parser!(u64).range(0..=100_000))]
    pub max_keys: u64,
    /// The most connections open at once (more are closed as soon as accepted)
    #[arg(long, value_name = "C", default_value_t = 1024,
          value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub max_connections: u64,
    /// Seconds a client may take to send a request's headers
    #[arg(long, value_name = "S", default_value_t = 10.0, value_parser = parse_seconds)]
    pub header_timeout: f64,
    /// Seconds a connection may stay without a byte from its client
    #[arg(long, value_name = "S", default_value_t = 60.0, value_parser = parse_seconds)]
    pub idle_timeout: f64,
    /// Seconds requests in flight may take to finish after SIGTERM or SIGINT
    #[arg(long, value_name = "S", default_value_t = 10.0, value_parser = parse_seconds)]
    pub shutdown_timeout: f64,
    #[command(flatten)]
    pub generator: GeneratorArgs,
}

fn parse_seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(s) if s > 0.0 && s <= 86_400.0 => Ok(s),
        Ok(_) => Err("must be more than 0 and at most 86400".to_string()),
        Err(e) => Err(e.to_string()),
    }
}

/// `-n`: a clear message for `-1`, `0` or `abc` (clap would call `-1` an unknown argument).
fn parse_count(text: &str) -> Result<u64, String> {
    match text.parse::<u64>() {
        Ok(0) => Err("0 IDs asked for: give a count of 1 or more".to_string()),
        Ok(n) => Ok(n),
        Err(_) if text.starts_with('-') => {
            Err(format!("{text} is negative: give a count of 1 or more"))
        }
        Err(_) if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) => {
            Err(format!("{text} is too large: at most {}", u64::MAX))
        }
        Err(_) => Err(format!(
            "{text:?} is not a count: give a whole number of 1 or more"
        )),
    }
}

/// A path as given, even empty: the core decides what is valid (an empty state directory is a
/// configuration error there, for every front end alike).
fn any_path(text: &str) -> Result<PathBuf, String> {
    Ok(PathBuf::from(text))
}
