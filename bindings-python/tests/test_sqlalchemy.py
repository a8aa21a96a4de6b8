"""rimeflake.sqlalchemy against the real SQLAlchemy 2 (pinned in the Makefile's PY_TOOLS), on
SQLite and on a real PostgreSQL (scripts/with-postgres starts it; psycopg 3 talks to it): Core
inserts, ORM flushes, bulk inserts, insert().returning(), and rows inserted concurrently."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import (
    Engine,
    ForeignKey,
    MetaData,
    String,
    Table,
    create_engine,
    event,
    insert,
    inspect,
    select,
)
from sqlalchemy.exc import StatementError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

import rimeflake
from rimeflake.sqlalchemy import (
    SnowflakeDefault,
    SnowflakeId,
    mapped_snowflake_column,
    snowflake_column,
)

from .conftest import postgres_url

# One generator for the module's models, as an application has (worker 3, in memory).
GEN = rimeflake.Generator(3, layout="twitter", backend="memory")


class Base(DeclarativeBase):
    pass


class Author(Base):
    __tablename__ = "authors"
    id: Mapped[int] = mapped_snowflake_column(generator=GEN)
    name: Mapped[str] = mapped_column(String(50))


class Book(Base):
    __tablename__ = "books"
    id: Mapped[int] = mapped_snowflake_column(generator=GEN)
    author_id: Mapped[int] = mapped_column(SnowflakeId(), ForeignKey("authors.id"))
    title: Mapped[str] = mapped_column(String(50))


core = MetaData()
events = Table(
    "events",
    core,
    snowflake_column("id", generator=GEN),
    snowflake_column("ref", generator=GEN, primary_key=False, unique=True),
)


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    if request.param == "sqlite":
        # Threads wait for each other's writes (the file's lock) instead of failing at once;
        # the file is thrown away, so nothing is synced.
        eng = create_engine(f"sqlite:///{tmp_path / 'test.db'}", connect_args={"timeout": 60})
        event.listen(eng, "connect", lambda conn, _: conn.execute("PRAGMA synchronous=OFF"))
    else:
        eng = create_engine(postgres_url().replace("postgresql://", "postgresql+psycopg://", 1))
    Base.metadata.drop_all(eng)
    core.drop_all(eng)
    Base.metadata.create_all(eng)
    core.create_all(eng)
    try:
        yield eng
    finally:
        Base.metadata.drop_all(eng)
        core.drop_all(eng)
        eng.dispose()


def test_the_column_is_a_bigint_that_the_database_never_fills(engine: Engine) -> None:
    columns = {c["name"]: c for c in inspect(engine).get_columns("authors")}
    assert str(columns["id"]["type"]).upper() in ("BIGINT", "INTEGER")
    # No sequence, no identity, no rowid alias: the key comes from the generator alone.
    assert columns["id"]["default"] is None
    assert not columns["id"].get("autoincrement") or engine.dialect.name == "sqlite"
    assert Author.__table__.c.id.autoincrement is False


def test_orm_flushes_fill_the_keys(engine: Engine) -> None:
    with Session(engine) as session:
        ada = Author(name="Ada")
        session.add(ada)
        session.flush()
        assert GEN.decode(ada.id).worker_id == 3
        session.add_all([Book(author_id=ada.id, title=f"vol {i}") for i in range(5)])
        session.commit()
        books = session.scalars(select(Book).order_by(Book.id)).all()
        assert [b.title for b in books] == [f"vol {i}" for i in range(5)]
        assert ada.id < books[0].id  # made after it: a greater key
        assert all(b.author_id == ada.id for b in books)


def test_core_and_bulk_inserts_fill_every_row(engine: Engine) -> None:
    with engine.begin() as conn:
        conn.execute(insert(events))
        conn.execute(insert(events), [{} for _ in range(500)])  # executemany: one ID per row
        rows = conn.execute(select(events.c.id, events.c.ref)).all()
    keys = [r.id for r in rows] + [r.ref for r in rows]
    assert len(rows) == 501 and len(set(keys)) == 1002
    with Session(engine) as session:
        session.execute(insert(Author), [{"name": f"a{i}"} for i in range(300)])  # ORM bulk
        session.commit()
        ids = session.scalars(select(Author.id)).all()
    assert len(set(ids)) == 300 and all(GEN.decode(i).worker_id == 3 for i in ids)


def test_insert_returning_gives_the_keys_back(engine: Engine) -> None:
    with engine.begin() as conn:
        one = conn.execute(insert(events).returning(events.c.id)).scalar_one()
        authors = Base.metadata.tables["authors"]
        many = conn.execute(
            insert(authors).returning(authors.c.id, sort_by_parameter_order=True),
            [{"name": f"n{i}"} for i in range(50)],
        ).scalars().all()
        stored = conn.execute(select(authors.c.id).order_by("id")).scalars().all()
    assert GEN.decode(one).worker_id == 3
    assert many == sorted(many) == stored  # in the order the rows were given, and exact


def test_rows_inserted_concurrently_get_distinct_increasing_keys(engine: Engine) -> None:
    per_thread = 200
    seen: list[list[int]] = []

    def insert_rows(n: int) -> None:
        mine = []
        for i in range(per_thread):
            with Session(engine) as session:
                author = Author(name=f"t{n}-{i}")
                session.add(author)
                session.commit()
                mine.append(author.id)
        seen.append(mine)

    threads = [threading.Thread(target=insert_rows, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(seen) == 4
    for mine in seen:
        assert mine == sorted(mine), "a thread's later row got a smaller key"
    with Session(engine) as session:
        stored = session.scalars(select(Author.id)).all()
    assert sorted(stored) == sorted(i for mine in seen for i in mine)
    assert len(set(stored)) == 4 * per_thread


def test_ids_near_the_top_of_63_bits_read_back_exactly(engine: Engine) -> None:
    top = (1 << 63) - 1
    with engine.begin() as conn:
        conn.execute(insert(events), [{"id": top, "ref": top - 1}, {"id": 1, "ref": 2}])
        assert conn.execute(select(events.c.ref).where(events.c.id == top)).scalar_one() == top - 1


@pytest.mark.parametrize(
    ("value", "error", "message"),
    [
        (1 << 63, ValueError, "outside 0 to 2\\*\\*63 - 1"),
        (-1, ValueError, "outside"),
        ("12", TypeError, "an ID is an int, not str"),
        (True, TypeError, "a bool"),
    ],
)
def test_a_value_that_is_no_id_is_refused_before_the_database(
    engine: Engine, value: object, error: type[Exception], message: str
) -> None:
    with engine.begin() as conn:
        with pytest.raises(StatementError, match=message) as info:
            conn.execute(insert(events), {"id": value, "ref": 5})
    assert isinstance(info.value.orig, error)


def test_the_default_without_a_generator_uses_the_processs_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import rimeflake._integration

    monkeypatch.setenv("RIMEFLAKE_STATE_DIR", str(tmp_path))
    monkeypatch.setattr(rimeflake._integration, "_generator", None)
    default = SnowflakeDefault()
    a, b = default(), default()
    made = rimeflake._integration._generator
    assert made is not None and a < b and made.decode(b).worker_id == made.worker_id
    made.close()
    with pytest.raises(TypeError, match="rimeflake.Generator, not int"):
        SnowflakeDefault(3)  # type: ignore[arg-type]
