#!/usr/bin/env python3
"""Refuses a release unless its version, CHANGELOG, tag and artifacts agree (`make release-check`).

    check.py [--tag TAG] [--dist DIR] [--only KIND,...]

Every release workflow runs it before it publishes anything, and it is what to run by hand before
pushing a tag. It fails, naming each disagreement, unless:

- the version is one: the workspace's Cargo.toml (which the crates, the wheel and the C header
  take), the workspace's dependency pins on its own crates, the npm main package and every npm
  platform package, and the committed C header (include/rimeflake.h);
- CHANGELOG.md has a heading for that version with a release date (`## [0.1.0] - 2026-12-01`),
  not an unreleased one;
- the tag is `v<version>`, exists, and names the commit checked out, and the work tree has no
  uncommitted change (TAG: --tag, else the tag on HEAD);
- the artifacts in DIR (default dist/) are those of this version and no other: each kind asked
  for (--only; default every kind: python, npm, c, cli) is there, each carries the version inside
  (the wheel's and the sdist's metadata, the npm packages' package.json, the C header, the CLI's
  README and the top directory of each tarball), no file is of another version or unknown, and
  SHA256SUMS, when there, lists every artifact with its true digest.
"""

import argparse
import hashlib
import json
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TRIPLE = "x86_64-unknown-linux-gnu"
KINDS = ("python", "npm", "c", "cli")
# Files of dist/ that are not artifacts: the digests and the size table (make dist writes them).
NOT_ARTIFACTS = {"SHA256SUMS", "SIZES.md"}


class Problems(list):
    def add(self, text):
        self.append(text)


def workspace_version(problems):
    text = (ROOT / "Cargo.toml").read_text()
    package = re.search(r"^\[workspace\.package\]\n(.*?)(?=^\[)", text, re.S | re.M)
    found = package and re.search(r'^version = "([^"]+)"', package.group(1), re.M)
    if not found:
        problems.add("Cargo.toml has no [workspace.package] version")
        return None
    version = found.group(1)
    # The workspace's pins on its own crates (what a published crate depends on).
    for name, pin in re.findall(r'^(rimeflake[\w-]*) = \{[^}]*version = "([^"]+)"', text, re.M):
        if pin != version:
            problems.add(f"Cargo.toml pins {name} at {pin}, not {version}")
    return version


def manifests_agree(version, problems):
    node = ROOT / "bindings-node"
    main = json.loads((node / "package.json").read_text())
    if main.get("version") != version:
        problems.add(f"bindings-node/package.json is version {main.get('version')}, not {version}")
    for pkg in sorted((node / "npm").glob("*/package.json")):
        p = json.loads(pkg.read_text())
        if p.get("version") != version:
            problems.add(f"{pkg.relative_to(ROOT)} is version {p.get('version')}, not {version}")
    header = (ROOT / "include" / "rimeflake.h").read_text()
    shown = re.search(r'#define RIMEFLAKE_VERSION_STRING "([^"]*)"', header)
    if not shown or shown.group(1) != version:
        problems.add(
            f"include/rimeflake.h says {shown.group(1) if shown else 'no version'}, not {version}: "
            "make header"
        )


def changelog_has(version, problems):
    path = ROOT / "CHANGELOG.md"
    if not path.exists():
        problems.add("there is no CHANGELOG.md")
        return
    headings = [l for l in path.read_text().splitlines() if l.startswith("## ")]
    mine = [h for h in headings if re.match(rf"## \[?{re.escape(version)}\]?(\s|$)", h)]
    if not mine:
        problems.add(f"CHANGELOG.md has no heading for {version} (## [{version}] - YYYY-MM-DD)")
    elif not re.fullmatch(rf"## \[{re.escape(version)}\] - \d{{4}}-\d{{2}}-\d{{2}}", mine[0]):
        problems.add(
            f"CHANGELOG.md's heading for {version} is {mine[0]!r}, not a release's "
            f"(## [{version}] - YYYY-MM-DD)"
        )


def git(*args):
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True)


def tag_agrees(version, tag, problems):
    want = f"v{version}"
    dirty = git("status", "--porcelain", "--untracked-files=no").stdout.splitlines()
    if dirty:
        problems.add("the work tree has uncommitted changes:" + "".join(f"\n   {l}" for l in dirty))
    if tag is None:
        found = git("describe", "--tags", "--exact-match", "HEAD")
        if found.returncode != 0:
            problems.add(f"HEAD has no tag: tag it {want} (or pass --tag)")
            return
        tag = found.stdout.strip()
    if tag != want:
        problems.add(f"the tag is {tag}, but the version is {version}: the tag must be {want}")
        return
    at = git("rev-parse", "--verify", "--quiet", f"refs/tags/{tag}^{{commit}}")
    head = git("rev-parse", "HEAD").stdout.strip()
    if at.returncode != 0:
        problems.add(f"there is no tag {tag}")
    elif at.stdout.strip() != head:
        problems.add(f"the tag {tag} names {at.stdout.strip()[:12]}, not HEAD ({head[:12]})")


def expected_names(version):
    """Each kind's artifacts: (pattern of the file name, required)."""
    v = re.escape(version)
    return {
        "python": [(rf"rimeflake-{v}-cp39-abi3-manylinux\S*_x86_64\.whl", True),
                   (rf"rimeflake-{v}\.tar\.gz", True)],
        "npm": [(rf"rimeflake-{v}\.tgz", True),
                (rf"rimeflake-linux-x64-gnu-{v}\.tgz", True),
                (rf"rimeflake-(?:linux|darwin)-[a-z0-9]+(?:-(?:gnu|musl))?-{v}\.tgz", False)],
        "c": [(rf"rimeflake-{v}-{TRIPLE}\.tar\.gz", True)],
        "cli": [(rf"rimeflake-cli-{v}-{TRIPLE}\.tar\.gz", True)],
    }


def kind_of(name, version, kinds):
    for kind, patterns in expected_names(version).items():
        if kind in kinds and any(re.fullmatch(p, name) for p, _ in patterns):
            return kind
    return None


def tar_member(path, name):
    with tarfile.open(path) as tar:
        try:
            member = tar.extractfile(name)
        except KeyError:
            return None
        return member.read().decode() if member else None


def tar_top(path):
    with tarfile.open(path) as tar:
        return {m.name.split("/")[0] for m in tar.getmembers()}


def inside(path, kind, version, problems):
    """The version the artifact carries inside must be the release's."""
    name = path.name
    wrong = lambda what, got: problems.add(f"{name}: {what} says {got}, not {version}")  # noqa: E731
    if name.endswith(".whl"):
        with zipfile.ZipFile(path) as z:
            metas = [n for n in z.namelist() if re.fullmatch(r"rimeflake-[^/]+\.dist-info/METADATA", n)]
            meta = z.read(metas[0]).decode() if metas else ""
        got = re.search(r"^Version: (.*)$", meta, re.M)
        if not got or got.group(1) != version:
            wrong("its METADATA", got.group(1) if got else "no version")
    elif kind == "python":
        info = tar_member(path, f"rimeflake-{version}/PKG-INFO") or ""
        got = re.search(r"^Version: (.*)$", info, re.M)
        if not got or got.group(1) != version:
            wrong("its PKG-INFO", got.group(1) if got else "no version")
    elif kind == "npm":
        text = tar_member(path, "package/package.json")
        p = json.loads(text) if text else {}
        if p.get("version") != version:
            wrong("package.json", p.get("version"))
        if name == f"rimeflake-{version}.tgz":
            for dep, at in (p.get("optionalDependencies") or {}).items():
                if not dep.startswith("@rimeflake/") or at != version:
                    problems.add(f"{name}: optionalDependencies name {dep}@{at}")
        elif not str(p.get("name", "")).startswith("@rimeflake/"):
            problems.add(f"{name}: the platform package is named {p.get('name')}, not @rimeflake/...")
    else:
        top = path.name[: -len(".tar.gz")]
        if tar_top(path) != {top}:
            problems.add(f"{name}: its top directory is {sorted(tar_top(path))}, not {top}")
        elif kind == "c":
            header = tar_member(path, f"{top}/include/rimeflake.h") or ""
            got = re.search(r'#define RIMEFLAKE_VERSION_STRING "([^"]*)"', header)
            if not got or got.group(1) != version:
                wrong("include/rimeflake.h", got.group(1) if got else "no version")
        else:
            readme = tar_member(path, f"{top}/README.md") or ""
            first = readme.splitlines()[0] if readme else ""
            if f"rimeflake {version}," not in first:
                wrong("its README", repr(first))


def artifacts_agree(version, dist, kinds, problems):
    if not dist.is_dir():
        problems.add(f"there is no {dist}: make dist")
        return
    files = sorted(p for p in dist.iterdir() if p.is_file() and p.name not in NOT_ARTIFACTS)
    seen = {}
    for path in files:
        kind = kind_of(path.name, version, kinds)
        if kind is None:
            problems.add(f"{path.name} is no artifact of {version} ({', '.join(kinds)})")
            continue
        seen.setdefault(kind, []).append(path.name)
        inside(path, kind, version, problems)
    for kind in kinds:
        for pattern, required in expected_names(version)[kind]:
            if required and not any(re.fullmatch(pattern, n) for n in seen.get(kind, [])):
                problems.add(f"no {kind} artifact matching {pattern} in {dist}")
    sums = dist / "SHA256SUMS"
    if sums.exists():
        listed = {}
        for line in sums.read_text().splitlines():
            digest, _, name = line.partition("  ")
            listed[name.lstrip("*")] = digest
        for path in files:
            if path.name not in listed:
                problems.add(f"SHA256SUMS does not list {path.name}")
            elif hashlib.sha256(path.read_bytes()).hexdigest() != listed[path.name]:
                problems.add(f"SHA256SUMS has another digest for {path.name}")
        for name in sorted(set(listed) - {p.name for p in files}):
            problems.add(f"SHA256SUMS lists {name}, which is not in {dist}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tag", help="the release's tag (default: the tag on HEAD)")
    parser.add_argument("--dist", type=Path, default=ROOT / "dist")
    parser.add_argument("--only", default=",".join(KINDS),
                        help=f"the kinds of artifact this release publishes ({','.join(KINDS)})")
    args = parser.parse_args(argv)
    kinds = [k for k in args.only.split(",") if k]
    unknown = [k for k in kinds if k not in KINDS]
    if unknown or not kinds:
        parser.error(f"--only takes some of {', '.join(KINDS)}, not {args.only!r}")

    problems = Problems()
    version = workspace_version(problems)
    if version:
        manifests_agree(version, problems)
        changelog_has(version, problems)
        tag_agrees(version, args.tag, problems)
        artifacts_agree(version, args.dist.resolve(), kinds, problems)
    if problems:
        print(f"release-check: refusing to release {version or '?'}:", file=sys.stderr)
        for p in problems:
            print(f"- {p}", file=sys.stderr)
        return 1
    print(f"release-check: {version} (tag v{version}) agrees: {', '.join(kinds)} artifacts in {args.dist}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
