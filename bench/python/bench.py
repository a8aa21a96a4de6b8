"""rimeflake beside other Python ID generators, in one run (method: bench/METHOD.md).

Each row is timed as timeit does (`for _ in itertools.repeat(None, n): f()`, gc off) in loops of
at most 100,000 calls with a pause before each loop, so that a capped generator (4,096 IDs per
ms for the twitter layout) is measured below its cap. Rows take turns, one loop each per round,
so load on a shared machine falls on all of them alike. Figures are the median and the best
loop, per call (per ID for the batch rows); ratios hold better than absolute figures.

    python bench/python/bench.py                  # prints the table and updates bench/RESULTS.md
    python bench/python/bench.py --no-write       # prints only
    python bench/python/bench.py --rimeflake-only # rimeflake's rows and the floors only, printed
                                                  # as JSON (wall and CPU ns/ID), for bench/turns/run.sh

Run it with a release build of the extension (`make bench-python` builds the wheel).
"""

from __future__ import annotations

import argparse
import array
import gc
import itertools
import json
import os
import platform
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import rimeflake
from rimeflake.skywalking import global_id

MAX_CALLS = 100_000
LOOPS = 9
PAUSE_S = 0.03
BUDGET_S = 0.05
RESULTS = Path(__file__).resolve().parents[1] / "RESULTS.md"
BEGIN, END = "<!-- python:begin -->", "<!-- python:end -->"


class Row:
    """One generator under test: how to call it, and its timed loops. `setup` and `teardown`
    run around each loop, untimed (they switch a patch on and off, so that rows measuring the
    same class with and without it can take turns)."""

    def __init__(
        self,
        name: str,
        ver: str,
        f: Callable[[], Any],
        per: int,
        note: str,
        setup: Callable[[], Any] = lambda: None,
        teardown: Callable[[], Any] = lambda: None,
    ) -> None:
        self.name, self.ver, self.f, self.per, self.note = name, ver, f, per, note
        self.setup, self.teardown = setup, teardown
        setup()
        try:
            for _ in range(1000):  # warm up
                f()
            t0 = time.perf_counter_ns()
            for _ in range(200):
                f()
            guess = max((time.perf_counter_ns() - t0) / 200, 1.0)
        finally:
            teardown()
        self.n = int(min(MAX_CALLS // per, max(20, BUDGET_S * 1e9 / guess)))
        self.samples: list[float] = []
        self.cpu: list[float] = []  # the thread's CPU time, per ID, of the same loops

    def loop(self) -> None:
        f, rep = self.f, itertools.repeat(None, self.n)
        self.setup()
        try:
            c0 = time.thread_time_ns()
            t0 = time.perf_counter_ns()
            for _ in rep:
                f()
            t1 = time.perf_counter_ns()
            c1 = time.thread_time_ns()
            self.samples.append((t1 - t0) / (self.n * self.per))
            self.cpu.append((c1 - c0) / (self.n * self.per))
        finally:
            self.teardown()


def measure(rows: list[Row]) -> None:
    """LOOPS rounds; each round times one loop of every row, so a burst of load on the machine
    hits all rows alike instead of a few (ratios are what the targets are about)."""
    gc_was = gc.isenabled()
    gc.disable()
    try:
        for _ in range(LOOPS):
            for row in rows:
                time.sleep(PAUSE_S)
                row.loop()
    finally:
        if gc_was:
            gc.enable()


def version(dist: str) -> str:
    try:
        from importlib.metadata import version as v

        return v(dist)
    except Exception:  # noqa: BLE001 - a missing peer is shown as such
        return "-"


def rows(only_rimeflake: bool = False) -> list[Row]:
    """Every generator that is installed, measured; with only_rimeflake, rimeflake's rows and
    the floors only."""
    out: list[Row] = []
    rv = rimeflake.__version__

    def empty() -> None:
        pass

    out.append(_row("floor: empty Python function call", "-", _call(empty), ""))
    out.append(_row("floor: time.time_ns()", "-", _call(time.time_ns), ""))
    out.append(_row("floor: itertools.count().__next__", "-", _call(itertools.count().__next__), "the reference for ratios"))

    gen = rimeflake.Generator(1, layout="twitter", backend="memory")
    out.append(_row("rimeflake Generator.next_id() (twitter, memory)", rv, _call(gen.next_id), ""))
    buf = array.array("Q", bytes(8 * 4096))
    out.append(_row("rimeflake Generator.fill(array('Q', 4096))", rv, _call(lambda: gen.fill(buf), per=4096), "per ID, in place"))
    np: Any
    try:
        import numpy as np
    except ImportError:
        np = None
    if np is not None:
        arr = np.zeros(4096, dtype=np.uint64)
        out.append(_row("rimeflake Generator.fill(numpy uint64 4096)", rv, _call(lambda: gen.fill(arr), per=4096), "per ID, in place"))
    out.append(_row("rimeflake Generator.next_ids(4096)", rv, _call(lambda: gen.next_ids(4096), per=4096), "per ID, list of int"))
    gen_default = rimeflake.Generator(1, layout="default", backend="memory")
    out.append(_row("rimeflake Generator.next_id() (default layout, memory)", rv, _call(gen_default.next_id), "512 IDs/ms, borrows ahead"))
    out.append(_row("rimeflake.skywalking.global_id()", rv, _call(global_id), "SkyWalking format, str"))
    out += skywalking_rows(rv)
    out += otel_rows(rv)

    try:
        import uuid_utils

        out.append(_row("uuid-utils uuid7()", version("uuid-utils"), _call(uuid_utils.uuid7), "returns uuid_utils.UUID"))
        out.append(_row("uuid-utils uuid4()", version("uuid-utils"), _call(uuid_utils.uuid4), "returns uuid_utils.UUID"))
    except ImportError:
        pass
    try:
        from sonyflake_turbo import SonyFlake

        sf = SonyFlake(*range(1024))
        out.append(_row("sonyflake-turbo next(SonyFlake), 1024 machine ids", version("sonyflake-turbo"), _call(sf.__next__), "C ext, internal lock"))
        sf_batch = SonyFlake(*range(4096))
        out.append(_row("sonyflake-turbo SonyFlake(1000) batch, 4096 machine ids", version("sonyflake-turbo"), _call(lambda: sf_batch(1000), per=1000), "per ID, list of int"))
    except ImportError:
        pass
    try:
        from snowflake import SnowflakeGenerator

        sg = SnowflakeGenerator(42)
        out.append(_row("snowflake-id next(SnowflakeGenerator)", version("snowflake-id"), _call(sg.__next__), "pure Python, no lock"))
    except ImportError:
        pass
    try:
        from ulid import ULID

        out.append(_row("python-ulid ULID()", version("python-ulid"), _call(ULID), "pure Python"))
    except ImportError:
        pass
    out.append(_row("stdlib uuid.uuid4()", platform.python_version(), _call(uuid.uuid4), ""))
    out.append(_row("stdlib uuid.uuid1()", platform.python_version(), _call(uuid.uuid1), ""))
    out.append(_row(
        "str(uuid.uuid1()).replace('-', '')",
        platform.python_version(),
        _call(lambda: str(uuid.uuid1()).replace("-", "")),
        "what global_id() replaces",
    ))
    if only_rimeflake:
        out = [r for r in out if r.name.startswith("floor:") or rv in r.ver.split(" + ")]
    measure(out)
    return out


SW_FLOOR = "floor: C() for a class whose __init__ stores one attribute"
SW_AGENT = "apache-skywalking ID() (the agent's own: uuid1)"
SW_PATCHED = "apache-skywalking ID() after rimeflake.skywalking.install_skywalking()"
SW_LAMBDA = "apache-skywalking ID() patched with a setattr lambda"


def skywalking_rows(rv: str) -> list[Row]:
    """The SkyWalking agent's `ID()`, as its spans make them, with and without the patch; the
    same class in turns (the patch is switched on and off around each loop, untimed)."""
    try:
        from skywalking.trace import ID
    except ImportError:
        return []
    from rimeflake.skywalking import install_skywalking

    sw = version("apache-skywalking")
    agent_init = ID.__init__

    class C:  # the shape of the agent's ID: what `ID()` costs before any ID is made
        def __init__(self, raw_id: Any = None) -> None:
            self.value = raw_id or "x"

    def lambda_on() -> None:
        ID.__init__ = lambda self, raw_id=None: setattr(self, "value", raw_id or global_id())

    def lambda_off() -> None:
        ID.__init__ = agent_init

    return [
        Row(SW_FLOOR, "-", C, 1, "CPython's own cost of ID() around the ID"),
        Row(SW_AGENT, sw, ID, 1, "str(uuid.uuid1()).replace('-', '')"),
        Row(SW_PATCHED, f"{sw} + {rv}", ID, 1, "global_id() in a plain __init__",
            setup=install_skywalking, teardown=lambda: install_skywalking().uninstall()),
        Row(SW_LAMBDA, f"{sw} + {rv}", ID, 1, "a one-line monkeypatch, for comparison",
            setup=lambda_on, teardown=lambda_off),
    ]


OTEL_SPAN = "rimeflake.otel.IdGenerator().generate_span_id()"
OTEL_TRACE = "rimeflake.otel.IdGenerator().generate_trace_id()"
SDK_SPAN = "opentelemetry-sdk RandomIdGenerator().generate_span_id()"
SDK_TRACE = "opentelemetry-sdk RandomIdGenerator().generate_trace_id()"
OTEL_ROOT = "a root span (start, end) with rimeflake.otel.IdGenerator"
SDK_ROOT = "a root span (start, end) with the SDK's RandomIdGenerator"


def otel_rows(rv: str) -> list[Row]:
    """OpenTelemetry's ID generator: rimeflake's beside the SDK's default, per ID and per root
    span (a TracerProvider with no span processor: what the IDs add to starting a span)."""
    try:
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.id_generator import RandomIdGenerator
    except ImportError:
        return []
    try:
        from rimeflake.otel import IdGenerator
    except ImportError:  # a build before rimeflake.otel (make bench-python BEFORE=<commit>)
        return []

    ov = version("opentelemetry-sdk")
    ours = IdGenerator(rimeflake.Generator(2, layout="twitter", backend="memory"))
    sdk = RandomIdGenerator()

    def root_span(ids: Any) -> Callable[[], None]:
        tracer = TracerProvider(id_generator=ids).get_tracer("bench")

        def span() -> None:
            tracer.start_span("root").end()

        return span

    return [
        Row(OTEL_SPAN, f"{rv} + {ov}", ours.generate_span_id, 1, "a rimeflake ID"),
        Row(SDK_SPAN, ov, sdk.generate_span_id, 1, "random.getrandbits(64)"),
        Row(OTEL_TRACE, f"{rv} + {ov}", ours.generate_trace_id, 1, "an ID, then 64 bits of getrandom(2)"),
        Row(SDK_TRACE, ov, sdk.generate_trace_id, 1, "random.getrandbits(128)"),
        Row(OTEL_ROOT, f"{rv} + {ov}", root_span(ours), 1, "one trace ID and one span ID"),
        Row(SDK_ROOT, ov, root_span(sdk), 1, ""),
    ]


def _call(f: Callable[[], Any], per: int = 1) -> tuple[Callable[[], Any], int]:
    return f, per


def _row(name: str, ver: str, call: tuple[Callable[[], Any], int], note: str) -> Row:
    return Row(name, ver, call[0], call[1], note)


def table(results: list[tuple[str, str, tuple[float, float], str]]) -> str:
    med = {name: ns[0] for name, _, ns, _ in results}
    best = {name: ns[1] for name, _, ns, _ in results}
    floor = "floor: itertools.count().__next__"
    lines = [
        "| generator | version | ns/ID (median) | ns/ID (best loop) | × floor (median) | notes |",
        "|---|---|---:|---:|---:|---|",
    ]
    for name, ver, (m, b), note in results:
        lines.append(f"| {name} | {ver} | {m:,.1f} | {b:,.1f} | {m / med[floor]:.2f} | {note} |")
    nid = "rimeflake Generator.next_id() (twitter, memory)"
    fill = "rimeflake Generator.fill(array('Q', 4096))"
    checks: list[tuple[str, Callable[[dict[str, float]], float], str, Callable[[float], bool]]] = [
        ("next_id() / itertools.count().__next__", lambda d: d[nid] / d[floor], "≤ 2", lambda r: r <= 2),
        ("fill(4096) ns per ID", lambda d: d[fill], "≤ 3", lambda r: r <= 3),
    ]
    if "uuid-utils uuid7()" in med:
        checks.append(("uuid_utils.uuid7() / next_id()", lambda d: d["uuid-utils uuid7()"] / d[nid], "≥ 1.8", lambda r: r >= 1.8))
    sony = "sonyflake-turbo next(SonyFlake), 1024 machine ids"
    if sony in med:
        checks.append(("sonyflake-turbo single / next_id()", lambda d: d[sony] / d[nid], "≥ 1.6", lambda r: r >= 1.6))
    uuid1s = "str(uuid.uuid1()).replace('-', '')"
    gid = "rimeflake.skywalking.global_id()"
    checks.append(("str(uuid1()).replace / global_id()", lambda d: d[uuid1s] / d[gid], "≥ 20", lambda r: r >= 20))
    if SW_PATCHED in med:
        checks += [
            ("SkyWalking ID(): agent's own / patched", lambda d: d[SW_AGENT] / d[SW_PATCHED], "≥ 20", lambda r: r >= 20),
            (
                "SkyWalking ID(): patched / (class floor + global_id())",
                lambda d: d[SW_PATCHED] / (d[SW_FLOOR] + d[gid]),
                "≤ 1.1",
                lambda r: r <= 1.1,
            ),
            ("SkyWalking ID(): setattr lambda / patched", lambda d: d[SW_LAMBDA] / d[SW_PATCHED], "> 1", lambda r: r > 1),
        ]
    lines += [
        "",
        "| target | medians | met | best loops | met | wanted |",
        "|---|---:|---|---:|---|---|",
    ]
    for what, value, want, ok in checks:
        vm, vb = value(med), value(best)
        lines.append(
            f"| {what} | {vm:.2f} | {'yes' if ok(vm) else 'NO'} | {vb:.2f} | {'yes' if ok(vb) else 'NO'} | {want} |"
        )
    return "\n".join(lines)


def write_section(text: str) -> None:
    section = f"{BEGIN}\n{text}\n{END}"
    old = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n"
    if BEGIN in old and END in old:
        head, rest = old.split(BEGIN, 1)
        new = head + section + rest.split(END, 1)[1]
    else:
        new = old.rstrip("\n") + "\n\n" + section + "\n"
    RESULTS.write_text(new)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-write", action="store_true", help="print only; leave bench/RESULTS.md alone")
    ap.add_argument(
        "--rimeflake-only",
        action="store_true",
        help="rimeflake's rows and the floors only, printed as JSON (median wall and CPU ns per ID); writes nothing",
    )
    args = ap.parse_args()
    if args.rimeflake_only:
        only = rows(only_rimeflake=True)
        print(json.dumps({r.name: {"wall": statistics.median(r.samples), "cpu": statistics.median(r.cpu)} for r in only}))
        return
    load = " ".join(f"{x:.1f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "-"
    results = [(r.name, r.ver, (statistics.median(r.samples), min(r.samples)), r.note) for r in rows()]
    body = table(results)
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    text = (
        f"## Python ({when})\n\n"
        f"CPython {platform.python_version()} on {platform.machine()}, {sys.platform}; one run of "
        f"`make bench-python` (bench/python/bench.py): median and best of {LOOPS} loops of at most "
        f"{MAX_CALLS:,} IDs, {int(PAUSE_S * 1000)} ms pause between loops, gc off; rimeflake built "
        f"in release mode. Load average at the start: {load}.\n\n{body}\n"
    )
    print(text)
    if not args.no_write:
        write_section(text)
        print(f"updated {RESULTS}")


if __name__ == "__main__":
    main()
