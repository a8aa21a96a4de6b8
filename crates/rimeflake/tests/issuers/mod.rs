//! A child process that issues IDs and writes them to a file, as the tests of a server that
//! forgets (forgetting.rs) and of the attacks on its floor (floor_attacks.rs) run holders and
//! successors. Each test binary starts its children itself (its own child side and variables);
//! this is what follows: reading the child's lines, stopping it, collecting its IDs.

use std::collections::HashSet;
use std::io::{BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A child: its process, its output lines, and where its IDs go.
pub struct Issuer {
    pub child: Child,
    pub lines: std::io::Lines<BufReader<ChildStdout>>,
    pub out: PathBuf,
    /// What it printed so far.
    pub said: Vec<String>,
    pub what: String,
}

impl Drop for Issuer {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

impl Issuer {
    /// Runs `cmd` (this test binary, its child test selected) with its stdin and stdout piped,
    /// its IDs going to `out`.
    #[allow(dead_code)] // not every binary that includes this module starts its children so
    pub fn launch(mut cmd: std::process::Command, out: PathBuf, what: &str) -> Issuer {
        use std::process::Stdio;
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let lines = std::io::BufRead::lines(BufReader::new(child.stdout.take().unwrap()));
        Issuer {
            child,
            lines,
            out,
            said: Vec::new(),
            what: what.to_string(),
        }
    }

    /// Reads its lines up to the first that starts with `marker`.
    pub fn read_until(&mut self, marker: &str) {
        for line in self.lines.by_ref() {
            let line = line.unwrap();
            let found = line.starts_with(marker);
            self.said.push(line);
            if found {
                return;
            }
        }
        panic!("{}: no {marker} in {:?}", self.what, self.said);
    }

    /// Tells it to stop (if it issues until told), waits for it and reads its IDs; with what
    /// it printed.
    pub fn finish(mut self) -> (Vec<u64>, Vec<String>) {
        if let Some(stdin) = self.child.stdin.as_mut() {
            let _ = writeln!(stdin, "STOP");
            let _ = stdin.flush();
        }
        self.read_until("DONE");
        for line in self.lines.by_ref() {
            self.said.push(line.unwrap());
        }
        assert!(
            self.child.wait().unwrap().success(),
            "{} failed: {:?}",
            self.what,
            self.said
        );
        let bytes = std::fs::read(&self.out).unwrap();
        let ids = bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        (ids, std::mem::take(&mut self.said))
    }
}

/// How many of `theirs` are in `ours`.
pub fn repeated(ours: &[u64], theirs: &[u64]) -> usize {
    let ours: HashSet<u64> = ours.iter().copied().collect();
    theirs.iter().filter(|id| ours.contains(id)).count()
}

/// A fresh directory for the children's ID files, named after the test binary.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "rimeflake-{}-{name}-{}",
        env!("CARGO_CRATE_NAME"),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The child's side of what the binaries that start one share. (Not every binary that includes
/// this module has a child that uses all of it.)
#[allow(dead_code)]
pub mod child {
    use super::*;

    /// What the parent told the child: `RIMEFLAKE_TEST_<prefix>_<name>`.
    pub fn var(prefix: &str, name: &str) -> Option<String> {
        std::env::var(format!("RIMEFLAKE_TEST_{prefix}_{name}")).ok()
    }

    /// The same, a number.
    pub fn var_u64(prefix: &str, name: &str) -> Option<u64> {
        var(prefix, name).map(|v| v.parse().unwrap())
    }

    /// Prints `STARTED ms=<took>` or `FAILED kind=<kind> ms=<took> <message>`, then `RUNNING`;
    /// the generator, if it started.
    pub fn say_started<G>(built: rimeflake::Result<G>, took_ms: u128) -> Option<G> {
        let g = match built {
            Ok(g) => {
                println!("STARTED ms={took_ms}");
                Some(g)
            }
            Err(e) => {
                println!("FAILED kind={:?} ms={took_ms} {e}", e.kind());
                None
            }
        };
        println!("RUNNING");
        std::io::stdout().flush().unwrap();
        g
    }

    /// With `count` 0, a flag set once a line (or the end) comes on stdin: the parent's stop.
    pub fn stop_on_stdin(count: u64) -> Arc<AtomicBool> {
        let done = Arc::new(AtomicBool::new(false));
        if count == 0 {
            let done = Arc::clone(&done);
            std::thread::spawn(move || {
                let mut line = String::new();
                let _ = std::io::stdin().read_line(&mut line);
                done.store(true, Ordering::SeqCst);
            });
        }
        done
    }

    /// Writes `ids` to `out` (8 bytes each, little-endian) and prints `DONE <count>`.
    pub fn write_ids(out: &Path, ids: &[u64]) {
        let bytes: Vec<u8> = ids.iter().flat_map(|id| id.to_le_bytes()).collect();
        std::fs::write(out, bytes).unwrap();
        println!("DONE {}", ids.len());
        std::io::stdout().flush().unwrap();
    }
}
