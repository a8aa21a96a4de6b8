//! The front ends' contract, made from the core's tables and held by this test: the settings
//! (`frontend::SETTINGS`), the counters (`Stats::FIELDS`) and the presets
//! (`Layout::PRESET_LIST`).
//!
//! What a front end must declare statically, a typed stub or a C struct, is generated here into
//! a marked block of its file, and so are the docs' tables of them: the test fails when a block
//! differs from what the tables give, and `make contract` (this test with
//! `RIMEFLAKE_CONTRACT_UPDATE=1`) rewrites the blocks. What a front end reads at run time (its
//! options, its stats, its flags) it reads from the tables themselves. The C config's fields are
//! an ABI: they are written in the order of `C_CONFIG`, which may only grow at its end.

use rimeflake::frontend::{
    camel_case as camel, CField, SettingDefault, SettingInfo, SettingKind, StatField, StatUnit,
    StatValue, C_CONFIG, SETTINGS,
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

/// The presets whose Python constructor the binding writes itself (it takes arguments:
/// `Layout.baidu(epoch_ms)`); every other preset's is made from the list.
const PYTHON_OWN_CONSTRUCTORS: &[&str] = &["baidu"];

/// Python's `Layout.<preset>()` in the stub: one per preset, as the binding makes them
/// (`add_preset_constructors`).
fn python_preset_constructors() -> String {
    let mut out = String::new();
    for p in Layout::PRESET_LIST {
        if PYTHON_OWN_CONSTRUCTORS.contains(&p.name) {
            continue;
        }
        out += &format!("    @staticmethod\n    def {}() -> Layout:\n", p.name);
        // One line, as the binding's docstring is (the stub's test holds them equal).
        out += &format!("        \"\"\"{}\"\"\"\n", sentence(p.doc));
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

/// How C holds a setting: its field's type, its value when unset (what rimeflake_config_init
/// writes), the words for that value, and the function of `rimeflake-capi/src/config.rs` that
/// hands the field to the builder.
struct CType {
    rust: &'static str,
    cpp: &'static str,
    unset: String,
    unset_doc: String,
    apply: &'static str,
}

fn c_type(row: &SettingInfo) -> CType {
    let (rust, cpp, apply) = match row.kind {
        SettingKind::WorkerId => ("i64", "std::uint64_t", "worker_id"),
        SettingKind::Millis => ("u64", "std::uint64_t", "millis"),
        SettingKind::Flag => ("bool", "bool", "flag"),
        _ => ("*const c_char", "std::string", "text"),
    };
    // A default of its own, unless the environment or a rule decides: then a value that
    // leaves it to them (config.rs's helpers: NULL text, a worker ID of -1, and 0 or false
    // for a setting the environment may give).
    let default = match (row.kind, row.default) {
        (SettingKind::Millis, SettingDefault::Millis(ms)) if row.env.is_none() => {
            Some(ms.to_string())
        }
        (SettingKind::Flag, SettingDefault::Flag(on)) if row.env.is_none() => Some(on.to_string()),
        _ => None,
    };
    let (unset, unset_doc) = match default {
        Some(value) => (value.clone(), format!("Default {value}.")),
        None => {
            let (value, shown) = match row.kind {
                SettingKind::WorkerId => ("-1", "-1"),
                SettingKind::Millis => ("0", "0"),
                SettingKind::Flag => ("false", "false"),
                _ => ("std::ptr::null()", "NULL"),
            };
            let doc = format!("{shown} (the default): {}.", default_of(row));
            (value.to_string(), doc)
        }
    };
    CType {
        rust,
        cpp,
        unset,
        unset_doc,
        apply,
    }
}

/// C's `rimeflake_config` in the order of `C_CONFIG`, its defaults and its hand-over to the
/// core's builder, setting by setting (rimeflake-capi's `config.rs`).
fn c_config() -> String {
    let mut fields = String::from(
        "#[repr(C)]\n#[allow(non_camel_case_types)]\npub struct rimeflake_config {\n    \
         /// sizeof(rimeflake_config) of the header the program was built with (set by\n    \
         /// rimeflake_config_init). Fields a newer header adds come after the old ones.\n    \
         pub struct_size: usize,\n",
    );
    let mut defaults = String::from(
        "impl rimeflake_config {\n    /// What rimeflake_config_init writes: every setting unset.\n    \
         fn defaults(struct_size: usize) -> Self {\n        rimeflake_config {\n            \
         struct_size,\n",
    );
    let mut apply = String::from(
        "    /// `b` with each setting this config sets.\n    ///\n    /// # Safety\n    \
         /// The text fields must be NULL or NUL-terminated strings.\n    \
         unsafe fn settings(&self, mut b: Builder) -> Result<Builder, Failure> {\n        \
         // SAFETY: the text fields are NULL or NUL-terminated strings (this function's\n        \
         // contract).\n        unsafe {\n",
    );
    for field in C_CONFIG {
        match field {
            CField::Setting(setting) => {
                let row = setting.info();
                let c = c_type(row);
                fields += &wrap(
                    &format!("{} {}", sentence(row.doc), c.unset_doc),
                    "    /// ",
                    100,
                );
                fields += &format!("    pub {}: {},\n", row.c, c.rust);
                defaults += &format!("            {}: {},\n", row.c, c.unset);
                apply += &format!(
                    "            b = {}(b, Setting::{setting:?}, self.{})?;\n",
                    c.apply, row.c
                );
            }
            CField::OnWarning => {
                fields += &wrap(
                    "Called with each warning (such as a container on the default state \
                     directory). NULL (the default): each warning is printed on stderr, one line \
                     `rimeflake: warning: <message>`; rimeflake_warning_ignore drops them. May be \
                     called from any thread, during rimeflake_generator_new and at any later time \
                     until rimeflake_generator_free returns: rimeflake_next_id and rimeflake_fill \
                     call it too when the generator takes a worker ID again (in a forked child, or \
                     after a server backend moved its lease).",
                    "    /// ",
                    100,
                );
                fields += "    pub on_warning: rimeflake_warning_fn,\n";
                fields += &wrap(
                    "Passed to on_warning as it is. What it points to must stay valid until \
                     rimeflake_generator_free returns (not only during rimeflake_generator_new): \
                     the generator keeps the pointer.",
                    "    /// ",
                    100,
                );
                fields += "    pub warning_user_data: *mut c_void,\n";
                defaults += "            on_warning: None,\n";
                defaults += "            warning_user_data: std::ptr::null_mut(),\n";
            }
            other => panic!("no C field for {other:?}"),
        }
    }
    fields
        + "}\n\n"
        + &defaults
        + "        }\n    }\n\n"
        + &apply
        + "        }\n        Ok(b)\n    }\n}\n"
}

/// C++'s `rimeflake::Config` (include/rimeflake.hpp): a setter for each setting, and for the
/// text ones the string it keeps and the C field that points into it.
fn cpp_config() -> (String, String, String) {
    let (mut setters, mut pointers, mut slots) = (String::new(), String::new(), Vec::new());
    for field in C_CONFIG {
        let CField::Setting(setting) = field else {
            continue; // on_warning has its setter by hand: it takes two fields
        };
        let row = setting.info();
        let c = c_type(row);
        let body = match c.rust {
            "*const c_char" => {
                slots.push(format!("{}_", row.c));
                pointers += &format!("    config_.{0} = c_str({0}_);\n", row.c);
                format!("return text({}_, std::move(v));", row.c)
            }
            "i64" => format!(
                "config_.{} = static_cast<std::int64_t>(v); return *this;",
                row.c
            ),
            _ => format!("config_.{} = v; return *this;", row.c),
        };
        setters += &format!("  Config &{}({} v) {{ {body} }}\n", row.c, c.cpp);
    }
    let slots = format!("  std::optional<std::string> {};\n", slots.join(", "));
    (setters, pointers, slots)
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
            "bindings-python/python/rimeflake/_native.pyi",
            "layout-presets",
            Hash,
            python_preset_constructors(),
        ),
        (
            "crates/rimeflake-capi/src/stats.rs",
            "stats",
            Slashes,
            c_stats(),
        ),
        (
            "crates/rimeflake-capi/src/config.rs",
            "config",
            Slashes,
            c_config(),
        ),
        ("docs/configuration.md", "settings", Html, docs_settings()),
        ("docs/layouts.md", "presets", Html, docs_presets()),
        ("docs/serve.md", "metrics", Html, docs_metrics()),
    ];
    let (setters, pointers, slots) = cpp_config();
    let hpp = "include/rimeflake.hpp";
    blocks.push((hpp, "config-setters", Slashes, setters));
    blocks.push((hpp, "config-text", Slashes, pointers));
    blocks.push((hpp, "config-text-kept", Slashes, slots));
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

/// The C config's order is an ABI: the fields of the first header (up to `lease_ttl_ms`, which
/// `FIRST_SIZE` in `rimeflake-capi/src/config.rs` names) keep their places, and every field
/// since is appended after them.
#[test]
fn the_c_config_only_grows_at_its_end() {
    let first: Vec<String> = [
        "layout",
        "worker_id",
        "namespace_name",
        "state_dir",
        "backend",
        "max_drift_ms",
        "max_wait_ms",
        "on_rollback",
        "strict_monotonic",
        "on_warning",
    ]
    .map(String::from)
    .to_vec();
    let now: Vec<String> = C_CONFIG
        .iter()
        .map(|f| match f {
            CField::Setting(s) => s.info().c.to_string(),
            _ => "on_warning".to_string(),
        })
        .collect();
    assert_eq!(
        now[..first.len()],
        first[..],
        "C_CONFIG reordered: append new fields"
    );
}
