"""A backend URL from Python: worker IDs leased from a real Redis (started by
``scripts/with-redis``, which ``make test-python`` runs pytest under)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

import rimeflake


def redis_url() -> str:
    url = os.environ.get("RIMEFLAKE_TEST_REDIS_URL")
    if not url:
        pytest.fail(
            "RIMEFLAKE_TEST_REDIS_URL is not set: run the tests with `make test-python` (it "
            "starts redis-server) or `scripts/with-redis python -m pytest bindings-python/tests`"
        )
    return url


def test_generators_lease_distinct_worker_ids_from_redis() -> None:
    url = redis_url()
    with rimeflake.Generator(backend=url, namespace="py-many") as a, \
            rimeflake.Generator(backend=url, namespace="py-many") as b:
        assert a.worker_id != b.worker_id
        assert abs(a.stats()["server_skew_ms"]) < 1000  # the server runs on this host
        ids = [a.next_id() for _ in range(1000)] + [b.next_id() for _ in range(1000)]
        assert len(set(ids)) == 2000
    # Closed: the worker IDs are free again at once, and the state stayed on the server.
    with rimeflake.Generator(a.worker_id, backend=url, namespace="py-many") as again:
        assert again.next_id() > max(ids[:1000])


def test_stats_show_the_lease_held_and_its_renewals() -> None:
    with rimeflake.Generator(backend=redis_url(), namespace="py-stats", lease_ttl_ms=1000) as g:
        assert g.stats()["lease"] == "held"
        deadline = time.monotonic() + 30
        while g.stats()["lease_renewals"] < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        s = g.stats()
        assert s["lease_renewals"] >= 1, s
        assert s["lease_renewal_failures"] == 0, s
        assert 0 < s["lease_remaining_ms"] <= 1000, s
        assert s["reservation_writes"] >= 1, s


def test_wait_at_takeover_begins_every_start_past_a_lost_holders_reach() -> None:
    # The keyword reaches the core: with it, a start on a worker ID whose state the server has
    # still begins a reach (max_drift + reserve_ahead: 0 + 1 s here) past the clock; without it,
    # such a start begins at the clock.
    url, layout = redis_url(), rimeflake.Layout.twitter()
    options = dict(backend=url, namespace=f"py-takeover-{os.getpid()}", layout=layout,
                   max_drift_ms=0)

    def first_id(**more: bool) -> tuple[int, int, int]:
        before_ms = time.time_ns() // 1_000_000
        with rimeflake.Generator(5, **options, **more) as g:
            id_ms = layout.decode(g.next_id()).timestamp_ms
        return before_ms, id_ms, time.time_ns() // 1_000_000

    first_id()  # a new namespace's first start pays the reach; let the namespace age past it
    time.sleep(1.5)
    _, id_ms, after_ms = first_id()
    assert id_ms <= after_ms, (id_ms, after_ms)
    before_ms, id_ms, _ = first_id(wait_at_takeover=True)
    assert id_ms - before_ms >= 900, (before_ms, id_ms)


def test_a_held_worker_id_and_a_bad_url_are_typed_errors() -> None:
    url = redis_url()
    with rimeflake.Generator(3, backend=url, namespace="py-held"):
        with pytest.raises(rimeflake.LeaseError, match="worker ID 3"):
            rimeflake.Generator(3, backend=url, namespace="py-held")
    with pytest.raises(rimeflake.ConfigError, match="#insecure") as refused:
        rimeflake.Generator(backend="rediss://:pw@localhost/#insecure")
    assert ":pw@" not in str(refused.value)
    with pytest.raises(rimeflake.ConfigError) as e:
        rimeflake.Generator(backend="redis://:s3cret@127.0.0.1:notaport/0")
    assert "s3cret" not in str(e.value)


def test_mysql_and_zookeeper_urls_reach_their_backends() -> None:
    # Built in: a server that is not there is a lease error naming it, not a missing feature.
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    for url in (
        f"mysql://app:s3cret@127.0.0.1:{port}/ids",
        f"zookeeper://app:s3cret@127.0.0.1:{port}/ids",
    ):
        with pytest.raises(rimeflake.LeaseError, match=f"127.0.0.1:{port}") as e:
            rimeflake.Generator(backend=url)
        assert "s3cret" not in str(e.value)
    with pytest.raises(rimeflake.ConfigError, match="ssl-mode") as e:
        rimeflake.Generator(backend="mysql://app:s3cret@db/ids?ssl-mode=sometimes")
    assert "s3cret" not in str(e.value)


def test_a_killed_holders_worker_id_is_free_after_its_lease_ttl() -> None:
    url = redis_url()
    code = (
        "import sys, time, rimeflake\n"
        "g = rimeflake.Generator(5, backend=sys.argv[1],\n"
        "                        namespace='py-ttl', lease_ttl_ms=2000)\n"
        "print(g.next_id(), flush=True)\n"
        "time.sleep(60)\n"
    )
    with subprocess.Popen([sys.executable, "-c", code, url], stdout=subprocess.PIPE,
                          text=True) as child:
        assert child.stdout is not None and int(child.stdout.readline()) > 0
        with pytest.raises(rimeflake.LeaseError, match="worker ID 5"):
            rimeflake.Generator(5, backend=url, namespace="py-ttl")
        child.kill()  # no release: the lease must run out
        child.wait()
    # The default TTL would keep it 10 s; this one, 2 s.
    deadline = time.monotonic() + 8
    while True:
        try:
            with rimeflake.Generator(5, backend=url, namespace="py-ttl") as g:
                assert g.next_id() > 0
            break
        except rimeflake.LeaseError:
            assert time.monotonic() < deadline, "worker ID 5 still held 8 s after the kill"
            time.sleep(0.05)
    with pytest.raises(rimeflake.ConfigError, match="lease_ttl"):
        rimeflake.Generator(backend=url, lease_ttl_ms=100)


def test_tls_checks_the_servers_certificate() -> None:
    url = os.environ.get("RIMEFLAKE_TEST_REDISS_URL")
    if not url:
        pytest.fail("RIMEFLAKE_TEST_REDISS_URL is not set: run the tests under scripts/with-redis")
    with rimeflake.Generator(backend=url, namespace="py-tls") as g:
        assert g.next_id() > 0
    # Without the test CA (sslrootcert=), the system's CAs do not vouch for the server.
    untrusted = url.split("?")[0]
    with pytest.raises(rimeflake.ConfigError, match="not trusted"):
        rimeflake.Generator(backend=untrusted, namespace="py-tls")


def test_the_environment_names_the_backend_and_a_process_takes_its_own_worker_id() -> None:
    url = redis_url()
    code = (
        "import rimeflake\n"
        "with rimeflake.Generator(namespace='py-env') as g:\n"
        "    print(g.worker_id, g.next_id())\n"
    )
    env = {**os.environ, "RIMEFLAKE_BACKEND": url}
    with rimeflake.Generator(backend=url, namespace="py-env") as mine:
        out = subprocess.run([sys.executable, "-c", code], env=env, check=True,
                             capture_output=True, text=True).stdout.split()
        assert int(out[0]) != mine.worker_id


def test_a_forked_child_takes_its_own_worker_id_and_leaves_the_parents_lease_alone() -> None:
    url = redis_url()
    with rimeflake.Generator(backend=url, namespace="py-fork") as parent:
        before = parent.next_id()
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: its first ID takes a worker ID of its own, then it exits
            try:
                child_id = parent.next_id()
                os.write(write, f"{parent.worker_id} {child_id}".encode())
            finally:
                os._exit(0)
        os.close(write)
        _, status = os.waitpid(pid, 0)
        worker, child_id = map(int, os.read(read, 100).split())
        os.close(read)
        assert os.waitstatus_to_exitcode(status) == 0
        assert worker != parent.worker_id and child_id != before
        # The child's exit released nothing of the parent's: its worker ID is still held...
        with pytest.raises(rimeflake.LeaseError, match="held"):
            rimeflake.Generator(parent.worker_id, backend=url, namespace="py-fork")
        # ...and the parent goes on, above what it issued before the fork.
        assert parent.next_id() > before


def test_a_forked_childs_worker_id_is_its_own_before_its_first_id() -> None:
    url = redis_url()
    with rimeflake.Generator(backend=url, namespace="py-fork-id") as parent:
        parent.next_id()
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child asks for its worker ID before it issues any ID
            try:
                worker = parent.worker_id
                child_id = parent.next_id()
                os.write(write, f"{worker} {parent.decode(child_id).worker_id}".encode())
            finally:
                os._exit(0)
        os.close(write)
        _, status = os.waitpid(pid, 0)
        worker, of_first_id = map(int, os.read(read, 100).split())
        os.close(read)
        assert os.waitstatus_to_exitcode(status) == 0
        assert worker != parent.worker_id
        assert worker == of_first_id


def test_a_forked_childs_close_frees_its_own_worker_id_and_never_the_parents() -> None:
    url = redis_url()
    with rimeflake.Generator(backend=url, namespace="py-fork-close") as parent:
        before = parent.next_id()
        for issue_first in (True, False):
            read, write = os.pipe()
            pid = os.fork()
            if pid == 0:  # the child closes what it inherited, with or without an ID of its own
                code = 1
                try:
                    worker = -1
                    if issue_first:
                        parent.next_id()
                        worker = parent.worker_id
                    parent.close()
                    os.write(write, str(worker).encode())
                    code = 0
                finally:
                    os._exit(code)
            os.close(write)
            _, status = os.waitpid(pid, 0)
            worker = int(os.read(read, 100))
            os.close(read)
            assert os.waitstatus_to_exitcode(status) == 0
            # The parent's worker ID is still held, by the parent...
            with pytest.raises(rimeflake.LeaseError, match="held"):
                rimeflake.Generator(parent.worker_id, backend=url, namespace="py-fork-close")
            # ...while the child's own one was given back by its close.
            if issue_first:
                assert worker != parent.worker_id
                with rimeflake.Generator(worker, backend=url, namespace="py-fork-close") as again:
                    again.next_id()
        assert parent.next_id() > before
