"""fill() writes into the caller's memory with the interpreter released, so other threads may
use the same buffer meanwhile: each ID is written with an atomic store (no data race on the
Rust side), and what lands in the buffer is always a whole ID."""

from __future__ import annotations

import threading

import pytest

import rimeflake


def test_threads_filling_and_reading_one_buffer() -> None:
    np = pytest.importorskip("numpy")
    gen = rimeflake.Generator(9, layout="twitter", backend="memory")
    shared = np.zeros(1 << 16, dtype=np.uint64)
    rounds = 40
    start = threading.Barrier(3)
    seen_torn: list[int] = []

    def filler() -> None:
        start.wait()
        for _ in range(rounds):
            gen.fill(shared)

    def reader() -> None:
        start.wait()
        for _ in range(rounds * 4):
            snapshot = shared.copy()
            written = snapshot[snapshot != 0]
            # Every value written is a whole ID of worker 9 (no half of one, no other worker).
            workers = (written >> np.uint64(12)) & np.uint64(1023)
            seen_torn.extend(int(x) for x in written[workers != 9][:5])

    threads = [threading.Thread(target=filler), threading.Thread(target=filler),
               threading.Thread(target=reader)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not seen_torn
    # Each slot holds an ID from one of the fills; all the fills' IDs differ, so all slots do.
    assert len(np.unique(shared)) == len(shared)
    assert gen.stats()["ids_issued"] == 2 * rounds * len(shared)
