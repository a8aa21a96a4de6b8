from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

import rimeflake


@pytest.fixture
def gen() -> Iterator[rimeflake.Generator]:
    """An in-memory generator on the twitter layout, worker 1."""
    with rimeflake.Generator(1, layout="twitter", backend="memory") as g:
        yield g


def postgres_url() -> str:
    """The throwaway PostgreSQL server's URL (scripts/with-postgres, which make test-python runs)."""
    url = os.environ.get("RIMEFLAKE_TEST_POSTGRES_URL")
    if not url:
        pytest.fail(
            "RIMEFLAKE_TEST_POSTGRES_URL is not set: run the tests with `make test-python` (it "
            "starts PostgreSQL) or `scripts/with-postgres python -m pytest bindings-python/tests`"
        )
    return url


def embedded_or_skip(**kwargs: object) -> rimeflake.Generator:
    """A generator on the embedded default, or a skip while the core lacks it."""
    try:
        return rimeflake.Generator(**kwargs)  # type: ignore[arg-type]
    except rimeflake.ConfigError as e:
        if "not available in this build" in str(e):
            pytest.skip(f"the embedded default is not in this core yet: {e}")
        raise


@contextmanager
def ticking() -> Iterator[list[float]]:
    """A thread that notes the time every 10 ms while the block runs: the list it yields has no
    ticks for a span in which the interpreter was held."""
    ticks: list[float] = []
    stop = threading.Event()

    def tick() -> None:
        while not stop.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.01)

    t = threading.Thread(target=tick)
    t.start()
    try:
        yield ticks
    finally:
        stop.set()
        t.join()
