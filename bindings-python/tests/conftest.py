from __future__ import annotations

from collections.abc import Iterator

import pytest

import rimeflake


@pytest.fixture
def gen() -> Iterator[rimeflake.Generator]:
    """An in-memory generator on the twitter layout, worker 1."""
    with rimeflake.Generator(1, layout="twitter", backend="memory") as g:
        yield g


def embedded_or_skip(**kwargs: object) -> rimeflake.Generator:
    """A generator on the embedded default, or a skip while the core lacks it."""
    try:
        return rimeflake.Generator(**kwargs)  # type: ignore[arg-type]
    except rimeflake.ConfigError as e:
        if "not available in this build" in str(e):
            pytest.skip(f"the embedded default is not in this core yet: {e}")
        raise
