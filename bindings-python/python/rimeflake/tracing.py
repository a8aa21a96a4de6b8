"""IDs for tracing agents, in the format of the SkyWalking Java agent's ``GlobalIdGenerator``:
``{process}.{thread}.{epoch_ms * 10000 + seq}``.

``global_id()`` replaces ``str(uuid.uuid1()).replace('-', '')`` with one call. Unlike the Java
original, its IDs never repeat: a thread's token is never reused, more than 10,000 IDs in one
millisecond borrow the next millisecond instead of wrapping, the process part (a random UUID's
32 hex digits from the operating system) is drawn anew after ``fork()``, and a clock that goes
back does not bring old values back.

>>> from rimeflake.tracing import global_id
>>> a, b = global_id(), global_id()
>>> a != b and a.count(".") == 2
True
"""

from __future__ import annotations

from ._native import global_id, process_id

__all__ = ["global_id", "process_id"]
