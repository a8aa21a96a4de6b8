#!/usr/bin/env python3
"""Counts the core's public items, the baseline of docs/architecture.md ("The public surface").

Two counts, each from what rustdoc wrote:

  scripts/docs/public_api.py target/doc/rimeflake/all.html
      after `cargo doc -p rimeflake --no-deps`: the items rustdoc's "all items" page lists, by
      kind (structs, enums, traits, functions, type aliases, constants, macros, statics), and
      the public modules (the pages of target/doc/rimeflake);
  scripts/docs/public_api.py target/doc/rimeflake.json
      after `cargo +nightly rustdoc -p rimeflake --lib -- -Z unstable-options --output-format
      json` (add `--all-features` before `--` for the remote backends): every public item of
      the crate by kind, methods and fields included, re-exports (`use`) apart.

  scripts/docs/public_api.py --list target/doc/rimeflake/all.html
      the same items, one a line (`kind path`, sorted) with the public modules: the snapshot
      committed as crates/rimeflake/public-api.txt;
  scripts/docs/public_api.py --check
      runs `cargo doc -p rimeflake --no-deps` (no features: the published surface) and fails
      when its list differs from crates/rimeflake/public-api.txt; `--check --update` rewrites
      that file instead.
"""

from __future__ import annotations

import collections
import json
import re
import sys
from pathlib import Path


def from_html(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    total = 0
    for m in re.finditer(r'<h3 id="([a-z-]+)">.*?</h3><ul class="all-items">(.*?)</ul>', text, re.S):
        n = m.group(2).count("<li>")
        total += n
        print(f"{m.group(1):12} {n}")
    print(f"{'items':12} {total}")
    modules = sorted(str(p.parent.relative_to(path.parent)).replace("/", "::")
                     for p in path.parent.rglob("index.html") if p.parent != path.parent)
    print(f"{'modules':12} {len(modules)}: {', '.join(modules)}")


def from_json(path: Path) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    kinds: collections.Counter[str] = collections.Counter()
    for item in doc["index"].values():
        if item.get("crate_id") == 0 and item.get("visibility") == "public":
            inner = item["inner"]
            kinds[next(iter(inner)) if isinstance(inner, dict) else inner] += 1
    reexports = kinds.pop("use", 0)
    for kind, n in kinds.most_common():
        print(f"{kind:12} {n}")
    print(f"{'items':12} {sum(kinds.values())} (and {reexports} re-exports)")


KINDS = {"struct", "enum", "trait", "fn", "type", "constant", "macro", "static", "union",
         "derive", "attr", "traitalias"}


MEMBER = re.compile(r'id="(method|tymethod|structfield|variant|associatedconstant|associatedtype)'
                    r'\.([A-Za-z0-9_]+)"')


def members(page: Path, owner: str) -> list[str]:
    """The members a type's page declares: inherent methods, fields, variants, associated
    constants and types (and a trait's own methods), without what trait impls bring."""
    text = page.read_text(encoding="utf-8")
    end = min((i for i in (text.find('id="trait-implementations"'),
                           text.find('id="synthetic-implementations"'),
                           text.find('id="blanket-implementations"'),
                           text.find('id="implementors"')) if i >= 0), default=len(text))
    return [f"{kind} {owner}::{name}" for kind, name in MEMBER.findall(text[:end])]


def listing(path: Path) -> list[str]:
    """`kind path` for each item of the "all items" page and each public module, sorted."""
    text = path.read_text(encoding="utf-8")
    lines = []
    for href, name in re.findall(r'<li><a href="([^"]+)">([^<]+)</a></li>', text):
        kind = Path(href).name.split(".", 1)[0]
        if kind in KINDS:
            lines.append(f"{kind} rimeflake::{name}")
            if kind in ("struct", "enum", "trait", "union"):
                lines += members(path.parent / href, f"rimeflake::{name}")
    root = path.parent
    for index in root.rglob("index.html"):
        if index.parent != root:
            lines.append("mod rimeflake::" + str(index.parent.relative_to(root)).replace("/", "::"))
    return sorted(set(lines))


REPO = Path(__file__).resolve().parents[2]
SNAPSHOT = REPO / "crates" / "rimeflake" / "public-api.txt"
HEADER = ("# The core's public items (rustdoc's \"all items\" page and the public modules, no features).\n"
          "# Made by: scripts/docs/public_api.py --check --update\n")


def check(update: bool) -> int:
    import os
    import shutil
    import subprocess
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    doc = target / "doc" / "rimeflake"
    # Stale pages of items that are gone would stay listed: start from an empty directory.
    shutil.rmtree(doc, ignore_errors=True)
    subprocess.run([os.environ.get("CARGO", "cargo"), "doc", "--quiet", "-p", "rimeflake",
                    "--no-deps"], cwd=REPO, check=True)
    now = HEADER + "".join(line + "\n" for line in listing(doc / "all.html"))
    if update:
        SNAPSHOT.write_text(now, encoding="utf-8")
        print(f"wrote {SNAPSHOT.relative_to(REPO)}")
        return 0
    was = SNAPSHOT.read_text(encoding="utf-8") if SNAPSHOT.exists() else ""
    if now == was:
        return 0
    import difflib
    sys.stdout.writelines(difflib.unified_diff(
        was.splitlines(keepends=True), now.splitlines(keepends=True),
        str(SNAPSHOT.relative_to(REPO)), "cargo doc -p rimeflake"))
    print(f"\nThe core's public API changed and {SNAPSHOT.relative_to(REPO)} does not say so.\n"
          "If the change is meant, update the list and commit it with the change:\n"
          "    scripts/docs/public_api.py --check --update", file=sys.stderr)
    return 1


def main() -> int:
    args = sys.argv[1:]
    if args and args[0] == "--check":
        if args[1:] not in ([], ["--update"]):
            print(__doc__, file=sys.stderr)
            return 2
        return check(update=args[1:] == ["--update"])
    if len(args) == 2 and args[0] == "--list":
        print("\n".join(listing(Path(args[1]))))
        return 0
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    path = Path(args[0])
    (from_json if path.suffix == ".json" else from_html)(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
