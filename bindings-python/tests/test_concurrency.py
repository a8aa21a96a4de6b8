"""Threads and processes: IDs never collide."""

from __future__ import annotations

import multiprocessing as mp
import os
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

import rimeflake
from rimeflake.skywalking import global_id, process_id

from .conftest import embedded_or_skip


def test_eight_threads_share_one_generator() -> None:
    gen = rimeflake.Generator(3, layout="twitter", backend="memory")
    per_thread = 200_000
    results: list[list[int]] = [[] for _ in range(8)]
    start = threading.Barrier(8)

    def work(slot: list[int]) -> None:
        start.wait()
        next_id = gen.next_id
        slot.extend(next_id() for _ in range(per_thread))

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=work, args=(r,)) for r in results]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    every = [i for r in results for i in r]
    assert len(every) == 8 * per_thread
    assert len(set(every)) == len(every)
    for r in results:
        assert all(a < b for a, b in zip(r, r[1:]))
    assert gen.stats()["ids_issued"] == 8 * per_thread


def _child_ids(gen: rimeflake.Generator, n: int) -> list[int] | str:
    """The inherited generator's IDs in a child, or the name of the error it refused with."""
    try:
        return gen.next_ids(n // 2) + [gen.next_id() for _ in range(n // 2)]
    except rimeflake.RimeflakeError as e:
        return type(e).__name__


def _check_child(parent: list[int], child: list[int] | str) -> None:
    # The design lets a child with a fixed worker ID refuse; if it gives IDs, none may collide.
    if isinstance(child, str):
        assert child in ("ClosedError", "LeaseError")
    else:
        assert not set(parent) & set(child)


needs_fork = pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork on this platform")


@needs_fork
def test_os_fork_child_never_repeats_the_parent() -> None:
    gen = rimeflake.Generator(4, layout="twitter", backend="memory")
    gen.next_ids(10)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report through the pipe, never return into pytest
        code = 1
        try:
            child = _child_ids(gen, 20_000)
            with os.fdopen(write_end, "w") as out:
                out.write(child if isinstance(child, str) else " ".join(map(str, child)))
            code = 0
        finally:
            os._exit(code)
    os.close(write_end)
    parent = [gen.next_id() for _ in range(20_000)]
    with os.fdopen(read_end) as inp:
        text = inp.read()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    child: list[int] | str = text if text.isalpha() else [int(x) for x in text.split()]
    _check_child(parent, child)


def _mp_child(q: mp.Queue[object], gen: rimeflake.Generator | None) -> None:
    if gen is None:  # spawn: a fresh process, its own generator with its own worker ID
        gen = rimeflake.Generator(6, layout="twitter", backend="memory")
    q.put(_child_ids(gen, 20_000))
    q.put(global_id())


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_multiprocessing_children_never_repeat_the_parent(method: str) -> None:
    if method not in mp.get_all_start_methods():
        pytest.skip(f"no {method} start method here")
    ctx = mp.get_context(method)
    gen = rimeflake.Generator(5, layout="twitter", backend="memory")
    gen.next_id()
    q: mp.Queue[object] = ctx.Queue()
    proc = ctx.Process(target=_mp_child, args=(q, gen if method == "fork" else None))
    proc.start()
    parent = [gen.next_id() for _ in range(20_000)]
    child = q.get(timeout=60)
    child_trace = q.get(timeout=60)
    proc.join(60)
    assert proc.exitcode == 0
    _check_child(parent, child)  # type: ignore[arg-type]
    assert isinstance(child_trace, str)
    assert child_trace.split(".")[0] != process_id()


def test_global_id_is_unique_across_threads() -> None:
    results: list[list[str]] = [[] for _ in range(8)]

    def work(slot: list[str]) -> None:
        slot.extend(global_id() for _ in range(25_000))

    threads = [threading.Thread(target=work, args=(r,)) for r in results]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    every = [i for r in results for i in r]
    assert len(set(every)) == len(every) == 200_000
    assert len({r[0].split(".")[1] for r in results}) == 8  # a token per thread
    # More than 10,000 in one millisecond on one thread never wrap: the third part increases.
    for r in results:
        thirds = [int(x.rsplit(".", 1)[1]) for x in r]
        assert all(a < b for a, b in zip(thirds, thirds[1:]))


@needs_fork
def test_global_id_is_fresh_after_fork() -> None:
    before = [global_id() for _ in range(1000)]
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            with os.fdopen(write_end, "w") as out:
                out.write("\n".join([process_id()] + [global_id() for _ in range(1000)]))
            code = 0
        finally:
            os._exit(code)
    os.close(write_end)
    after = [global_id() for _ in range(1000)]
    with os.fdopen(read_end) as inp:
        lines = inp.read().split("\n")
    os.waitpid(pid, 0)
    child_process, child = lines[0], lines[1:]
    assert child_process != process_id()
    assert all(c.startswith(child_process + ".") for c in child)
    assert not set(child) & set(before + after)
    assert len(set(before + after)) == 2000


def _embedded_worker(state_dir: str, q: mp.Queue[object], done: Any) -> None:
    try:
        with rimeflake.Generator(state_dir=state_dir, layout="twitter") as gen:
            q.put((gen.worker_id, gen.next_ids(1000)))
            done.wait(60)  # hold the lease until every process has taken one
    except Exception as e:  # noqa: BLE001 - reported to the parent
        q.put((repr(e), []))


def test_eight_processes_on_the_embedded_default_get_distinct_workers(tmp_path: Path) -> None:
    embedded_or_skip(state_dir=str(tmp_path / "probe"), layout="twitter").close()
    ctx = mp.get_context("spawn")
    q: mp.Queue[object] = ctx.Queue()
    done = ctx.Event()
    procs = [
        ctx.Process(target=_embedded_worker, args=(str(tmp_path / "state"), q, done))  # type: ignore[attr-defined]
        for _ in range(8)
    ]
    for p in procs:
        p.start()
    try:
        got = [q.get(timeout=120) for _ in procs]
    finally:
        done.set()
    for p in procs:
        p.join(60)
    workers = [w for w, _ in got]  # type: ignore[misc]
    assert all(isinstance(w, int) for w in workers), workers
    assert len(set(workers)) == 8
    ids = [i for _, batch in got for i in batch]  # type: ignore[misc]
    assert len(set(ids)) == len(ids) == 8000


@needs_fork
def test_a_forked_child_on_the_embedded_default_takes_its_own_worker(tmp_path: Path) -> None:
    gen = embedded_or_skip(state_dir=str(tmp_path), layout="twitter")
    gen.next_ids(10)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            child = _child_ids(gen, 20_000)
            worker = gen.decode(child[0]).worker_id if isinstance(child, list) else -1
            with os.fdopen(write_end, "w") as out:
                out.write(child if isinstance(child, str) else " ".join(map(str, [worker, *child])))
            code = 0
        finally:
            os._exit(code)
    os.close(write_end)
    parent = [gen.next_id() for _ in range(20_000)]
    with os.fdopen(read_end) as inp:
        text = inp.read()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    if text.isalpha():  # the core refused in the child: allowed, never a duplicate
        assert text in ("ClosedError", "LeaseError"), text
        return
    worker, *child = (int(x) for x in text.split())
    assert worker != gen.worker_id, "the child continued under the parent's worker ID"
    assert not set(parent) & set(child)
    gen.close()
