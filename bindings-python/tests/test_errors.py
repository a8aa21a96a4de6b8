from __future__ import annotations

from pathlib import Path

import pytest

import rimeflake
from rimeflake import _native

BUILTIN = {
    "ConfigError": ValueError,
    "StateError": OSError,
    "LeaseError": OSError,
    "InvalidIdError": ValueError,
    "OverloadedError": TimeoutError,
    "InterruptedWaitError": InterruptedError,
    "NoFreeWorkerError": rimeflake.LeaseError,
}


def test_every_core_error_kind_is_mapped() -> None:
    # Each class and code comes from the core's table (the same names and codes as Node's): a
    # kind without an entry here would fall through to the root class and its code.
    kinds = _native._error_kinds()
    assert [code for _, code, _ in kinds] == list(range(1, len(kinds) + 1))
    classes = {cls for _, _, cls in kinds}
    assert "RimeflakeError" not in classes, "a known kind fell through to the root class"
    assert len(classes) == len(kinds), "two kinds share one class"
    for name, _code, cls_name in kinds:
        cls = getattr(rimeflake, cls_name)
        assert cls.__module__ == "rimeflake"
        assert issubclass(cls, rimeflake.RimeflakeError)
        assert cls.__doc__
        with pytest.raises(cls, match="^why it failed$") as info:
            _native._raise_kind(name, "why it failed")
        assert type(info.value) is cls
        assert info.value.code == cls.code == f"ERR_RIMEFLAKE_{name}"
        if cls_name in BUILTIN:
            assert isinstance(info.value, BUILTIN[cls_name])


def test_hierarchy_and_builtin_bases() -> None:
    assert issubclass(rimeflake.RimeflakeError, Exception)
    assert rimeflake.RimeflakeError.code == "ERR_RIMEFLAKE"
    assert issubclass(rimeflake.NoFreeWorkerError, rimeflake.LeaseError)
    assert issubclass(rimeflake.StateError, OSError)
    assert issubclass(rimeflake.LeaseError, OSError)
    assert issubclass(rimeflake.NoFreeWorkerError, OSError)
    assert issubclass(rimeflake.OverloadedError, TimeoutError)
    assert not issubclass(rimeflake.ClosedError, ValueError)
    with pytest.raises(KeyError):
        _native._raise_kind("NO_SUCH_KIND", "x")


def test_file_system_failures_are_os_errors(tmp_path: Path) -> None:
    """What the state directory refuses is an OSError, whichever class names it."""
    # /proc takes no new file, not even from root: the lock file cannot be made.
    with pytest.raises(OSError) as info:
        rimeflake.Generator(state_dir="/proc")
    assert isinstance(info.value, rimeflake.RimeflakeError), type(info.value).__mro__
    assert "/proc" in str(info.value)
    # A state directory that is a file.
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("")
    with pytest.raises(OSError) as info:
        rimeflake.Generator(state_dir=not_a_dir)
    assert isinstance(info.value, rimeflake.RimeflakeError), type(info.value).__mro__
    assert str(not_a_dir) in str(info.value)


BAD_IDS = [
    (-1, rimeflake.InvalidIdError, "not negative"),
    (-(2**70), rimeflake.InvalidIdError, "not negative"),
    (2**63, rimeflake.InvalidIdError, "below 2\\^63"),
    (2**64, rimeflake.InvalidIdError, "below 2\\^63"),
    (2**100, rimeflake.InvalidIdError, "below 2\\^63"),
    (1.0, TypeError, "must be an integer, not float"),
    ("123", TypeError, "must be an integer, not str"),
    (None, TypeError, "must be an integer, not NoneType"),
    (True, TypeError, "must be an integer, not bool"),
]


@pytest.mark.parametrize(("bad", "error", "message"), BAD_IDS)
def test_bad_ids_raise_the_right_error(bad: object, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        rimeflake.decode(bad)  # type: ignore[arg-type]
    if not (isinstance(bad, int) and 0 <= bad < 2**64):  # the encodings cover all of u64
        with pytest.raises(error):
            rimeflake.format(bad)  # type: ignore[arg-type]
    with pytest.raises(error, match=message):
        rimeflake.Layout.twitter().decode(bad)  # type: ignore[arg-type]


def test_invalid_id_errors_are_value_errors() -> None:
    with pytest.raises(ValueError):
        rimeflake.decode(-5)
    # Bits above a JavaScript-safe layout's 53.
    with pytest.raises(rimeflake.InvalidIdError, match="53"):
        rimeflake.decode(2**60, layout="js_safe")


@pytest.mark.parametrize(
    ("text", "encoding", "message"),
    [
        ("", "dec", "empty"),
        ("12a", "dec", "position 2"),
        ("-1", "dec", "position 0"),
        ("18446744073709551616", "dec", "larger"),
        ("abc", "hex", "exactly 16"),
        ("zzzzzzzzzzzzzzzz", "hex", "'z'"),
        ("U000000000000", "base32", "'U'"),
    ],
)
def test_bad_text_raises_invalid_id(text: str, encoding: str, message: str) -> None:
    with pytest.raises(rimeflake.InvalidIdError, match=message):
        rimeflake.parse(text, encoding)  # type: ignore[arg-type]


def test_wrong_types_and_names_for_text() -> None:
    with pytest.raises(TypeError):
        rimeflake.parse(123)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        rimeflake.parse(None)  # type: ignore[arg-type]
    with pytest.raises(rimeflake.ConfigError, match="encoding"):
        rimeflake.parse("1", "base64")  # type: ignore[arg-type]
    with pytest.raises(rimeflake.ConfigError, match="encoding"):
        rimeflake.format(1, "base64")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="layout"):
        rimeflake.decode(1, layout=3)  # type: ignore[arg-type]


def test_bad_counts(gen: rimeflake.Generator) -> None:
    with pytest.raises(ValueError, match="negative"):
        gen.next_ids(-1)
    with pytest.raises(TypeError, match="must be an integer, not float"):
        gen.next_ids(1.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="not str"):
        gen.next_ids("3")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        gen.next_ids(None)  # type: ignore[arg-type]
    with pytest.raises(OverflowError, match="too large"):
        gen.next_ids(2**70)
    # Huge but representable: refused before anything is issued (no memory, or no time left).
    before = gen.stats()["ids_issued"]
    with pytest.raises((MemoryError, rimeflake.TimeRangeError)):
        gen.next_ids(2**62)
    assert gen.stats()["ids_issued"] == before
