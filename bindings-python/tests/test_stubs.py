"""The stub file must describe the native module as it is."""

from __future__ import annotations

import ast
import inspect
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import rimeflake
from rimeflake import _native


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


STUB = Path(rimeflake.__file__).with_name("_native.pyi")


def _stub_items() -> Iterator[tuple[str, object, ast.AST]]:
    """(dotted name, runtime object, stub node) of every class, function, method and property
    of the stub that an editor shows (overloads and dunders other than __enter__/__exit__ aside)."""
    tree = ast.parse(STUB.read_text())
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            cls = getattr(_native, node.name)
            yield node.name, cls, node
            for item in node.body:
                if not isinstance(item, ast.FunctionDef):
                    continue
                overload = any(isinstance(d, ast.Name) and d.id == "overload" for d in item.decorator_list)
                if overload or (item.name.startswith("__") and item.name not in ("__enter__", "__exit__")):
                    continue
                raw = inspect.getattr_static(cls, item.name)
                yield f"{node.name}.{item.name}", raw if isinstance(raw, property) else getattr(cls, item.name), item
        elif isinstance(node, ast.FunctionDef):
            yield node.name, getattr(_native, node.name), node


def test_the_stubs_carry_the_native_modules_docstrings() -> None:
    """Editors read the docstrings of `_native.pyi`, not the extension's: each one is there, and
    is the native object's own (its Rust doc comment), so the two cannot drift apart."""
    seen = 0
    for name, obj, node in _stub_items():
        assert isinstance(node, (ast.ClassDef, ast.FunctionDef))
        want = inspect.cleandoc(obj.__doc__ or "")
        assert want, f"{name} has no docstring in the native module"
        assert ast.get_docstring(node) == want, f"{name}: the stub's docstring is not the module's:\n{want}"
        seen += 1
    assert seen > 50, seen
    # The constants and RimeflakeError.code: a string right after each annotation.
    tree = ast.parse(STUB.read_text())
    bodies = [tree.body] + [n.body for n in tree.body if isinstance(n, ast.ClassDef)]
    for body in bodies:
        for i, node in enumerate(body):
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                after = body[i + 1] if i + 1 < len(body) else None
                documented = isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
                assert documented, f"{node.target.id} has no docstring in the stub"
