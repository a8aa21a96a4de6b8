#!/usr/bin/env python3
"""Comments and docs point only inside the repository (`make lint`): no source comment, and no
page of README.md or docs/, cites a design file kept outside the repository (DESIGN, .md) or a
tracker's item (the word issue and a number). A comment says the property it is about, or
points into docs/ (docs/architecture.md, docs/guarantees.md, ...). OUTSIDE is the pattern.

What counts as a comment: `//` and `/* */` in Rust, C, C++, JavaScript and TypeScript; `#` in
Python, shell, Makefiles, TOML and YAML; Python's triple-quoted strings (docstrings). String
literals are not comments (a program may print what it likes). README.md and docs/*.md are
read whole.

Usage: scripts/docs/references.py [--root DIR]
Exit status 0 when nothing points outside, 1 otherwise (one line per finding: file:line: text).
"""

from __future__ import annotations

import argparse
import io
import os
import re
import tokenize
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUTSIDE = re.compile(r"DESIGN\.md|\b[Ii]ssues? #?[0-9]")
SKIP_DIRS = {".git", "target", "node_modules", ".venv", "dist", "__pycache__", ".pytest_cache",
             ".mypy_cache"}
C_LIKE = {".rs", ".c", ".h", ".cpp", ".hpp", ".cc", ".js", ".mjs", ".cjs", ".ts"}
HASH = {".py", ".pyi", ".sh", ".toml", ".yml", ".yaml", ".cfg", ".mk"}
HASH_NAMES = {"Makefile", "with-redis", "with-postgres", "run"}
# Docs read whole; CHANGELOG.md is history and bench/RESULTS.md is what the benchmarks wrote.
DOCS = ["README.md", "docs"]


def c_like_comments(text: str, ext: str) -> list[tuple[int, str]]:
    """(line, text) of every comment of a C-like file, strings and char literals skipped."""
    found: list[tuple[int, str]] = []
    i, n, line = 0, len(text), 1
    quotes = "\"'`" if ext in {".js", ".mjs", ".cjs", ".ts"} else "\""
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            found.append((line, text[i:j]))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            for k, part in enumerate(text[i:j].split("\n")):
                found.append((line + k, part))
            line += text.count("\n", i, j)
            i = j
        elif ext == ".rs" and c == "r" and re.match(r'r#*"', text[i:i + 40]) \
                and (i == 0 or not re.match(r"\w", text[i - 1])):
            hashes = re.match(r'r(#*)"', text[i:]).group(1)
            end = text.find('"' + hashes, i + 2 + len(hashes))
            end = n if end < 0 else end + 1 + len(hashes)
            line += text.count("\n", i, end)
            i = end
        elif c in quotes or (c == "'" and ext != ".rs") or \
                (ext == ".rs" and c == "'" and re.match(r"'(\\[^']{1,10}|[^\\'])'", text[i:i + 13])):
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            line += text.count("\n", i, j + 1)
            i = j + 1
        else:
            i += 1
    return found


def python_comments(text: str) -> list[tuple[int, str]]:
    """(line, text) of the comments and triple-quoted strings (docstrings) of Python code."""
    found: list[tuple[int, str]] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                found.append((tok.start[0], tok.string))
            elif tok.type == tokenize.STRING and re.match(r"[A-Za-z]*(\"\"\"|\'\'\')", tok.string):
                for k, part in enumerate(tok.string.split("\n")):
                    found.append((tok.start[0] + k, part))
    except (tokenize.TokenError, SyntaxError):
        return hash_comments(text)
    return found


def hash_comments(text: str) -> list[tuple[int, str]]:
    """(line, text) of `#` comments: a `#` at the start of a line or after a blank, outside
    quotes (so `$#` and a `"#"` are not comments)."""
    found: list[tuple[int, str]] = []
    for no, rest in enumerate(text.split("\n"), 1):
        quote = None
        for k, ch in enumerate(rest):
            if quote:
                if ch == quote:
                    quote = None
            elif ch in "\"'":
                quote = ch
            elif ch == "#" and (k == 0 or rest[k - 1] in " \t"):
                found.append((no, rest[k:]))
                break
    return found


def sources(root: Path):
    for top, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        for name in sorted(files):
            yield Path(top) / name


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", type=Path, default=ROOT)
    root = ap.parse_args().root.resolve()
    findings: list[str] = []
    checked = 0
    for path in sources(root):
        rel = path.relative_to(root)
        ext = path.suffix
        if rel.parts[0] in ("testdata",):
            continue
        if ext == ".md":
            if str(rel) == "README.md" or rel.parts[0] == "docs":
                comments = list(enumerate(path.read_text(encoding="utf-8").split("\n"), 1))
            else:
                continue
        elif ext in C_LIKE:
            comments = c_like_comments(path.read_text(encoding="utf-8", errors="replace"), ext)
        elif ext in HASH or path.name in HASH_NAMES:
            text = path.read_text(encoding="utf-8", errors="replace")
            comments = python_comments(text) if ext in {".py", ".pyi"} else hash_comments(text)
        else:
            continue
        checked += 1
        for line, text in comments:
            if OUTSIDE.search(text):
                findings.append(f"{rel}:{line}: {text.strip()}")
    for f in findings:
        print(f"references: {f}", file=sys.stderr)
    if findings:
        print("references: a comment or doc cites a file outside the repository or a tracker's "
              "issue: say the property instead, or point into docs/", file=sys.stderr)
        return 1
    print(f"references: {checked} files, no comment points outside the repository")
    return 0


if __name__ == "__main__":
    sys.exit(main())
