"""What the caller leaves out, the core resolves (RIMEFLAKE_* variables, then defaults); layout
specs and backend strings are the core's; the core's warnings are Python warnings."""

from __future__ import annotations

import time
import warnings
from pathlib import Path

import pytest

import rimeflake

ENV = ("RIMEFLAKE_STATE_DIR", "RIMEFLAKE_WORKER_ID", "RIMEFLAKE_LAYOUT", "RIMEFLAKE_BACKEND",
       "RIMEFLAKE_NO_CONTAINER_WARNING", "RIMEFLAKE_LEASE_TTL_MS")
DISCORD = "clock_id=0,time=41,worker=10,sequence=12,epoch_ms=1420070400000"


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    for name in ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("RIMEFLAKE_STATE_DIR", str(tmp_path))
    return monkeypatch


def test_the_environment_fills_in_what_is_left_out(env: pytest.MonkeyPatch) -> None:
    env.setenv("RIMEFLAKE_WORKER_ID", "42")
    env.setenv("RIMEFLAKE_LAYOUT", "sonyflake")
    with rimeflake.Generator() as g:
        assert (g.worker_id, g.layout.name) == (42, "sonyflake")
    with rimeflake.Generator(7, layout="twitter") as g:  # what the caller passes wins
        assert (g.worker_id, g.layout.name) == (7, "twitter")
    env.setenv("RIMEFLAKE_BACKEND", "memory")
    env.delenv("RIMEFLAKE_STATE_DIR")
    with rimeflake.Generator() as g:
        assert g.worker_id == 42
    env.setenv("RIMEFLAKE_LAYOUT", DISCORD)
    with rimeflake.Generator() as g:
        assert g.layout == rimeflake.Layout.from_spec(DISCORD)


@pytest.mark.parametrize(("name", "value"), [
    ("RIMEFLAKE_WORKER_ID", "abc"),
    ("RIMEFLAKE_WORKER_ID", "-1"),
    ("RIMEFLAKE_LAYOUT", "twiter"),
    ("RIMEFLAKE_BACKEND", "zookeeper"),
    ("RIMEFLAKE_LEASE_TTL_MS", "10s"),
    ("RIMEFLAKE_LEASE_TTL_MS", "100"),
])
def test_a_bad_variable_is_a_config_error_naming_it(env: pytest.MonkeyPatch, name: str, value: str) -> None:
    env.setenv(name, value)
    with pytest.raises(rimeflake.ConfigError, match=name):
        if name == "RIMEFLAKE_LAYOUT":
            rimeflake.Generator()
        else:
            rimeflake.Generator(layout="twitter")


def test_backends_are_parsed_by_the_core(env: pytest.MonkeyPatch) -> None:
    with rimeflake.Generator(1, backend="memory") as g:
        assert not g.closed
    with rimeflake.Generator(1, backend="local") as g:
        assert not g.closed
    for text in ("zookeeper", "mysql://localhost/ids", "rediss://localhost?sslmode=require",
                 "redis:/localhost"):
        with pytest.raises(rimeflake.ConfigError, match="backend"):
            rimeflake.Generator(1, backend=text)  # type: ignore[arg-type]
    # A server's URL is parsed the same way: here nothing listens, a lease error names it.
    with pytest.raises(rimeflake.LeaseError, match="127.0.0.1:1"):
        rimeflake.Generator(1, backend="redis://127.0.0.1:1/0")
    with pytest.raises(rimeflake.ConfigError, match="state_dir"):
        rimeflake.Generator(1, backend="memory", state_dir="/tmp")


def test_layout_specs_everywhere() -> None:
    discord = rimeflake.Layout.from_spec(DISCORD)
    assert discord.describe().startswith("clock_id=0,time=41,worker=10,sequence=12")
    assert rimeflake.Layout.from_spec(discord.describe()) == discord
    for name in rimeflake.PRESETS:
        layout = rimeflake.Layout.preset(name)
        assert rimeflake.Layout.from_spec(layout.describe()) == layout
        assert rimeflake.Layout.from_spec(name) == layout
    # Discord's documented example ID, through a spec string wherever a layout is taken.
    parts = rimeflake.decode(175928847299117063, layout=DISCORD)
    assert (parts.timestamp_ms, parts.sequence) == (1462015105796, 7)
    assert discord.decode(175928847299117063) == parts
    with rimeflake.Generator(5, layout=discord, backend="memory") as g:
        assert discord.decode(g.next_id()).worker_id == 5
    with pytest.raises(rimeflake.ConfigError, match="time"):
        rimeflake.Layout.from_spec("clock_id=0,time=40,worker=10,sequence=12")
    with pytest.raises(rimeflake.ConfigError, match="colour"):
        rimeflake.Layout.from_spec(DISCORD + ",colour=blue")


def test_layout_of_a_spec() -> None:
    """``Layout(spec)`` is ``Layout.from_spec(spec)``, as Node's ``new Layout(spec)``."""
    assert rimeflake.Layout(DISCORD) == rimeflake.Layout.from_spec(DISCORD)
    assert rimeflake.Layout(DISCORD).describe() == rimeflake.Layout.from_spec(DISCORD).describe()
    for name in rimeflake.PRESETS:
        assert rimeflake.Layout(name) == rimeflake.Layout.preset(name), name
    with pytest.raises(rimeflake.ConfigError, match="colour"):
        rimeflake.Layout(DISCORD + ",colour=blue")
    with pytest.raises(rimeflake.ConfigError, match="twiter"):
        rimeflake.Layout("twiter")
    # A spec and keyword fields at once: which would win is not guessed.
    with pytest.raises(TypeError, match="not both"):
        rimeflake.Layout("twitter", worker_bits=8)  # type: ignore[call-overload]
    with pytest.raises(TypeError):
        rimeflake.Layout(spec=DISCORD)  # type: ignore[call-overload]  # positional only
    with pytest.raises(TypeError):
        rimeflake.Layout(3)  # type: ignore[call-overload]
    # Keyword fields alone start from the default preset's.
    assert rimeflake.Layout() == rimeflake.Layout.default()
    assert rimeflake.Layout(worker_bits=8, sequence_bits=11).worker_bits == 8


def test_sonyflake_v2_and_the_datacenter_part() -> None:
    v2 = rimeflake.Layout.sonyflake_v2()
    assert v2.name == "sonyflake_v2" and v2 == rimeflake.Layout.preset("sonyflake_v2")
    assert v2.epoch_ms == 1735689600000  # 2025-01-01T00:00:00Z
    assert (v2.time_bits, v2.worker_bits, v2.sequence_bits, v2.unit_ms) == (39, 16, 8, 10)
    twitter = rimeflake.Layout.twitter()
    assert twitter.datacenter_bits == 5
    id_ = twitter.compose(timestamp_ms=1_767_225_600_000, datacenter_id=3, worker_id=17, sequence=2)
    parts = twitter.decode(id_)
    assert (parts.datacenter_id, parts.worker_id) == (3, 17)
    assert rimeflake.Layout.default().decode(1 << 40).datacenter_id is None
    with rimeflake.Generator((3 << 5) | 17, layout="twitter", backend="memory") as g:
        parts = g.decode(g.next_id())
        assert (parts.datacenter_id, parts.worker_id) == (3, 17)


def test_the_container_warning_is_a_python_warning(env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    if not (Path("/.dockerenv").exists() or Path("/run/.containerenv").exists()):
        pytest.skip("the container warning needs a container")
    env.delenv("RIMEFLAKE_STATE_DIR")
    env.setenv("XDG_STATE_HOME", str(tmp_path))
    with pytest.warns(rimeflake.RimeflakeWarning, match="container") as caught:
        rimeflake.Generator(1, layout="twitter").close()
    assert len(caught) == 1
    assert caught[0].filename == __file__  # raised at the caller's line
    assert isinstance(caught[0].message, rimeflake.RimeflakeWarning)
    assert caught[0].message.kind == "container"
    # As an error (pytest's filterwarnings, -W error), the generator just made is closed:
    # its worker ID is free for the next one.
    with warnings.catch_warnings():
        warnings.simplefilter("error", rimeflake.RimeflakeWarning)
        with pytest.raises(rimeflake.RimeflakeWarning):
            rimeflake.Generator(1, layout="twitter")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rimeflake.RimeflakeWarning)
        rimeflake.Generator(1, layout="twitter").close()
    env.setenv("RIMEFLAKE_NO_CONTAINER_WARNING", "1")
    rimeflake.Generator(1, layout="twitter").close()  # silenced: no warning, so no error here


def _spaced_sequences(**options: object) -> list[int]:
    """64 IDs of a ``default`` generator, each after a 2 ms pause (a time unit of its own,
    entered after an idle spell), checked to increase; their sequences."""
    ids = []
    with rimeflake.Generator(1, backend="memory", **options) as g:  # type: ignore[arg-type]
        for _ in range(64):
            time.sleep(0.002)
            ids.append(g.next_id())
        assert ids == sorted(set(ids))
        parts = [g.decode(i) for i in ids]
    assert all(p.worker_id == 1 for p in parts)  # decode reads the fields as ever
    return [p.sequence for p in parts]


def test_random_sequence_start_spreads_id_mod_n_over_shards() -> None:
    # Off: each spaced ID is its unit's sequence 0, so id % 16 is 0 for all of them.
    assert _spaced_sequences() == [0] * 64
    # On: each unit starts at an offset uniform over 512 sequences (id % 16 is the sequence's):
    # fewer than 8 of the 16 shards has a chance below 1e-15, more than 8 zeros below 1e-12.
    seqs = _spaced_sequences(random_sequence_start=True)
    assert len({s % 16 for s in seqs}) >= 8, seqs
    assert seqs.count(0) <= 8, seqs
    # Sonyflake puts the worker ID below the sequence: refused, in this front end's words.
    with pytest.raises(rimeflake.ConfigError,
                       match=r"^random_sequence_start: layout sonyflake puts the worker ID below"):
        rimeflake.Generator(1, layout="sonyflake", backend="memory", random_sequence_start=True)
