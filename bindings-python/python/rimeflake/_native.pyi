"""Stubs of the native module ``rimeflake._native`` (checked by ``mypy.stubtest``)."""

from typing import Final, Literal, SupportsIndex, final, overload

from typing_extensions import Buffer, Self, Unpack

from ._parts import Parts
from ._types import GeneratorOptions, LayoutName, Stats

__all__ = [
    "__version__",
    "EPOCH_2024",
    "PRESETS",
    "Generator",
    "Layout",
    "decode",
    "format",
    "parse",
    "global_id",
    "process_id",
    "_after_fork_in_child",
    "_otel_span_id",
    "_otel_trace_id",
    "_at_exit",
    "RimeflakeError",
    "ConfigError",
    "ClockRollbackError",
    "LeaseError",
    "NoFreeWorkerError",
    "StateError",
    "InvalidIdError",
    "ClosedError",
    "TimeRangeError",
    "OverloadedError",
    "InterruptedWaitError",
]

__version__: Final[str]
"""The version of rimeflake (the same in every front end)."""
EPOCH_2024: Final[int]
"""2024-01-01T00:00:00Z in Unix milliseconds: the ``default`` layout's epoch."""
PRESETS: Final[list[str]]
"""The preset names a ``layout`` argument takes."""

_Encoding = Literal["dec", "decimal", "hex", "base62", "base32"]
_Order = Literal["sequence_below_worker", "sequence_above_worker"]

@final
class Layout:
    """How the 63 bits of an ID are shared between clock-id, time, worker and sequence.

    Build one from a layout spec, the text every rimeflake front end takes: a preset name
    (``Layout("twitter")``) or fields (``Layout(
    "clock_id=0,time=41,worker=10,sequence=12,epoch_ms=1420070400000")``; ``describe()`` gives
    it back; ``Layout.from_spec(spec)`` is the same), from a preset by its method
    (``Layout.twitter()``, ...), or with custom widths as keywords, starting from the
    ``default`` preset's fields:
    ``Layout(clock_id_bits=2, time_bits=42, worker_bits=8, sequence_bits=11)``.
    Widths must add up to 63 (53 with ``js_safe=True``); anything invalid raises ``ConfigError``.
    A layout only checks its arithmetic: one whose epoch is in the future or whose time field
    has run out still decodes (a ``Generator`` on it is refused).
    """
    @overload
    def __new__(cls, spec: LayoutName | str, /) -> Self: ...
    @overload
    def __new__(
        cls,
        spec: None = None,
        /,
        *,
        clock_id_bits: int = 3,
        time_bits: int = 41,
        worker_bits: int = 10,
        sequence_bits: int = 9,
        unit_ms: int = 1,
        epoch_ms: int = 1704067200000,
        order: _Order = "sequence_below_worker",
        js_safe: bool = False,
        datacenter_bits: int = 0,
    ) -> Self: ...
    @staticmethod
    def preset(name: str) -> Layout:
        """The preset called `name`: ``default``, ``twitter``, ``discord``, ``sonyflake``,
        ``sonyflake_v2``, ``baidu`` (Baidu's own 2016 epoch, which ran out in 2024: it decodes old IDs; generate
        with a later epoch, ``Layout.baidu(epoch_ms)``) or ``js_safe``.
        """
    @staticmethod
    def from_spec(spec: str) -> Layout:
        """The layout that `spec` names (the same as ``Layout(spec)``): a preset name, or
        comma-separated ``key=value`` pairs
        (keys ``clock_id``, ``time``, ``worker``, ``sequence`` (bit widths), ``unit_ms``,
        ``epoch_ms`` or ``epoch`` (ISO 8601), ``order`` (``worker_first`` | ``sequence_first``),
        ``datacenter``), possibly after a preset whose fields they change
        (``"baidu,epoch=2025-01-01T00:00:00Z"``). ``ConfigError`` names the key that is wrong.
        """
    def describe(self) -> str:
        """The layout as a spec: ``Layout(layout.describe()) == layout``."""
    # <contract:layout-presets> generated from the core's tables by `make contract`: do not edit
    @staticmethod
    def default() -> Layout:
        """rimeflake's own, and the only preset with clock-id bits: it rides out a large clock step back without waiting."""
    @staticmethod
    def twitter() -> Layout:
        """Twitter's Snowflake: 5 datacenter and 5 worker bits, Twitter's epoch."""
    @staticmethod
    def discord() -> Layout:
        """Discord's snowflakes: Twitter's widths from Discord's epoch; decode shows Discord's internal worker ID as the datacenter part, its process ID as the worker."""
    @staticmethod
    def sonyflake() -> Layout:
        """sony/sonyflake v1's defaults: 10 ms units, 16 worker bits."""
    @staticmethod
    def sonyflake_v2() -> Layout:
        """sony/sonyflake v2's defaults: as sonyflake, from 2025."""
    @staticmethod
    def js_safe() -> Layout:
        """53 bits, so that an ID is exact as a JavaScript Number."""
    # </contract:layout-presets>
    @staticmethod
    def baidu(epoch_ms: int) -> Layout:
        """Baidu uid-generator's layout (28 time bits of 1 s, 22 worker, 13 sequence) from `epoch_ms`."""
    @property
    def name(self) -> str:
        """The preset's name, or ``"custom"``."""
    @property
    def clock_id_bits(self) -> int:
        """Bits of the clock-id field."""
    @property
    def time_bits(self) -> int:
        """Bits of the time field."""
    @property
    def worker_bits(self) -> int:
        """Bits of the worker field."""
    @property
    def datacenter_bits(self) -> int:
        """How many of the worker bits (the upper ones) are a datacenter part (``twitter``: 5)."""
    @property
    def sequence_bits(self) -> int:
        """Bits of the sequence field."""
    @property
    def order(self) -> _Order:
        """``"sequence_below_worker"`` (Twitter's order) or ``"sequence_above_worker"`` (Sonyflake's)."""
    @property
    def unit_ms(self) -> int:
        """Milliseconds per time unit."""
    @property
    def epoch_ms(self) -> int:
        """The epoch, in Unix milliseconds."""
    @property
    def is_js_safe(self) -> bool:
        """Whether IDs fit in 53 bits."""
    @property
    def max_worker_id(self) -> int:
        """The largest worker ID."""
    @property
    def max_clock_id(self) -> int:
        """The largest clock-id."""
    @property
    def max_sequence(self) -> int:
        """The largest sequence number in one time unit."""
    @property
    def max_time(self) -> int:
        """The largest value of the time field."""
    @property
    def total_bits(self) -> int:
        """Bits in all: 63, or 53 for a JavaScript-safe layout."""
    @property
    def fingerprint(self) -> int:
        """A hash of the layout's fields, stored once per namespace to refuse a different layout."""
    @property
    def expires_at_ms(self) -> int:
        """When the time field runs out, in Unix milliseconds."""
    def decode(self, id: SupportsIndex) -> Parts:
        """The parts of `id` (a ``Parts`` named tuple). Raises ``InvalidIdError`` for an ID this
        layout cannot have produced.
        """
    def compose(
        self,
        *,
        clock_id: SupportsIndex = 0,
        timestamp_ms: SupportsIndex,
        worker_id: SupportsIndex,
        sequence: SupportsIndex = 0,
        datacenter_id: SupportsIndex | None = None,
    ) -> int:
        """The ID made of these parts. Raises ``ConfigError`` when a part does not fit its field."""
    def __eq__(self, value: object, /) -> bool: ...
    def __hash__(self) -> int: ...

@final
class Generator:
    """A generator of 64-bit, time-ordered, unique IDs.

    Every argument left out is resolved by the core, once: ``worker_id`` from
    ``$RIMEFLAKE_WORKER_ID`` (``ordinal``: a Kubernetes StatefulSet pod's ordinal, from
    ``$RIMEFLAKE_POD_INDEX``, else the ``-<n>`` ending ``$HOSTNAME``), else a worker ID leased in
    the state directory; ``layout`` from
    ``$RIMEFLAKE_LAYOUT``, else ``"default"``; ``backend`` from ``$RIMEFLAKE_BACKEND``, else
    ``"local"``; ``state_dir`` from ``$RIMEFLAKE_STATE_DIR``, else ``~/.local/state/rimeflake``
    (``$XDG_STATE_HOME/rimeflake``); ``namespace`` is the layout's own (``"default"``, ``"twitter"``,
    ``"custom-<fingerprint>"``, ...), so generators of different layouts never collide. A bad value in one of
    those variables is a ``ConfigError`` naming it.

    ``backend="local"`` is the embedded default: durable state and worker leases in the state
    directory, so processes sharing it never share a worker ID and a restart continues safely.
    ``backend="memory"`` keeps no state (not restart-safe) and needs a ``worker_id``. A server's
    URL (any ``str``) leases worker IDs there; ``lease_ttl_ms`` is how long such a lease
    lasts without renewal (``$RIMEFLAKE_LEASE_TTL_MS``, else 10000; 200 to 86400000).
    ``on_rollback=None`` takes the layout's default: ``"bump"`` when it has clock-id bits,
    ``"wait"`` otherwise (``"bump"`` on a layout without them is a ``ConfigError``).

    Thread-safe without a Python-level lock. Starting (which may wait, up to ``max_wait_ms``,
    for the clock to reach the stored reservation) and every wait release the interpreter and
    honour signals (Ctrl-C raises ``KeyboardInterrupt``).
    """
    def __new__(
        cls,
        worker_id: SupportsIndex | None = None,
        **options: Unpack[GeneratorOptions],
    ) -> Self: ...
    def next_id(self) -> int:
        """The next ID, an ``int``. IDs of one generator strictly increase (except across a
        clock-id reuse, counted in ``stats()``).
        """
    def next_ids(self, n: SupportsIndex) -> list[int]:
        """`n` increasing IDs as a list."""
    def fill(self, buffer: Buffer) -> int:
        """Fills `buffer` (any writable, contiguous buffer of unsigned 64-bit items: ``array('Q')``,
        a NumPy ``uint64`` array, a ``memoryview``) with increasing IDs, in place. Returns the
        number of IDs written.
        """
    def stats(self) -> Stats:
        """Counters: a dict of every field of the core's ``Stats`` (``ids_issued``, ``rollbacks``,
        ..., ``lease``: ``"none"``, ``"held"`` or ``"lost"``), under the same names; the
        ``Stats`` typed dict says what each is.
        """
    @property
    def layout(self) -> Layout:
        """The layout of this generator's IDs."""
    @property
    def worker_id(self) -> int:
        """The worker ID in use (in a forked child, the child's own: taken now if it has issued
        no ID yet).
        """
    @property
    def closed(self) -> bool:
        """Whether ``close()`` was called."""
    def decode(self, id: SupportsIndex) -> Parts:
        """The parts of an ID of this generator's layout."""
    def close(self) -> None:
        """Closes the generator: later calls raise ``ClosedError``. A memory generator first waits
        until the clock has passed its last ID. Closing twice is harmless.
        """
    def __enter__(self) -> Self:
        """Returns the generator itself: ``with Generator(...) as gen:`` closes it on the way out."""
    # None, not bool: exceptions are never swallowed, so mypy knows a `return` inside `with`
    # is the function's last word.
    def __exit__(self, *_exc: object) -> None:
        """Closes the generator; exceptions propagate (returns ``None``)."""

def decode(id: SupportsIndex, layout: LayoutName | str | Layout = "default") -> Parts:
    """The parts of `id` under `layout` (a preset name, a layout spec or a ``Layout``; by default
    ``"default"``), as a ``Parts`` named tuple.
    """
def format(id: SupportsIndex, encoding: _Encoding = "dec") -> str:
    """`id` (any 64-bit unsigned number) as text: ``"dec"`` (decimal), ``"hex"`` (16 digits),
    ``"base62"`` (11 characters) or ``"base32"`` (13, Crockford). The fixed-width forms sort as
    the numbers do.
    """
def parse(text: str, encoding: _Encoding = "dec") -> int:
    """The number that `text` spells in `encoding` (see ``format``). Raises ``InvalidIdError`` for
    text that is not one (``decode`` then checks that a number is an ID of a layout).
    """
def global_id() -> str:
    """A trace ID in the SkyWalking Java agent's format, ``{process}.{thread}.{ms * 10000 + seq}``,
    that never repeats (see ``rimeflake.skywalking``).
    """
def process_id() -> str:
    """The process part of ``global_id()`` now (32 hex digits, drawn anew after a fork)."""
def _after_fork_in_child() -> None:
    """Called in a forked child by ``os.register_at_fork`` (the core arms ``pthread_atfork`` too,
    for forks that bypass Python): the child never continues its parent's IDs.
    """
def _otel_span_id(generator: Generator) -> int:
    """A span ID from ``generator``: its next ID that is not 0."""
def _otel_trace_id(generator: Generator) -> int:
    """A trace ID from ``generator``: its next ID in the high 64 bits, 64 random bits from the
    operating system below.
    """
def _at_exit() -> None:
    """Registered with `atexit` at import: runs in the thread that finalizes, before it does."""

class RimeflakeError(Exception):
    """The base of every error rimeflake raises."""
    code: str
    """The kind's stable code, the same as Node's ``err.code``: ``"ERR_RIMEFLAKE_CONFIG"``, ..."""

class ConfigError(RimeflakeError, ValueError):
    """A layout, preset, worker ID or option is invalid (also a backend URL the server refuses: a wrong password, an unknown database, an untrusted certificate); the message names the field."""
class ClockRollbackError(RimeflakeError):
    """The clock went back further than the rollback policy tolerates."""
class LeaseError(RimeflakeError, OSError):
    """A worker lease was lost, or could not be taken or renewed: its lock file in the state directory could not be made or locked, or a server backend cannot be reached or does not answer in time. Also an OSError, as StateError is."""
class NoFreeWorkerError(LeaseError):
    """Every worker ID in the allowed range is taken."""
class StateError(RimeflakeError, OSError):
    """The durable state could not be read or written, or is corrupt."""
class InvalidIdError(RimeflakeError, ValueError):
    """An ID or string that this layout or encoding could not have produced."""
class ClosedError(RimeflakeError):
    """The generator was closed, or belongs to the parent of a forked process."""
class TimeRangeError(RimeflakeError):
    """The clock lies outside the layout's time range (before the epoch or past its end)."""
class OverloadedError(RimeflakeError, TimeoutError):
    """The clock did not catch up with the IDs lent ahead within max_wait."""
class InterruptedWaitError(RimeflakeError, InterruptedError):
    """A wait was interrupted (a signal whose handler did not raise)."""
