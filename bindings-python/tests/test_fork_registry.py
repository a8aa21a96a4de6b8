"""Forks after ``close()``, and forks that skip the at-fork handlers never reuse
a parent's slot or lease.

Each child reports through its exit status (or a pipe) and leaves with ``os._exit``, so it never
returns into pytest.
"""

from __future__ import annotations

import ctypes
import multiprocessing as mp
import os
import platform
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import rimeflake
from rimeflake._native import _after_fork_in_child

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="uses os.fork and /proc/self/fd"
)


def _lease_fds(state_dir: Path) -> list[int]:
    """This process's descriptors open on a lock file under `state_dir`."""
    fds: list[int] = []
    for name in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{name}")
        except OSError:
            continue  # the descriptor listdir itself used
        if target.startswith(str(state_dir)) and target.endswith(".lock"):
            fds.append(int(name))
    return fds


def _child_status(child: Callable[[], int]) -> int:
    """Forks; the child runs `child()` (an int: its exit status) and `_exit`s. Returns the status."""
    pid = os.fork()
    if pid == 0:
        code = 99
        try:
            code = child()
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def test_a_descriptor_reused_after_close_stays_open_in_a_forked_child(tmp_path: Path) -> None:
    with rimeflake.Generator(state_dir=tmp_path / "state") as g:
        g.next_id()
        (lease_fd,) = _lease_fds(tmp_path / "state")
    # The application's log file takes the number the lease freed (as the next open() would).
    log = tmp_path / "app.log"
    log_fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    if log_fd != lease_fd:
        os.dup2(log_fd, lease_fd)
        os.close(log_fd)

    def child() -> int:
        try:
            os.write(lease_fd, b"child\n")
        except OSError:
            return 1  # the at-fork handler closed the application's descriptor
        return 0

    try:
        assert _child_status(child) == 0, "the fork closed the log file's descriptor in the child"
        os.write(lease_fd, b"parent\n")
    finally:
        os.close(lease_fd)
    assert sorted(log.read_text().split()) == ["child", "parent"]


def _square(x: int) -> int:
    return x * x


def test_a_fork_pool_after_a_closed_generator_does_not_hang(tmp_path: Path) -> None:
    with rimeflake.Generator(state_dir=tmp_path / "state") as g:
        g.next_ids(10)
    # The pool's pipes take the descriptor numbers the lease freed.
    with mp.get_context("fork").Pool(2) as pool:
        assert pool.map_async(_square, range(8)).get(timeout=30) == [x * x for x in range(8)]


def test_a_generator_closed_in_the_parent_stays_closed_in_a_forked_child(tmp_path: Path) -> None:
    state = tmp_path / "state"
    g = rimeflake.Generator(state_dir=state)
    g.next_id()
    g.close()
    locks_before = sorted(p.name for p in (state / "default").glob("*.lock"))

    def child() -> int:
        if not g.closed:
            return 1
        try:
            g.next_id()
        except rimeflake.ClosedError:
            return 0
        return 2  # it came back to life

    assert _child_status(child) == 0
    assert sorted(p.name for p in (state / "default").glob("*.lock")) == locks_before


def test_closed_reads_false_in_a_forked_child_before_its_first_id(tmp_path: Path) -> None:
    g = rimeflake.Generator(state_dir=tmp_path / "state")
    parent_worker = g.worker_id
    g.next_id()

    def child() -> int:
        if g.closed:
            return 1
        if "closed=True" in repr(g):
            return 2
        g.next_id()  # takes a new lease
        if g.closed or g.worker_id == parent_worker:
            return 3
        g.close()
        return 0 if g.closed else 4

    try:
        assert _child_status(child) == 0
        assert not g.closed
        g.next_id()
    finally:
        g.close()


def _raw_fork() -> int:
    """fork(2) through the system call itself: glibc's fork() and so every at-fork handler
    (pthread_atfork's, os.register_at_fork's) is skipped, as a raw `clone` in a runtime does."""
    libc = ctypes.CDLL(None, use_errno=True)
    sigchld = 17
    clone = {"x86_64": 56, "aarch64": 220}.get(platform.machine())
    if clone is None:
        pytest.skip(f"no clone system call number for {platform.machine()}")
    libc.syscall.restype = ctypes.c_long
    pid = libc.syscall(ctypes.c_long(clone), ctypes.c_long(sigchld), *([ctypes.c_long(0)] * 4))
    if pid < 0:
        raise OSError(ctypes.get_errno(), "clone")
    return int(pid)


def test_global_id_never_repeats_in_a_child_made_without_at_fork_handlers() -> None:
    n = 20_000
    rimeflake.skywalking.global_id()  # this thread has its state before the fork
    read_end, write_end = os.pipe()
    pid = _raw_fork()
    if pid == 0:
        code = 1
        try:
            text = "\n".join(rimeflake.skywalking.global_id() for _ in range(n))
            data = text.encode()
            while data:
                data = data[os.write(write_end, data) :]
            code = 0
        finally:
            os._exit(code)
    os.close(write_end)
    parent = [rimeflake.skywalking.global_id() for _ in range(n)]
    chunks: list[bytes] = []
    while chunk := os.read(read_end, 1 << 16):
        chunks.append(chunk)
    os.close(read_end)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    child = b"".join(chunks).decode().split("\n")
    assert len(child) == n
    repeated = set(parent) & set(child)
    assert not repeated, f"{len(repeated)} IDs of the parent repeated in the child"
    assert child[0].split(".")[0] != parent[0].split(".")[0]


def test_after_fork_in_child_does_nothing_in_the_process_that_made_the_generator(
    tmp_path: Path,
) -> None:
    # In a child of its own, which makes the generator itself: a failure there (the core closing
    # a live lease descriptor) cannot take pytest down with it.
    def child() -> int:
        g = rimeflake.Generator(state_dir=tmp_path / "state", max_wait_ms=300)
        before = g.next_id()
        _after_fork_in_child()  # what os.register_at_fork calls, here in no child
        try:
            if g.next_id() <= before:
                return 1
        except rimeflake.RimeflakeError:
            return 2  # the generator was shut
        try:
            rival = rimeflake.Generator(g.worker_id, state_dir=tmp_path / "state")
        except rimeflake.LeaseError:
            pass
        else:
            rival.close()
            return 3  # the lease was freed: two generators on one worker ID
        g.close()
        return 0

    assert _child_status(child) == 0
