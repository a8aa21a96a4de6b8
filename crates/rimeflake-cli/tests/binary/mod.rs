//! Running the `rimeflake` binary from the CLI's tests, with none of rimeflake's variables
//! inherited from the environment the tests run in.

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// The binary with only `env` of rimeflake's variables set, `input` on stdin.
pub fn run_with(args: &[&str], env: &[(&str, &str)], input: &str) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rimeflake"));
    cmd.args(args);
    super::support::without_rimeflake_env(&mut cmd);
    cmd.envs(env.iter().copied());
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the rimeflake binary runs");
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_string();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    out
}

/// The binary with only `env` of rimeflake's variables set, nothing on stdin.
pub fn run(args: &[&str], env: &[(&str, &str)]) -> Output {
    run_with(args, env, "")
}
