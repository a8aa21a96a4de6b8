//! The command line, as clap reads it, and the two things every subcommand builds from it: a
//! [`Layout`] and a [`Generator`].

use crate::fail::Failure;
use clap::{Args, Parser, Subcommand, ValueEnum};
use rimeflake::frontend::{Setting, SettingKind, SettingValue, SETTINGS};
use rimeflake::{Encoding, Frontend, Generator, Layout};
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
    /// Serve IDs over HTTP (HTTP/1.1 and HTTP/2 cleartext) until SIGTERM, SIGINT or SIGHUP.
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
    #[arg(long, value_name = "PRESET|SPEC", help = layout_help())]
    pub layout: Option<String>,
}

/// The layout flag's help: the table's line with the presets of the core's list.
fn layout_help() -> String {
    let row = Setting::Layout.info();
    format!(
        "{}, or a preset changed by pairs such as baidu,epoch=2025-01-01T00:00:00Z; the presets: \
         {} [default: ${}, else {}]",
        row.doc,
        Layout::PRESETS.join(", "),
        row.env.unwrap_or_default(),
        row.default_doc
    )
}

impl LayoutArgs {
    /// The layout given, else the environment's, else `default` (the core decides).
    pub fn layout(&self) -> Result<Layout, Failure> {
        Ok(rimeflake::frontend::layout(self.layout.as_deref())?)
    }
}

/// Where the generator's worker ID and state come from, and how it behaves: a flag for each
/// setting of the core's table (`--worker`, `--layout`, ..., `--lease-ttl-ms`), and
/// `--in-memory`.
#[derive(Clone, Debug, Args)]
pub struct GeneratorArgs {
    #[command(flatten)]
    pub settings: SettingArgs,
    /// The same as --backend memory.
    #[arg(long, conflicts_with_all = [Setting::Backend.info().python, Setting::StateDir.info().python])]
    pub in_memory: bool,
}

/// The flags of the settings every front end offers, made from the core's table
/// ([`SETTINGS`]): what the user gave, in the table's order, for the core to apply.
#[derive(Clone, Debug, Default)]
pub struct SettingArgs {
    given: Vec<(Setting, SettingValue)>,
}

impl SettingArgs {
    /// The value given for `setting`, if any.
    #[cfg_attr(not(feature = "serve"), allow(dead_code))]
    pub fn get(&self, setting: Setting) -> Option<&SettingValue> {
        self.given
            .iter()
            .find(|(s, _)| *s == setting)
            .map(|(_, v)| v)
    }

    /// Sets `setting` to `value`, in place of any value given.
    pub fn set(&mut self, setting: Setting, value: SettingValue) {
        self.given.retain(|(s, _)| *s != setting);
        self.given.push((setting, value));
    }
}

/// The flag of a setting: named and explained by its row, read by its kind.
fn flag(row: &'static rimeflake::frontend::SettingInfo) -> clap::Arg {
    let arg = clap::Arg::new(row.python)
        .long(row.cli.trim_start_matches("--"))
        .help(match row.kind {
            SettingKind::Layout => layout_help(),
            _ => row.help(),
        });
    match row.kind {
        SettingKind::Flag => arg.action(clap::ArgAction::SetTrue),
        SettingKind::WorkerId => arg
            .value_name("N")
            .allow_negative_numbers(true)
            .value_parser(parse_worker),
        SettingKind::Millis => arg
            .value_name("MS")
            .allow_negative_numbers(true)
            .value_parser(parse_millis),
        SettingKind::Path => arg.value_name("DIR").value_parser(any_path),
        SettingKind::Layout => arg.value_name("PRESET|SPEC"),
        SettingKind::Choice(_) => arg.value_name("WORD"),
        SettingKind::Backend => arg.value_name("BACKEND"),
        _ => arg.value_name("TEXT"),
    }
}

impl clap::Args for SettingArgs {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        SETTINGS.iter().fold(cmd, |cmd, row| cmd.arg(flag(row)))
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

impl clap::FromArgMatches for SettingArgs {
    fn from_arg_matches(matches: &clap::ArgMatches) -> Result<Self, clap::Error> {
        let mut args = SettingArgs::default();
        args.update_from_arg_matches(matches)?;
        Ok(args)
    }

    fn update_from_arg_matches(&mut self, m: &clap::ArgMatches) -> Result<(), clap::Error> {
        for row in SETTINGS {
            let id = row.python;
            let value = match row.kind {
                SettingKind::Flag => m.get_flag(id).then_some(SettingValue::Flag(true)),
                SettingKind::WorkerId | SettingKind::Millis => {
                    m.get_one::<u64>(id).map(|n| SettingValue::Number(*n))
                }
                SettingKind::Path => m
                    .get_one::<PathBuf>(id)
                    .map(|p| SettingValue::Path(p.clone())),
                _ => m
                    .get_one::<String>(id)
                    .map(|t| SettingValue::Text(t.clone())),
            };
            if let Some(v) = value {
                self.set(row.setting, v);
            }
        }
        Ok(())
    }
}

/// `--worker`: a clear message for `-1` or `abc`, which clap would call an unknown argument.
fn parse_worker(text: &str) -> Result<u64, String> {
    whole_number(text, "a worker ID")
}

/// A number of milliseconds: a clear message for `-1` or `1s`.
fn parse_millis(text: &str) -> Result<u64, String> {
    whole_number(text, "a number of milliseconds")
}

/// A whole number from 0, or a message that names what `text` is not.
fn whole_number(text: &str, what: &str) -> Result<u64, String> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "{text:?} is not {what}: expected a non-negative integer"
        ));
    }
    text.parse()
        .map_err(|_| format!("{text} is too large for {what}"))
}

// What `serve` reads of the generator's flags, which a build without it leaves out.
#[cfg_attr(not(feature = "serve"), allow(dead_code))]
impl GeneratorArgs {
    /// The text given for `setting` (a layout spec, a namespace, a backend), if any.
    pub fn text(&self, setting: Setting) -> Option<&str> {
        match self.settings.get(setting) {
            Some(SettingValue::Text(text)) => Some(text),
            _ => None,
        }
    }

    /// The namespace given, if any.
    pub fn namespace(&self) -> Option<&str> {
        self.text(Setting::Namespace)
    }

    /// The state directory given, if any.
    pub fn state_dir(&self) -> Option<&std::path::Path> {
        match self.settings.get(Setting::StateDir) {
            Some(SettingValue::Path(dir)) => Some(dir),
            _ => None,
        }
    }

    /// These arguments with `setting` given as `text` (in `serve`: the Leaf path's layout, a
    /// key's namespace).
    pub fn with(&self, setting: Setting, text: &str) -> GeneratorArgs {
        let mut args = self.clone();
        args.settings
            .set(setting, SettingValue::Text(text.to_string()));
        args
    }

    /// A generator with what these arguments give; the core resolves the rest (environment,
    /// defaults) and reports warnings, which go to stderr. The core's error is kept as it is
    /// (its kind too).
    pub fn build_generator(&self) -> rimeflake::Result<Generator> {
        self.build_with(crate::warn::Warnings::default(), None)
    }

    /// The generator of a command that holds a lease (`gen`, `bench`): a signal during its
    /// start (a start-up wait) ends the process by that signal, saying nothing more unless the
    /// start failed for another reason.
    pub fn build_or_die_by_signal(&self) -> Result<Generator, Failure> {
        use crate::signals::{caught, die_by, fail_by};
        match (self.build_generator(), caught()) {
            (Ok(generator), _) => Ok(generator),
            (Err(e), Some(sig)) if e.kind() == rimeflake::ErrorKind::Interrupted => die_by(sig),
            (Err(e), Some(sig)) => fail_by(e.into(), sig),
            (Err(e), None) => Err(e.into()),
        }
    }

    /// A generator whose warnings go to `warnings`, and whose IDs are all above `above` when
    /// it is given (see `Builder::start_above`).
    pub fn build_with(
        &self,
        warnings: crate::warn::Warnings,
        above: Option<u64>,
    ) -> rimeflake::Result<Generator> {
        let mut builder = Generator::builder()
            .frontend(Frontend::Cli)
            .on_warning(warnings.sink());
        for (setting, value) in &self.settings.given {
            builder = builder.set(*setting, value.clone())?;
        }
        if self.in_memory {
            builder = builder.in_memory();
        }
        if let Some(id) = above {
            builder = builder.start_above(id);
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
#[cfg_attr(not(feature = "serve"), allow(dead_code))]
pub const SERVE_TOKEN_ENV: &str = "RIMEFLAKE_SERVE_TOKEN";

/// The endpoints and the environment of `serve`, after its options in `serve --help`.
const SERVE_AFTER_HELP: &str = "Endpoints (GET or HEAD): /id (one ID), /ids?n=N (N IDs; \
&format=dec|hex|base62|base32, Accept: application/json for JSON), /api/snowflake/get/{key} \
(Meituan Leaf's path and answer), /decodeSnowflakeId?snowflakeId=ID (Leaf's decoding), \
/decode/{id}?layout=L (an ID's parts as JSON), /metrics (Prometheus), /healthz (the process \
lives), /readyz (every generator can issue now). Every refusal is a 4xx or 503 with a one-line \
body; a 503 from a generator names its error kind in the rimeflake-error header, a 429 or 503 \
past a limit carries Retry-After.

A bearer token comes from RIMEFLAKE_SERVE_TOKEN: when set, every request but /healthz and \
/readyz must carry `Authorization: Bearer <token>`, and /readyz says why it is not ready only \
to those that do. SIGTERM, SIGINT or SIGHUP stop it cleanly (exit 0; 1 when a generator could \
not store its last reservation); a second signal ends it at once (exit 128 + the signal).";

/// How `serve` logs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LogArg {
    /// `rimeflake: ...` lines, for people.
    Text,
    /// One JSON object a line (time, level, event, message, fields), for log collectors.
    Json,
}

/// How keys of the Leaf path map to ID spaces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LeafKeys {
    /// Every key shares one ID space, as in Leaf's snowflake mode.
    Shared,
    /// Each key is a namespace of its own: its own generator and lease (up to --max-keys).
    Separate,
}

#[derive(Debug, Args)]
#[command(after_help = SERVE_AFTER_HELP)]
// Read by `serve` alone, which a build without the feature leaves out.
#[cfg_attr(not(feature = "serve"), allow(dead_code))]
pub struct ServeArgs {
    /// The address and port to listen on, a host name or an IP address (0 for any free port;
    /// the one taken is printed)
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:8080")]
    pub listen: String,
    /// The most IDs one /ids request may ask for
    #[arg(long, value_name = "N", default_value_t = 10_000,
          value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub max_n: u64,
    /// The layout of the Leaf path, /api/snowflake/get/{key}: a preset or a layout spec, as
    /// --layout [default: twitter, which is Leaf's: 41 time, 10 worker and 12 sequence bits,
    /// Twitter's epoch]
    #[arg(long, value_name = "PRESET|SPEC")]
    pub leaf_layout: Option<String>,
    /// The namespace of the Leaf path's generator [default: its layout's own: twitter, ...]
    #[arg(long, value_name = "NS")]
    pub leaf_namespace: Option<String>,
    /// How keys of the Leaf path map to ID spaces
    #[arg(long, value_enum, value_name = "MODE", default_value_t = LeafKeys::Shared)]
    pub leaf_keys: LeafKeys,
    /// Every ID of the Leaf path is above this one: the largest ID the service it replaces
    /// stored, so that IDs never go backwards across the switch (refused at start when no ID
    /// of the Leaf path's layout lies above it)
    #[arg(long, value_name = "ID")]
    pub above: Option<u64>,
    /// Only these keys are served on the Leaf path, comma-separated [default: any key]
    #[arg(long, value_name = "KEY,...", value_delimiter = ',')]
    pub keys: Option<Vec<String>>,
    /// With --leaf-keys separate: the most keys (a generator and a lease each)
    #[arg(long, value_name = "K", default_value_t = 64,
          value_parser = clap::value_parser!(u64).range(0..=100_000))]
    pub max_keys: u64,
    /// The most connections open at once (more are answered 503 and closed); the open-file
    /// limit is raised to match at start, or the start refused
    #[arg(long, value_name = "C", default_value_t = 1024,
          value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub max_connections: u64,
    /// The most requests being answered at once over all connections (more: 503, Retry-After)
    #[arg(long, value_name = "R", default_value_t = 4096,
          value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub max_requests: u64,
    /// The most concurrent streams of one HTTP/2 connection
    #[arg(long, value_name = "S", default_value_t = 256,
          value_parser = clap::value_parser!(u32).range(1..=65_536))]
    pub max_streams: u32,
    /// The most IDs in answers not yet read by their clients: all connections together (more:
    /// 503), one connection a sixteenth of them (more: 429), both with Retry-After
    #[arg(long, value_name = "N", default_value_t = 1_000_000,
          value_parser = clap::value_parser!(u64).range(1..=1_000_000_000))]
    pub max_ids_in_flight: u64,
    /// Seconds a request may wait for a generator (the clock, a reservation) before it is
    /// answered 503 with Retry-After; one that would wait longer is refused at once
    #[arg(long, value_name = "S", default_value_t = 0.1, value_parser = parse_seconds)]
    pub wait_deadline: f64,
    /// Seconds a client may take to send a request's headers (the first request of an HTTP/2
    /// connection, its preface included)
    #[arg(long, value_name = "S", default_value_t = 10.0, value_parser = parse_seconds)]
    pub header_timeout: f64,
    /// Seconds a connection may stay without a byte from its client
    #[arg(long, value_name = "S", default_value_t = 60.0, value_parser = parse_seconds)]
    pub idle_timeout: f64,
    /// Seconds requests in flight may take to finish after a stop signal
    #[arg(long, value_name = "S", default_value_t = 10.0, value_parser = parse_seconds)]
    pub shutdown_timeout: f64,
    /// How to log on stderr
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = LogArg::Text)]
    pub log: LogArg,
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
