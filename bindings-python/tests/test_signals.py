"""A wait releases the interpreter and honours signals: Ctrl-C interrupts it."""

from __future__ import annotations

import signal
import threading
from types import FrameType

import pytest

import rimeflake

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
    assert gen.stats()["waits"] > 0
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
