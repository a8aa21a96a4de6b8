//! The front ends' contract, made from the core's tables and held by this test: the settings
//! (`frontend::SETTINGS`), the counters (`Stats::FIELDS`) and the presets
//! (`Layout::PRESET_LIST`).
//!
//! What a front end must declare statically, a typed stub or a C struct, is generated here into
//! a marked block of its file, and so are the docs' tables of them: the test fails when a block
//! differs from what the tables give, and `make contract` (this test with
//! `RIMEFLAKE_CONTRACT_UPDATE=1`) rewrites the blocks. What a front end reads at run time (its
//! options, its stats, its flags) it reads from the tables themselves; the C config, whose
//! fields are an ABI with "unset" values of their own, is checked against the table instead.

use rimeflake::frontend::{
    camel_case as camel, SettingInfo, SettingKind, StatField, StatUnit, StatValue, SETTINGS,
};
use rimeflake::{Layout, Stats};
use std::path::{Path, PathBuf};

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// How a file writes the comments that mark a block.
#[derive(Clone, Copy)]
enum Syntax {
    Hash,
    Slashes,
    Html,
}

/// A block of `file` between the marker lines of `name`, and what it should hold.
struct Block {
    file: &'static str,
    name: &'static str,
    syntax: Syntax,
    text: String,
}

impl Block {
    fn markers(&self) -> (String, String) {
        let open = format!(
            "<contract:{}> generated from the core's tables by `make contract`: do not edit",
            self.name
        );
        let close = format!("</contract:{}>", self.name);
        match self.syntax {
            Syntax::Hash => (format!("# {open}"), format!("# {close}")),
            Syntax::Slashes => (format!("// {open}"), format!("// {close}")),
            Syntax::Html => (format!("<!-- {open} -->"), format!("<!-- {close} -->")),
        }
    }

    /// The file's text with this block as the tables give it, or an error naming what is
    /// missing.
    fn apply(&self, text: &str) -> Result<String, String> {
        let (open, close) = self.markers();
        let start = text
            .find(&open)
            .ok_or_else(|| format!("{}: no line {open:?}", self.file))?;
        let body = start + open.len();
        let end = text[body..]
            .find(&close)
            .map(|i| body + i)
            .ok_or_else(|| format!("{}: no line {close:?}", self.file))?;
        // The closing marker keeps its indentation (the text before it on its line).
        let indent = &text[text[..end].rfind('\n').map_or(0, |i| i + 1)..end];
        Ok(format!(
            "{}\n{}{indent}{}",
            &text[..body],
            self.text,
            &text[end..]
        ))
    }
}

/// The words of `text`, wrapped at `width` with `prefix` before each line.
fn wrap(text: &str, prefix: &str, width: usize) -> String {
    let mut lines = vec![String::new()];
    for word in text.split_whitespace() {
        let line = lines.last_mut().unwrap();
        if !line.is_empty() && prefix.len() + line.len() + 1 + word.len() > width {
            lines.push(word.to_string());
        } else {
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
    }
    lines
        .iter()
        .map(|l| format!("{prefix}{l}\n").replace(" \n", "\n"))
        .collect()
}

/// A doc line as a sentence.
fn sentence(doc: &str) -> String {
    format!("{doc}.")
}

/// A counter's doc line as a sentence, with its unit (its name says it too: `waited_ms`).
fn stat_doc(f: &StatField) -> String {
    match f.unit {
        StatUnit::Millis => format!("{}, in ms.", f.help),
        StatUnit::Nanos => format!("{}, in ns.", f.help),
        _ => sentence(f.help),
    }
}

/// The default of a setting, in words, with its variable.
fn default_of(row: &SettingInfo) -> String {
    match row.env {
        Some(var) => format!("`{var}`, else {}", row.default_doc),
        None => row.default_doc.to_string(),
    }
}

fn python_type(kind: SettingKind) -> String {
    match kind {
        SettingKind::Layout => "LayoutName | str | Layout".into(),
        SettingKind::WorkerId | SettingKind::Millis => "SupportsIndex".into(),
        SettingKind::Path => "str | os.PathLike[str]".into(),
        SettingKind::Backend => "BackendName | str".into(),
        SettingKind::Choice(words) => {
            let quoted: Vec<String> = words.iter().map(|w| format!("\"{w}\"")).collect();
            format!("Literal[{}]", quoted.join(", "))
        }
        SettingKind::Flag => "bool".into(),
        _ => "str".into(),
    }
}

fn ts_type(kind: SettingKind) -> String {
    match kind {
        SettingKind::Layout => "LayoutName | (string & {}) | Layout".into(),
        SettingKind::WorkerId | SettingKind::Millis => "number".into(),
        SettingKind::Choice(words) => {
            let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
            quoted.join(" | ")
        }
        SettingKind::Flag => "boolean".into(),
        _ => "string".into(),
    }
}

/// Python's `LayoutName`.
fn python_layout_name() -> String {
    let names: Vec<String> = Layout::PRESETS.iter().map(|p| format!("\"{p}\"")).collect();
    format!("LayoutName = Literal[{}]\n", names.join(", "))
}

/// Python's `GeneratorOptions`: the keyword arguments of `Generator` after the worker ID, its
/// one positional argument.
fn python_options() -> String {
    let mut out = String::from(
        "class GeneratorOptions(TypedDict, total=False):\n    \"\"\"The keyword arguments of \
         ``Generator`` (every one optional; ``None`` is the same as leaving it out).\"\"\"\n",
    );
    for row in SETTINGS.iter().filter(|r| r.python != "worker_id") {
        out += &format!("\n    {}: {} | None\n", row.python, python_type(row.kind));
        let doc = format!(
            "{} Default: {}.",
            sentence(row.doc),
            default_of(row).replace('`', "``")
        );
        out += &wrap(&format!("\"\"\"{doc}\"\"\""), "    ", 100);
    }
    out
}

/// Python's `Stats`.
fn python_stats() -> String {
    let mut out = String::from(
        "class Stats(TypedDict):\n    \"\"\"What ``Generator.stats()`` returns: the core's \
         counters, under the same names.\"\"\"\n",
    );
    for f in Stats::FIELDS {
        let ty = match f.unit {
            StatUnit::Lease => "LeaseState",
            _ => "int",
        };
        out += &format!("\n    {}: {ty}\n", f.name);
        out += &wrap(&format!("\"\"\"{}\"\"\"", stat_doc(f)), "    ", 100);
    }
    out
}

fn ts_layout_name() -> String {
    let names: Vec<String> = Layout::PRESETS.iter().map(|p| format!("'{p}'")).collect();
    format!(
        "/** A preset's name; a `layout` takes one of these, a layout spec, or a `Layout`. */\n\
         export type LayoutName = {}\n",
        names.join(" | ")
    )
}

fn ts_options() -> String {
    let mut out = String::from(
        "/**\n * Options of `new Generator(options)` and `Generator.shared(options)`. Every one \
         is optional:\n * with none, the generator is the embedded default (a worker ID leased \
         in the state directory),\n * as in every other front end.\n */\n\
         export interface GeneratorOptions {\n",
    );
    for row in SETTINGS {
        let doc = format!("{} Default: {}.", sentence(row.doc), default_of(row));
        out += "  /**\n";
        out += &wrap(&doc, "   * ", 100);
        out += "   */\n";
        out += &format!("  {}?: {}\n", row.node, ts_type(row.kind));
    }
    out + "}\n"
}

fn ts_stats() -> String {
    let mut out = String::from("/** A generator's counters. */\nexport interface Stats {\n");
    for f in Stats::FIELDS {
        let ty = match f.unit {
            StatUnit::Lease => "'none' | 'held' | 'lost'",
            _ => "number",
        };
        out += &wrap(&format!("/** {} */", stat_doc(f)), "  ", 100);
        out += &format!("  {}: {ty}\n", camel(f.name));
    }
    out + "}\n"
}

/// C's `rimeflake_generator_stats` and its filling from the core's `Stats`.
fn c_stats() -> String {
    let mut out = String::from(
        "/// Counters of a generator (rimeflake_stats). Fields a newer header adds come after \
         these.\n#[repr(C)]\n#[derive(Clone, Copy, Default)]\n#[allow(non_camel_case_types)]\n\
         pub struct rimeflake_generator_stats {\n",
    );
    let mut fill = String::from(
        "impl From<&Stats> for rimeflake_generator_stats {\n    fn from(s: &Stats) -> Self {\n        \
         rimeflake_generator_stats {\n",
    );
    for f in Stats::FIELDS {
        let (ty, doc, value) = match f.unit {
            StatUnit::Lease => (
                "u32",
                "The server lease: RIMEFLAKE_LEASE_NONE (no server leases the worker ID), \
                 RIMEFLAKE_LEASE_HELD or RIMEFLAKE_LEASE_LOST (no ID is issued until it is held \
                 again)."
                    .to_string(),
                format!("lease_state(s.{})", f.name),
            ),
            _ => match f.value(&Stats::default()) {
                StatValue::Signed(_) => ("i64", stat_doc(f), format!("s.{}", f.name)),
                _ => ("u64", stat_doc(f), format!("s.{}", f.name)),
            },
        };
        out += &wrap(&doc, "    /// ", 100);
        out += &format!("    pub {}: {ty},\n", f.c_name);
        fill += &format!("            {}: {value},\n", f.c_name);
    }
    out + "}\n\n" + &fill + "        }\n    }\n}\n"
}

/// docs/configuration.md's table of the settings in each front end.
fn docs_settings() -> String {
    let mut out = String::from(
        "| setting | CLI | Rust (`Generator::builder()`) | Python (`Generator(...)`) | Node \
         (`new Generator({...})`) | C (`rimeflake_config`) | default |\n|---|---|---|---|---|---|---|\n",
    );
    let cell = |text: &str| text.replace('|', "\\|").replace('<', "&lt;");
    for row in SETTINGS {
        out += &format!(
            "| {} | `{}` | `.{}(..)` | `{}=` | `{}` | `{}` | {} |\n",
            cell(&sentence(row.doc)),
            row.cli,
            row.rust,
            row.python,
            row.node,
            row.c,
            cell(&default_of(row))
        );
    }
    out
}

/// docs/layouts.md's table of the presets.
fn docs_presets() -> String {
    let mut out = String::from(
        "| preset | clock-id | time | worker | sequence | unit | epoch | runs out | what |\n\
         |---|---|---|---|---|---|---|---|---|\n",
    );
    for p in Layout::PRESET_LIST {
        let l = p.layout();
        let worker = match l.datacenter_bits() {
            0 => l.worker_bits().to_string(),
            dc => format!(
                "{} ({dc} datacenter + {} worker)",
                l.worker_bits(),
                l.worker_bits() - dc
            ),
        };
        let sequence = match l.order() {
            rimeflake::FieldOrder::SequenceAboveWorker => {
                format!("{}, above the worker", l.sequence_bits())
            }
            _ => l.sequence_bits().to_string(),
        };
        let unit = match l.unit_ms() {
            1000 => "1 s".to_string(),
            ms => format!("{ms} ms"),
        };
        let day = |ms: u64| rimeflake::frontend::iso8601(ms)[..10].to_string();
        let runs_out = if l.expires_at_ms() < 1_767_225_600_000 {
            day(l.expires_at_ms())
        } else {
            day(l.expires_at_ms())[..4].to_string()
        };
        out += &format!(
            "| `{}` | {} | {} | {worker} | {sequence} | {unit} | {} | {runs_out} | {} |\n",
            p.name,
            l.clock_id_bits(),
            l.time_bits(),
            day(l.epoch_ms()),
            sentence(p.doc)
        );
    }
    out
}

/// docs/serve.md's rows of the counters' families.
fn docs_metrics() -> String {
    let mut out = String::from("| metric | type | what |\n|---|---|---|\n");
    for f in Stats::FIELDS {
        let name = match f.unit {
            StatUnit::Lease => format!("{}{{state=\"none\"\\|\"held\"\\|\"lost\"}}", f.metric),
            _ => f.metric.to_string(),
        };
        let what = match f.unit {
            StatUnit::Lease => format!("{}: 1 for the state it is in, 0 for the others", f.help),
            _ => f.help.to_string(),
        };
        out += &format!("| `{name}` | {} | {what} |\n", f.kind.as_str());
    }
    out
}

fn blocks() -> Vec<Block> {
    use Syntax::*;
    let py_types = "bindings-python/python/rimeflake/_types.py";
    let mut blocks = vec![
        (py_types, "layout-name", Hash, python_layout_name()),
        (py_types, "generator-options", Hash, python_options()),
        (py_types, "stats", Hash, python_stats()),
        (
            "crates/rimeflake-capi/src/stats.rs",
            "stats",
            Slashes,
            c_stats(),
        ),
        ("docs/configuration.md", "settings", Html, docs_settings()),
        ("docs/layouts.md", "presets", Html, docs_presets()),
        ("docs/serve.md", "metrics", Html, docs_metrics()),
    ];
    // The header napi-rs puts at the top of index.d.ts, and index.d.ts as committed.
    for file in ["bindings-node/dts-header.d.ts", "bindings-node/index.d.ts"] {
        blocks.push((file, "layout-name", Slashes, ts_layout_name()));
        blocks.push((file, "generator-options", Slashes, ts_options()));
        blocks.push((file, "stats", Slashes, ts_stats()));
    }
    blocks
        .into_iter()
        .map(|(file, name, syntax, text)| Block {
            file,
            name,
            syntax,
            text,
        })
        .collect()
}

#[test]
fn generated_blocks_are_what_the_tables_give() {
    let update = std::env::var_os("RIMEFLAKE_CONTRACT_UPDATE").is_some();
    let mut stale = Vec::new();
    for block in blocks() {
        let path = root().join(block.file);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        let wanted = block.apply(&text).unwrap_or_else(|e| panic!("{e}"));
        if wanted != text {
            if update {
                std::fs::write(&path, wanted).unwrap();
            } else {
                stale.push(format!("{} ({})", block.file, block.name));
            }
        }
    }
    assert!(
        stale.is_empty(),
        "stale blocks, regenerate them with `make contract`: {}",
        stale.join(", ")
    );
}

/// The C config is an ABI (its fields' order, its "unset" values): written by hand, and
/// checked here against the table, in the committed header a C program compiles.
#[test]
fn the_c_config_has_a_field_for_every_setting() {
    let header = std::fs::read_to_string(root().join("include/rimeflake.h")).unwrap();
    let start = header
        .find("typedef struct rimeflake_config {")
        .expect("rimeflake_config in the header");
    let body = &header[start..start + header[start..].find("} rimeflake_config;").unwrap()];
    let fields: Vec<&str> = body
        .lines()
        .map(str::trim)
        .filter(|l| l.ends_with(';') && !l.starts_with('*') && !l.starts_with('/'))
        .filter_map(|l| {
            l.trim_end_matches(';')
                .rsplit([' ', '*'])
                .next()
                .map(|f| f.trim_end_matches(')'))
        })
        .collect();
    for row in SETTINGS {
        assert!(
            fields.contains(&row.c),
            "rimeflake_config has no field {} for {:?} (its fields: {fields:?})",
            row.c,
            row.setting
        );
    }
}
