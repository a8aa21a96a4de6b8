"""Type aliases of the arguments (for annotations: ``rimeflake.LayoutName``)."""

from typing import Literal, TypedDict

LayoutName = Literal["default", "twitter", "sonyflake", "sonyflake_v2", "baidu", "js_safe"]
"""A preset name. A ``layout`` argument takes one of these, any layout spec
(``"clock_id=0,time=41,worker=10,sequence=12,epoch_ms=1420070400000"``), as every rimeflake
front end does, or a ``Layout``; a type checker cannot tell a misspelt preset (``"twiter"``)
from a spec, so that is a ``ConfigError`` at run time that names the word it did not know."""

BackendName = Literal["local", "memory"]
"""Where state and worker leases live: ``"local"`` (the state directory, the default) or
``"memory"`` (no state: not restart-safe). A ``backend`` argument takes one of these or a
server's URL, any ``str``: ``"redis://[:password@]host[:port][/db]"`` (``rediss://`` for TLS) or
``"postgresql://user[:password]@host[:port]/db"`` (TLS by libpq's ``sslmode``, ``sslrootcert``,
``sslcert``, ``sslkey``), so ``backend=os.environ.get("RIMEFLAKE_URL")`` type-checks. A type
checker cannot tell a misspelt name (``"memroy"``) from a URL, so that is a ``ConfigError`` at
run time that names the word it did not know."""


LeaseState = Literal["none", "held", "lost"]
"""A generator's server lease: ``"none"`` (no server leases its worker ID), ``"held"``, or
``"lost"`` (not renewed in time, or refused: no ID is issued until it is held again)."""


class Stats(TypedDict):
    """What ``Generator.stats()`` returns: the core's counters, under the same names."""

    ids_issued: int
    rollbacks: int
    largest_rollback_ms: int
    clock_id_bumps: int
    clock_id_reuses: int
    waits: int
    waited_ms: int
    borrowed_ms: int
    clock_id: int
    server_skew_ms: int
    reservation_writes: int
    """Writes of the durable state (reservations, clock-id switches, start, close)."""
    reservation_write_failures: int
    reservation_write_ns: int
    """Time spent in those writes, in ns."""
    lease: LeaseState
    lease_remaining_ms: int
    """While the lease is held: how long it stays valid without another renewal; else 0."""
    lease_renewals: int
    lease_renewal_failures: int
