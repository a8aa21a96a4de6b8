"""Errors and warnings in Python's words: settings by their keyword names, rollback policies
as the strings ``on_rollback`` takes, and what ``decode`` assumed when no layout was given."""

from __future__ import annotations

import warnings

import pytest

import rimeflake


def test_settings_and_policies_are_named_as_python_spells_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("RIMEFLAKE_WORKER_ID", raising=False)
    with pytest.raises(rimeflake.ConfigError) as bump:
        rimeflake.Generator(1, layout="twitter", backend="memory", on_rollback="bump")
    assert str(bump.value) == (
        "on_rollback: 'bump' needs clock-id bits, and layout twitter has none; "
        "use 'wait' or 'error'"
    )
    with pytest.raises(rimeflake.ConfigError) as unknown:
        rimeflake.Generator(1, backend="memory", on_rollback="later")  # type: ignore[arg-type]
    assert str(unknown.value) == (
        "on_rollback: unknown policy \"later\"; use 'bump', 'wait' or 'error'"
    )
    with pytest.raises(rimeflake.ConfigError) as no_worker:
        rimeflake.Generator(backend="memory")
    assert str(no_worker.value) == (
        "worker_id: an in-memory generator needs a fixed worker ID: give worker_id, "
        "or set RIMEFLAKE_WORKER_ID"
    )
    with pytest.raises(rimeflake.ConfigError) as too_big:
        rimeflake.Generator(99_999, backend="memory")
    assert "(from worker_id)" in str(too_big.value)


def test_decode_without_a_layout_says_what_it_assumed() -> None:
    with rimeflake.Generator(1, layout="twitter", backend="memory") as g:
        twitter_id = g.next_id()
    with pytest.warns(rimeflake.RimeflakeWarning) as said:
        parts = rimeflake.decode(twitter_id)
    assert parts.timestamp_ms > rimeflake.decode(twitter_id, "twitter").timestamp_ms
    assert len(said) == 1
    warning = said[0].message
    assert isinstance(warning, rimeflake.RimeflakeWarning)
    assert warning.kind == "assumed_layout"
    text = str(warning)
    assert text.startswith(
        f"{twitter_id} was read with the default layout, as no layout was given: by it, "
    )
    assert text.endswith("try layout='twitter'"), text

    # A layout given, or an ID of the default layout: nothing to say.
    with rimeflake.Generator(1, backend="memory") as g:
        own = g.next_id()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rimeflake.decode(twitter_id, "twitter")
        rimeflake.decode(own)


def test_a_misspelt_keyword_or_preset_gets_the_cores_nearest() -> None:
    for typed, meant in [("workerid", "worker_id"), ("workerId", "worker_id"), ("layuot", "layout"), ("max_wait", "max_wait_ms")]:
        with pytest.raises(TypeError) as e:
            rimeflake.Generator(backend="memory", **{typed: 1})  # type: ignore[misc]
        assert str(e.value) == f"unknown keyword argument '{typed}'; did you mean '{meant}'?"
    with pytest.raises(TypeError, match=r"^unknown keyword argument 'foo'; the keyword arguments are worker_id, layout, "):
        rimeflake.Generator(1, backend="memory", foo=1)  # type: ignore[call-arg]
    with pytest.raises(rimeflake.ConfigError, match='unknown preset "Twitter"; did you mean "twitter"\\?'):
        rimeflake.Generator(1, backend="memory", layout="Twitter")
    with pytest.raises(rimeflake.ConfigError, match='did you mean "js_safe"\\?'):
        rimeflake.Layout("js-Safe")


def test_the_keyword_arguments_are_the_stubs_and_the_cores_table() -> None:
    import inspect
    import typing

    runtime = list(inspect.signature(rimeflake.Generator).parameters)
    typed = list(typing.get_type_hints(rimeflake.GeneratorOptions))
    assert runtime == ["worker_id", *typed], (runtime, typed)
    # Each is taken (None: left to the core), and the values reach the core.
    with rimeflake.Generator(
        1,
        layout="twitter",
        namespace="kw",
        backend="memory",
        max_drift_ms=0,
        max_wait_ms=100,
        on_rollback="error",
        strict_monotonic=True,
        random_sequence_start=True,
        lease_ttl_ms=None,
        state_dir=None,
    ) as g:
        assert g.layout.name == "twitter" and g.worker_id == 1
    stats = g.stats()
    assert list(stats) == list(typing.get_type_hints(rimeflake.Stats)), stats
