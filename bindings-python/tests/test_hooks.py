"""The tests' hooks into the native module, ``_error_kinds`` and ``_raise_kind``, are built only
with the ``internals`` feature, as the Node addon's are: the tests' extension (``make
python-env``) has them, and the extension as a wheel builds it (the default features) has not.
They used to ship in every wheel."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

from rimeflake import _native

ROOT = Path(__file__).resolve().parents[2]
HOOKS = ("_error_kinds", "_raise_kind")


def test_the_tests_extension_has_the_hooks() -> None:
    for name in HOOKS:
        assert hasattr(_native, name), "the extension was built without --features internals: run make python-env"


def test_the_extension_with_the_wheels_features_has_no_hooks(tmp_path: Path) -> None:
    cargo = shutil.which("cargo")
    assert cargo, "cargo is not on PATH: this test builds the extension as a wheel would"
    build = subprocess.run(
        [cargo, "build", "-p", "rimeflake-python", "--lib", "--message-format=json-render-diagnostics"],
        cwd=ROOT, capture_output=True, text=True, timeout=1800,
    )
    assert build.returncode == 0, build.stderr
    libraries = [
        f
        for line in build.stdout.splitlines()
        if line.startswith("{")
        for msg in [json.loads(line)]
        if msg.get("reason") == "compiler-artifact" and msg["target"]["name"] == "_native"
        for f in msg["filenames"]
        if f.endswith(".so")
    ]
    assert len(libraries) == 1, build.stdout[-2000:]
    # Loaded under its own name, from a copy, in a fresh interpreter.
    module = tmp_path / f"_native{EXTENSION_SUFFIXES[-1]}"
    shutil.copy(libraries[0], module)
    code = (
        "import importlib.util, sys\n"
        "spec = importlib.util.spec_from_file_location('_native', sys.argv[1])\n"
        "m = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(m)\n"
        "print(' '.join(sorted(n for n in dir(m) if n.startswith('_') and not n.startswith('__'))))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    run = subprocess.run([sys.executable, "-c", code, str(module)], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    private = run.stdout.split()
    assert "_after_fork_in_child" in private, private  # the real module, loaded
    assert not set(HOOKS) & set(private), private
