"""OpenTelemetry span and trace IDs from a rimeflake generator.

``IdGenerator`` plugs into the SDK's ``TracerProvider(id_generator=...)``:

- span IDs are the generator's IDs (64-bit, never 0), unique across threads, forked workers and
  hosts as every rimeflake ID is, where the SDK's default draws them from ``random``, whose
  state a forked worker copies;
- trace IDs are 128-bit: a rimeflake ID in the high 64 bits, 64 bits from the operating
  system's randomness in the low 64 bits. W3C Trace Context Level 2 asks for the rightmost 7
  bytes to be random, and the SDK's ``TraceIdRatioBased`` sampler decides on the low 64 bits,
  so ``is_trace_id_random()`` is true and sampling keeps the ratio asked.

Both are made by the rimeflake core (its ``otel`` module), as the npm package's
``rimeflake/otel`` makes them. Needs ``opentelemetry-sdk``: ``pip install 'rimeflake[otel]'``.
"""

from __future__ import annotations

from typing import Optional

from ._integration import default_generator, generator_option, require
from ._native import Generator, _otel_span_id, _otel_trace_id

require(
    "opentelemetry.sdk.trace.id_generator",
    integration="rimeflake.otel",
    needs="the OpenTelemetry SDK",
    extra="otel",
)

from opentelemetry.sdk.trace.id_generator import IdGenerator as _SdkIdGenerator

__all__ = ["IdGenerator"]


class IdGenerator(_SdkIdGenerator):
    """Span and trace IDs for ``TracerProvider(id_generator=IdGenerator())``.

    ``generator`` is the ``rimeflake.Generator`` the IDs come from; without one, the process's
    default generator (settings from the environment, made at the first ID) is used. Safe to
    share between threads; a forked child's IDs come from a worker ID of its own.

    >>> from opentelemetry.sdk.trace import TracerProvider
    >>> provider = TracerProvider(id_generator=IdGenerator())
    """

    def __init__(self, generator: Optional[Generator] = None) -> None:
        self._generator = generator_option(generator, "IdGenerator")

    @property
    def generator(self) -> Generator:
        """The generator the IDs come from (the default one, made now if it was not yet)."""
        return self._generator or default_generator()

    def generate_span_id(self) -> int:
        """A 64-bit span ID, never 0: the generator's next ID."""
        return _otel_span_id(self._generator or default_generator())

    def generate_trace_id(self) -> int:
        """A 128-bit trace ID: the generator's next ID, then 64 random bits."""
        return _otel_trace_id(self._generator or default_generator())

    def is_trace_id_random(self) -> bool:
        """True: the low 64 bits of every trace ID are uniformly random (W3C Level 2)."""
        return True

    def __repr__(self) -> str:
        return f"IdGenerator({self._generator!r})"
