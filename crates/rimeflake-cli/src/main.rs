//! The `rimeflake` command: `gen`, `decode`, `bench`, `serve`, `state show`, `state reset`,
//! `state restored` and `state replicas` (see `rimeflake --help`).
//!
//! Every failure is one line, `rimeflake: error: <message>`, on stderr, with exit status 2 for
//! bad arguments or configuration and 1 for anything else; never a panic trace.

mod args;
mod bench;
mod decode;
mod fail;
mod gen;
mod serve;
mod show;
mod signals;
mod state;
mod warn;

use args::{Cli, Command, StateCommand};
use clap::error::{ContextKind, ContextValue, ErrorKind as ClapKind};
use clap::{CommandFactory, Parser};
use fail::Failure;
use std::process::ExitCode;

fn main() -> ExitCode {
    // A bug must still end in one line, not a trace.
    std::panic::set_hook(Box::new(|info| {
        let what = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()));
        eprintln!(
            "rimeflake: error: internal error (a bug, please report it): {}{}",
            fail::one_line(&what),
            at.unwrap_or_default()
        );
    }));

    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => match e.kind() {
            ClapKind::DisplayHelp | ClapKind::DisplayVersion => {
                let _ = e.print();
                return ExitCode::SUCCESS;
            }
            ClapKind::DisplayHelpOnMissingArgumentOrSubcommand | ClapKind::MissingSubcommand => {
                return Failure::usage(missing_subcommand(std::env::args().skip(1))).report()
            }
            ClapKind::UnknownArgument => return Failure::usage(unknown_argument(&e)).report(),
            _ => return Failure::usage(fail::clap_message(&e.to_string())).report(),
        },
    };
    let result = match &cli.command {
        Command::Gen(a) => gen::run(a),
        Command::Decode(a) => decode::run(a),
        Command::Bench(a) => bench::run(a),
        Command::Serve(a) => serve::run(a),
        Command::State(StateCommand::Show(a)) => state::show(a),
        Command::State(StateCommand::Reset(a)) => state::reset(a),
        Command::State(StateCommand::Restored(a)) => state::restored(a),
        Command::State(StateCommand::Replicas(a)) => state::replicas(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => failure.report(),
    }
}

/// What a command given without its subcommand says: the subcommands of the deepest command
/// that `args` name (`rimeflake state`: show, reset, restored or replicas), as clap's own tree has
/// them.
fn missing_subcommand(args: impl Iterator<Item = String>) -> String {
    let mut command = Cli::command();
    let mut path = vec![command.get_name().to_string()];
    for arg in args {
        let Some(sub) = command.find_subcommand(&arg).cloned() else {
            break;
        };
        path.push(sub.get_name().to_string());
        command = sub;
    }
    let names: Vec<&str> = command.get_subcommands().map(|c| c.get_name()).collect();
    let list = match names.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    };
    format!(
        "a subcommand is needed: {list} (see {} --help)",
        path.join(" ")
    )
}

/// The message for an argument the command does not know: the nearest flag of the subcommand
/// it was given to, by the core's "did you mean" (every front end's).
fn unknown_argument(e: &clap::Error) -> String {
    let Some(ContextValue::String(typed)) = e.get(ContextKind::InvalidArg) else {
        return fail::clap_message(&e.to_string());
    };
    // The subcommand the words on the command line lead to.
    let mut cmd = Cli::command();
    for word in std::env::args().skip(1) {
        match cmd.find_subcommand(&word) {
            Some(sub) => cmd = sub.clone(),
            None if !word.starts_with('-') => break,
            None => {}
        }
    }
    let flags: Vec<String> = cmd
        .get_arguments()
        .filter_map(|a| a.get_long())
        .map(|long| format!("--{long}"))
        .collect();
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let flag = typed.split('=').next().unwrap_or(typed);
    match rimeflake::frontend::nearest(flag, &flags) {
        Some(near) => {
            format!("unexpected argument '{typed}'; did you mean '{near}'? (see rimeflake --help)")
        }
        None => format!("unexpected argument '{typed}' (see rimeflake --help)"),
    }
}
