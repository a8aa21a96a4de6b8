"""`rimeflake.tracing`, the first name of `rimeflake.skywalking`, kept for one release: the same
objects under the old name, and a DeprecationWarning charged to the line that imported it."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Callable

import pytest

import rimeflake
from rimeflake import skywalking


def _import_statement() -> ModuleType:
    import rimeflake.tracing

    return rimeflake.tracing


def _from_import() -> ModuleType:
    from rimeflake import tracing

    return tracing


def _attribute() -> ModuleType:
    module: ModuleType = getattr(rimeflake, "tracing")  # after `import rimeflake` alone
    return module


@pytest.mark.parametrize("load", [_import_statement, _from_import, _attribute])
def test_the_old_name_holds_the_same_objects_and_warns(
    load: Callable[[], ModuleType], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delitem(sys.modules, "rimeflake.tracing", raising=False)
    if "tracing" in vars(rimeflake):  # not hasattr: that would import it through __getattr__
        monkeypatch.delattr(rimeflake, "tracing")
    with pytest.warns(DeprecationWarning, match=r"rimeflake\.tracing is renamed rimeflake\.skywalking") as caught:
        tracing = load()
    assert [w.filename for w in caught] == [__file__]
    assert tracing.__all__ == skywalking.__all__
    for name in skywalking.__all__:
        assert getattr(tracing, name) is getattr(skywalking, name), name
    assert tracing.global_id().split(".")[0] == skywalking.process_id()
    # Once imported, the module is cached: no second warning.
    assert importlib.import_module("rimeflake.tracing") is tracing


def test_the_new_name_alone_does_not_warn(tmp_path: Path) -> None:
    """`import rimeflake` and `python -m rimeflake.skywalking` import no deprecated name."""
    (tmp_path / "app.py").write_text("import rimeflake, rimeflake.skywalking\n")
    for args in (["-c", "import rimeflake, rimeflake.skywalking"], ["-m", "rimeflake.skywalking", "app.py"]):
        proc = subprocess.run(
            [sys.executable, "-W", "error", *args], cwd=tmp_path, capture_output=True, text=True, timeout=120
        )
        assert proc.returncode == 0 and proc.stderr == "", (args, proc.stderr)
