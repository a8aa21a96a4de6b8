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


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    path = Path(sys.argv[1])
    (from_json if path.suffix == ".json" else from_html)(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
