"""Arguments: integers are anything with __index__ (never a bool), a bad value is an error that
names the argument, and help() shows the defaults that apply."""

from __future__ import annotations

import inspect
import typing

import pytest

import rimeflake


class Index:
    """Not an int, but usable as one (as numpy integers are)."""

    def __init__(self, value: int) -> None:
        self.value = value

    def __index__(self) -> int:
        return self.value


def test_anything_with_index_is_an_integer() -> None:
    np = pytest.importorskip("numpy")
    with rimeflake.Generator(np.uint16(7), backend="memory") as small:
        assert small.worker_id == 7 and len(small.next_ids(np.uint8(2))) == 2
    for make in (np.int64, np.uint64, Index):
        with rimeflake.Generator(make(7), layout="twitter", backend="memory",
                                 max_wait_ms=make(100), max_drift_ms=make(10)) as g:
            assert g.worker_id == 7
            assert len(g.next_ids(make(3))) == 3
            id_ = g.next_id()
            assert g.decode(make(id_)) == rimeflake.decode(make(id_), layout="twitter")
            assert rimeflake.format(make(id_), "hex") == rimeflake.format(id_, "hex")
            assert g.layout.decode(make(id_)).worker_id == 7
            parts = g.layout.decode(id_)
            assert g.layout.compose(timestamp_ms=make(parts.timestamp_ms), worker_id=make(7),
                                    sequence=make(parts.sequence)) == id_


def test_bool_is_not_an_integer_here() -> None:
    with pytest.raises(TypeError, match="worker_id must be an integer, not bool"):
        rimeflake.Generator(True, layout="twitter", backend="memory")
    with pytest.raises(TypeError, match="max_wait_ms must be an integer, not bool"):
        rimeflake.Generator(1, backend="memory", max_wait_ms=False)
    with rimeflake.Generator(1, layout="twitter", backend="memory") as g:
        with pytest.raises(TypeError, match="n must be an integer, not bool"):
            g.next_ids(True)
    with pytest.raises(TypeError, match="worker_id must be an integer, not float"):
        rimeflake.Generator(1.0, backend="memory")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="worker_id must be an integer, not str"):
        rimeflake.Generator("1", backend="memory")  # type: ignore[arg-type]


def test_out_of_range_options_are_config_errors_naming_them() -> None:
    cases: list[tuple[dict[str, object], str]] = [
        ({"worker_id": -1}, "worker_id: must not be negative, got -1"),
        ({"worker_id": -(2**70)}, "worker_id: must not be negative"),
        ({"worker_id": 2**64}, "worker_id: at most"),
        ({"worker_id": 1, "max_wait_ms": -5}, "max_wait_ms: must not be negative, got -5"),
        ({"worker_id": 1, "max_drift_ms": -1}, "max_drift_ms: must not be negative"),
    ]
    for kwargs, message in cases:
        with pytest.raises(rimeflake.ConfigError, match=message):
            rimeflake.Generator(backend="memory", **kwargs)  # type: ignore[arg-type]
    with pytest.raises(rimeflake.ConfigError, match="worker_id: must not be negative"):
        rimeflake.Layout.twitter().compose(timestamp_ms=1_767_225_600_000, worker_id=-1)


def test_help_shows_the_defaults_that_apply() -> None:
    gen = inspect.signature(rimeflake.Generator).parameters
    assert gen["max_drift_ms"].default == 2000
    assert gen["max_wait_ms"].default == 5000
    assert gen["strict_monotonic"].default is False
    # Left out, these are resolved by the core (environment, then default): None says so.
    for name in ("worker_id", "layout", "namespace", "state_dir", "backend", "on_rollback"):
        assert gen[name].default is None, name
    assert "RIMEFLAKE_LAYOUT" in (rimeflake.Generator.__doc__ or "")

    layout = inspect.signature(rimeflake.Layout).parameters
    # Layout(spec), as Node's new Layout(spec); the fields are keywords.
    assert layout["spec"].kind is inspect.Parameter.POSITIONAL_ONLY and layout["spec"].default is None
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for name, p in layout.items() if name != "spec")
    assert layout["epoch_ms"].default == rimeflake.EPOCH_2024 == rimeflake.Layout().epoch_ms
    plain = rimeflake.Layout()
    for name in ("unit_ms", "order"):
        assert layout[name].default == getattr(plain, name), name
    assert layout["clock_id_bits"].default == plain.clock_id_bits
    assert layout["js_safe"].default is plain.is_js_safe is False

    compose = inspect.signature(rimeflake.Layout.compose).parameters
    assert compose["clock_id"].default == 0 and compose["sequence"].default == 0

    parts = inspect.signature(rimeflake.Parts).parameters
    assert all(parts[name].annotation is int for name in ("clock_id", "timestamp_ms", "worker_id", "sequence")), parts
    assert parts["datacenter_id"].annotation == typing.Optional[int]
    assert typing.get_type_hints(rimeflake.Parts)["timestamp_ms"] is int
    assert "ForwardRef" not in str(inspect.signature(rimeflake.Parts))


def test_exit_returns_none_and_never_swallows() -> None:
    g = rimeflake.Generator(1, backend="memory")
    assert g.__exit__(None, None, None) is None  # type: ignore[func-returns-value]
    with pytest.raises(KeyError):
        with rimeflake.Generator(1, backend="memory"):
            raise KeyError("kept")
