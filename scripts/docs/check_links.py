#!/usr/bin/env python3
"""Check the links of README.md and docs/*.md (standard library only).

Every relative link must name a file or directory of the repository, and every `#anchor` (on
its own, or after a path to a markdown file) must be the slug of a heading of that file, as
GitHub makes them: lower case, punctuation dropped, spaces turned into hyphens, and `-1`, `-2`,
... added to repeated headings. Links to other sites (http:, https:, mailto:) are not fetched.

Prints each broken link as FILE:LINE: and exits 1 when there is any; 0 otherwise.
Usage: scripts/docs/check_links.py [ROOT]  (ROOT defaults to the repository holding this script)
"""

from __future__ import annotations

import re
import sys
import unicodedata
from pathlib import Path

# [text](target) and ![alt](target), with an optional "title" after the target.
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
# [label]: target (reference definitions).
REFERENCE_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
EXTERNAL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def markdown_files(root: Path) -> list[Path]:
    files = [root / "README.md"]
    docs = root / "docs"
    if docs.is_dir():
        files += sorted(docs.rglob("*.md"))
    return [f for f in files if f.is_file()]


def prose_lines(text: str) -> list[tuple[int, str]]:
    """The lines outside fenced code blocks, numbered from 1."""
    out: list[tuple[int, str]] = []
    fence: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        m = FENCE.match(line)
        if fence is None and m:
            fence = m.group(1)
            continue
        if fence is not None:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not line.strip()[len(m.group(1)):].strip():
                fence = None
            continue
        out.append((number, line))
    return out


def strip_inline_code(line: str) -> str:
    """The line with `code spans` blanked out, so links shown as code are not checked."""
    return re.sub(r"(`+)(.+?)\1", lambda m: " " * len(m.group(0)), line)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading's text."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links keep their text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML tags go
    text = text.strip().lower()
    kept = []
    for ch in text:
        if ch in " -_" or unicodedata.category(ch)[0] in "LNM":
            kept.append(ch)
    return "".join(kept).replace(" ", "-")


def anchors(path: Path, cache: dict[Path, set[str]]) -> set[str]:
    if path not in cache:
        seen: dict[str, int] = {}
        found: set[str] = set()
        for _, line in prose_lines(path.read_text(encoding="utf-8")):
            m = HEADING.match(line)
            if not m:
                continue
            base = slug(m.group(2))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
        # Explicit anchors: <a id="x"></a> or <a name="x">.
        for m in re.finditer(r"<a\s+(?:id|name)=\"([^\"]+)\"", path.read_text(encoding="utf-8")):
            found.add(m.group(1))
        cache[path] = found
    return cache[path]


def check(root: Path) -> list[str]:
    problems: list[str] = []
    cache: dict[Path, set[str]] = {}
    for md in markdown_files(root):
        shown = md.relative_to(root)
        for number, line in prose_lines(md.read_text(encoding="utf-8")):
            plain = strip_inline_code(line)
            targets = [m.group(1) for m in INLINE_LINK.finditer(plain)]
            ref = REFERENCE_DEF.match(plain)
            if ref:
                targets.append(ref.group(1))
            for target in targets:
                if EXTERNAL.match(target):
                    continue
                path_part, _, anchor = target.partition("#")
                if path_part.startswith("/"):
                    dest = root / path_part.lstrip("/")
                elif path_part:
                    dest = (md.parent / path_part).resolve()
                else:
                    dest = md
                if path_part and not dest.exists():
                    problems.append(f"{shown}:{number}: {target}: no such file or directory")
                    continue
                if anchor:
                    if dest.is_dir() or dest.suffix.lower() != ".md":
                        problems.append(f"{shown}:{number}: {target}: an anchor into a file that is not markdown")
                    elif anchor not in anchors(dest, cache):
                        problems.append(f"{shown}:{number}: {target}: no heading with the anchor #{anchor} in {dest.relative_to(root)}")
    return problems


def main() -> int:
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2]
    root = root.resolve()
    files = markdown_files(root)
    problems = check(root)
    for p in problems:
        print(p, file=sys.stderr)
    print(f"check_links: {len(files)} files, {len(problems)} broken links")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
