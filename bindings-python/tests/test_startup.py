"""Starting a generator may wait (for the clock to reach the stored reservation, up to
max_wait): the wait releases the interpreter and Ctrl-C gets through."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import rimeflake

from .conftest import ticking

# One ID per time unit (1 sequence bit), so a burst of IDs runs the counter far ahead of the
# clock; the generator lends up to max_drift ahead.
LAYOUT = rimeflake.Layout(clock_id_bits=0, time_bits=41, worker_bits=21, sequence_bits=1)
AHEAD_MS = 20_000


def reservation_ahead(state_dir: Path) -> None:
    """Leaves worker 1's state with its last ID about 20 s ahead of the clock: a restart with
    max_drift_ms=0 must wait for the clock (the layout has no clock-id to switch to)."""
    with rimeflake.Generator(1, layout=LAYOUT, state_dir=state_dir, max_drift_ms=60_000) as g:
        last = g.next_ids(2 * AHEAD_MS)[-1]
    assert LAYOUT.decode(last).timestamp_ms > time.time() * 1000 + AHEAD_MS / 2


def start(state_dir: Path, max_wait_ms: int) -> rimeflake.Generator:
    return rimeflake.Generator(
        1, layout=LAYOUT, state_dir=state_dir, max_drift_ms=0, max_wait_ms=max_wait_ms
    )


def test_a_start_up_wait_lets_other_threads_run(tmp_path: Path) -> None:
    reservation_ahead(tmp_path)
    with ticking() as ticks:
        began = time.monotonic()
        try:
            with pytest.raises(rimeflake.ClockRollbackError, match="at start-up"):
                start(tmp_path, max_wait_ms=1500)
        finally:
            ended = time.monotonic()
    assert ended - began >= 1.4  # it did wait
    during = [x for x in ticks if began + 0.2 < x < ended - 0.2]
    # The other thread kept ticking all through the wait (held, it would not tick at all).
    assert len(during) > 20, (len(during), ended - began)


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="no setitimer here")
def test_a_signal_interrupts_a_start_up_wait_and_frees_the_worker_id(tmp_path: Path) -> None:
    reservation_ahead(tmp_path)

    def interrupt(_signum: int, _frame: object) -> None:
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGALRM, interrupt)
    began = time.monotonic()
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.3)
        with pytest.raises(KeyboardInterrupt):
            start(tmp_path, max_wait_ms=30_000)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert time.monotonic() - began < 5
    # Nothing of the interrupted start stays behind: the worker ID is free again, and the
    # reservation still holds (the next start waits for it too, rather than repeat IDs).
    with pytest.raises(rimeflake.ClockRollbackError, match="at start-up"):
        start(tmp_path, max_wait_ms=100)


CTRL_C = """
import sys, rimeflake
layout = rimeflake.Layout(clock_id_bits=0, time_bits=41, worker_bits=21, sequence_bits=1)
print("starting", flush=True)
rimeflake.Generator(1, layout=layout, state_dir=sys.argv[1], max_drift_ms=0, max_wait_ms=60_000)
print("started", flush=True)
"""


@pytest.mark.skipif(os.name != "posix", reason="SIGINT to a child process")
def test_ctrl_c_stops_a_process_waiting_at_start_up(tmp_path: Path) -> None:
    reservation_ahead(tmp_path)
    proc = subprocess.Popen(
        [sys.executable, "-c", CTRL_C, str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline() == "starting\n"
    time.sleep(0.5)  # well inside the wait
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert time.monotonic() - sent < 5, "Ctrl-C waited for the start-up wait to end"
    assert "KeyboardInterrupt" in err, err
    assert "started" not in out
    assert "panicked" not in err
