"""The generator that the integrations (``rimeflake.otel``, ``rimeflake.sqlalchemy``,
``rimeflake.django``) use when they are given none: one per process, made at its first use with
every setting from the environment (``RIMEFLAKE_*``) or the defaults, as ``Generator()`` is.

Made at first use, not at import, so that defining a table or a tracer takes no worker ID. A
forked child goes on with the same object, which takes a worker ID of its own at the child's
first ID, as every ``Generator`` does.
"""

from __future__ import annotations

import threading
from typing import Optional

from ._native import Generator

_lock = threading.Lock()
_generator: Optional[Generator] = None


def default_generator() -> Generator:
    """The process's default generator, made by the first caller."""
    global _generator
    gen = _generator
    if gen is not None:
        return gen
    with _lock:
        if _generator is None:
            _generator = Generator()
        return _generator
