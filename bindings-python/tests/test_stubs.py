"""The stub file must describe the native module as it is."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


def test_stubtest_agrees_with_the_package(tmp_path: Path) -> None:
    """`python -m mypy.stubtest rimeflake`: the package, its submodules and `_native`'s stub."""
    pytest.importorskip("mypy")
    allow = Path(__file__).with_name("stubtest-allowlist.txt")
    proc = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "rimeflake", "--allowlist", str(allow)],
        cwd=tmp_path,  # away from the source tree, so only the installed package is seen
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
