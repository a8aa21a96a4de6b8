"""The first name of ``rimeflake.skywalking``, kept for one release: the same objects, and a
``DeprecationWarning`` when it is imported. Import ``rimeflake.skywalking`` instead.
"""

from __future__ import annotations

import importlib
import os
import sys
import warnings
from types import FrameType
from typing import Optional

from .skywalking import (
    SKYWALKING_SUPPORTED,
    SkyWalkingAgentError,
    SkyWalkingPatch,
    global_id,
    install_skywalking,
    process_id,
)

__all__ = [
    "SKYWALKING_SUPPORTED",
    "SkyWalkingAgentError",
    "SkyWalkingPatch",
    "global_id",
    "install_skywalking",
    "process_id",
]


def _importer_level() -> int:
    """The ``stacklevel`` of the statement that imported this module: past the import machinery
    (which ``warnings`` skips itself) and past ``importlib.import_module`` and the package's
    ``__getattr__`` (the path of ``rimeflake.tracing`` after ``import rimeflake``). The default
    filters show a ``DeprecationWarning`` when that statement is in ``__main__``."""
    ours = {importlib.__file__, os.path.join(os.path.dirname(__file__), "__init__.py")}
    level = 2
    frame: Optional[FrameType] = sys._getframe(2)  # 1 is this module, 2 what imported it
    while frame is not None:
        name = frame.f_code.co_filename
        if not ("importlib" in name and "_bootstrap" in name):
            if name not in ours:
                break
            level += 1
        frame = frame.f_back
    return level


warnings.warn(
    "rimeflake.tracing is renamed rimeflake.skywalking (the same objects); the old name will be "
    "removed in the next release",
    DeprecationWarning,
    stacklevel=_importer_level(),
)
