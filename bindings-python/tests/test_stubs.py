"""The stub file must describe the native module as it is."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


def test_stubtest_agrees_with_the_native_module() -> None:
    pytest.importorskip("mypy")
    allow = Path(__file__).with_name("stubtest-allowlist.txt")
    proc = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "rimeflake._native", "--allowlist", str(allow)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
