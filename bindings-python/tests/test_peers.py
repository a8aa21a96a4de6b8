"""IDs made by peer libraries (testdata/peers/vectors.json: sony/sonyflake v1 and v2,
bwmarrin/snowflake, Baidu's own 2016 epoch, Discord's example) decode field for field from
Python through the layout spec that describes each peer, and compose back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import rimeflake

VECTORS = Path(__file__).resolve().parents[2] / "testdata" / "peers" / "vectors.json"


def peers() -> list[dict[str, Any]]:
    data: dict[str, Any] = json.loads(VECTORS.read_text())
    found: list[dict[str, Any]] = data["peers"]
    return found


def test_every_peer_is_there() -> None:
    names = " / ".join(p["name"] for p in peers())
    for peer in ("sony/sonyflake v1", "sony/sonyflake v2", "bwmarrin/snowflake", "Baidu", "Discord"):
        assert peer in names, names


@pytest.mark.parametrize("peer", peers(), ids=lambda p: str(p["name"]))
def test_peer_ids_decode_field_for_field_and_compose_back(peer: dict[str, Any]) -> None:
    spec: str = peer["layout"]
    layout = rimeflake.Layout.from_spec(spec)
    assert rimeflake.Layout.from_spec(layout.describe()) == layout
    assert peer["ids"]
    for row in peer["ids"]:
        id_ = int(row["id"])
        dc = int(row["datacenter_id"]) if "datacenter_id" in row else None
        want = rimeflake.Parts(0, int(row["timestamp_ms"]), int(row["worker_id"]), int(row["sequence"]), dc)
        assert layout.decode(id_) == want, (peer["name"], id_)
        # The spec string itself is a layout argument, as in every front end.
        assert rimeflake.decode(id_, layout=spec) == want  # type: ignore[arg-type]
        assert layout.compose(timestamp_ms=want.timestamp_ms, worker_id=want.worker_id,
                              sequence=want.sequence, datacenter_id=dc) == id_


def test_baidu_ids_from_its_own_epoch_decode_though_they_cannot_be_made() -> None:
    baidu = next(p for p in peers() if p["name"].startswith("Baidu"))
    layout = rimeflake.Layout.from_spec(baidu["layout"])
    assert layout.epoch_ms == 1463673600000  # 2016-05-19T16:00Z: midnight in Beijing
    with pytest.raises(rimeflake.RimeflakeError, match="ran out"):
        rimeflake.Generator(1, layout=layout, backend="memory")
