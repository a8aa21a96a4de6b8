#!/usr/bin/env python3
"""Tests of check.py (`make release-check`) on a scratch repository, a real git one with the
project's manifests, tagged, and a dist/ of artifacts made as `make dist` names and fills them
(zip and tar files with the metadata check.py reads, SHA256SUMS over them):

- that release passes;
- each disagreement, planted in a fresh copy, is refused with a message naming it: a manifest's
  version, a workspace pin, the C header, a CHANGELOG heading that is missing, unreleased or
  undated, no tag, a tag of another version, a tag on another commit, an uncommitted change, a
  missing artifact, an artifact of another version (by name, and by what it carries inside), an
  unscoped platform package, a stray file, and a SHA256SUMS with a wrong digest or a missing line.

Usage: scripts/release/test_check.py (prints "N passed, N failed"; exit status 1 when one fails)
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
TRIPLE = "x86_64-unknown-linux-gnu"
VERSION = re.search(r'^\[workspace\.package\]\n(?:.*\n)*?version = "([^"]+)"',
                    (ROOT / "Cargo.toml").read_text(), re.M).group(1)
DATED = f"# Changelog\n\n## [{VERSION}] - 2026-12-01\n\n### Added\n\n- Everything.\n"


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t",
                    "-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false", *args],
                   check=True, capture_output=True)


def add_tar(path: Path, files: dict[str, str]) -> None:
    with tarfile.open(path, "w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def artifacts(dist: Path, version: str, header: str) -> None:
    """The six artifacts of make dist, at `version`, with the metadata check.py reads."""
    dist.mkdir(parents=True, exist_ok=True)
    wheel = dist / f"rimeflake-{version}-cp39-abi3-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr(f"rimeflake-{version}.dist-info/METADATA",
                   f"Metadata-Version: 2.4\nName: rimeflake\nVersion: {version}\n")
    add_tar(dist / f"rimeflake-{version}.tar.gz",
            {f"rimeflake-{version}/PKG-INFO": f"Name: rimeflake\nVersion: {version}\n"})
    main = {"name": "rimeflake", "version": version,
            "optionalDependencies": {"@rimeflake/linux-x64-gnu": version}}
    add_tar(dist / f"rimeflake-{version}.tgz", {"package/package.json": json.dumps(main)})
    add_tar(dist / f"rimeflake-linux-x64-gnu-{version}.tgz",
            {"package/package.json": json.dumps({"name": "@rimeflake/linux-x64-gnu", "version": version})})
    top = f"rimeflake-{version}-{TRIPLE}"
    add_tar(dist / f"{top}.tar.gz", {f"{top}/include/rimeflake.h": header})
    top = f"rimeflake-cli-{version}-{TRIPLE}"
    add_tar(dist / f"{top}.tar.gz",
            {f"{top}/README.md": f"# rimeflake {version}, the command line ({TRIPLE})\n"})
    sums(dist)


def sums(dist: Path) -> None:
    lines = [f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.name}"
             for p in sorted(dist.iterdir()) if p.name not in ("SHA256SUMS", "SIZES.md")]
    (dist / "SHA256SUMS").write_text("\n".join(lines) + "\n")


def release(tmp: Path) -> Path:
    """A repository of the release: the manifests check.py reads, committed and tagged."""
    repo = tmp / "repo"
    for rel in ["Cargo.toml", "bindings-node/package.json", "include/rimeflake.h",
                "scripts/release/check.py"]:
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, repo / rel)
    shutil.copytree(ROOT / "bindings-node/npm", repo / "bindings-node/npm")
    (repo / "CHANGELOG.md").write_text(DATED)
    (repo / ".gitignore").write_text("dist/\n")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "release")
    git(repo, "tag", f"v{VERSION}")
    artifacts(repo / "dist", VERSION, (repo / "include/rimeflake.h").read_text())
    return repo


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{path}: no {old!r}"
    path.write_text(text.replace(old, new, 1))


def committed(change: Callable[[Path], None]) -> Callable[[Path], None]:
    """The change, committed, and the tag moved onto that commit (so only the change differs)."""
    def apply(repo: Path) -> None:
        change(repo)
        git(repo, "commit", "-q", "-am", "change")
        git(repo, "tag", "-f", f"v{VERSION}")
    return apply


OTHER = "9.9.9"
CASES: list[tuple[str, Callable[[Path], None], list[str], str]] = [
    ("npm main package.json of another version",
     committed(lambda r: edit(r / "bindings-node/package.json", f'"version": "{VERSION}"', f'"version": "{OTHER}"')),
     [], f"bindings-node/package.json is version {OTHER}"),
    ("an npm platform package.json of another version",
     committed(lambda r: edit(r / "bindings-node/npm/darwin-arm64/package.json", f'"version": "{VERSION}"', f'"version": "{OTHER}"')),
     [], f"darwin-arm64/package.json is version {OTHER}"),
    ("a workspace pin of another version",
     committed(lambda r: edit(r / "Cargo.toml", f'path = "crates/rimeflake", version = "{VERSION}"', f'path = "crates/rimeflake", version = "{OTHER}"')),
     [], f"pins rimeflake at {OTHER}"),
    ("a stale C header",
     committed(lambda r: edit(r / "include/rimeflake.h", f'VERSION_STRING "{VERSION}"', f'VERSION_STRING "{OTHER}"')),
     [], f"include/rimeflake.h says {OTHER}"),
    ("no CHANGELOG heading for the version",
     committed(lambda r: (r / "CHANGELOG.md").write_text("# Changelog\n\n## [0.0.1] - 2026-01-01\n")),
     [], f"CHANGELOG.md has no heading for {VERSION}"),
    ("an unreleased CHANGELOG heading",
     committed(lambda r: (r / "CHANGELOG.md").write_text(f"# Changelog\n\n## {VERSION} (unreleased)\n")),
     [], "not a release's"),
    ("a CHANGELOG heading without a date",
     committed(lambda r: (r / "CHANGELOG.md").write_text(f"# Changelog\n\n## [{VERSION}]\n")),
     [], "not a release's"),
    ("no tag on HEAD",
     lambda r: git(r, "tag", "-d", f"v{VERSION}"),
     [], "HEAD has no tag"),
    ("a tag of another version",
     lambda r: None,
     ["--tag", f"v{OTHER}"], f"the tag is v{OTHER}"),
    ("the tag on an older commit",
     lambda r: git(r, "commit", "-q", "--allow-empty", "-m", "after the tag"),
     ["--tag", f"v{VERSION}"], "not HEAD"),
    ("an uncommitted change",
     lambda r: (r / "CHANGELOG.md").write_text(DATED + "\n- More.\n"),
     [], "uncommitted changes"),
    ("a missing artifact",
     lambda r: ((r / f"dist/rimeflake-cli-{VERSION}-{TRIPLE}.tar.gz").unlink(), sums(r / "dist")),
     [], "no cli artifact"),
    ("an artifact of another version beside this one's",
     lambda r: (artifacts(r / "tmpdist", OTHER, ""),
                shutil.move(str(r / f"tmpdist/rimeflake-{OTHER}.tgz"), str(r / "dist")), sums(r / "dist")),
     [], f"rimeflake-{OTHER}.tgz is no artifact of {VERSION}"),
    ("an artifact whose package.json has another version",
     lambda r: (add_tar(r / f"dist/rimeflake-linux-x64-gnu-{VERSION}.tgz",
                        {"package/package.json": json.dumps({"name": "@rimeflake/linux-x64-gnu", "version": OTHER})}),
                sums(r / "dist")),
     [], f"package.json says {OTHER}"),
    ("a wheel whose metadata has another version",
     lambda r: (edit_wheel(r, OTHER), sums(r / "dist")),
     [], f"its METADATA says {OTHER}"),
    ("an unscoped platform package",
     lambda r: (add_tar(r / f"dist/rimeflake-linux-x64-gnu-{VERSION}.tgz",
                        {"package/package.json": json.dumps({"name": "rimeflake-linux-x64-gnu", "version": VERSION})}),
                sums(r / "dist")),
     [], "not @rimeflake/"),
    ("a stray file in dist",
     lambda r: ((r / "dist/notes.txt").write_text("x"), sums(r / "dist")),
     [], "notes.txt is no artifact"),
    ("an artifact changed after SHA256SUMS",
     lambda r: add_tar(r / f"dist/rimeflake-{VERSION}.tar.gz",
                       {f"rimeflake-{VERSION}/PKG-INFO": f"Version: {VERSION}\nName: rimeflake\n"}),
     [], f"SHA256SUMS has another digest for rimeflake-{VERSION}.tar.gz"),
    ("an artifact SHA256SUMS does not list",
     lambda r: drop_sum(r, f"rimeflake-{VERSION}.tgz"),
     [], f"SHA256SUMS does not list rimeflake-{VERSION}.tgz"),
]


def drop_sum(repo: Path, name: str) -> None:
    path = repo / "dist/SHA256SUMS"
    lines = [l for l in path.read_text().splitlines() if not l.endswith(f"  {name}")]
    path.write_text("\n".join(lines) + "\n")


def edit_wheel(repo: Path, version: str) -> None:
    wheel = next((repo / "dist").glob("*.whl"))
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr(f"rimeflake-{VERSION}.dist-info/METADATA", f"Name: rimeflake\nVersion: {version}\n")


def run(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(repo / "scripts/release/check.py"), *args],
                          capture_output=True, text=True)


def main() -> int:
    passed = failed = 0

    def report(name: str, ok: bool, result: subprocess.CompletedProcess[str]) -> None:
        nonlocal passed, failed
        print(f"{'ok  ' if ok else 'FAIL'} {name}")
        if ok:
            passed += 1
        else:
            failed += 1
            print(result.stdout + result.stderr)

    with tempfile.TemporaryDirectory() as tmp:
        repo = release(Path(tmp))
        result = run(repo)
        report("the release as make dist makes it passes", result.returncode == 0, result)
        # The release workflow's job has the C and CLI tarballs alone.
        result = run(repo, "--only", "c,cli,python")
        report("--only c,cli,python refuses the npm artifacts it was not given",
               result.returncode == 1 and f"rimeflake-{VERSION}.tgz is no artifact" in result.stderr, result)
        for p in (repo / "dist").glob("*"):
            if not re.search(r"rimeflake-(cli-)?[0-9.]+-x86_64", p.name):
                p.unlink()
        sums(repo / "dist")
        result = run(repo, "--only", "c,cli")
        report("--only c,cli passes with the C and CLI tarballs alone", result.returncode == 0, result)
        result = run(repo)
        report("every kind asked for: refuses the missing python and npm artifacts",
               result.returncode == 1 and "no python artifact" in result.stderr
               and "no npm artifact" in result.stderr, result)

    for name, change, args, says in CASES:
        with tempfile.TemporaryDirectory() as tmp:
            repo = release(Path(tmp))
            change(repo)
            result = run(repo, *args)
            report(f"refuses {name}", result.returncode == 1 and says in result.stderr, result)

    print(f"test_check: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
