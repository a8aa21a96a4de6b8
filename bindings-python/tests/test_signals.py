"""A wait releases the interpreter and honours signals: Ctrl-C interrupts it."""

from __future__ import annotations

import signal
import threading
from types import FrameType

import pytest

import rimeflake

from .conftest import ticking

pytestmark = pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="no setitimer here")


def _interrupt(_signum: int, _frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def _overloaded() -> rimeflake.Generator:
    # No lead over the clock at all: every 4,096 IDs wait for the next millisecond, so a batch
    # of 4,096 x 5,000 IDs needs five seconds of clock time.
    return rimeflake.Generator(1, layout="twitter", backend="memory", max_drift_ms=0, max_wait_ms=60_000)


def test_ctrl_c_interrupts_a_waiting_batch() -> None:
    gen = _overloaded()
    want = 4096 * 5000
    old = signal.signal(signal.SIGALRM, _interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.2)
        with pytest.raises(KeyboardInterrupt):
            gen.next_ids(want)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    issued = gen.stats()["ids_issued"]
    assert 0 < issued < want, issued  # stopped part-way, at the signal
    # Not `waits > 0`: a wait counts once it has slept, and on a loaded machine (a debug build
    # issuing fewer than 4,096 IDs a millisecond) the signal can stop the first wait before that.
    gen.next_id()  # and the generator still works


def test_a_wait_lets_other_threads_run() -> None:
    gen = _overloaded()
    want = 4096 * 300  # about 0.3 s of waiting for the clock
    seen: list[int] = []
    t = threading.Timer(0.05, lambda: seen.append(gen.stats()["ids_issued"]))
    t.start()
    gen.next_ids(want)
    t.join()
    # The other thread ran while the batch was still waiting: the interpreter was released.
    assert seen and 0 < seen[0] < want, seen


def test_an_unclosed_generator_collected_lets_other_threads_run() -> None:
    import time

    # 4 IDs per millisecond: 4,000 IDs run a second ahead of the clock, and close waits that out.
    gen = rimeflake.Generator(1, layout="twitter,time=51,sequence=2", backend="memory",
                              max_wait_ms=5_000)
    gen.next_ids(4 * 1000)
    with ticking() as ticks:
        time.sleep(0.05)
        start = time.monotonic()
        del gen  # the last reference: collected here, unclosed
        end = time.monotonic()
    assert end - start > 0.3, end - start  # the close did wait for the clock
    # The other thread ran while it waited: the interpreter was released.
    assert [x for x in ticks if start + 0.1 < x < end - 0.1], (start, end, ticks[-5:])


def test_ctrl_c_interrupts_a_start_up_on_a_server_that_never_answers() -> None:
    import socket
    import time

    # Accepts connections (the kernel's backlog does), never answers: each server call waits
    # out its timeout, 2 s with a 60 s lease TTL.
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(16)
    url = f"redis://127.0.0.1:{silent.getsockname()[1]}/0"
    old = signal.signal(signal.SIGALRM, _interrupt)
    start = time.monotonic()
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.2)
        with pytest.raises(KeyboardInterrupt):
            rimeflake.Generator(backend=url, namespace="py-ctrl-c", lease_ttl_ms=60_000)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        silent.close()
    took = time.monotonic() - start
    assert took < 1.0, took
