"""Type aliases of the arguments (for annotations: ``rimeflake.LayoutName``).

The blocks between ``<contract:...>`` lines are written from the core's tables (its settings,
counters and presets) by ``make contract``, and a test of the core holds them to the tables."""

from __future__ import annotations

import os
from typing import Literal, SupportsIndex, TypedDict

from ._native import Layout

# <contract:layout-name> generated from the core's tables by `make contract`: do not edit
LayoutName = Literal["default", "twitter", "discord", "sonyflake", "sonyflake_v2", "baidu", "js_safe"]
# </contract:layout-name>
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


# <contract:generator-options> generated from the core's tables by `make contract`: do not edit
class GeneratorOptions(TypedDict, total=False):
    """The keyword arguments of ``Generator`` (every one optional; ``None`` is the same as leaving it out)."""

    layout: LayoutName | str | Layout | None
    """The bit layout: a preset or a layout spec such as
    clock_id=0,time=41,worker=10,sequence=12,epoch_ms=1420070400000. Default: ``RIMEFLAKE_LAYOUT``,
    else default."""

    namespace: str | None
    """The namespace: worker IDs and state are separate per namespace, and a namespace keeps one
    layout. Default: the layout's own: default, twitter, ..., custom-<fingerprint>."""

    state_dir: str | os.PathLike[str] | None
    """The state directory: worker leases and durable state, for the local backend. Default:
    ``RIMEFLAKE_STATE_DIR``, else $XDG_STATE_HOME/rimeflake or ~/.local/state/rimeflake."""

    backend: BackendName | str | None
    """Where leases and state live: local (the state directory), memory (no state: not restart-safe,
    needs a worker ID), or a server many hosts share: redis[s]://[:PASSWORD@]HOST[:PORT][/DB],
    redis[s]+sentinel://HOST[:PORT][,...]/MASTER[/DB], postgresql://USER[:PASSWORD]@HOST[:PORT]/DB,
    mysql://USER[:PASSWORD]@HOST[:PORT]/DB or zookeeper://HOST:PORT[,HOST:PORT...]/CHROOT. Default:
    ``RIMEFLAKE_BACKEND``, else local."""

    max_drift_ms: SupportsIndex | None
    """How far the clock may step back and still be absorbed by counting on, in ms, at most 300000
    (five minutes); on a server backend the namespace keeps the first generator's, and refuses
    another. Default: 2000."""

    max_wait_ms: SupportsIndex | None
    """The longest any call waits (for the clock, a reservation or a lease) before it fails, in ms.
    Default: 5000."""

    on_rollback: Literal["bump", "wait", "error"] | None
    """After a larger step back: bump (to the next clock-id), wait (for the clock, at most the
    longest wait) or error. Default: bump when the layout has clock-id bits, else wait."""

    strict_monotonic: bool | None
    """Never reuse an older clock-id, so IDs always increase (at the cost of waiting when no higher
    one is free). Default: off."""

    lease_ttl_ms: SupportsIndex | None
    """With a server backend: how long a lease lasts without renewal, 200 ms to a day, in ms; a
    killed process's worker ID is free again after it. Default: ``RIMEFLAKE_LEASE_TTL_MS``, else
    10000."""

    random_sequence_start: bool | None
    """Start each time unit's sequence at a random offset rather than 0, so that id % N spreads
    evenly over N shards at any rate (layouts with the sequence below the worker). Default: off."""

    wait_at_takeover: bool | None
    """With a server backend: begin every start past what a lost holder of the worker ID may have
    issued, even when the server has its state (the first ID about a second later): for servers
    restored from backups where nobody runs rimeflake state restored. Default:
    ``RIMEFLAKE_WAIT_AT_TAKEOVER``, else off: only where the server shows the state may have been
    lost or copied."""
# </contract:generator-options>


# <contract:stats> generated from the core's tables by `make contract`: do not edit
class Stats(TypedDict):
    """What ``Generator.stats()`` returns: the core's counters, under the same names."""

    ids_issued: int
    """IDs handed out."""

    rollbacks: int
    """Times the clock was seen to go back (each step back counts once)."""

    largest_rollback_ms: int
    """The largest step back of the clock seen, in ms."""

    clock_id_bumps: int
    """Switches to another clock-id after a large rollback."""

    clock_id_reuses: int
    """Of the switches, those to a lower clock-id whose IDs all lie in the past (unique, not
    increasing across it)."""

    waits: int
    """Calls that had to wait (for the clock to catch up, or for a reservation)."""

    waited_ms: int
    """Time spent in those waits, in ms."""

    borrowed_ms: int
    """Time the counter moved ahead of the clock when a unit's sequence ran out, in ms."""

    clock_id: int
    """The clock-id in use."""

    server_skew_ms: int
    """On a server backend: the server's clock minus this host's when the lease was taken; 0
    otherwise, in ms."""

    reservation_writes: int
    """Writes of the durable state (reservations, clock-id switches, start and close), failed ones
    included."""

    reservation_write_failures: int
    """Writes of the durable state that failed."""

    reservation_write_ns: int
    """Time spent in writes of the durable state (over the writes: their mean latency), in ns."""

    lease_remaining_ms: int
    """While the server's lease is held: how long it stays valid without another renewal; 0
    otherwise, in ms."""

    lease_renewals: int
    """Renewals of the server's lease answered, failed ones included."""

    lease_renewal_failures: int
    """Renewals of the server's lease that failed (an error, or the server refused)."""

    lease_losses: int
    """Times the server's lease was lost (its deadline passed unrenewed, or another process took
    it), however briefly."""

    lease: LeaseState
    """The server lease's state: none (no server leases the worker ID), held, or lost (no ID is
    issued until it is held again)."""
# </contract:stats>
