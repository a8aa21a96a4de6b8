#!/usr/bin/env python3
"""Run every fenced code block of README.md and docs/*.md as written (scripts/docs/run-snippets.sh
builds what they need first, then runs this).

How a block is tested depends on its info string's first word:

  sh, bash, shell   run by bash -euo pipefail with the debug CLI (target/debug) first on PATH,
                    in a fresh working directory and a fresh RIMEFLAKE_STATE_DIR per markdown
                    file (the blocks of one file share both, in order); PREFIX is where
                    run-snippets.sh installed the C library (as from the C tarball)
  console           the same, for the lines that start with "$ " (the rest is output)
  python            run by .venv/bin/python (make python-env)
  js, javascript    run by node, with `rimeflake` resolving to bindings-node (make node-env);
                    a block with import/export statements runs as an ES module
  ts, typescript    compiled by bindings-node's tsc (--strict, as examples/node/tsconfig.json
                    sets it up), then run by node
  rust, c, cpp,     not run here: the block must appear, line for line (indentation aside),
  cmake, sql,       in one of the files CONTAINERS lists, which a test builds and runs
  go, java
                    (or, for sql, which the PostgreSQL or MySQL backend executes)

Words after the language change that:

  with-redis        run under scripts/with-redis, REDIS_URL set to its throwaway server's URL
  with-postgres     run under scripts/with-postgres, DATABASE_URL set to its throwaway server's
                    URL (a JavaScript block also finds the libraries of bindings-node's
                    node_modules, as an application would find its own: drizzle-orm, pg, ...)
  no-run: REASON    not run; the reason is printed (and must be given)

Prints one line per block and ends with "run-snippets: N passed, N failed"; exits 1 when a block
failed or an info string is not understood.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# The debug CLI, as run-snippets.sh builds it (cargo's target directory may be elsewhere).
BIN = Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target").resolve() / "debug"
TIMEOUT_S = 120

# The files a block of these languages must be part of, word for word. Each is built and run
# by a test: examples/rust by `make test-rust`, examples/c and examples/cpp by `make test-c`
# (crates/rimeflake-capi/tests/examples.sh); the sql.rs files are the schemas the PostgreSQL and
# MySQL backends create, which cargo test runs against real servers; the Go and Java clients are run by
# `make test-serve` (crates/rimeflake-serve/tests/clients.rs).
CONTAINERS = {
    "rust": ["examples/rust/src/main.rs"],
    "c": ["examples/c/quickstart.c"],
    "cpp": ["examples/cpp/quickstart.cpp"],
    "cmake": ["examples/cpp/CMakeLists.txt"],
    "sql": [
        "crates/rimeflake/src/lease/remote/postgres/sql.rs",
        "crates/rimeflake/src/lease/remote/mysql/sql.rs",
    ],
    "go": ["crates/rimeflake-serve/tests/clients/client.go"],
    "java": ["crates/rimeflake-serve/tests/clients/Client.java"],
}
SHELLS = {"sh", "bash", "shell", "console"}
NODE = {"js", "javascript", "ts", "typescript"}
FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})\s*(.*)$")


@dataclass
class Block:
    file: Path
    line: int
    info: str
    body: str

    @property
    def lang(self) -> str:
        return self.info.split()[0].lower() if self.info.split() else ""

    @property
    def where(self) -> str:
        return f"{self.file.relative_to(ROOT)}:{self.line}"


def blocks(md: Path) -> list[Block]:
    found: list[Block] = []
    lines = md.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, info = len(m.group(1)), m.group(2), m.group(3).strip()
        body: list[str] = []
        j = i + 1
        while j < len(lines):
            close = FENCE.match(lines[j])
            if close and close.group(2)[0] == fence[0] and len(close.group(2)) >= len(fence) and not close.group(3).strip():
                break
            body.append(lines[j][indent:] if lines[j][:indent].strip() == "" else lines[j])
            j += 1
        found.append(Block(md, i + 1, info, "\n".join(body) + "\n"))
        i = j + 1
    return found


def normalized(text: str) -> list[str]:
    """The non-blank lines, each stripped of surrounding white space."""
    return [line.strip() for line in text.splitlines() if line.strip()]


def contained(block: Block) -> tuple[bool, str]:
    want = normalized(block.body)
    for name in CONTAINERS[block.lang]:
        have = normalized((ROOT / name).read_text(encoding="utf-8"))
        for start in range(len(have) - len(want) + 1):
            if have[start:start + len(want)] == want:
                return True, f"part of {name}"
    return False, "not found line for line in " + " or ".join(CONTAINERS[block.lang]) + " (update that file, or the block)"


class Runner:
    def __init__(self, scratch: Path) -> None:
        self.scratch = scratch
        self.dirs: dict[Path, tuple[Path, Path]] = {}
        self.count = 0
        # node resolves `rimeflake` from the script's directory upwards: node_modules/rimeflake
        # here points at bindings-node, as examples/node's file: dependency does. The libraries
        # the integrations plug into (bindings-node's devDependencies: @opentelemetry/*,
        # drizzle-orm, typeorm, pg, ...) are linked beside it, as an application installs them.
        node_modules = scratch / "node" / "node_modules"
        node_modules.mkdir(parents=True)
        (node_modules / "rimeflake").symlink_to(ROOT / "bindings-node")
        installed = ROOT / "bindings-node" / "node_modules"
        if installed.is_dir():
            for entry in installed.iterdir():
                if not entry.name.startswith(".") and entry.name != "rimeflake":
                    (node_modules / entry.name).symlink_to(entry)

    def work_and_state(self, block: Block) -> tuple[Path, Path]:
        """The working directory and the state directory of the blocks of this block's file."""
        if block.file not in self.dirs:
            n = len(self.dirs)
            work, state = self.scratch / f"work-{n}", self.scratch / f"state-{n}"
            work.mkdir()
            state.mkdir(mode=0o700)
            self.dirs[block.file] = (work, state)
        return self.dirs[block.file]

    def env(self, block: Block) -> dict[str, str]:
        env = dict(os.environ)
        env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
        env["RIMEFLAKE_STATE_DIR"] = str(self.work_and_state(block)[1])
        if "RIMEFLAKE_DOCS_C_PREFIX" in os.environ:
            env["PREFIX"] = os.environ["RIMEFLAKE_DOCS_C_PREFIX"]
        for name in ("RIMEFLAKE_WORKER_ID", "RIMEFLAKE_LAYOUT", "RIMEFLAKE_BACKEND", "RIMEFLAKE_LEASE_TTL_MS"):
            env.pop(name, None)
        return env

    def file_for(self, block: Block, suffix: str, text: str) -> Path:
        self.count += 1
        where = self.scratch / "node" if suffix in (".js", ".mjs", ".cjs", ".ts") else self.scratch
        path = where / f"block-{self.count}{suffix}"
        path.write_text(text, encoding="utf-8")
        return path

    def command(self, block: Block, words: list[str]) -> tuple[list[str], str | None]:
        lang = block.lang
        if lang in SHELLS:
            body = block.body
            if lang == "console":
                body = "".join(line[2:] + "\n" for line in body.splitlines() if line.startswith("$ "))
            script = self.file_for(block, ".sh", body)
            cmd = ["bash", "-euo", "pipefail", str(script)]
        elif lang == "python":
            python = ROOT / ".venv" / "bin" / "python"
            if not python.exists():
                return [], "no .venv/bin/python: run `make python-env`"
            cmd = [str(python), str(self.file_for(block, ".py", block.body))]
        elif lang in ("js", "javascript"):
            module = re.search(r"^\s*(import|export)\s", block.body, re.M) is not None
            cmd = ["node", str(self.file_for(block, ".mjs" if module else ".cjs", block.body))]
        elif lang in ("ts", "typescript"):
            tsc = ROOT / "bindings-node" / "node_modules" / ".bin" / "tsc"
            if not tsc.exists():
                return [], "no bindings-node/node_modules/.bin/tsc: run `make node-env`"
            source = self.file_for(block, ".ts", block.body)
            out = source.with_suffix(".js")
            # With no package.json around it, nodenext compiles the file to CommonJS, and node
            # runs the .js as such.
            types = ROOT / "bindings-node" / "node_modules" / "@types"
            compile_cmd = [str(tsc), "--strict", "--target", "es2022", "--lib", "es2022,esnext.disposable",
                           "--module", "nodenext", "--typeRoots", str(types), "--types", "node",
                           "--outDir", str(source.parent), str(source)]
            cmd = ["bash", "-c", f'"$@" && exec node {out}', "tsc"] + compile_cmd
        else:
            return [], None
        if "with-postgres" in words:
            # DATABASE_URL stands for the reader's server; here it is the throwaway one.
            cmd = [str(ROOT / "scripts" / "with-postgres"), "bash", "-c",
                   'DATABASE_URL="$RIMEFLAKE_TEST_POSTGRES_URL" exec "$@"', "with-postgres"] + cmd
        if "with-redis" in words:
            # REDIS_URL stands for the reader's server; here it is the throwaway one.
            cmd = [str(ROOT / "scripts" / "with-redis"), "bash", "-c",
                   'REDIS_URL="$RIMEFLAKE_TEST_REDIS_URL" exec "$@"', "with-redis"] + cmd
        return cmd, None

    def run(self, block: Block) -> tuple[bool, str]:
        words = block.info.split()[1:]
        cmd, problem = self.command(block, words)
        if problem:
            return False, problem
        if not cmd:
            return False, f"no way to run a `{block.lang}` block: give it a language this script knows, or no-run: REASON"
        try:
            cwd = self.work_and_state(block)[0] if block.lang in SHELLS else ROOT
            done = subprocess.run(cmd, cwd=cwd, env=self.env(block), stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, timeout=TIMEOUT_S, text=True)
        except subprocess.TimeoutExpired as e:
            out = e.stdout if isinstance(e.stdout, str) else (e.stdout or b"").decode(errors="replace")
            return False, f"timed out after {TIMEOUT_S} s\n{out}"
        if done.returncode != 0:
            return False, f"exit status {done.returncode}\n{done.stdout}"
        return True, done.stdout


def markdown_files() -> list[Path]:
    files = [ROOT / "README.md"]
    if (ROOT / "docs").is_dir():
        files += sorted((ROOT / "docs").rglob("*.md"))
    return files


def indent(text: str) -> str:
    return "".join("    | " + line + "\n" for line in text.rstrip("\n").splitlines())


def main() -> int:
    passed = failed = skipped = 0
    verbose = os.environ.get("RUN_SNIPPETS_VERBOSE") == "1"
    scratch = Path(tempfile.mkdtemp(prefix="rimeflake-snippets-"))
    try:
        runner = Runner(scratch)
        for md in markdown_files():
            for block in blocks(md):
                info = block.info
                no_run = re.search(r"(?:^|\s)no-run(?::\s*(.*))?$", info)
                if no_run:
                    reason = (no_run.group(1) or "").strip()
                    if not reason:
                        print(f"FAIL {block.where} ({info}): no-run needs a reason: ```{block.lang} no-run: WHY")
                        failed += 1
                    else:
                        print(f"not run {block.where} ({block.lang}): {reason}")
                        skipped += 1
                    continue
                if block.lang in CONTAINERS:
                    ok, why = contained(block)
                elif block.lang:
                    ok, why = runner.run(block)
                else:
                    ok, why = False, "a block with no language: say which it is (and no-run: REASON if it is not code)"
                if ok:
                    passed += 1
                    summary = why if block.lang in CONTAINERS else "ran"
                    print(f"ok   {block.where} ({info}): {summary}")
                    if verbose and block.lang not in CONTAINERS:
                        print(indent(why), end="")
                else:
                    failed += 1
                    print(f"FAIL {block.where} ({info}): {why.splitlines()[0] if why else ''}")
                    rest = "\n".join(why.splitlines()[1:])
                    if rest.strip():
                        print(indent(rest[-4000:]), end="")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"run-snippets: {skipped} not run (each with its reason above)")
    print(f"run-snippets: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
