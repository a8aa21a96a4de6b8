#!/usr/bin/env python3
"""Tests of the two source checks of `make lint`, on copies with a planted fault each:

- layers.py passes on the sources as they are, and fails on a back-edge planted in a copy (a
  `use` line, an inline path, a grouped `use`), on two files that import each other, on a
  module whose folder is in another layer than its file, on a file in no layer and on a known
  back-edge that is gone; an import in a comment or a string is no import; a test's import of
  the test-only code passes, from any layer, but the test-only code's own files still may not
  import each other in a circle.
- references.py fails on a citation of the design file or of a tracker's issue planted in a
  Rust comment, a Python docstring, a Makefile comment and a docs page, and passes on the same
  words in a string literal.

Usage: scripts/docs/test_checks.py (exit status 1 and the failing case when one fails)
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SRC = ROOT / "crates/rimeflake/src"
DOC = ROOT / "docs/architecture.md"
failures: list[str] = []


def run(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(HERE / script), *args],
                          capture_output=True, text=True)


def expect(name: str, result: subprocess.CompletedProcess[str], fails: bool, says: str = "") -> None:
    ok = (result.returncode != 0) == fails and says in result.stderr + result.stdout
    print(f"{'ok  ' if ok else 'FAIL'} {name}")
    if not ok:
        failures.append(name)
        print(result.stdout + result.stderr)


def layers_case(name: str, plant, fails: bool, says: str = "") -> None:
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "src"
        shutil.copytree(SRC, src)
        doc = Path(tmp) / "architecture.md"
        shutil.copy(DOC, doc)
        plant(src, doc)
        expect(name, run("layers.py", "--src", str(src), "--doc", str(doc)), fails, says)


OTHER_CRATES = ["crates/rimeflake-cli/src", "crates/rimeflake-serve/src", "crates/rimeflake-capi/src",
                "crates/rimeflake-testkit/src", "bindings-python/src", "bindings-node/src"]


def circles_case(name: str, plant, fails: bool, says: str = "") -> None:
    """`layers.py --circles` over copies of the other crates' sources, `plant` (a folder, a
    file in it and a text to append) applied to one."""
    with tempfile.TemporaryDirectory() as tmp:
        folders = []
        for rel in OTHER_CRATES:
            copy = Path(tmp) / rel
            shutil.copytree(ROOT / rel, copy)
            folders.append(str(copy))
        if plant:
            folder, file, text = plant
            append(Path(tmp) / folder / file, text)
        expect(name, run("layers.py", "--circles", *folders), fails, says)


def append(path: Path, text: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")


def main() -> int:
    layers_case("layers: the sources as they are pass", lambda src, doc: None, False)
    layers_case("layers: `use crate::generator::Generator` in layout/ fails",
                lambda src, doc: append(src / "layout/mod.rs",
                                        "\n#[allow(unused_imports)]\nuse crate::generator::Generator;\n"),
                True, "layout/mod.rs (layer 3, layout and encodings) imports crate::generator")
    layers_case("layers: an inline crate::settings path in clock.rs fails",
                lambda src, doc: append(src / "clock.rs",
                                        "\nfn _planted() -> &'static str { crate::settings::LAYOUT_ENV }\n"),
                True, "clock.rs (layer 2, clock) imports crate::settings")
    layers_case("layers: a grouped use in state/file.rs fails",
                lambda src, doc: append(src / "state/file.rs",
                                        "\nuse crate::{error::Error as _E, lease::{local::LocalLease as _L}};\n"),
                True, "state/file.rs (layer 4, local state) imports crate::lease::local")
    layers_case("layers: a super:: path that climbs to a higher layer fails",
                lambda src, doc: append(src / "state/record.rs",
                                        "\nfn _planted() -> u64 { super::super::generator::CLOSED_FENCE }\n"),
                True, "state/record.rs (layer 4, local state) imports crate::generator")
    layers_case("layers: a back-edge in a comment or a string is no import",
                lambda src, doc: append(src / "clock.rs",
                                        "\n// use crate::generator::Generator;\n"
                                        "const _S: &str = \"crate::settings::LAYOUT_ENV\";\n"),
                False)
    layers_case("layers: a test in clock.rs that imports the test-only code passes",
                lambda src, doc: append(src / "clock.rs",
                                        "\n#[cfg(test)]\nuse crate::testing::SimDisk as _planted;\n"),
                False)
    layers_case("layers: two files of the test-only code that import each other fail",
                lambda src, doc: (append(src / "testing/sim_disk.rs",
                                         "\nuse crate::testing::remote_sim as _planted;\n"),
                                  append(src / "testing/remote_sim.rs",
                                         "\nuse crate::testing::sim_disk as _planted;\n")),
                True, "files that import each other in a circle: testing/remote_sim.rs -> "
                      "testing/sim_disk.rs -> testing/remote_sim.rs")
    layers_case("layers: two files of one layer that import each other fail",
                lambda src, doc: (append(src / "state/hw.rs", "\nuse super::record as _planted;\n"),
                                  append(src / "state/record.rs", "\nuse super::hw as _planted;\n")),
                True, "files that import each other in a circle: state/hw.rs -> state/record.rs -> state/hw.rs")
    layers_case("layers: a module whose folder is in another layer than its file fails",
                lambda src, doc: ((src / "clock").mkdir(),
                                  (src / "clock/planted.rs").write_text("// nothing\n"),
                                  doc.write_text(doc.read_text(encoding="utf-8").replace(
                                      "| 3 | layout and encodings | `layout/`,",
                                      "| 3 | layout and encodings | `clock/`, `layout/`,"),
                                      encoding="utf-8")),
                True, "module clock straddles layers: clock.rs is in layer 2 and clock/planted.rs in layer 3")
    layers_case("layers: a file in no layer fails",
                lambda src, doc: (src / "planted.rs").write_text("// nothing\n"),
                True, "planted.rs: in no layer")
    layers_case("layers: a known back-edge that is not there fails",
                lambda src, doc: doc.write_text(doc.read_text(encoding="utf-8").replace(
                    "<!-- back-edges -->\n| file | imports | why it is there, and where it belongs |\n|---|---|---|\n",
                    "<!-- back-edges -->\n| file | imports | why it is there, and where it belongs |\n|---|---|---|\n"
                    "| `clock.rs` | `crate::generator` | planted |\n"), encoding="utf-8"),
                True, "known back-edge clock.rs -> crate::generator is gone")
    circles_case("circles: the other crates as they are pass", None, False)
    circles_case("circles: serve's metrics.rs importing api.rs, which imports it, fails",
                 ("crates/rimeflake-serve/src", "metrics.rs",
                  "\n#[allow(unused_imports)]\nuse crate::api::handle as _planted;\n"),
                 True, "files that import each other in a circle: api.rs -> metrics.rs -> api.rs")
    circles_case("circles: a program's files (main.rs, no lib.rs) are read too",
                 ("crates/rimeflake-cli/src", "signals.rs",
                  "\nfn _planted() { let _ = crate::args::Format::Dec; }\n"),
                 True, "args.rs -> signals.rs -> args.rs")

    cases = [
        ("crates/x/src/lib.rs", "// See DESIGN" ".md, \"Restarts\".\nfn f() {}\n", True),
        ("crates/x/tests/t.rs", "//! Issue" " 8, item 3: a test.\n", True),
        ("crates/x/src/s.rs", "const S: &str = \"issue" " 3\"; // a string is not a comment\n", False),
        ("bindings-python/tests/test_x.py", "\"\"\"Forks (issue" " 8, items 8, 9).\"\"\"\n", True),
        ("bindings-python/tests/test_y.py", "x = \"issue" " 8\"  # a plain comment\n", False),
        ("Makefile", "# as DESIGN" ".md says\nall:\n\techo '#'\n", True),
        ("docs/page.md", "Read DESIGN" ".md.\n", True),
        ("CHANGELOG.md", "- Hardening (issue" " 8).\n", False),
    ]
    for rel, text, fails in cases:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            expect(f"references: {rel} {'fails' if fails else 'passes'}",
                   run("references.py", "--root", tmp), fails, rel if fails else "")
    expect("references: the repository as it is passes", run("references.py"), False)

    if failures:
        print(f"test_checks: {len(failures)} failed", file=sys.stderr)
        return 1
    print("test_checks: all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
