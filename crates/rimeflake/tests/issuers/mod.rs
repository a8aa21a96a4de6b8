//! A child process that issues IDs and writes them to a file, as the tests of a server that
//! forgets (forgetting.rs) and of the attacks on its floor (floor_attacks.rs) run holders and
//! successors. Each test binary starts its children itself (its own child side and variables);
//! this is what follows: reading the child's lines, stopping it, collecting its IDs.

use std::collections::HashSet;
use std::io::{BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdout};

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
