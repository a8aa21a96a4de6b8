"""rimeflake: 64-bit, time-ordered, unique IDs (the Snowflake family) that stay unique when the
clock goes back, when a process restarts or forks, and when a worker ID moves.

>>> import rimeflake
>>> with rimeflake.Generator(1, layout="twitter", backend="memory") as gen:
...     a, b = gen.next_id(), gen.next_id()
>>> a < b
True
>>> rimeflake.decode(b, layout="twitter").worker_id
1

The work is done by one Rust core shared with the Node and C bindings (same layouts, same
guarantees); this package is a thin, typed layer over its native module ``rimeflake._native``.
"""

from __future__ import annotations

import os as _os

from . import skywalking
from ._native import (
    EPOCH_2024,
    PRESETS,
    ClockRollbackError,
    ClosedError,
    ConfigError,
    Generator,
    InterruptedWaitError,
    InvalidIdError,
    Layout,
    LeaseError,
    NoFreeWorkerError,
    OverloadedError,
    RimeflakeError,
    StateError,
    TimeRangeError,
    __version__,
    _after_fork_in_child,
    decode,
    format,
    parse,
)
from ._parts import Parts
from ._types import BackendName, LayoutName, LeaseState, Stats
from ._warning import RimeflakeWarning

__all__ = [
    "BackendName",
    "EPOCH_2024",
    "PRESETS",
    "ClockRollbackError",
    "ClosedError",
    "ConfigError",
    "Generator",
    "InterruptedWaitError",
    "InvalidIdError",
    "Layout",
    "LayoutName",
    "LeaseError",
    "LeaseState",
    "NoFreeWorkerError",
    "OverloadedError",
    "Parts",
    "RimeflakeError",
    "RimeflakeWarning",
    "StateError",
    "Stats",
    "TimeRangeError",
    "__version__",
    "decode",
    "format",
    "parse",
    "skywalking",
]

# A forked child must not continue its parent's IDs: tell the core at once. (The core also arms
# pthread_atfork, which covers forks that bypass Python, such as uWSGI's.)
if hasattr(_os, "register_at_fork"):
    _os.register_at_fork(after_in_child=_after_fork_in_child)
