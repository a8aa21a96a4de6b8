"""What the integrations (``rimeflake.otel``, ``rimeflake.sqlalchemy``, ``rimeflake.django``)
share: the library each needs, asked for by the extra that installs it, and the generator they
use when they are given none: one per process, made at its first use with every setting from
the environment (``RIMEFLAKE_*``) or the defaults, as ``Generator()`` is.

Made at first use, not at import, so that defining a table or a tracer takes no worker ID. A
forked child goes on with the same object, which takes a worker ID of its own at the child's
first ID, as every ``Generator`` does.
"""

from __future__ import annotations

import importlib
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


def generator_option(generator: object, where: str) -> Optional[Generator]:
    """``generator`` as an integration's ``generator=`` argument takes it: a ``Generator``, or
    None for the default one; anything else is a ``TypeError`` naming ``where``."""
    if generator is not None and not isinstance(generator, Generator):
        raise TypeError(
            f"{where}(generator=...) takes a rimeflake.Generator, not {type(generator).__name__}"
        )
    return generator


def require(module: str, *, integration: str, needs: str, extra: str) -> None:
    """Imports ``module``, or raises an ``ImportError`` that says which extra installs it."""
    try:
        importlib.import_module(module)
    except ImportError as e:
        raise ImportError(
            f"{integration} needs {needs}: pip install 'rimeflake[{extra}]' "
            f"(import {module} failed: {e})",
            name=module,
        ) from e
