from __future__ import annotations

import array
import datetime as dt
import pathlib
import time

import pytest

import rimeflake


def test_ids_increase_and_carry_the_worker(gen: rimeflake.Generator) -> None:
    ids = [gen.next_id() for _ in range(10_000)]
    assert all(a < b for a, b in zip(ids, ids[1:]))
    assert all(0 < i < 2**63 for i in ids)
    parts = gen.decode(ids[-1])
    assert parts.worker_id == 1
    assert abs(parts.timestamp_ms - time.time() * 1000) < 60_000
    assert gen.worker_id == 1
    assert gen.layout == rimeflake.Layout.twitter()


def test_next_ids_continue_the_sequence(gen: rimeflake.Generator) -> None:
    a = gen.next_id()
    batch = gen.next_ids(5000)
    assert len(batch) == 5000
    assert a < batch[0]
    assert all(x < y for x, y in zip(batch, batch[1:]))
    assert gen.next_ids(0) == []
    assert batch[-1] < gen.next_id()


def test_fill_writes_into_array_numpy_and_memoryview(gen: rimeflake.Generator) -> None:
    buf = array.array("Q", bytes(8 * 4096))
    assert gen.fill(buf) == 4096
    assert all(x < y for x, y in zip(buf, buf[1:]))
    np = pytest.importorskip("numpy")
    arr = np.zeros(1000, dtype=np.uint64)
    assert gen.fill(arr) == 1000
    assert int(arr[0]) > buf[-1]
    assert bool((np.diff(arr.astype(np.int64)) > 0).all())
    # Into a slice of a larger buffer, through a memoryview: only that slice is written.
    big = array.array("Q", bytes(8 * 10))
    gen.fill(memoryview(big)[2:5])
    assert big[0] == big[1] == big[5] == 0 and 0 < big[2] < big[3] < big[4]
    assert gen.fill(array.array("Q")) == 0


def test_fill_refuses_buffers_it_cannot_write(gen: rimeflake.Generator) -> None:
    with pytest.raises(ValueError, match="unsigned 64-bit"):
        gen.fill(array.array("I", [0] * 4))
    with pytest.raises(ValueError, match="unsigned 64-bit"):
        gen.fill(array.array("q", [0] * 4))
    with pytest.raises(ValueError, match="unsigned 64-bit"):
        gen.fill(bytearray(64))
    with pytest.raises(TypeError, match="read-only"):
        gen.fill(memoryview(array.array("Q", [0] * 4)).toreadonly())
    with pytest.raises(TypeError):
        gen.fill([0, 0, 0])  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        gen.fill(None)  # type: ignore[arg-type]
    np = pytest.importorskip("numpy")
    with pytest.raises(ValueError, match="contiguous"):
        gen.fill(np.zeros(10, dtype=np.uint64)[::2])
    with pytest.raises(ValueError, match="unsigned 64-bit"):
        gen.fill(np.zeros(10, dtype=np.float64))


def test_stats_count_what_was_issued(gen: rimeflake.Generator) -> None:
    gen.next_ids(100)
    gen.next_id()
    s = gen.stats()
    assert s["ids_issued"] == 101
    # Every key the typed dict declares (made from the core's table by `make contract`), and
    # no other.
    assert set(s) == set(rimeflake.Stats.__annotations__)
    assert {"ids_issued", "lease", "lease_losses"} <= set(s)
    assert s["server_skew_ms"] == 0  # no server
    assert s["lease"] == "none" and s["lease_renewals"] == 0


def test_stats_count_the_state_writes_of_a_state_dir(tmp_path: pathlib.Path) -> None:
    with rimeflake.Generator(4, state_dir=str(tmp_path)) as g:
        g.next_ids(10_000)
        time.sleep(0.01)  # past a time unit
        g.next_id()
        s = g.stats()
        assert s["reservation_writes"] >= 1, s
        assert s["reservation_write_failures"] == 0
        assert s["reservation_write_ns"] > 0
        assert s["lease"] == "none"


def test_close_and_context_manager() -> None:
    with rimeflake.Generator(2, layout="default", backend="memory") as g:
        g.next_id()
        assert not g.closed
    assert g.closed
    with pytest.raises(rimeflake.ClosedError):
        g.next_id()
    with pytest.raises(rimeflake.ClosedError):
        g.next_ids(3)
    g.close()  # twice is harmless


def test_default_rollback_policy_follows_the_layout() -> None:
    # No clock-id bits: the core's default (wait) applies; asking for bump is a config error.
    rimeflake.Generator(1, layout="twitter", backend="memory").close()
    with pytest.raises(rimeflake.ConfigError, match="on_rollback"):
        rimeflake.Generator(1, layout="twitter", backend="memory", on_rollback="bump")
    for policy in ("bump", "wait", "error"):
        rimeflake.Generator(1, backend="memory", on_rollback=policy).close()  # type: ignore[arg-type]
    with pytest.raises(rimeflake.ConfigError, match="on_rollback"):
        rimeflake.Generator(1, backend="memory", on_rollback="later")  # type: ignore[arg-type]


def test_configuration_errors_name_the_field() -> None:
    with pytest.raises(rimeflake.ConfigError, match="worker_id"):
        rimeflake.Generator(1024, layout="twitter", backend="memory")
    with pytest.raises(rimeflake.ConfigError, match="worker_id"):
        rimeflake.Generator(backend="memory")
    with pytest.raises(rimeflake.ConfigError, match="backend"):
        rimeflake.Generator(1, backend="zookeeper")
    with pytest.raises(rimeflake.ConfigError, match="layout"):
        rimeflake.Generator(1, layout="nope", backend="memory")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="layout"):
        rimeflake.Generator(1, layout=5, backend="memory")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        rimeflake.Generator("1", backend="memory")  # type: ignore[arg-type]
    with pytest.raises(rimeflake.ConfigError, match="worker_id: must not be negative, got -1"):
        rimeflake.Generator(-1, backend="memory")


def test_layouts_presets_and_custom_widths() -> None:
    for name in ("default", "twitter", "sonyflake", "js_safe"):
        layout = rimeflake.Layout.preset(name)
        assert layout.name == name
        assert layout.clock_id_bits + layout.time_bits + layout.worker_bits + layout.sequence_bits == (
            53 if layout.is_js_safe else 63
        )
    assert rimeflake.Layout.sonyflake().order == "sequence_above_worker"
    assert rimeflake.Layout.sonyflake().unit_ms == 10
    custom = rimeflake.Layout(clock_id_bits=2, time_bits=42, worker_bits=8, sequence_bits=11)
    assert custom.name == "custom" and custom.max_worker_id == 255
    assert custom == rimeflake.Layout(clock_id_bits=2, time_bits=42, worker_bits=8, sequence_bits=11)
    assert hash(custom) == hash(rimeflake.Layout(clock_id_bits=2, time_bits=42, worker_bits=8, sequence_bits=11))
    assert "custom" in repr(custom)
    with pytest.raises(rimeflake.ConfigError, match="63"):
        rimeflake.Layout(worker_bits=20)
    # Baidu's own 2016 epoch decodes old IDs, but cannot generate: its time field ran out.
    assert rimeflake.Layout.preset("baidu").epoch_ms == 1_463_673_600_000
    with pytest.raises(rimeflake.ConfigError, match="ran out"):
        rimeflake.Generator(1, layout="baidu", backend="memory")
    epoch = int(dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc).timestamp() * 1000)
    assert rimeflake.Layout.baidu(epoch).time_bits == 28
    with pytest.raises(rimeflake.ConfigError, match="order"):
        rimeflake.Layout(order="sideways")  # type: ignore[arg-type]
    # An epoch in the future makes a layout (to decode), not a generator.
    future = rimeflake.Layout(epoch_ms=int(time.time() * 1000) + 3_600_000)
    with pytest.raises(rimeflake.ConfigError, match="future"):
        rimeflake.Generator(1, layout=future, backend="memory")
    with rimeflake.Generator(5, layout=custom, backend="memory") as g:
        assert custom.decode(g.next_id()).worker_id == 5


def test_layout_compose_is_decode_reversed() -> None:
    layout = rimeflake.Layout.twitter()
    id_ = layout.compose(timestamp_ms=1_767_225_600_000, worker_id=7, sequence=3)
    parts = layout.decode(id_)
    # twitter's 10 worker bits are 5 datacenter + 5 worker: worker field 7 is datacenter 0.
    assert parts == rimeflake.Parts(0, 1_767_225_600_000, 7, 3, datacenter_id=0)
    assert layout.compose(**parts._asdict()) == id_
    assert parts.datetime == dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    assert parts.datetime.tzinfo is dt.timezone.utc
    with pytest.raises(rimeflake.ConfigError):
        layout.compose(timestamp_ms=1_767_225_600_000, worker_id=1024)


def test_decode_format_parse_round_trip(gen: rimeflake.Generator) -> None:
    for id_ in gen.next_ids(200) + [0, 1, 2**63 - 1, 2**63, 2**64 - 1]:
        for enc in ("dec", "hex", "base62", "base32"):
            text = rimeflake.format(id_, enc)  # type: ignore[arg-type]
            assert rimeflake.parse(text, enc) == id_  # type: ignore[arg-type]
    a, b = gen.next_id(), gen.next_id()
    for enc, width in (("hex", 16), ("base62", 11), ("base32", 13)):
        ta, tb = rimeflake.format(a, enc), rimeflake.format(b, enc)  # type: ignore[arg-type]
        assert len(ta) == width and ta < tb
    assert rimeflake.format(255, "hex") == "00000000000000ff"
    assert rimeflake.decode(b, layout="twitter") == gen.decode(b)
    assert rimeflake.decode(b, rimeflake.Layout.twitter()) == gen.decode(b)
