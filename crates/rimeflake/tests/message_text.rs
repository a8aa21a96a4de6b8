//! Every message the core can say is one line of single-spaced text: each string literal of its
//! sources, read as Rust reads it (a `\` at the end of a line drops the line break and the next
//! line's indentation), holds no run of spaces inside a line, no line break that the source
//! did not escape, no `\n` outside the files whose literals are lines of output, and no two
//! words glued across a line continuation. A deadline error once carried two runs of 18
//! spaces, where its line continuations had been lost.
//!
//! Raw strings are not messages (SQL), and neither are literals with `\r\n` (protocol lines).

use std::path::{Path, PathBuf};

/// Files whose literals may be lines of output or of a file (a `\n`, spaces that align
/// columns), checked by their own tests: `state show`'s rendering, the layout and lock files,
/// test fixtures, the simulation's report. Their literals may still not break a line unescaped
/// or glue words.
const LINES_OF_OUTPUT: &[&str] = &[
    "admin/inspect.rs",
    "admin/remote.rs",
    "lease/namespace.rs",
    "lease/local.rs",
    "lease/dirs.rs",
    "testing/remote_sim/world.rs",
];

/// Files whose literals are not messages at all: SQL statements.
const NOT_MESSAGES: &[&str] = &["lease/remote/postgres/sql.rs", "lease/remote/mysql/sql.rs"];

/// One string literal: its line in the source, its text with continuations applied (escapes
/// other than `\` + line break kept as written), and whether a continuation glued two words.
struct Literal {
    line: usize,
    text: String,
    glued: bool,
}

/// The non-raw string literals of `src`, skipping comments, raw strings and char literals.
fn literals(src: &str) -> Vec<Literal> {
    let b = src.as_bytes();
    let line_of = |i: usize| src[..i].bytes().filter(|&c| c == b'\n').count() + 1;
    let ident = |i: usize| i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if src[i..].starts_with("//") {
            i = src[i..].find('\n').map_or(b.len(), |n| i + n);
        } else if src[i..].starts_with("/*") {
            let mut depth = 0;
            while i < b.len() {
                if src[i..].starts_with("/*") {
                    depth += 1;
                    i += 2;
                } else if src[i..].starts_with("*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if (b[i] == b'r' || src[i..].starts_with("br")) && !ident(i) && raw_start(&src[i..])
        {
            let open = &src[i..];
            let skip = usize::from(b[i] == b'b');
            let hashes = open[skip + 1..].bytes().take_while(|&c| c == b'#').count();
            let close = format!("\"{}", "#".repeat(hashes));
            let body = i + skip + 2 + hashes;
            i = src[body..]
                .find(&close)
                .map_or(b.len(), |n| body + n + close.len());
        } else if b[i] == b'\'' {
            // A char literal ('"', '\'', '\u{..}'), else a lifetime.
            let rest = &src[i + 1..];
            // An escape: the backslash, the escaped character (`'` in `'\''`), up to the quote.
            let len = if let Some(escape) = rest.strip_prefix('\\') {
                escape.get(1..).and_then(|e| e.find('\'')).map(|n| n + 4)
            } else {
                rest.chars()
                    .next()
                    .filter(|c| rest[c.len_utf8()..].starts_with('\''))
                    .map(|c| c.len_utf8() + 2)
            };
            i += len.unwrap_or(1);
        } else if b[i] == b'"' {
            let start = i;
            let mut text = String::new();
            let mut glued = false;
            i += 1;
            while b[i] != b'"' {
                if b[i] == b'\\' && b[i + 1] == b'\n' {
                    let word_before = !text.is_empty() && !text.ends_with([' ', 'n']);
                    i += 2;
                    while b[i].is_ascii_whitespace() {
                        i += 1;
                    }
                    glued |= word_before && b[i] != b'"';
                } else if b[i] == b'\\' {
                    text.push_str(&src[i..i + 2]);
                    i += 2;
                } else {
                    let c = src[i..].chars().next().unwrap();
                    text.push(c);
                    i += c.len_utf8();
                }
            }
            i += 1;
            out.push(Literal {
                line: line_of(start),
                text,
                glued,
            });
        } else {
            i += 1;
        }
    }
    out
}

/// `r"`, `r#"`, `br"`, ...: the start of a raw string.
fn raw_start(s: &str) -> bool {
    let s = s.strip_prefix('b').unwrap_or(s);
    s.strip_prefix('r')
        .is_some_and(|r| r.trim_start_matches('#').starts_with('"'))
}

/// What is wrong with `lit` as message text, if anything.
fn faults(lit: &Literal, lines_of_output: bool) -> Vec<&'static str> {
    let text = &lit.text;
    if text.contains("\\r\\n") {
        return Vec::new();
    }
    let mut found = Vec::new();
    if text.contains('\n') {
        found.push("a line break with no `\\` before it in the source");
    }
    if text.contains("\\n") && !lines_of_output {
        found.push("a `\\n`: a message is one line");
    }
    // Inside a line: spaces after its first non-space (lines of output may be indented).
    let spaced = text
        .split("\\n")
        .flat_map(|l| l.split('\n'))
        .any(|l| l.trim_start().contains("  ") && !l.trim().is_empty());
    if spaced && !lines_of_output {
        found.push("a run of spaces");
    }
    if lit.glued {
        found.push("two words glued where the line continues (a space before the `\\`?)");
    }
    found
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_literal_of_the_core_is_single_spaced_one_line_text() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &mut files);
    files.sort();
    let mut bad = Vec::new();
    let mut checked = 0;
    for file in &files {
        let name = file
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if NOT_MESSAGES.contains(&name.as_str()) {
            continue;
        }
        let lines_of_output = LINES_OF_OUTPUT.contains(&name.as_str());
        for lit in literals(&std::fs::read_to_string(file).unwrap()) {
            checked += 1;
            for fault in faults(&lit, lines_of_output) {
                bad.push(format!("src/{name}:{}: {fault}: {:?}", lit.line, lit.text));
            }
        }
    }
    // The lexer found the literals: a broken one would find few and pass.
    assert!(checked > 1000, "only {checked} literals found");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    for name in LINES_OF_OUTPUT.iter().chain(NOT_MESSAGES) {
        assert!(root.join(name).is_file(), "{name} is listed but gone");
    }
}

/// The check itself catches each fault, and passes what Rust's continuations make right.
#[test]
fn the_check_catches_each_fault() {
    let said = |src: &str, output: bool| -> Vec<&'static str> {
        literals(src)
            .iter()
            .flat_map(|l| faults(l, output))
            .collect()
    };
    let clean = "// a \"quoted\" comment\nlet c = '\"'; let q = '\\''; let l: &'a str = \"one \\\n    line\";\n";
    assert_eq!(said(clean, false), Vec::<&str>::new());
    let found: Vec<String> = literals(clean).into_iter().map(|l| l.text).collect();
    assert_eq!(
        found,
        ["one line"],
        "char literals and comments are not strings"
    );
    assert_eq!(
        said("r\"a  b\n c\"; br#\"x  y\"#", false),
        Vec::<&str>::new()
    );
    assert_eq!(
        said("\"of the                  TTL\"", false),
        ["a run of spaces"]
    );
    assert_eq!(
        said("\"of the\n    TTL\"", false),
        ["a line break with no `\\` before it in the source"]
    );
    assert_eq!(
        said("\"one\\ntwo\"", false),
        ["a `\\n`: a message is one line"]
    );
    assert_eq!(said("\"  worker {:>5}  x\\n\"", true), Vec::<&str>::new());
    assert_eq!(said("\"worker {:>5}  x\"", false), ["a run of spaces"]);
    assert_eq!(
        said("\"of the\\\n    TTL\"", false),
        ["two words glued where the line continues (a space before the `\\`?)"]
    );
    assert_eq!(said("\"PING\\r\\n\"", false), Vec::<&str>::new());
}
