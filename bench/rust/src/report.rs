//! The table rows, the machine description and the section of bench/RESULTS.md.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One row of the table (the columns of the peers' results file).
#[derive(Clone, Debug, Default)]
pub struct Row {
    pub name: String,
    pub version: String,
    pub ns_1t: Option<f64>,
    pub ns_2t: Option<f64>,
    pub burst: Option<f64>,
    pub raw_below_cap: Option<f64>,
    pub unique: String,
    pub notes: String,
}

impl Row {
    pub fn new(name: &str, version: &str) -> Self {
        Row {
            name: name.to_string(),
            version: version.to_string(),
            ..Row::default()
        }
    }

    pub fn markdown(&self) -> String {
        let ns = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.1}"));
        let burst = self
            .burst
            .map_or("-".to_string(), |v| format!("{:.3}M", v / 1e6));
        format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            self.name,
            self.version,
            ns(self.ns_1t),
            ns(self.ns_2t),
            burst,
            ns(self.raw_below_cap),
            if self.unique.is_empty() {
                "-"
            } else {
                &self.unique
            },
            self.notes
        )
    }
}

pub const HEADER: &str = "| name | version | ns/ID 1T | ns/ID 2T (wall/total) | IDs/s 1-s burst | raw ns/call below cap | unique | notes |\n|---|---|---|---|---|---|---|---|";

fn run(cmd: &str, args: &[&str]) -> String {
    Command::new(cmd)
        .args(args)
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

/// Date, CPU model and cores, kernel, clocksource and toolchain, as `# ` header lines.
pub fn machine() -> String {
    let lscpu = run("lscpu", &[]);
    let field = |k: &str| {
        lscpu
            .lines()
            .find(|l| l.starts_with(k))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
            .unwrap_or_else(|| "?".to_string())
    };
    let clocksource =
        std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "?".to_string());
    let mut out = String::new();
    let _ = writeln!(
        out,
        "- date: {}",
        run("date", &["-u", "+%Y-%m-%dT%H:%M:%SZ"])
    );
    let _ = writeln!(
        out,
        "- cpu: {} ({} CPUs; hypervisor: {})",
        field("Model name"),
        field("CPU(s)"),
        field("Hypervisor vendor")
    );
    let _ = writeln!(
        out,
        "- kernel: {}; clocksource: {clocksource}",
        run("uname", &["-r"])
    );
    let _ = writeln!(
        out,
        "- toolchain: {}; profile: release (lto thin, codegen-units 1)",
        run("rustc", &["-V"])
    );
    let _ = writeln!(out, "- load average at start: {}", load_average());
    out
}

/// `/proc/loadavg`'s first three fields: other work on this 2-core machine moves the 2T rows
/// most (two threads need both cores).
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".to_string())
}

pub fn results_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../RESULTS.md")
}

const BEGIN: &str = "<!-- rust:begin -->";
const END: &str = "<!-- rust:end -->";

/// Replaces the Rust section of bench/RESULTS.md (between its markers), leaving every other
/// section as it is; creates the file or appends the section when it is missing.
pub fn write_section(body: &str) -> std::io::Result<PathBuf> {
    let path = results_path();
    let old = std::fs::read_to_string(&path).unwrap_or_default();
    let section = format!("{BEGIN}\n{body}\n{END}");
    let new = match (old.find(BEGIN), old.find(END)) {
        (Some(b), Some(e)) if e > b => {
            format!("{}{section}{}", &old[..b], &old[e + END.len()..])
        }
        _ if old.trim().is_empty() => {
            format!("# rimeflake benchmark results\n\nEach language's section is written by its own bench command.\n\n{section}\n")
        }
        _ => format!("{}\n\n{section}\n", old.trim_end()),
    };
    std::fs::write(&path, new)?;
    Ok(path)
}
