"""``Parts``: what an ID is made of."""

# No `from __future__ import annotations` here: NamedTuple would keep the field types as
# strings, and help(Parts) would show ForwardRef('int').
import datetime as _dt
from typing import NamedTuple, Optional


class Parts(NamedTuple):
    """The parts of a decoded ID.

    >>> p = Parts(clock_id=0, timestamp_ms=1_767_225_600_000, worker_id=7, sequence=3)
    >>> p.datetime.isoformat()
    '2026-01-01T00:00:00+00:00'
    """

    clock_id: int
    """Which clock-id the generator was on (0 for layouts without clock-id bits)."""
    timestamp_ms: int
    """The start of the ID's time unit, in Unix milliseconds."""
    worker_id: int
    """The worker ID (the part below the datacenter part, where the layout has one)."""
    sequence: int
    """The sequence number within the time unit."""
    datacenter_id: Optional[int] = None  # not `int | None`: evaluated, and 3.9 lacks it
    """The datacenter part of the worker field, for a layout that names one (``twitter``:
    5 bits); ``worker_id`` is then the part below it. ``None`` for other layouts."""

    @property
    def datetime(self) -> _dt.datetime:
        """``timestamp_ms`` as an aware ``datetime`` in UTC."""
        epoch = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
        return epoch + _dt.timedelta(milliseconds=self.timestamp_ms)
