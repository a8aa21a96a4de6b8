"""rimeflake.django.SnowflakeField in a real Django project (Django pinned in the Makefile's
PY_TOOLS), on SQLite and on a real PostgreSQL (scripts/with-postgres starts it): migrations
written by Django's own makemigrations, then save(), create(), bulk_create() and rows inserted
by four processes at once. Django's settings are global to a process, so the project runs in
processes of its own, as `manage.py` would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from .conftest import postgres_url

MODELS = '''
import rimeflake
from django.db import models
from rimeflake.django import SnowflakeField

# Durable, with a worker ID leased in RIMEFLAKE_STATE_DIR: every process its own.
GEN = rimeflake.Generator(layout="twitter")


class Customer(models.Model):
    id = SnowflakeField(primary_key=True, generator=GEN)
    name = models.CharField(max_length=50)


class Order(models.Model):
    id = SnowflakeField(primary_key=True)  # the process's default generator
    customer = models.ForeignKey(Customer, on_delete=models.CASCADE)
    ref = SnowflakeField(unique=True, generator=GEN)
'''

SETTINGS = '''
import json, os
DATABASES = {"default": json.loads(os.environ["TEST_DATABASE"])}
INSTALLED_APPS = ["shop"]
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
USE_TZ = True
SECRET_KEY = "test"
'''

# What each process does once the tables exist: the calls that fill a key, with the queries
# they send; or, with an argument N, N customers saved one by one (for the concurrent test).
EXERCISE = '''
import json, sys
import django
django.setup()
from django.db import connection
from django.test.utils import CaptureQueriesContext
from shop.models import GEN, Customer, Order

if len(sys.argv) > 1:
    # Hold the worker ID (GEN took it at import) until every process holds its own: none can
    # take one that another has let go, so the processes' worker IDs differ.
    import os, pathlib, time
    meet = pathlib.Path(sys.argv[2])
    (meet / str(os.getpid())).touch()
    deadline = time.monotonic() + 120
    while len(list(meet.iterdir())) < int(sys.argv[3]) and time.monotonic() < deadline:
        time.sleep(0.005)
    ids = []
    for i in range(int(sys.argv[1])):
        c = Customer(name=f"c{i}")
        c.save()
        ids.append(c.id)
    print(json.dumps({"worker": GEN.worker_id, "ids": ids}))
    sys.exit()

with CaptureQueriesContext(connection) as saved:
    ada = Customer(name="Ada")
    made = ada.id
    ada.save()
bob = Customer.objects.create(name="Bob")
orders = Order.objects.bulk_create([Order(customer=ada) for _ in range(50)])
back = Customer.objects.get(pk=ada.id)
print(json.dumps({
    "made": made, "ada": ada.id, "bob": bob.id, "back": back.id, "worker": GEN.worker_id,
    "ada_worker": GEN.decode(ada.id).worker_id,
    "orders": [o.id for o in orders], "refs": [o.ref for o in orders],
    "stored": sorted(Order.objects.values_list("id", flat=True)),
    "saved_sql": [q["sql"].split()[0] for q in saved.captured_queries],
}))
'''


def database(kind: str, tmp_path: Path) -> dict[str, str]:
    if kind == "sqlite":
        return {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": str(tmp_path / "db.sqlite3"),
            # Processes wait for each other's writes instead of failing at once; the file is
            # thrown away, so nothing is synced.
            "OPTIONS": {"timeout": 60, "init_command": "PRAGMA synchronous=OFF"},  # type: ignore[dict-item]
        }
    url = postgres_url()
    import psycopg

    name = f"django_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    u = urlsplit(url)
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": name,
        "USER": u.username or "postgres",
        "HOST": u.hostname or "127.0.0.1",
        "PORT": str(u.port),
    }


class Project:
    def __init__(self, root: Path, db: dict[str, str]) -> None:
        self.root = root
        (root / "shop").mkdir(parents=True)
        (root / "shop" / "__init__.py").write_text("")
        (root / "shop" / "models.py").write_text(MODELS)
        (root / "settings.py").write_text(SETTINGS)
        (root / "exercise.py").write_text(EXERCISE)
        self.env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "settings",
            "PYTHONPATH": str(root),
            "TEST_DATABASE": json.dumps(db),
            "RIMEFLAKE_STATE_DIR": str(root / "state"),
            "RIMEFLAKE_NO_CONTAINER_WARNING": "1",
        }

    def run(self, *args: str) -> str:
        out = subprocess.run(
            [sys.executable, *args], cwd=self.root, env=self.env, capture_output=True,
            text=True, timeout=120,
        )
        assert out.returncode == 0, f"{args}: {out.stdout}{out.stderr}"
        return out.stdout

    def start(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, *args], cwd=self.root, env=self.env, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True,
        )


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def project(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Project:
    """A project made, migrated, for each database once: the tests share it, each with rows of
    its own."""
    tmp_path = tmp_path_factory.mktemp(request.param)
    p = Project(tmp_path / "project", database(request.param, tmp_path))
    made = p.run("-m", "django", "makemigrations", "shop")
    assert "Create model Customer" in made and "Create model Order" in made, made
    p.run("-m", "django", "migrate", "--no-input")
    return p


def test_makemigrations_writes_the_field_by_its_path_without_its_default(
    project: Project,
) -> None:
    migration = (project.root / "shop" / "migrations" / "0001_initial.py").read_text()
    assert "import rimeflake.django" in migration
    assert "rimeflake.django.SnowflakeField(primary_key=True, serialize=False)" in migration
    assert "rimeflake.django.SnowflakeField(unique=True)" in migration
    assert "default" not in migration and "generator" not in migration
    # The migration describes the models exactly: nothing more to migrate.
    project.run("-m", "django", "makemigrations", "shop", "--check", "--dry-run")


def test_save_create_and_bulk_create_fill_the_keys(project: Project) -> None:
    got = json.loads(project.run("exercise.py"))
    # A new instance has its key from the start; save() inserts it at once, without an UPDATE
    # first (Django skips it for a primary key with a default).
    assert got["made"] == got["ada"] == got["back"]
    assert got["saved_sql"] == ["INSERT"], got["saved_sql"]
    assert got["ada"] < got["bob"]
    assert got["orders"] == got["stored"] and len(set(got["orders"])) == 50
    assert len(set(got["refs"])) == 50
    # The keys are the generator's IDs: Customer's from GEN, under the worker ID it leased.
    assert got["ada_worker"] == got["worker"]


def test_rows_inserted_by_four_processes_at_once_get_distinct_increasing_keys(
    project: Project,
) -> None:
    meet = project.root / "meet"
    meet.mkdir()
    procs = [project.start("exercise.py", "100", str(meet), "4") for _ in range(4)]
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        results.append(json.loads(out))
    assert len({r["worker"] for r in results}) == 4, "two processes shared a worker ID"
    for r in results:
        assert r["ids"] == sorted(r["ids"]), "a process's later row got a smaller key"
    everything = [i for r in results for i in r["ids"]]
    assert len(set(everything)) == 400
    counted = project.run(
        "-c",
        textwrap.dedent(
            """
            import django; django.setup()
            from shop.models import Customer
            mine = Customer.objects.filter(name__regex=r"^c[0-9]+$")
            print(mine.count(), *mine.values_list("id", flat=True))
            """
        ),
    ).split()
    assert int(counted[0]) == 400 and sorted(map(int, counted[1:])) == sorted(everything)


def test_default_is_refused_and_the_generator_must_be_one() -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                """
                from rimeflake.django import SnowflakeField
                for kwargs in ({"default": 1}, {"generator": "twitter"}):
                    try:
                        SnowflakeField(**kwargs)
                    except TypeError as e:
                        print(e)
                """
            ),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    lines = out.stdout.splitlines()
    assert len(lines) == 2, out.stderr
    assert "the field's default is the generator's next ID" in lines[0]
    assert "takes a rimeflake.Generator, not str" in lines[1]
