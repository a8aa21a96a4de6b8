//! The command line, as clap reads it, and the two things every subcommand builds from it: a
//! [`Layout`] and a [`Generator`].

use crate::fail::Failure;
use clap::builder::PossibleValuesParser;
use clap::{Args, Parser, Subcommand, ValueEnum};
use rimeflake::{Encoding, Generator, Layout};
use std::path::PathBuf;

const AFTER_HELP: &str =
    "Exit status: 0 on success, 1 when rimeflake fails (an invalid ID, a clock \
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
}

/// Arguments of `rimeflake state reset`.
#[derive(Debug, Args)]
pub struct StateResetArgs {
    /// The worker ID whose state file is corrupt.
    #[arg(long, value_name = "N")]
    pub worker: u64,
    /// The namespace (default: `default`).
    #[arg(long, value_name = "NS", default_value = "default")]
    pub namespace: String,
    /// Bit layout preset (default: the one in the namespace's layout file).
    #[arg(long, value_name = "PRESET",
          value_parser = PossibleValuesParser::new(Layout::PRESETS))]
    pub layout: Option<String>,
    /// The epoch of the `baidu` layout, in Unix ms.
    #[arg(long, value_name = "MS", requires = "layout")]
    pub baidu_epoch_ms: Option<u64>,
    /// The state directory (default: $RIMEFLAKE_STATE_DIR, else $XDG_STATE_HOME/rimeflake or
    /// ~/.local/state/rimeflake).
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
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
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
}

/// The layout, as a preset name (and the epoch that `baidu` needs).
#[derive(Debug, Args)]
pub struct LayoutArgs {
    /// Bit layout preset (`baidu` also needs --baidu-epoch-ms).
    #[arg(long, value_name = "PRESET", default_value = "default",
          value_parser = PossibleValuesParser::new(Layout::PRESETS))]
    pub layout: String,
    /// The epoch of the `baidu` layout, in Unix ms (Baidu's own, 2016-05-20, ran out in 2024).
    #[arg(long, value_name = "MS")]
    pub baidu_epoch_ms: Option<u64>,
}

impl LayoutArgs {
    /// The layout these arguments name.
    pub fn layout(&self) -> Result<Layout, Failure> {
        match (self.layout.as_str(), self.baidu_epoch_ms) {
            ("baidu", Some(epoch)) => Ok(Layout::baidu(epoch)?),
            ("baidu", None) => Err(Failure::usage(
                "--layout baidu needs --baidu-epoch-ms MS (Baidu's own epoch, 2016-05-20, ran out \
                 in November 2024)",
            )),
            (name, None) => Ok(Layout::preset(name)?),
            (name, Some(_)) => Err(Failure::usage(format!(
                "--baidu-epoch-ms applies to --layout baidu only, not to {name}"
            ))),
        }
    }
}

/// Where the generator's worker ID and state come from.
#[derive(Debug, Args)]
pub struct GeneratorArgs {
    #[command(flatten)]
    pub layout: LayoutArgs,
    /// A fixed worker ID (default: lease the lowest free worker ID of the state directory).
    #[arg(long, value_name = "N")]
    pub worker: Option<u64>,
    /// The state directory (default: $RIMEFLAKE_STATE_DIR, else the user's state directory).
    #[arg(long, value_name = "DIR", conflicts_with = "in_memory")]
    pub state_dir: Option<PathBuf>,
    /// The namespace: worker IDs and state are separate per namespace (default: `default`).
    #[arg(long, value_name = "NS", conflicts_with = "in_memory")]
    pub namespace: Option<String>,
    /// Keep no state at all (NOT restart-safe); needs --worker.
    #[arg(long, requires = "worker")]
    pub in_memory: bool,
}

impl GeneratorArgs {
    /// A generator as these arguments describe it: without --worker, the embedded default.
    pub fn build(&self) -> Result<Generator, Failure> {
        let mut builder = Generator::builder().layout(self.layout.layout()?);
        if let Some(worker) = self.worker {
            builder = builder.worker_id(worker);
        }
        if let Some(dir) = &self.state_dir {
            builder = builder.state_dir(dir);
        }
        if let Some(namespace) = &self.namespace {
            builder = builder.namespace(namespace);
        }
        if self.in_memory {
            builder = builder.in_memory();
        }
        Ok(builder.build()?)
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
    /// How many IDs.
    #[arg(short = 'n', long = "count", value_name = "COUNT", default_value_t = 1)]
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

fn parse_seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(s) if s > 0.0 && s <= 86_400.0 => Ok(s),
        Ok(_) => Err("must be more than 0 and at most 86400".to_string()),
        Err(e) => Err(e.to_string()),
    }
}
