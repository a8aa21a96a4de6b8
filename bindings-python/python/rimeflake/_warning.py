"""``RimeflakeWarning``: what rimeflake has to say that is not an error."""

from __future__ import annotations


class RimeflakeWarning(UserWarning):
    """A warning from rimeflake, such as a container using the default state directory.

    ``kind`` is a stable name to act on (``"container"``); filter with the ``warnings`` module,
    e.g. ``warnings.filterwarnings("ignore", category=rimeflake.RimeflakeWarning)``.
    """

    kind: str

    def __init__(self, message: str, kind: str = "") -> None:
        super().__init__(message)
        self.kind = kind
