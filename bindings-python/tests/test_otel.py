"""rimeflake.otel.IdGenerator in the real OpenTelemetry SDK (opentelemetry-sdk, pinned in the
Makefile's PY_TOOLS): spans exported by an in-memory exporter carry the generator's IDs, unique
across threads and forked workers, and the ratio sampler keeps the ratio asked."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.id_generator import IdGenerator as SdkIdGenerator
from opentelemetry.sdk.trace.sampling import TraceIdRatioBased
from opentelemetry.trace import TraceFlags
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

import rimeflake
import rimeflake._integration
from rimeflake.otel import IdGenerator

needs_fork = pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork on this platform")


@pytest.fixture
def durable(tmp_path: Path) -> Iterator[rimeflake.Generator]:
    """A generator on the embedded default (a leased worker ID), in a state directory of the
    test's own."""
    with rimeflake.Generator(state_dir=str(tmp_path), layout="twitter") as g:
        yield g


def traced(
    id_generator: SdkIdGenerator, **kwargs: object
) -> tuple[TracerProvider, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(id_generator=id_generator, **kwargs)  # type: ignore[arg-type]
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


def make_spans(provider: TracerProvider, traces: int) -> None:
    tracer = provider.get_tracer("rimeflake-test")
    for _ in range(traces):
        with tracer.start_as_current_span("request"):
            with tracer.start_as_current_span("query"):
                pass


def ids_of(spans: tuple[ReadableSpan, ...]) -> tuple[list[int], list[int]]:
    """The span IDs and the trace IDs (one per trace) of exported spans."""
    span_ids = [s.context.span_id for s in spans if s.context is not None]
    trace_ids = sorted({s.context.trace_id for s in spans if s.context is not None})
    return span_ids, trace_ids


def test_exported_spans_carry_the_generators_ids(gen: rimeflake.Generator) -> None:
    provider, exporter = traced(IdGenerator(gen))
    make_spans(provider, 100)
    spans = exporter.get_finished_spans()
    span_ids, trace_ids = ids_of(spans)
    assert len(spans) == 200 and len(set(span_ids)) == 200 and len(trace_ids) == 100
    for s in spans:
        assert s.context is not None
        assert 0 < s.context.span_id < 1 << 64
        # The span ID is an ID of the generator; so is the trace ID's high half.
        assert gen.decode(s.context.span_id).worker_id == 1
        assert gen.decode(s.context.trace_id >> 64).worker_id == 1
        assert s.context.trace_flags & TraceFlags.RANDOM_TRACE_ID
    # A child span and its parent share the trace; IDs of one thread increase.
    request, query = spans[1], spans[0]
    assert request.context is not None and query.context is not None and query.parent is not None
    assert query.parent.span_id == request.context.span_id
    assert query.context.trace_id == request.context.trace_id
    assert query.context.span_id > request.context.span_id > request.context.trace_id >> 64


def test_trace_ids_are_128_bits_with_random_low_bits(gen: rimeflake.Generator) -> None:
    ids = IdGenerator(gen)
    assert ids.is_trace_id_random()
    traces = [ids.generate_trace_id() for _ in range(4000)]
    highs = [t >> 64 for t in traces]
    lows = [t & (1 << 64) - 1 for t in traces]
    assert highs == sorted(highs) and len(set(highs)) == 4000
    assert all(0 < t < 1 << 128 for t in traces)
    # Each of the low 64 bits is set in about half the IDs: with n = 4,000 a fair bit's count
    # has a standard deviation of about 32, and 1,600 to 2,400 (12 of them) fails with a
    # probability below 2·exp(-2·400²/4000) = 2·e^-80 (Hoeffding).
    for bit in range(64):
        count = sum(low >> bit & 1 for low in lows)
        assert 1600 <= count <= 2400, (bit, count)


def test_the_traceparent_header_says_the_trace_id_is_random(gen: rimeflake.Generator) -> None:
    provider, _ = traced(IdGenerator(gen))
    carrier: dict[str, str] = {}
    with provider.get_tracer("t").start_as_current_span("request") as span:
        TraceContextTextMapPropagator().inject(carrier)
        ctx = span.get_span_context()
    version, trace_hex, span_hex, flags = carrier["traceparent"].split("-")
    assert (version, int(trace_hex, 16), int(span_hex, 16)) == ("00", ctx.trace_id, ctx.span_id)
    assert int(flags, 16) == TraceFlags.SAMPLED | TraceFlags.RANDOM_TRACE_ID


def kept_ratio(id_generator: SdkIdGenerator, ratio: float, traces: int) -> int:
    provider, exporter = traced(id_generator, sampler=TraceIdRatioBased(ratio))
    tracer = provider.get_tracer("sampled")
    for _ in range(traces):
        with tracer.start_as_current_span("root"):
            pass
    return len(exporter.get_finished_spans())


class _IdInLowBits(SdkIdGenerator):
    """What the test must catch: a trace ID whose low 64 bits are a rimeflake ID (time-ordered,
    not random)."""

    def __init__(self, gen: rimeflake.Generator) -> None:
        self.gen = gen

    def generate_span_id(self) -> int:
        return self.gen.next_id()

    def generate_trace_id(self) -> int:
        return self.gen.next_id()


# 20,000 root spans, each kept when the trace ID's low 64 bits fall below ratio·2^64. The random
# bits come from the operating system (nothing to seed), so each bound is wide enough never to
# fail in practice, and narrow enough to catch a low half that is not random:
# - 0.25 (5,000 expected, a standard deviation of 61): ±800 fails with a probability below
#   2·exp(-2·800²/20000) = 2·e^-64 (Hoeffding's inequality);
# - 0.01 (200 expected, a standard deviation of 14): ±150, a deviation of δ = 0.75 of the
#   mean, fails with a probability below 2·exp(-δ²·200/3) = 2·e^-37.5 (Chernoff's bound).
@pytest.mark.parametrize(("ratio", "bound"), [(0.25, 800), (0.01, 150)])
def test_the_ratio_sampler_keeps_about_the_ratio_asked(
    gen: rimeflake.Generator, ratio: float, bound: int
) -> None:
    n = 20_000
    kept = kept_ratio(IdGenerator(gen), ratio, n)
    assert abs(kept - ratio * n) <= bound, (ratio, kept)
    # The bound tells a time-ordered low half apart: the twitter layout's IDs of today lie
    # between 2^60 and 2^61, so the sampler keeps every trace at 0.25 and none at 0.01.
    assert abs(kept_ratio(_IdInLowBits(gen), ratio, n) - ratio * n) > bound


def test_ids_are_unique_across_threads(durable: rimeflake.Generator) -> None:
    provider, exporter = traced(IdGenerator(durable))
    threads = [threading.Thread(target=make_spans, args=(provider, 2500)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    span_ids, trace_ids = ids_of(exporter.get_finished_spans())
    assert len(span_ids) == len(set(span_ids)) == 20_000
    assert len(trace_ids) == 10_000


def in_forked_workers(
    workers: int, start: Callable[[], object], work: Callable[[], list[int]], meet: Path
) -> list[list[int]]:
    """Runs `start`, then `work`, in `workers` children forked from this process at once; their
    results. No child goes from `start` to `work` before every child is done with `start` (they
    meet in the directory `meet`): a child that took its worker ID in `start` holds it until the
    others hold theirs, so none of them can take a worker ID another has let go."""
    children = []
    for n in range(workers):
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: report through the pipe, never return into pytest
            code = 1
            try:
                os.close(read_end)
                start()
                (meet / str(n)).touch()
                deadline = time.monotonic() + 120
                while len(list(meet.iterdir())) < workers and time.monotonic() < deadline:
                    time.sleep(0.005)
                result = work()
                with os.fdopen(write_end, "w") as out:
                    out.write(" ".join(map(str, result)))
                code = 0
            finally:
                os._exit(code)
        os.close(write_end)
        children.append((pid, read_end))
    results = []
    for pid, read_end in children:
        with os.fdopen(read_end) as inp:
            text = inp.read()
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        results.append([int(x) for x in text.split()])
    return results


@needs_fork
def test_ids_are_unique_across_four_forked_workers(
    durable: rimeflake.Generator, tmp_path: Path
) -> None:
    # A pre-fork server: the tracer is set up, and used, in the parent before the fork.
    provider, exporter = traced(IdGenerator(durable))
    make_spans(provider, 10)
    parent_worker = durable.worker_id

    def worker() -> list[int]:
        exporter.clear()
        make_spans(provider, 2000)
        span_ids, trace_ids = ids_of(exporter.get_finished_spans())
        return [durable.worker_id, *span_ids, *trace_ids]

    meet = tmp_path / "meet"
    meet.mkdir()
    # Each child's worker ID is its own from its first ID, which reading it takes.
    results = in_forked_workers(4, lambda: durable.worker_id, worker, meet)
    make_spans(provider, 2000)
    results.append([parent_worker, *(x for ids in ids_of(exporter.get_finished_spans()) for x in ids)])
    workers = [r[0] for r in results]
    assert len(set(workers)) == 5, f"worker IDs {workers}: a child continued another's"
    everything = [x for r in results for x in r[1:]]
    # 5 processes x (4,000 span IDs + 2,000 trace IDs), and the parent's first 30.
    assert len(everything) == len(set(everything)) == 4 * 6000 + 6030


def test_the_default_generator_is_made_at_the_first_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RIMEFLAKE_STATE_DIR", str(tmp_path))
    monkeypatch.setenv("RIMEFLAKE_LAYOUT", "sonyflake")
    monkeypatch.setattr(rimeflake._integration, "_generator", None)
    ids = IdGenerator()
    assert rimeflake._integration._generator is None  # nothing taken before the first ID
    span = ids.generate_span_id()
    default = rimeflake._integration._generator
    assert default is not None and ids.generator is default
    assert default.layout.name == "sonyflake"
    assert default.decode(span).worker_id == default.worker_id
    assert ids.generate_span_id() > span
    default.close()


def test_a_generator_that_is_not_one_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="rimeflake.Generator, not str"):
        IdGenerator("twitter")  # type: ignore[arg-type]


def test_a_closed_generator_raises_closed_error(gen: rimeflake.Generator) -> None:
    ids = IdGenerator(gen)
    gen.close()
    with pytest.raises(rimeflake.ClosedError):
        ids.generate_span_id()
    with pytest.raises(rimeflake.ClosedError):
        ids.generate_trace_id()


def test_rimeflake_imports_without_the_integrations_libraries_which_name_the_extra() -> None:
    # In a fresh interpreter where opentelemetry, sqlalchemy and django cannot be imported.
    script = """
import sys
for name in ("opentelemetry", "sqlalchemy", "django"):
    sys.modules[name] = None
import rimeflake
assert rimeflake.Generator
for module, extra in (("otel", "otel"), ("sqlalchemy", "sqlalchemy"), ("django", "django")):
    try:
        __import__("rimeflake." + module)
    except ImportError as e:
        assert f"pip install 'rimeflake[{extra}]'" in str(e), e
    else:
        raise AssertionError(module)
print("ok")
"""
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert out.stdout.strip() == "ok", out.stderr
