#!/usr/bin/env bash
# Tests the Python artifacts in $dist (scripts/dist/python.sh makes them) as a user gets them:
# a local PyPI (pypiserver, on a free loopback port) serves the wheel and the sdist, and a fresh
# venv installs `rimeflake` by name from it, with no cargo, rustc or maturin on PATH, then runs
# the quick starts, type-checks against the installed stubs and checks the error classes.
set -euo pipefail
source "$(dirname "$0")/common.sh"

wheel=$(ls "$dist"/rimeflake-"$version"-cp39-abi3-manylinux*_x86_64.whl 2>/dev/null) ||
  die "no wheel of rimeflake $version in $dist: run make dist-python first"
sdist=$dist/rimeflake-$version.tar.gz
[ -f "$sdist" ] || die "no $sdist: run make dist-python first"

# The registry and the type checker a user's CI would have, in a venv of their own (pinned,
# installed once: the stamp names the pins).
tools=(pypiserver==2.4.2 mypy==2.4.1)
tools_venv=$target/pypi-venv
stamp=$tools_venv/.installed-$(printf '%s\n' "${tools[@]}" | sha256sum | cut -c1-16)
if [ ! -e "$stamp" ]; then
  say "python: pypiserver and mypy into $tools_venv (${tools[*]})"
  python3 -m venv "$tools_venv"
  "$tools_venv/bin/python" -m pip install --disable-pip-version-check -q "${tools[@]}"
  touch "$stamp"
fi

scratch work
mkdir "$work/packages"
cp "$wheel" "$sdist" "$work/packages/"
port=$(free_port)
say "python: local PyPI on 127.0.0.1:$port (pypiserver, packages in $work/packages)"
# --disable-fallback: a name it does not have is a 404, never a redirect to the real PyPI.
"$tools_venv/bin/pypi-server" run -i 127.0.0.1 -p "$port" --disable-fallback \
  "$work/packages" >"$work/pypiserver.log" 2>&1 &
pypi_pid=$!
on_exit "kill $pypi_pid 2>/dev/null; wait $pypi_pid 2>/dev/null"
wait_port "$port" 30 || { cat "$work/pypiserver.log" >&2; die "pypiserver did not listen on $port"; }
index=http://127.0.0.1:$port/simple/

venv=$work/venv
py=$venv/bin/python
# What the examples write stays in the scratch directory.
export RIMEFLAKE_STATE_DIR=$work/state RIMEFLAKE_NO_CONTAINER_WARNING=1

index_lists_both() {
  "$tools_venv/bin/python" - "$index" "${wheel##*/}" "${sdist##*/}" <<'EOF'
import sys, urllib.request
index, *files = sys.argv[1:]
page = urllib.request.urlopen(index + "rimeflake/", timeout=10).read().decode()
missing = [f for f in files if f not in page]
assert not missing, f"{index}rimeflake/ lacks {missing}:\n{page}"
print(f"{index}rimeflake/ lists", ", ".join(files))
EOF
}

# By name, from the local index only (no pip configuration file, no extra index or links from
# the environment); --only-binary: pip must take the wheel (the sdist would need cargo, which
# is not on PATH anyway).
install_by_name() {
  as_user python3 -m venv "$venv"
  as_user env -u PIP_FIND_LINKS -u PIP_EXTRA_INDEX_URL -u PIP_INDEX_URL PIP_CONFIG_FILE=/dev/null \
    "$py" -m pip install --disable-pip-version-check --no-cache-dir \
    --index-url "$index" --only-binary rimeflake "rimeflake==$version" | tee "$work/pip.log"
  grep -q "127.0.0.1:$port/packages/${wheel##*/}" "$work/pip.log" ||
    die "pip did not say it took ${wheel##*/} from the local PyPI"
  # The installed distribution is the wheel's: its WHEEL file carries the manylinux tag.
  as_user "$py" - "$version" <<'EOF'
import sys
from importlib import metadata
dist = metadata.distribution("rimeflake")
assert dist.version == sys.argv[1], dist.version
tags = [line for line in dist.read_text("WHEEL").splitlines() if line.startswith("Tag:")]
assert any("cp39-abi3-manylinux" in t for t in tags), tags
print("installed rimeflake", dist.version, "from the wheel:", ", ".join(tags))
# What PyPI shows beside it: the project's links, and extras for users only (the tests' tools
# come from the Makefile, not from a public extra).
urls = dict(u.split(", ", 1) for u in dist.metadata.get_all("Project-URL") or [])
for label in ("Homepage", "Documentation", "Repository", "Issues", "Changelog", "Security"):
    assert urls.get(label, "").startswith("https://github.com/rimeflake/rimeflake"), (label, urls)
extras = dist.metadata.get_all("Provides-Extra") or []
assert extras == ["skywalking"], extras
print("Project-URLs:", ", ".join(urls), "; extras:", ", ".join(extras))
EOF
}

# The extension as installed: stripped, no debug sections, and it needs nothing beyond glibc.
extension_is_lean() {
  local so
  so=$(as_user "$py" -c 'import rimeflake._native as n; print(n.__file__)')
  echo "$so: $(stat -c %s "$so") bytes"
  ! readelf -S "$so" | grep -q '\.debug_\|\.symtab' || die "$so has debug or symbol sections"
  readelf -d "$so" | grep NEEDED
  ! readelf -d "$so" | grep NEEDED | grep -v -e 'lib\(c\|m\|pthread\|dl\|rt\|gcc_s\|util\)\.so' -e 'ld-linux' ||
    die "$so needs a library outside glibc and libgcc"
}

quickstart() {
  # From a directory of its own: nothing of the checkout is importable there.
  mkdir -p "$work/run"
  (cd "$work/run" && as_user "$py" -W error "$root/examples/python/quickstart.py")
}

# The package's README is its page on PyPI: its snippet runs as written.
package_readme() {
  "$tools_venv/bin/python" - "$root/bindings-python/README.md" "$work/run/readme.py" <<'EOF'
import re, sys
blocks = re.findall(r"```python\n(.*?)```", open(sys.argv[1]).read(), flags=re.S)
assert blocks, "the package README has no Python snippet"
open(sys.argv[2], "w").write(blocks[0])
EOF
  (cd "$work/run" && as_user "$py" -W error readme.py)
}

# mypy --strict, run on the installed package (PEP 561: py.typed and the .pyi stubs in the
# wheel), over the quick start and the calls users type.
stubs() {
  local site
  site=$(as_user "$py" -c 'import rimeflake, os; print(os.path.dirname(rimeflake.__file__))')
  for f in py.typed _native.pyi; do [ -f "$site/$f" ] || die "$site/$f is not installed"; done
  cat >"$work/run/typed.py" <<'EOF'
import rimeflake

SPEC = "clock_id=0,time=41,worker=10,sequence=12,datacenter=5,epoch_ms=1420070400000"


def first() -> int:
    with rimeflake.Generator(1, layout=SPEC, backend="memory") as gen:
        return gen.next_id()


layout: rimeflake.Layout = rimeflake.Layout(SPEC)
assert layout == rimeflake.Layout.from_spec(SPEC)
name: rimeflake.LayoutName = "twitter"
parts: rimeflake.Parts = rimeflake.decode(first(), layout=SPEC)
assert rimeflake.decode(first(), layout=name).worker_id == parts.worker_id == 1
assert isinstance(rimeflake.Generator(2, layout=layout, backend="memory").next_id(), int)
EOF
  (cd "$work/run" && "$tools_venv/bin/python" -m mypy --strict --no-incremental \
    --python-executable "$py" typed.py "$root/examples/python/quickstart.py")
  # A wrong argument type is caught through the stubs: they are read, not ignored.
  printf 'import rimeflake\nrimeflake.Generator(1, layout=3)\n' >"$work/run/wrong.py"
  if (cd "$work/run" && "$tools_venv/bin/python" -m mypy --strict --no-incremental \
    --python-executable "$py" wrong.py >"$work/wrong.txt"); then
    die "mypy accepted layout=3"
  fi
  grep 'wrong.py:2: error:.*"layout"' "$work/wrong.txt"
  (cd "$work/run" && as_user "$py" -W error typed.py)
}

error_classes() {
  (cd "$work/run" && as_user "$py" -W error - <<'EOF'
import rimeflake

def raises(cls, call):
    try:
        call()
    except cls as e:
        return e
    raise AssertionError(f"{call} did not raise {cls.__name__}")

# The tests' hooks are built only with the internals feature, which no wheel has.
from rimeflake import _native
hooks = [name for name in ("_error_kinds", "_raise_kind") if hasattr(_native, name)]
assert not hooks, f"test hooks shipped: {hooks}"

e = raises(rimeflake.InvalidIdError, lambda: rimeflake.decode(-1))
assert isinstance(e, ValueError) and isinstance(e, rimeflake.RimeflakeError), type(e).__mro__
e = raises(rimeflake.ConfigError, lambda: rimeflake.Generator(1, layout="twiter", backend="memory"))
assert isinstance(e, ValueError) and "twiter" in str(e), e
# A state directory nobody can write: a file-system failure, so an OSError.
e = raises(OSError, lambda: rimeflake.Generator(state_dir="/proc"))
assert isinstance(e, rimeflake.RimeflakeError), type(e).__mro__
print(f"state_dir='/proc': {type(e).__name__}: {e}")
assert issubclass(rimeflake.StateError, OSError) and issubclass(rimeflake.LeaseError, OSError)
assert issubclass(rimeflake.NoFreeWorkerError, rimeflake.LeaseError)
assert issubclass(rimeflake.OverloadedError, TimeoutError)
errors = [getattr(rimeflake, name) for name in rimeflake.__all__]
errors = [c for c in errors if isinstance(c, type) and issubclass(c, rimeflake.RimeflakeError)]
assert len(errors) == 11, errors
for cls in errors:
    assert cls.__module__ == "rimeflake" and cls.__doc__, cls
print("error classes:", ", ".join(c.__name__ for c in errors))
EOF
  )
}

check "the local PyPI lists the wheel and the sdist" index_lists_both
check "pip install rimeflake by name, from the wheel (no cargo, rustc, maturin on PATH)" install_by_name
check "the installed extension is stripped and needs only glibc" extension_is_lean
check "examples/python/quickstart.py on the installed package" quickstart
check "the package README's snippet on the installed package" package_readme
check "mypy --strict against the installed stubs (py.typed)" stubs
check "the error classes (python -c)" error_classes
summary
