"""rimeflake beside other Python ID generators, in one run (method: shared/peers/METHOD.md).

Each row is timed as timeit does (`for _ in itertools.repeat(None, n): f()`, gc off) in loops of
at most 100,000 calls with a pause between loops, so that a capped generator (4,096 IDs per ms
for the twitter layout) is measured below its cap; the figure is the median loop, per call, or
per ID for the batch rows. Ratios hold better than absolute figures on a shared VM.

    python bench/python/bench.py            # prints the table and updates bench/RESULTS.md
    python bench/python/bench.py --no-write # prints only

Run it with a release build of the extension (`make bench-python` builds the wheel).
"""

from __future__ import annotations

import argparse
import array
import gc
import itertools
import platform
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import rimeflake
from rimeflake.tracing import global_id

MAX_CALLS = 100_000
LOOPS = 9
PAUSE_S = 0.03
RESULTS = Path(__file__).resolve().parents[1] / "RESULTS.md"
BEGIN, END = "<!-- python:begin -->", "<!-- python:end -->"


def per_call_ns(f: Callable[[], Any], per: int = 1, budget_s: float = 0.05) -> float:
    """Median over LOOPS timed loops of ns per item (`per` items per call)."""
    for _ in range(1000):  # warm up
        f()
    t0 = time.perf_counter_ns()
    for _ in range(200):
        f()
    guess = max((time.perf_counter_ns() - t0) / 200, 1.0)
    n = int(min(MAX_CALLS // per, max(20, budget_s * 1e9 / guess)))
    samples = []
    gc_was = gc.isenabled()
    gc.disable()
    try:
        for _ in range(LOOPS):
            time.sleep(PAUSE_S)
            rep = itertools.repeat(None, n)
            t0 = time.perf_counter_ns()
            for _ in rep:
                f()
            samples.append((time.perf_counter_ns() - t0) / (n * per))
    finally:
        if gc_was:
            gc.enable()
    return statistics.median(samples)


def version(dist: str) -> str:
    try:
        from importlib.metadata import version as v

        return v(dist)
    except Exception:  # noqa: BLE001 - a missing peer is shown as such
        return "-"


def rows() -> list[tuple[str, str, float, str]]:
    """(what, version, ns per ID, note) for every generator that is installed."""
    out: list[tuple[str, str, float, str]] = []
    rv = rimeflake.__version__

    def empty() -> None:
        pass

    out.append(("floor: empty Python function call", "-", per_call_ns(empty), ""))
    out.append(("floor: time.time_ns()", "-", per_call_ns(time.time_ns), ""))
    out.append(("floor: itertools.count().__next__", "-", per_call_ns(itertools.count().__next__), "the reference for ratios"))

    gen = rimeflake.Generator(1, layout="twitter", backend="memory")
    out.append(("rimeflake Generator.next_id() (twitter, memory)", rv, per_call_ns(gen.next_id), ""))
    buf = array.array("Q", bytes(8 * 4096))
    out.append(("rimeflake Generator.fill(array('Q', 4096))", rv, per_call_ns(lambda: gen.fill(buf), per=4096), "per ID, in place"))
    np: Any
    try:
        import numpy as np
    except ImportError:
        np = None
    if np is not None:
        arr = np.zeros(4096, dtype=np.uint64)
        out.append(("rimeflake Generator.fill(numpy uint64 4096)", rv, per_call_ns(lambda: gen.fill(arr), per=4096), "per ID, in place"))
    out.append(("rimeflake Generator.next_ids(4096)", rv, per_call_ns(lambda: gen.next_ids(4096), per=4096), "per ID, list of int"))
    gen.close()
    gen_default = rimeflake.Generator(1, layout="default", backend="memory")
    out.append(("rimeflake Generator.next_id() (default layout, memory)", rv, per_call_ns(gen_default.next_id), "512 IDs/ms, borrows ahead"))
    gen_default.close()
    out.append(("rimeflake.tracing.global_id()", rv, per_call_ns(global_id), "SkyWalking format, str"))

    try:
        import uuid_utils

        out.append(("uuid-utils uuid7()", version("uuid-utils"), per_call_ns(uuid_utils.uuid7), "returns uuid_utils.UUID"))
        out.append(("uuid-utils uuid4()", version("uuid-utils"), per_call_ns(uuid_utils.uuid4), "returns uuid_utils.UUID"))
    except ImportError:
        pass
    try:
        from sonyflake_turbo import SonyFlake

        sf = SonyFlake(*range(1024))
        out.append(("sonyflake-turbo next(SonyFlake), 1024 machine ids", version("sonyflake-turbo"), per_call_ns(sf.__next__), "C ext, internal lock"))
        sf_batch = SonyFlake(*range(4096))
        out.append(("sonyflake-turbo SonyFlake(1000) batch, 4096 machine ids", version("sonyflake-turbo"), per_call_ns(lambda: sf_batch(1000), per=1000), "per ID, list of int"))
    except ImportError:
        pass
    try:
        from snowflake import SnowflakeGenerator

        sg = SnowflakeGenerator(42)
        out.append(("snowflake-id next(SnowflakeGenerator)", version("snowflake-id"), per_call_ns(sg.__next__), "pure Python, no lock"))
    except ImportError:
        pass
    try:
        from ulid import ULID

        out.append(("python-ulid ULID()", version("python-ulid"), per_call_ns(ULID), "pure Python"))
    except ImportError:
        pass
    out.append(("stdlib uuid.uuid4()", platform.python_version(), per_call_ns(uuid.uuid4), ""))
    out.append(("stdlib uuid.uuid1()", platform.python_version(), per_call_ns(uuid.uuid1), ""))
    out.append((
        "str(uuid.uuid1()).replace('-', '')",
        platform.python_version(),
        per_call_ns(lambda: str(uuid.uuid1()).replace("-", "")),
        "what global_id() replaces",
    ))
    return out


def table(results: list[tuple[str, str, float, str]]) -> str:
    by = {name: ns for name, _, ns, _ in results}
    floor = by["floor: itertools.count().__next__"]
    lines = [
        "| generator | version | ns/ID | × itertools floor | notes |",
        "|---|---|---:|---:|---|",
    ]
    for name, ver, ns, note in results:
        lines.append(f"| {name} | {ver} | {ns:,.1f} | {ns / floor:.2f} | {note} |")
    nid = by["rimeflake Generator.next_id() (twitter, memory)"]
    targets = [
        ("next_id() ≤ 2× itertools.count().__next__", nid / floor, "≤ 2", nid / floor <= 2),
        ("fill(4096) ns/ID ≤ 3", by["rimeflake Generator.fill(array('Q', 4096))"], "≤ 3", by["rimeflake Generator.fill(array('Q', 4096))"] <= 3),
    ]
    if "uuid-utils uuid7()" in by:
        r = by["uuid-utils uuid7()"] / nid
        targets.append(("uuid_utils.uuid7() / next_id()", r, "≥ 1.8", r >= 1.8))
    key = "sonyflake-turbo next(SonyFlake), 1024 machine ids"
    if key in by:
        r = by[key] / nid
        targets.append(("sonyflake-turbo single / next_id()", r, "≥ 1.6", r >= 1.6))
    r = by["str(uuid.uuid1()).replace('-', '')"] / by["rimeflake.tracing.global_id()"]
    targets.append(("str(uuid1()).replace / global_id()", r, "≥ 20", r >= 20))
    lines += ["", "| target | measured | wanted | met |", "|---|---:|---|---|"]
    for what, value, want, ok in targets:
        lines.append(f"| {what} | {value:.2f} | {want} | {'yes' if ok else 'NO'} |")
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
    args = ap.parse_args()
    results = rows()
    body = table(results)
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    text = (
        f"## Python ({when})\n\n"
        f"CPython {platform.python_version()} on {platform.machine()}, {sys.platform}; one run of "
        f"`make bench-python` (bench/python/bench.py): median of {LOOPS} loops of at most "
        f"{MAX_CALLS:,} IDs, {int(PAUSE_S * 1000)} ms pause between loops, gc off; rimeflake built "
        f"in release mode.\n\n{body}\n"
    )
    print(text)
    if not args.no_write:
        write_section(text)
        print(f"updated {RESULTS}")


if __name__ == "__main__":
    main()
