"""rimeflake in Python: IDs from the embedded default, batches, decoding, text forms, and a
SkyWalking trace ID. Run it with the extension built (`make python-env`):

    .venv/bin/python examples/python/quickstart.py

The embedded default leases a worker ID in the state directory ($RIMEFLAKE_STATE_DIR, else
~/.local/state/rimeflake) and keeps durable state beside it, so two processes sharing that
directory never share a worker ID and a restart continues above the last ID.
"""

from __future__ import annotations

import array

import rimeflake
from rimeflake.skywalking import global_id


def main() -> None:
    with rimeflake.Generator(layout="twitter", namespace="example-python") as gen:
        a, b = gen.next_id(), gen.next_id()
        assert a < b, "IDs of one generator strictly increase"
        print(f"worker {gen.worker_id}: {a} < {b}")

        parts = gen.decode(b)
        print(f"decoded: {parts} at {parts.datetime.isoformat()}")

        batch = gen.next_ids(3)
        print("next_ids(3):", batch)

        buf = array.array("Q", bytes(8 * 4))  # any writable buffer of uint64, numpy too
        gen.fill(buf)
        print("fill(array('Q', 4)):", list(buf))
        assert b < batch[0] < buf[0]

        for encoding in ("hex", "base62", "base32"):
            text = rimeflake.format(b, encoding)
            assert rimeflake.parse(text, encoding) == b
            print(f"{encoding}: {text}")

    # Errors are one hierarchy, each also a fitting built-in exception.
    try:
        rimeflake.decode(-1)
    except rimeflake.InvalidIdError as e:
        assert isinstance(e, ValueError)
        print("InvalidIdError:", e)

    print("SkyWalking trace id:", global_id())


if __name__ == "__main__":
    main()
