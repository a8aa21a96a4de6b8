"""SQLAlchemy 2 columns filled with rimeflake IDs.

``SnowflakeId`` is a column type: a 64-bit integer (``BIGINT``; SQLite's ``INTEGER`` storage)
read back as ``int``. ``SnowflakeDefault`` is a column default that takes the next ID of a
generator. ``snowflake_column()`` (Core) and ``mapped_snowflake_column()`` (ORM) put them
together into a primary key filled on the client, so every kind of insert gets its ID before
the statement is sent: Core ``insert()``, ORM flushes, bulk inserts of many rows, and
``insert().returning(...)``:

    class User(Base):
        __tablename__ = "users"
        id: Mapped[int] = mapped_snowflake_column()

Without a generator, the process's default one is used (settings from the environment, made at
the first ID). Needs SQLAlchemy 2: ``pip install 'rimeflake[sqlalchemy]'``.
"""

from __future__ import annotations

import operator
from typing import Any, Optional

from ._integration import default_generator, generator_option, require
from ._native import Generator

require("sqlalchemy", integration="rimeflake.sqlalchemy", needs="SQLAlchemy 2", extra="sqlalchemy")

from sqlalchemy import BigInteger, Column
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import MappedColumn, mapped_column
from sqlalchemy.types import TypeDecorator

__all__ = ["SnowflakeDefault", "SnowflakeId", "mapped_snowflake_column", "snowflake_column"]

#: Every rimeflake ID is below 2**63, so it fits a signed 64-bit BIGINT.
_LIMIT = 1 << 63


class SnowflakeId(TypeDecorator[int]):
    """A rimeflake ID in a ``BIGINT`` column, read back as ``int``.

    Binding a value that is not an integer, or one outside 0 to 2**63 - 1, raises
    ``TypeError`` or ``ValueError`` naming it, before the database sees it.
    """

    impl = BigInteger
    cache_ok = True

    def process_bind_param(self, value: Optional[int], dialect: Dialect) -> Optional[int]:
        if value is None:
            return None
        if isinstance(value, bool):
            raise TypeError(f"SnowflakeId: {value!r} is not an ID (a bool)")
        try:
            value = operator.index(value)
        except TypeError:
            raise TypeError(
                f"SnowflakeId: an ID is an int, not {type(value).__name__} ({value!r})"
            ) from None
        if not 0 <= value < _LIMIT:
            raise ValueError(f"SnowflakeId: {value} is outside 0 to 2**63 - 1")
        return value

    def process_result_value(self, value: Any, dialect: Dialect) -> Optional[int]:
        return None if value is None else int(value)


class SnowflakeDefault:
    """A column default (``Column(..., default=SnowflakeDefault(gen))``): the next ID of
    ``generator``, or of the process's default generator when it is None."""

    def __init__(self, generator: Optional[Generator] = None) -> None:
        self.generator = generator_option(generator, "SnowflakeDefault")

    def __call__(self) -> int:
        return (self.generator or default_generator()).next_id()

    def __repr__(self) -> str:
        return f"SnowflakeDefault({self.generator!r})"


def snowflake_column(
    name: Optional[str] = None,
    *,
    generator: Optional[Generator] = None,
    primary_key: bool = True,
    **kw: Any,
) -> Column[int]:
    """A Core ``Column`` of type ``SnowflakeId`` filled by ``SnowflakeDefault(generator)``: the
    primary key unless ``primary_key=False``, never autoincremented by the database. Other
    keywords go to ``Column``."""
    return Column(
        name,
        SnowflakeId(),
        primary_key=primary_key,
        autoincrement=False,
        default=SnowflakeDefault(generator),
        **kw,
    )


def mapped_snowflake_column(
    name: Optional[str] = None,
    *,
    generator: Optional[Generator] = None,
    primary_key: bool = True,
    **kw: Any,
) -> MappedColumn[int]:
    """``snowflake_column()`` for the ORM's declarative mapping (``mapped_column``):
    ``id: Mapped[int] = mapped_snowflake_column()``."""
    return mapped_column(
        name,
        SnowflakeId(),
        primary_key=primary_key,
        autoincrement=False,
        default=SnowflakeDefault(generator),
        **kw,
    )
