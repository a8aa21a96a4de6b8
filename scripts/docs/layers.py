#!/usr/bin/env python3
"""The layer check of the core (`make lint`): no module of crates/rimeflake/src imports a module
of a layer above its own, except the known back-edges that docs/architecture.md lists.

docs/architecture.md holds two tables this script reads, each right after a marker comment:

  <!-- layers -->      | layer | name | files |  one row per layer, the lowest first; the files
                       column names paths under crates/rimeflake/src in backticks, a path that
                       ends in `/` standing for everything under it (the longest match wins)
  <!-- back-edges -->  | file | imports | why |  the imports from a file to a module of a higher
                       layer that are there today and are to be removed

For every source file it reads the paths that start with `crate::` (in `use` lines, braces
expanded, and inline) and `super::` (resolved from the file's own module), outside comments,
and maps each to the deepest module file it names. It fails when
  - a source file is in no layer, or a layer names a path that does not exist;
  - a file imports a module of a higher layer and that pair is not a known back-edge;
  - a known back-edge is no longer there (the table must shrink with the code);
  - files import each other in a circle (through any number of files, in one layer or not);
  - a module straddles layers: a file of a module's folder is in another layer than the
    module's own file (`frontend.rs` in one layer and `frontend/api.rs` in another), so that
    one `crate::` path would name two layers (the crate root, lib.rs, excepted).

A layer whose name says "built only for tests" (the test-only code, on top of every layer) may
be imported from any layer: the crate builds it only for tests, so only tests can name it, and
the compiler refuses any other code that does. Those imports exist only in the test build, where
the tests sit on top, so they are no edges for the circle check either.

The other crates (the CLI, serve, the bindings, the test kit) have no layers table, but the
same rule against circles: `--circles DIR...` checks only that no files of those source
folders import each other in a circle.

Usage: scripts/docs/layers.py [--src DIR] [--doc FILE] [--edges]
       scripts/docs/layers.py --circles DIR [DIR...]
  --edges  also print every import between layers (module to module), for the doc's diagram
Exit status 0 when the layers hold, 1 otherwise (each problem on a line of its own).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")


def strip_comments_and_strings(text: str) -> str:
    """The code of a Rust file with comments and string literals blanked (line breaks kept)."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:i + 40]) and (i == 0 or not re.match(r"[A-Za-z0-9_]", text[i - 1])):
            hashes = re.match(r'r(#*)"', text[i:]).group(1)
            end = text.find('"' + hashes, i + 2 + len(hashes))
            end = n if end < 0 else end + 1 + len(hashes)
            out.append("\n" * text.count("\n", i, end))
            i = end
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append("\n" * text.count("\n", i, j + 1))
            i = j + 1
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", text[i:i + 4]) or text.startswith("'\\u{", i):
            j = text.find("'", i + 1 if text[i + 1] != "\\" else i + 3)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def expand(tree: str) -> list[str]:
    """`a::{b, c::{d, e}}` as [`a::b`, `a::c::d`, `a::c::e`]."""
    tree = tree.strip()
    if not tree:
        return []
    depth = 0
    for k, ch in enumerate(tree):
        if ch == "{":
            if depth == 0:
                head = tree[:k]
                inner = tree[k + 1:tree.rindex("}")]
                parts, level, start = [], 0, 0
                for m, ch2 in enumerate(inner):
                    if ch2 == "{":
                        level += 1
                    elif ch2 == "}":
                        level -= 1
                    elif ch2 == "," and level == 0:
                        parts.append(inner[start:m])
                        start = m + 1
                parts.append(inner[start:])
                return [head + p for part in parts for p in expand(part.strip())] if head else \
                    [p for part in parts for p in expand(part.strip())]
            depth += 1
    return [tree]


def module_of(rel: str) -> list[str]:
    """The module path of a source file: `generator/start.rs` is ["generator", "start"]."""
    parts = rel[:-3].split("/")
    if parts[-1] == "mod" or parts in (["lib"], ["main"]):
        parts = parts[:-1]
    return parts


def crate_root(src: Path) -> str:
    """The crate's root file: lib.rs, or main.rs for a program."""
    return "lib.rs" if (src / "lib.rs").is_file() else "main.rs"


def module_file(src: Path, module: list[str]) -> str | None:
    if not module:
        return crate_root(src)
    base = "/".join(module)
    for cand in (base + ".rs", base + "/mod.rs"):
        if (src / cand).is_file():
            return cand
    return None


def root_reexports(src: Path) -> dict[str, list[str]]:
    """Names lib.rs re-exports (`pub use generator::{Builder, ...}`), each to its module."""
    code = strip_comments_and_strings((src / crate_root(src)).read_text(encoding="utf-8"))
    names: dict[str, list[str]] = {}
    for m in re.finditer(r"\bpub\s+use\s+([^;]+);", code):
        for path in expand(re.sub(r"\s+", " ", m.group(1))):
            segs = [s for s in path.split(" as ")[0].replace(" ", "").split("::") if s]
            if segs and segs[0] == "crate":
                segs = segs[1:]
            names[segs[-1]] = segs[:-1]
    return names


def resolve(src: Path, segs: list[str], reexports: dict[str, list[str]]) -> list[str]:
    """The deepest module that a path (without `crate::`) names."""
    if segs and module_file(src, segs[:1]) is None and segs[0] in reexports:
        segs = reexports[segs[0]]  # an item: what follows it names no module
    found: list[str] = []
    for k in range(1, len(segs) + 1):
        if module_file(src, segs[:k]) is not None:
            found = segs[:k]
        else:
            break
    return found


def imports(src: Path, rel: str, reexports: dict[str, list[str]]) -> set[str]:
    """The modules (`lease::local`) a source file names through `crate::` and `super::`."""
    code = strip_comments_and_strings((src / rel).read_text(encoding="utf-8"))
    own = module_of(rel)
    # A file's `super` is its parent module; for mod.rs and lib.rs the module is the directory.
    paths: list[list[str]] = []
    for m in re.finditer(r"(?<![A-Za-z0-9_$])use\s+([^;]+);", code):
        for path in expand(re.sub(r"\s+", " ", m.group(1))):
            path = path.split(" as ")[0].replace(" ", "")
            paths.append([s for s in path.split("::") if s])
    for m in re.finditer(r"(?<![A-Za-z0-9_$:])((?:crate|super)(?:::[A-Za-z_][A-Za-z0-9_]*)+)", code):
        paths.append(m.group(1).split("::"))
    found: set[str] = set()
    for segs in paths:
        if not segs:
            continue
        if segs[0] == "crate":
            base, rest = [], segs[1:]
        elif segs[0] in ("super", "self"):
            base = list(own)
            rest = segs
            while rest and rest[0] in ("super", "self"):
                if rest[0] == "super":
                    base = base[:-1]
                rest = rest[1:]
        else:
            continue
        rest = [s for s in rest if s not in ("*", "self") and IDENT.match(s)]
        target = resolve(src, base + rest, reexports) if base or rest else []
        if target and target != own:
            found.add("::".join(target))
    return found


def circles(uses: dict[str, set[str]]) -> list[list[str]]:
    """The circles of files (a file reaches itself through the files it imports): one per
    strongly connected set of two files or more, as a path around it from its first file."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(uses):
        if root in index:
            continue
        # Tarjan's algorithm, iterative: (file, the files it imports still to visit).
        work = [(root, iter(sorted(uses[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, todo = work[-1]
            step = next(todo, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(uses.get(step, ())))))
                elif step in on_stack:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                members = []
                while True:
                    m = stack.pop()
                    on_stack.discard(m)
                    members.append(m)
                    if m == node:
                        break
                if len(members) > 1:
                    found.append(path_around(sorted(members), uses))
    return found


def path_around(members: list[str], uses: dict[str, set[str]]) -> list[str]:
    """A shortest path from the first member back to it, inside the set (breadth first)."""
    inside = set(members)
    start = members[0]
    came: dict[str, str] = {}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for nxt in sorted(uses[node] & inside):
            if nxt == start:
                path = [node]
                while path[-1] != start:
                    path.append(came[path[-1]])
                return path[::-1]
            if nxt not in came:
                came[nxt] = node
                queue.append(nxt)
    return members


def cells(row: str) -> list[str]:
    return [c.strip() for c in row.strip().strip("|").split("|")]


def table_after(doc: str, marker: str, path: Path) -> list[list[str]]:
    at = doc.find(f"<!-- {marker} -->")
    if at < 0:
        sys.exit(f"layers: {path} has no `<!-- {marker} -->` table")
    rows = []
    for line in doc[at:].splitlines()[1:]:
        if not line.strip():
            if rows:
                break
            continue
        if not line.lstrip().startswith("|"):
            break
        rows.append(cells(line))
    return [r for r in rows[2:]]  # past the header and its rule


def ticks(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def file_uses(src: Path) -> dict[str, set[str]]:
    """Every source file under `src`, with the files it imports."""
    reexports = root_reexports(src)
    files = sorted(str(p.relative_to(src)) for p in src.rglob("*.rs"))
    uses: dict[str, set[str]] = {rel: set() for rel in files}
    for rel in files:
        for target in imports(src, rel, reexports):
            tfile = module_file(src, target.split("::"))
            if tfile and tfile != rel:
                uses[rel].add(tfile)
    return uses


def circles_only(folders: list[Path]) -> int:
    problems = []
    for src in folders:
        for circle in circles(file_uses(src)):
            problems.append(
                f"{src}: files that import each other in a circle: "
                + " -> ".join(circle + circle[:1])
                + ": move what both need into one of them, or below both"
            )
    for p in problems:
        print(f"layers: {p}", file=sys.stderr)
    if not problems:
        print(f"layers: no circle of files in {len(folders)} more crates")
    return 1 if problems else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--src", type=Path, default=ROOT / "crates/rimeflake/src")
    ap.add_argument("--doc", type=Path, default=ROOT / "docs/architecture.md")
    ap.add_argument("--edges", action="store_true")
    ap.add_argument("--circles", type=Path, nargs="+", metavar="DIR")
    args = ap.parse_args()
    if args.circles:
        return circles_only(args.circles)
    src: Path = args.src
    doc = args.doc.read_text(encoding="utf-8")
    problems: list[str] = []

    layers: list[tuple[int, str, list[str]]] = []
    for row in table_after(doc, "layers", args.doc):
        layers.append((int(row[0]), row[1], ticks(row[2])))
    prefixes: dict[str, int] = {}
    for level, name, paths in layers:
        for p in paths:
            if not ((src / p).is_dir() if p.endswith("/") else (src / p).is_file()):
                problems.append(f"layer {level} ({name}) names {p}, which is not in {src}")
            prefixes[p] = level

    def layer_of(rel: str) -> int | None:
        best = None
        for p, level in prefixes.items():
            if rel == p or (p.endswith("/") and rel.startswith(p)):
                if best is None or len(p) > len(best[0]):
                    best = (p, level)
        return best[1] if best else None

    names = {level: name for level, name, _ in layers}
    test_only = {level for level, name, _ in layers if "built only for tests" in name}
    allowed: dict[tuple[str, str], str] = {}
    for row in table_after(doc, "back-edges", args.doc):
        for f in ticks(row[0]):
            for t in ticks(row[1]):
                allowed[(f, t.removeprefix("crate::"))] = row[2] if len(row) > 2 else ""

    reexports = root_reexports(src)
    files = sorted(str(p.relative_to(src)) for p in src.rglob("*.rs"))
    seen: set[tuple[str, str]] = set()
    edges: set[tuple[str, str]] = set()
    uses: dict[str, set[str]] = {rel: set() for rel in files}
    for rel in files:
        level = layer_of(rel)
        if level is None:
            problems.append(f"{rel}: in no layer: add it to the layers table of {args.doc.name}")
            continue
        for target in sorted(imports(src, rel, reexports)):
            tfile = module_file(src, target.split("::"))
            tlevel = layer_of(tfile) if tfile else None
            if tlevel in test_only and level not in test_only:
                continue  # a test's import of the test-only code
            if tfile and tfile != rel:
                uses[rel].add(tfile)
            if tlevel is None:
                continue
            if tlevel != level:
                edges.add((rel, target))
            if tlevel > level:
                seen.add((rel, target))
                if (rel, target) not in allowed:
                    problems.append(
                        f"{rel} (layer {level}, {names[level]}) imports crate::{target} "
                        f"(layer {tlevel}, {names[tlevel]}): a layer imports only those below it"
                    )
    for rel in files:
        parent = module_of(rel)[:-1]
        pfile = module_file(src, parent) if parent else None
        if pfile is None or pfile == rel:
            continue
        if layer_of(rel) is not None and layer_of(pfile) is not None \
                and layer_of(rel) != layer_of(pfile):
            problems.append(
                f"module {'::'.join(parent)} straddles layers: {pfile} is in layer "
                f"{layer_of(pfile)} and {rel} in layer {layer_of(rel)}: a module and its "
                f"submodules are one layer (split the module, or move the file)"
            )
    for (f, t) in sorted(set(allowed) - seen):
        problems.append(
            f"known back-edge {f} -> crate::{t} is gone: remove its row from {args.doc.name}"
        )
    for circle in circles(uses):
        problems.append(
            "files that import each other in a circle: " + " -> ".join(circle + circle[:1])
            + ": move what both need into one of them, or below both"
        )
    if args.edges:
        for rel, target in sorted(edges):
            tfile = module_file(src, target.split("::"))
            print(f"{layer_of(rel)} {rel} -> {layer_of(tfile)} crate::{target}")
    for p in problems:
        print(f"layers: {p}", file=sys.stderr)
    if not problems:
        print(f"layers: {len(files)} files in {len(layers)} layers, "
              f"{len(seen)} known back-edges, no other import goes up, no circle of files, "
              f"no module across layers")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
