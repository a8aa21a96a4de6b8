"""The types users see: mypy --strict accepts what works and catches what cannot; the README's
Python snippet and the examples type-check and run."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

GOOD = """
import os
import rimeflake

def first(worker: int) -> int:
    with rimeflake.Generator(worker, layout="twitter", backend="memory") as gen:
        return gen.next_id()  # __exit__ returns None: mypy knows this return is the last word

def custom() -> rimeflake.Layout:
    return rimeflake.Layout(clock_id_bits=2, time_bits=42, worker_bits=8, sequence_bits=11)

name: rimeflake.LayoutName = "sonyflake"
rimeflake.Generator(1, layout=name, backend="memory").close()
rimeflake.Generator(1, layout=custom(), backend="memory").close()

# Layout specs, wherever a layout is taken, and Layout(spec) as Node's new Layout(spec).
rimeflake.Generator(
    1, layout="clock_id=0,time=41,worker=10,sequence=12,datacenter=5,epoch_ms=1420070400000",
    backend="memory",
).close()
spec: str = rimeflake.Layout.twitter().describe()
twitter: rimeflake.Layout = rimeflake.Layout(spec)
assert twitter == rimeflake.Layout.from_spec(spec) == rimeflake.Layout("twitter")
assert rimeflake.decode(1, layout=spec).worker_id == 0

# A backend from the environment or a config file: any str (or None), as a URL usually is.
url: str = "memory"
rimeflake.Generator(1, backend=url).close()
rimeflake.Generator(1, backend=os.environ.get("RIMEFLAKE_TYPING_BACKEND", "memory")).close()
backend: rimeflake.BackendName = "memory"
rimeflake.Generator(1, backend=backend).close()
"""

# Line numbers matter: the test expects an error on each of lines 4 to 6.
BAD = """
import rimeflake

rimeflake.Generator(1, layout=3, backend="memory")
rimeflake.Generator(1, layout="default", backend=3)
rimeflake.Layout("twitter", worker_bits=8)
"""


def readme_python(readme: Path = ROOT / "README.md") -> str:
    blocks = re.findall(r"```python\n(.*?)```", readme.read_text(), flags=re.S)
    assert blocks, f"{readme} has a Python snippet"
    return str(blocks[0])


PACKAGE_README = ROOT / "bindings-python" / "README.md"  # the wheel's page on PyPI


def mypy(*files: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", *map(str, files)],
        cwd=cwd, capture_output=True, text=True, timeout=300,
    )


def test_mypy_strict_accepts_what_works_and_catches_typos(tmp_path: Path) -> None:
    pytest.importorskip("mypy")
    good, bad, readme = tmp_path / "good.py", tmp_path / "bad.py", tmp_path / "readme.py"
    good.write_text(GOOD)
    bad.write_text(BAD)
    readme.write_text(readme_python())
    package = tmp_path / "package_readme.py"
    package.write_text(readme_python(PACKAGE_README))
    examples = sorted((ROOT / "examples" / "python").glob("*.py"))
    proc = mypy(good, readme, package, *examples, bad, cwd=tmp_path)
    errors = [line for line in proc.stdout.splitlines() if ": error:" in line]
    assert all(line.startswith("bad.py:") for line in errors), proc.stdout
    lines = sorted({int(line.split(":")[1]) for line in errors})
    assert lines == [4, 5, 6], proc.stdout  # layout=3, backend=3, a spec and widths at once


@pytest.mark.parametrize("readme", [ROOT / "README.md", PACKAGE_README], ids=["repo", "package"])
def test_readme_snippet_runs(readme: Path, tmp_path: Path) -> None:
    script = tmp_path / "readme.py"
    script.write_text(readme_python(readme))
    env = dict(os.environ, RIMEFLAKE_STATE_DIR=str(tmp_path / "state"),
               RIMEFLAKE_NO_CONTAINER_WARNING="1")
    for _ in range(2):  # on a fresh state directory, then on a used one
        proc = subprocess.run([sys.executable, "-W", "error", str(script)], env=env,
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
