"""rimeflake.skywalking.install_skywalking() against the real SkyWalking Python agent
(apache-skywalking, the version the Makefile pins): segments are made through the agent's own
API, and its reporter is never started, so nothing touches the network."""

from __future__ import annotations

import doctest
import json
import multiprocessing
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

import rimeflake
from rimeflake import skywalking
from rimeflake.skywalking import SkyWalkingAgentError, SkyWalkingPatch, install_skywalking

pytest.importorskip("skywalking", reason="apache-skywalking is not installed (make python-env installs it)")

from skywalking import config  # noqa: E402
from skywalking.agent import agent  # noqa: E402
from skywalking.trace import ID  # noqa: E402
from skywalking.trace.carrier import Carrier  # noqa: E402
from skywalking.trace.context import get_context  # noqa: E402
from skywalking.trace.segment import Segment, _NewID, _NewNoopID  # noqa: E402

GLOBAL_ID = re.compile(r"^([0-9a-f]{32})\.([0-9]+)\.([0-9]+)$")
UUID1_HEX = re.compile(r"^[0-9a-f]{32}$")
# The agent's ID class as the package ships it, before any test patches it.
AGENT_INIT = ID.__dict__["__init__"]


@pytest.fixture(autouse=True)
def unpatched() -> Iterator[None]:
    """Each test starts and ends with the agent's own ID class."""
    assert ID.__dict__["__init__"] is AGENT_INIT
    yield
    patch = skywalking._current
    if patch is not None:
        patch.uninstall()
    assert ID.__dict__["__init__"] is AGENT_INIT


@pytest.fixture
def reporting(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The agent's queues, as `agent.start()` makes them, without its reporter threads or any
    connection: finished segments wait in the segment queue, where `drain()` reads them."""
    monkeypatch.setattr(config, "agent_trace_reporter_max_buffer_size", 1_000_000)
    monkeypatch.setattr(config, "agent_profile_active", False)  # its service starts with agent
    agent._SkyWalkingAgent__init_queues()
    yield


def make_segments(n: int, carrier: Carrier | None = None) -> None:
    """`n` requests as an instrumented web framework records them: one entry span each."""
    for i in range(n):
        with get_context().new_entry_span(op=f"/orders/{i}", carrier=carrier):
            pass


def drain() -> list[Segment]:
    q = agent._SkyWalkingAgent__segment_queue
    out = []
    while not q.empty():
        out.append(q.get_nowait())
    return out


def ids_of(segments: list[Segment]) -> tuple[list[str], list[str]]:
    """(segment IDs, trace IDs) as the agent reports them."""
    return [str(s.segment_id) for s in segments], [str(s.related_traces[0]) for s in segments]


def test_segments_made_by_the_agent_carry_global_ids(reporting: None) -> None:
    install_skywalking()
    make_segments(500)
    segments = drain()
    assert len(segments) == 500
    seg_ids, trace_ids = ids_of(segments)
    for i in seg_ids + trace_ids:
        m = GLOBAL_ID.match(i)
        assert m is not None, i
        assert m[1] == skywalking.process_id()
    assert len(set(seg_ids + trace_ids)) == 1000
    # A segment's ID and its own new trace ID are made one after the other by one thread.
    assert type(segments[0].related_traces[0]) is _NewID


def test_propagated_trace_ids_are_kept(reporting: None) -> None:
    install_skywalking()
    upstream = Carrier(
        trace_id="a1b2c3d4e5f60718293a4b5c6d7e8f90.41.17000000000000001",
        segment_id="ffffffffffffffffffffffffffffffff.1.17000000000000000",
        span_id="3",
        service="checkout",
        service_instance="checkout-1",
        endpoint="/pay",
        client_address="10.0.0.1:8080",
    )
    received = Carrier()
    received.val = upstream.val  # the sw8 header, as a plugin reads it from a request
    make_segments(3, carrier=received)
    segments = drain()
    assert [str(s.related_traces[0]) for s in segments] == [upstream.trace_id] * 3
    assert [len(s.related_traces) for s in segments] == [1, 1, 1]
    assert all(GLOBAL_ID.match(str(s.segment_id)) for s in segments)
    assert ID("propagated").value == "propagated"
    assert ID(raw_id="propagated").value == "propagated"
    assert GLOBAL_ID.match(ID("").value), "an empty raw_id makes a new ID, as the agent's does"
    assert GLOBAL_ID.match(ID(None).value)


def test_cross_thread_continuation_keeps_the_trace(reporting: None) -> None:
    """A snapshot continued in another thread relates that thread's segment to the first
    segment's trace (the agent rebuilds it with `ID(ref.trace_id)`)."""
    install_skywalking()
    captured: list[Any] = []
    with get_context().new_entry_span(op="/parent"):
        captured.append(get_context().capture())

        def child() -> None:
            with get_context().new_local_span(op="child") as span:
                span.context.continued(captured[0])

        t = threading.Thread(target=child)
        t.start()
        t.join()
    segments = drain()
    assert len(segments) == 2
    _, trace_ids = ids_of(segments)
    assert trace_ids[0] == trace_ids[1] == str(captured[0].trace_id)
    assert GLOBAL_ID.match(trace_ids[0])
    assert segments[0].segment_id.value != segments[1].segment_id.value


def test_unique_across_threads(reporting: None) -> None:
    install_skywalking()
    threads = [threading.Thread(target=make_segments, args=(2_000,)) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seg_ids, trace_ids = ids_of(drain())
    assert len(seg_ids) == 16_000
    assert all(GLOBAL_ID.match(i) for i in seg_ids)
    assert len(set(seg_ids) | set(trace_ids)) == 32_000
    tokens = {GLOBAL_ID.match(i)[2] for i in seg_ids}  # type: ignore[index]
    assert len(tokens) == 8, "one thread token per thread"


def _worker_segments(n: int) -> tuple[int, list[str]]:
    make_segments(n)
    seg_ids, trace_ids = ids_of(drain())
    return os.getpid(), seg_ids + trace_ids


def test_unique_across_forked_workers(reporting: None) -> None:
    """Pre-forking servers (gunicorn, uWSGI, multiprocessing) fork after the patch and after
    the parent made IDs of its own; every worker's IDs differ from the parent's and each
    other's (the agent's uuid1 IDs repeated across forked workers)."""
    install_skywalking()
    make_segments(100)  # the forking thread has a token and a count that the children inherit
    parent_ids = ids_of(drain())
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(4) as pool:
        results = pool.map(_worker_segments, [2_500] * 8, chunksize=1)
    every = parent_ids[0] + parent_ids[1]
    prefixes = {GLOBAL_ID.match(i)[1] for i in every}  # type: ignore[index]
    for pid, ids in results:
        assert pid != os.getpid()
        assert len(ids) == 5_000
        every += ids
        prefixes |= {GLOBAL_ID.match(i)[1] for i in ids}  # type: ignore[index]
    assert len(every) == 200 + 8 * 5_000
    assert len(set(every)) == len(every)
    assert len(prefixes) == 1 + 4, "one process part for the parent and one per worker process"


def test_os_fork_child_makes_new_ids(reporting: None) -> None:
    install_skywalking()
    before = ID().value
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report its IDs, exit without running pytest's teardown
        try:
            os.write(w, json.dumps([ID().value for _ in range(1000)]).encode())
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        child = json.loads(f.read())
    os.waitpid(pid, 0)
    after = [ID().value for _ in range(1000)]
    assert len(set(child) | set(after) | {before}) == 2001
    assert {GLOBAL_ID.match(i)[1] for i in child} != {before.split(".")[0]}  # type: ignore[index]


def test_idempotent_and_uninstall_restores_the_agent() -> None:
    patch = install_skywalking()
    assert isinstance(patch, SkyWalkingPatch) and patch.installed
    assert install_skywalking() is patch
    assert patch.agent_version == metadata.version("apache-skywalking")
    assert GLOBAL_ID.match(ID().value) and GLOBAL_ID.match(_NewID().value)
    assert _NewNoopID().value == "", "the agent's no-op IDs stay empty"
    patch.uninstall()
    assert not patch.installed
    assert ID.__dict__["__init__"] is AGENT_INIT and "__new__" not in ID.__dict__
    assert UUID1_HEX.match(ID().value) and UUID1_HEX.match(_NewID().value)
    assert ID("kept").value == "kept"
    patch.uninstall()  # a second call does nothing
    assert ID.__dict__["__init__"] is AGENT_INIT
    with install_skywalking() as again:
        assert again is not patch and again.installed
        assert GLOBAL_ID.match(ID().value)
        patch.uninstall()  # an old handle does not undo a newer install
        assert again.installed
    assert not again.installed and UUID1_HEX.match(ID().value)


def test_concurrent_installs_give_one_patch() -> None:
    barrier = threading.Barrier(8)
    got: list[SkyWalkingPatch] = []

    def install() -> None:
        barrier.wait()
        got.append(install_skywalking())

    threads = [threading.Thread(target=install) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 8 and all(p is got[0] for p in got) and got[0].installed


def test_ids_stay_whole_while_the_patch_is_switched() -> None:
    """Threads making IDs while another installs and uninstalls: every ID is either the
    agent's or rimeflake's, whole, and none is lost to an exception."""
    stop = threading.Event()
    seen: list[list[str]] = []
    errors: list[BaseException] = []

    def make() -> None:
        mine: list[str] = []
        seen.append(mine)
        try:
            while not stop.is_set():
                mine.append(ID().value)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=make) for _ in range(2)]
    for t in threads:
        t.start()
    try:
        for _ in range(30):
            patch = install_skywalking()
            time.sleep(0.001)  # let the threads run under each state
            patch.uninstall()
            time.sleep(0.001)
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert not errors
    every = [i for ids in seen for i in ids]
    assert every and all(GLOBAL_ID.match(i) or UUID1_HEX.match(i) for i in every)
    assert any(GLOBAL_ID.match(i) for i in every), "the patch was in force part of the time"
    assert len(set(every)) == len(every)


def test_uninstall_leaves_a_later_patch_alone() -> None:
    patch = install_skywalking()

    def theirs(self: Any, raw_id: Any = None) -> None:
        self.value = "theirs"

    ID.__init__ = theirs
    try:
        patch.uninstall()
        assert ID.__dict__["__init__"] is theirs
        assert not patch.installed
    finally:
        ID.__init__ = AGENT_INIT


@pytest.mark.parametrize("version", ["0.8.0", "1.3.0", "2.0.0", "10.1.0", "dev"])
def test_unsupported_agent_versions_are_refused(monkeypatch: pytest.MonkeyPatch, version: str) -> None:
    real = metadata.version
    monkeypatch.setattr(metadata, "version", lambda d: version if d == "apache-skywalking" else real(d))
    with pytest.raises(SkyWalkingAgentError) as e:
        install_skywalking()
    assert isinstance(e.value, ImportError) and isinstance(e.value, rimeflake.RimeflakeError)
    assert f"apache-skywalking {version} is installed" in str(e.value)
    assert "pip install 'apache-skywalking>=1.0,<1.3'" in str(e.value)
    assert ID.__dict__["__init__"] is AGENT_INIT and "__new__" not in ID.__dict__


def test_a_missing_agent_is_a_clear_import_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "skywalking", None)  # what `import` sees when it is absent
    with pytest.raises(ImportError, match=r"pip install 'apache-skywalking>=1.0,<1.3'") as e:
        install_skywalking()
    assert isinstance(e.value, SkyWalkingAgentError) and e.value.name == "skywalking"


def test_the_agent_of_1_3_0_is_refused_and_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    """apache-skywalking 1.3.0 as its wheel installs it: `skywalking.trace.ID` is there, but the
    generated `skywalking.protocol` package is not, so `skywalking.agent` cannot be imported.
    install_skywalking() used to patch it all the same."""
    real = metadata.version
    monkeypatch.setattr(metadata, "version", lambda d: "1.3.0" if d == "apache-skywalking" else real(d))
    monkeypatch.setitem(sys.modules, "skywalking.protocol", None)
    with pytest.raises(SkyWalkingAgentError) as e:
        install_skywalking()
    assert str(e.value) == (
        "apache-skywalking 1.3.0 is installed, whose agent cannot be imported (it lacks the generated "
        "skywalking.protocol package); install_skywalking() supports apache-skywalking>=1.0,<1.3: "
        "pip install 'apache-skywalking>=1.0,<1.3'"
    )
    assert ID.__dict__["__init__"] is AGENT_INIT


def test_the_advised_range_holds_the_agent_the_tests_import() -> None:
    """The agent these tests run (its `skywalking.agent` imported above) lies in the range the
    advice names, and the package's `skywalking` extra installs that range."""
    version = metadata.version("apache-skywalking")
    low, high = re.fullmatch(r">=(\d+\.\d+),<(\d+\.\d+)", skywalking.SKYWALKING_SUPPORTED).groups()
    key = tuple(int(p) for p in version.split(".")[:2])
    assert tuple(map(int, low.split("."))) <= key < tuple(map(int, high.split("."))), version
    extras = [r for r in metadata.requires("rimeflake") or [] if "extra" in r]
    assert len(extras) == 1, extras
    requirement, marker = extras[0].replace(" ", "").split(";")
    assert requirement.startswith("apache-skywalking") and "skywalking" in marker, extras
    pins = set(requirement[len("apache-skywalking") :].strip("()").split(","))
    assert pins == set(skywalking.SKYWALKING_SUPPORTED.split(",")), extras


def test_an_id_class_of_another_shape_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    class OtherID:
        def __init__(self, value: str) -> None:
            self.value = value

    monkeypatch.setattr("skywalking.trace.ID", OtherID)
    with pytest.raises(SkyWalkingAgentError, match="__init__ takes raw_id"):
        install_skywalking()
    assert OtherID("x").value == "x"


def test_docstring_examples() -> None:
    failed, attempted = doctest.testmod(skywalking)
    assert attempted >= 2 and failed == 0


APP = """
import json, os, sys
from skywalking.trace import ID
import rimeflake.skywalking as sw
patched = sw._current is not None and sw._current.installed  # the runner's patch, in this module
print(json.dumps({"argv": sys.argv, "name": __name__, "path0": sys.path[0], "id": str(ID()),
                  "patched": patched}))
"""


def _run(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def test_runner_runs_a_script_with_the_patch(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(APP)
    proc = _run(["-m", "rimeflake.skywalking", "app.py", "--port", "8000"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["argv"] == ["app.py", "--port", "8000"] and out["name"] == "__main__"
    assert out["path0"] == str(tmp_path)
    assert GLOBAL_ID.match(out["id"]) and out["patched"] is True
    # The same program without the runner keeps the agent's own IDs.
    plain = json.loads(_run(["app.py"], tmp_path).stdout)
    assert UUID1_HEX.match(plain["id"]) and plain["patched"] is False


def test_runner_runs_a_module_with_the_patch(tmp_path: Path) -> None:
    (tmp_path / "service.py").write_text(APP)
    proc = _run(["-m", "rimeflake.skywalking", "-m", "service", "a"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["argv"][1:] == ["a"] and out["name"] == "__main__"
    assert GLOBAL_ID.match(out["id"]) and out["patched"] is True


def test_runner_usage_errors(tmp_path: Path) -> None:
    cases: list[tuple[list[str], int]] = [([], 2), (["-m"], 2), (["--help"], 0)]
    for args, code in cases:
        proc = _run(["-m", "rimeflake.skywalking", *args], tmp_path)
        assert proc.returncode == code, proc.stderr
        assert "python -m rimeflake.skywalking" in proc.stdout + proc.stderr


def test_sw_python_run_with_the_runner(tmp_path: Path) -> None:
    """The documented command, with the agent's own CLI: `sw-python run` starts the agent (its
    sitecustomize), the runner patches it, the app's segments carry global_id()s. The collector
    address is a closed local port, so nothing leaves the machine."""
    sw_python = Path(sys.executable).with_name("sw-python")
    if not sw_python.exists():
        pytest.skip("sw-python is not installed beside this interpreter")
    (tmp_path / "app.py").write_text(
        "from skywalking.agent import agent\n"
        "from skywalking.trace import ID\n"
        "from skywalking.trace.context import get_context\n"
        "assert agent._SkyWalkingAgent__started\n"
        "with get_context().new_entry_span(op='/x') as span:\n"
        "    print(span.context.segment.segment_id, span.context.segment.related_traces[0])\n"
    )
    env = dict(
        os.environ,
        SW_AGENT_COLLECTOR_BACKEND_SERVICES="127.0.0.1:9",
        SW_AGENT_PROTOCOL="http",
        SW_AGENT_LOGGING_LEVEL="CRITICAL",
        SW_AGENT_METER_REPORTER_ACTIVE="False",
        SW_AGENT_LOG_REPORTER_ACTIVE="False",
        SW_AGENT_PROFILE_ACTIVE="False",
        SW_AGENT_QUEUE_TIMEOUT="0",
    )
    proc = subprocess.run(
        [str(sw_python), "run", sys.executable, "-m", "rimeflake.skywalking", "app.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    seg, trace = proc.stdout.split()
    assert GLOBAL_ID.match(seg) and GLOBAL_ID.match(trace) and seg != trace
