"""A process that exits while a daemon thread waits inside rimeflake exits quietly: no panic
text, no traceback, no hang."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

# Each script leaves a daemon thread waiting inside a call (an overloaded generator: no lead
# over the clock, so every 4,096 IDs wait for the next millisecond) when the main thread ends.
PRELUDE = """
import array, sys, threading, time, rimeflake
def overloaded():
    return rimeflake.Generator(1, layout="twitter", backend="memory", max_drift_ms=0,
                               max_wait_ms=60_000)
"""

WAITERS = {
    "fill": "gen = overloaded(); buf = array.array('Q', bytes(8 * 4096 * 4000)); target = lambda: gen.fill(buf)",
    "next_ids": "gen = overloaded(); target = lambda: gen.next_ids(4096 * 4000)",
    "next_id": "gen = overloaded()\ndef target():\n    while True: gen.next_id()",
    "start-up": """
layout = rimeflake.Layout(clock_id_bits=0, time_bits=41, worker_bits=21, sequence_bits=1)
with rimeflake.Generator(1, layout=layout, state_dir=sys.argv[1], max_drift_ms=60_000) as g:
    g.next_ids(60_000)  # 30 s ahead of the clock
target = lambda: rimeflake.Generator(1, layout=layout, state_dir=sys.argv[1], max_drift_ms=0,
                                     max_wait_ms=60_000)
""",
}

MAIN = """
threading.Thread(target=target, daemon=True).start()
time.sleep(float(sys.argv[2]))
print("main thread done", flush=True)
"""


@pytest.mark.parametrize("waiter", sorted(WAITERS))
def test_exit_with_a_daemon_thread_waiting_is_quiet(waiter: str, tmp_path: Path) -> None:
    script = PRELUDE + WAITERS[waiter] + MAIN
    for i, delay in enumerate(("0.05", "0.2", "0.3")):
        began = time.monotonic()
        proc = subprocess.run(
            [sys.executable, "-c", script, str(tmp_path / str(i)), delay],
            capture_output=True,
            text=True,
            timeout=60,
            env={"RUST_BACKTRACE": "1", "PATH": "/usr/bin:/bin"},
        )
        assert proc.stdout == "main thread done\n"
        assert proc.stderr == "", proc.stderr
        assert proc.returncode == 0
        assert time.monotonic() - began < 10  # not the waits' (up to 60 s)
