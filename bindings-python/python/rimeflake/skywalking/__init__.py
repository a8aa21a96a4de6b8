"""IDs for SkyWalking's tracing agents, in the format of its Java agent's ``GlobalIdGenerator``:
``{process}.{thread}.{epoch_ms * 10000 + seq}``.

``global_id()`` replaces ``str(uuid.uuid1()).replace('-', '')`` with one call. Unlike the Java
original, its IDs never repeat: a thread's token is never reused, more than 10,000 IDs in one
millisecond borrow the next millisecond instead of wrapping, the process part (a random UUID's
32 hex digits from the operating system) is drawn anew after ``fork()``, and a clock that goes
back does not bring old values back.

>>> from rimeflake.skywalking import global_id
>>> a, b = global_id(), global_id()
>>> a != b and a.count(".") == 2
True

``install_skywalking()`` makes the SkyWalking Python agent (``apache-skywalking``) use
``global_id()`` for every segment and trace ID it creates; ``python -m rimeflake.skywalking``
does the same for a program run under ``sw-python run`` without changing its code.
"""

from __future__ import annotations

import importlib
import re
import threading
from importlib import metadata
from types import TracebackType
from typing import Any, Optional

from .._native import RimeflakeError, global_id, process_id

__all__ = [
    "SKYWALKING_SUPPORTED",
    "SkyWalkingAgentError",
    "SkyWalkingPatch",
    "global_id",
    "install_skywalking",
    "process_id",
]

#: The versions of ``apache-skywalking`` whose ``skywalking.trace.ID`` install_skywalking()
#: knows and whose agent can be imported (read: 1.0.0 to 1.2.0; tested: 1.2.0, the version the
#: Makefile pins). Not 1.3.0: its wheel lacks the generated ``skywalking.protocol`` package.
#: The package's ``skywalking`` extra installs this range.
SKYWALKING_SUPPORTED = ">=1.0,<1.3"
_LOWEST, _BEYOND = (1, 0), (1, 3)
_DIST = "apache-skywalking"


class SkyWalkingAgentError(RimeflakeError, ImportError):
    """The SkyWalking Python agent is not installed, or is of a version (or shape) that
    ``install_skywalking()`` does not support; the message says which and what to install."""


class SkyWalkingPatch:
    """The installed patch of ``skywalking.trace.ID``, as returned by ``install_skywalking()``.

    ``uninstall()`` (or leaving a ``with`` block) puts the agent's own ``ID`` back.
    """

    def __init__(self, id_class: type, agent_init: Any, version: str) -> None:
        self._id_class = id_class
        self._agent_init = agent_init
        #: The version of apache-skywalking that was patched.
        self.agent_version = version

    @property
    def installed(self) -> bool:
        """True until ``uninstall()``."""
        return _current is self and _ours(self._id_class)

    def uninstall(self) -> None:
        """Restore the agent's own ``ID.__init__``. Calling it again does nothing; an
        ``__init__`` that someone else set after this patch is left as they set it."""
        global _current
        with _lock:
            if _current is not self:
                return
            if _ours(self._id_class):
                setattr(self._id_class, "__init__", self._agent_init)
            _current = None

    def __enter__(self) -> SkyWalkingPatch:
        return self

    def __exit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        self.uninstall()

    def __repr__(self) -> str:
        state = "installed" if self.installed else "uninstalled"
        return f"<SkyWalkingPatch apache-skywalking {self.agent_version}, {state}>"


_lock = threading.Lock()
_current: Optional[SkyWalkingPatch] = None


def install_skywalking() -> SkyWalkingPatch:
    """Make the SkyWalking Python agent build its segment and trace IDs with ``global_id()``
    instead of ``str(uuid.uuid1()).replace('-', '')``: about 100 times faster, and unique
    across threads and forked workers, where uuid1 is not.

    IDs that the agent reads from a propagated header (``ID(raw_id)``, ``raw_id`` not empty)
    are kept as they are. Idempotent: a second call returns the same patch. Works before or
    after the agent is started; every ``ID`` made from then on, in this process and in
    processes forked from it, is a ``global_id()``.

    Returns the patch; its ``uninstall()`` restores the agent's own ``ID``.

    Raises ``SkyWalkingAgentError`` (an ``ImportError`` and a ``RimeflakeError``) when
    ``apache-skywalking`` is not importable, not of a supported version
    (``SKYWALKING_SUPPORTED``), or its ``ID`` class is not the one this patch knows.

    >>> from rimeflake.skywalking import install_skywalking
    >>> with install_skywalking():
    ...     from skywalking.trace import ID
    ...     ID().value.count(".")
    2
    """
    global _current
    with _lock:
        if _current is not None and _current.installed:
            return _current
        version = _agent_version()
        id_class = _id_class(version)
        agent_init = id_class.__dict__["__init__"]
        # The class itself is patched, so every `from skywalking.trace import ID` sees it, and
        # the agent's subclass `_NewID` inherits it (`_NewNoopID` keeps its own empty value).
        setattr(id_class, "__init__", _skywalking_id_init)
        _current = SkyWalkingPatch(id_class, agent_init, version)
        return _current


def _skywalking_id_init(self: Any, raw_id: Optional[str] = None) -> None:
    # `ID.__init__` while the patch is installed: the agent's own, with global_id() where it
    # calls uuid1. A plain function is the cheapest form CPython offers for an __init__: it is
    # called without binding a method, and its attribute store is specialised (a native
    # function is not a descriptor, so as __init__ it would not even receive `self`).
    self.value = raw_id or global_id()


_skywalking_id_init.__qualname__ = "ID.__init__"


def _agent_version() -> str:
    try:
        importlib.import_module("skywalking")
    except ImportError as e:
        raise SkyWalkingAgentError(
            f"install_skywalking() needs the SkyWalking Python agent: "
            f"pip install '{_DIST}{SKYWALKING_SUPPORTED}' (import skywalking failed: {e})",
            name="skywalking",
        ) from e
    try:
        version = metadata.version(_DIST)
    except metadata.PackageNotFoundError as e:
        raise SkyWalkingAgentError(
            f"a 'skywalking' module is importable but the {_DIST} distribution is not "
            f"installed: install_skywalking() supports {_DIST}{SKYWALKING_SUPPORTED} only",
            name="skywalking",
        ) from e
    m = re.match(r"(\d+)\.(\d+)", version)
    if m is None or not _LOWEST <= (int(m[1]), int(m[2])) < _BEYOND:
        raise SkyWalkingAgentError(
            f"{_DIST} {version} is installed{_unimportable()}; install_skywalking() supports "
            f"{_DIST}{SKYWALKING_SUPPORTED}: pip install '{_DIST}{SKYWALKING_SUPPORTED}'",
            name="skywalking",
        )
    return version


def _unimportable() -> str:
    """Why the installed agent cannot be imported, if it cannot: apache-skywalking 1.3.0's wheel
    lacks its generated protocol package, which ``skywalking.agent`` imports."""
    try:
        importlib.import_module("skywalking.protocol")
    except ImportError:
        return ", whose agent cannot be imported (it lacks the generated skywalking.protocol package)"
    return ""


def _id_class(version: str) -> type:
    """``skywalking.trace.ID``, checked to be the class this patch replaces: an ``__init__``
    of its own that takes ``raw_id`` (an ID read from a propagated header)."""
    try:
        trace = importlib.import_module("skywalking.trace")
    except ImportError as e:
        raise SkyWalkingAgentError(
            f"{_DIST} {version}: import skywalking.trace failed: {e}", name="skywalking.trace"
        ) from e
    cls = getattr(trace, "ID", None)
    init = cls.__dict__.get("__init__") if isinstance(cls, type) else None
    code = getattr(init, "__code__", None)
    if cls is None or code is None or "raw_id" not in code.co_varnames[: code.co_argcount]:
        raise SkyWalkingAgentError(
            f"{_DIST} {version}: skywalking.trace.ID is not a class whose __init__ takes "
            f"raw_id, as install_skywalking() expects",
            name="skywalking.trace",
        )
    assert isinstance(cls, type)
    return cls


def _ours(cls: type) -> bool:
    return cls.__dict__.get("__init__") is _skywalking_id_init
