"""The shared vectors (testdata/vectors.json): every 64-bit number there is a decimal string."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import rimeflake
from rimeflake import _native

VECTORS = Path(__file__).resolve().parents[2] / "testdata" / "vectors.json"
ENCODINGS = ("dec", "hex", "base62", "base32")
# ErrorKind::name() -> the class it becomes, as the binding maps it.
CLASS_OF = {name: getattr(rimeflake, cls) for name, _, cls in _native._error_kinds()}


@pytest.fixture(scope="module")
def vectors() -> dict[str, Any]:
    if not VECTORS.exists():
        pytest.skip(f"{VECTORS} is not there")
    data: dict[str, Any] = json.loads(VECTORS.read_text())
    assert data["version"] == 1
    return data


def _layout(entry: dict[str, Any]) -> rimeflake.Layout:
    if entry["preset"] == "baidu":
        return rimeflake.Layout.baidu(int(entry["epoch_ms"]))
    return rimeflake.Layout.preset(entry["preset"])


def _parts(raw: dict[str, str]) -> dict[str, int]:
    return {k: int(v) for k, v in raw.items()}


def test_layouts_match(vectors: dict[str, Any]) -> None:
    assert [e["preset"] for e in vectors["layouts"]] == list(rimeflake.PRESETS)
    for entry in vectors["layouts"]:
        layout = _layout(entry)
        f = entry["fields"]
        assert (layout.clock_id_bits, layout.time_bits, layout.worker_bits, layout.sequence_bits) == (
            f["clock_id_bits"], f["time_bits"], f["worker_bits"], f["sequence_bits"],
        )
        assert layout.order == f["order"]
        assert layout.unit_ms == f["unit_ms"]
        assert layout.is_js_safe == f["js_safe"]
        assert layout.total_bits == f["total_bits"]
        assert layout.epoch_ms == int(entry["epoch_ms"])
        assert layout.expires_at_ms == int(entry["expires_at_ms"])
        assert layout.fingerprint == int(entry["fingerprint"])
        m = _parts(entry["max"])
        assert (layout.max_clock_id, layout.max_time, layout.max_worker_id, layout.max_sequence) == (
            m["clock_id"], m["time"], m["worker_id"], m["sequence"],
        )


def test_cases_compose_decode_and_encode(vectors: dict[str, Any]) -> None:
    count = 0
    for entry in vectors["layouts"]:
        layout = _layout(entry)
        for case in entry["cases"]:
            id_, parts = int(case["id"]), _parts(case["parts"])
            assert layout.compose(**parts) == id_, case["name"]
            assert layout.decode(id_) == rimeflake.Parts(**parts), case["name"]
            if entry["preset"] != "baidu":
                assert rimeflake.decode(id_, layout=entry["preset"]) == rimeflake.Parts(**parts)
            for enc in ENCODINGS:
                assert rimeflake.format(id_, enc) == case["encodings"][enc]
                assert rimeflake.parse(case["encodings"][enc], enc) == id_
            count += 1
    assert count > 0


def test_invalid_ids_and_parts(vectors: dict[str, Any]) -> None:
    for entry in vectors["layouts"]:
        layout = _layout(entry)
        for bad in entry["invalid_ids"]:
            with pytest.raises(CLASS_OF[bad["error"]]):
                layout.decode(int(bad["id"]))
        for bad in entry["invalid_parts"]:
            with pytest.raises(CLASS_OF[bad["error"]]):
                layout.compose(**_parts(bad["parts"]))


def test_encodings(vectors: dict[str, Any]) -> None:
    enc = vectors["encodings"]
    rows = enc["round_trip"]
    for row in rows:
        id_ = int(row["id"])
        for e in ENCODINGS:
            assert rimeflake.format(id_, e) == row[e]
            assert rimeflake.parse(row[e], e) == id_
    for e in ("hex", "base62", "base32"):  # fixed widths sort like the numbers
        texts = [row[e] for row in rows]
        assert texts == sorted(texts)
    for alias in enc["aliases"]:
        assert rimeflake.parse(alias["text"], alias["encoding"]) == int(alias["id"]), alias["why"]
    for bad in enc["invalid"]:
        with pytest.raises(CLASS_OF[bad["error"]]):
            rimeflake.parse(bad["text"], bad["encoding"])
