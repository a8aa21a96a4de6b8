# Sourced by the scripts in scripts/dist: where things are, and the environment a user has.
#   root      the checkout
#   dist      where the release artifacts go (DIST, default <root>/dist)
#   version   the workspace version (Cargo.toml), shared by the crate, the wheel and npm
#   target    cargo's target directory (CARGO_TARGET_DIR, default <root>/target)
#   triple    the Rust target triple the artifacts are built for (this machine's)
#   glibc     the oldest glibc what ships runs on (its symbols are linked against that version)
# and the functions below.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dist=${DIST:-$root/dist}
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -n 1)
target=${CARGO_TARGET_DIR:-$root/target}
case "$target" in /*) ;; *) target=$root/$target ;; esac
triple=x86_64-unknown-linux-gnu
glibc=2.17
# The size targets of what ships (sums.sh reports them, test-elf.sh enforces them): each ELF file
# but a static archive at most elf_max bytes unpacked; the wheel and each npm platform package at
# most download_max bytes as downloaded.
elf_max=$((6 * 1048576))
download_max=$((3 * 1048576))
# mib BYTES: the size in MiB, two decimals.
mib() { awk -v b="$1" 'BEGIN { printf "%.2f MiB", b / 1048576 }'; }

# What ships is linked against glibc $glibc's symbols, whatever glibc builds it: zig (PyPI's
# ziglang) compiles the C parts (ring) and links, knowing every glibc's symbol versions. maturin
# --zig drives it for the wheel, cargo-zigbuild (PyPI, the tool maturin embeds) for the CLI and
# the C library; both find zig as `python3 -m ziglang`. The pins, installed once into
# $target/dist-venv (tool_venv). ziglang 0.15.1 is a zig
# that maturin 1.16's and cargo-zigbuild 0.24's wrappers drive.
dist_tools=(maturin==1.16.0 ziglang==0.15.1 auditwheel==6.8.2 cargo-zigbuild==0.24.0)
dist_venv=$target/dist-venv
# Where a zig build of the release profile lands (cargo's directory for an explicit --target).
zig_release=$target/$triple/release

# tool_venv DIR PIN...: a venv in DIR with the pinned PyPI packages, installed once (the stamp
# names the pins, so changing one reinstalls).
tool_venv() {
  local venv=$1 stamp
  shift
  stamp=$venv/.installed-$(printf '%s\n' "$@" | sha256sum | cut -c1-16)
  if [ ! -e "$stamp" ]; then
    say "tools into $venv ($*)"
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --disable-pip-version-check -q "$@"
    touch "$stamp"
  fi
}

# zig_env: the pinned build tools installed (once) and first on PATH.
zig_env() {
  tool_venv "$dist_venv" "${dist_tools[@]}"
  # The venv's python3 comes first: it is the one with the ziglang module.
  export PATH=$dist_venv/bin:$PATH
}

# zig_build CARGO_ARG...: `cargo build --release` for $triple against glibc $glibc, through
# cargo-zigbuild (the target's `.2.17` suffix is its way of naming the glibc); the results are in
# $zig_release.
zig_build() {
  zig_env
  (cd "$root" && cargo zigbuild --release --target "$triple.$glibc" "$@")
}

# newest_glibc FILE: the newest GLIBC_x.y symbol version that the ELF file FILE needs (empty
# when it needs none).
newest_glibc() {
  local syms
  syms=$(objdump -T "$1") || return 1
  grep -o 'GLIBC_[0-9][0-9.]*' <<<"$syms" | sort -uV | tail -n 1
}
# unversioned FILE: the functions FILE needs that no library it is linked with defined when it
# was linked (strong undefined symbols without a version): linked against glibc $glibc's
# symbols, a glibc function newer than that shows up here (getrandom, 2.25), and the loader of
# an older glibc refuses the file. Those of the program that loads it are no such function:
# Python's (Py*, _Py*) for the wheel's extension, Node's (napi_*, node_api_*) for the addon.
unversioned() {
  local syms
  syms=$(readelf --dyn-syms --wide "$1") || return 1
  awk '$7 == "UND" && $5 == "GLOBAL" && $8 !~ /@/ && $8 !~ /^(_?Py|napi_|node_api_)/ { print $8 }' <<<"$syms"
}
# at_most_glibc FILE: FILE needs no glibc newer than $glibc: no newer symbol version, and no
# function missing from that version (unversioned).
at_most_glibc() {
  local newest missing
  newest=$(newest_glibc "$1") || return 1
  missing=$(unversioned "$1") || return 1
  [ -z "$missing" ] || { echo "$1 needs functions that glibc $glibc lacks: $missing" >&2; return 1; }
  [ -z "$newest" ] || [ "$(printf '%s\n' "$newest" "GLIBC_$glibc" | sort -V | tail -n 1)" = "GLIBC_$glibc" ]
}

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
die() { echo "${0##*/}: $*" >&2; exit 1; }

# A PATH with no Rust toolchain and no maturin on it, as a user who installs from a registry
# has: every directory holding cargo, rustc or maturin is dropped.
user_path() {
  local dir out=()
  IFS=: read -r -a dirs <<<"$PATH"
  for dir in "${dirs[@]}"; do
    [ -n "$dir" ] || continue
    [ -e "$dir/cargo" ] || [ -e "$dir/rustc" ] || [ -e "$dir/maturin" ] && continue
    out+=("$dir")
  done
  (IFS=:; echo "${out[*]}")
}

# Runs "$@" with user_path's PATH, after checking that cargo, rustc and maturin are gone.
as_user() {
  local path
  path=$(user_path)
  for t in cargo rustc maturin; do
    if PATH=$path command -v "$t" >/dev/null; then die "$t is still on PATH ($(PATH=$path command -v "$t"))"; fi
  done
  PATH=$path "$@"
}

# scratch VAR: a fresh temporary directory in VAR, removed when the script exits (kept with
# RIMEFLAKE_KEEP_SCRATCH=1). Not through $(...): the subshell would forget it.
scratch() {
  local _dir
  _dir=$(mktemp -d "${TMPDIR:-/tmp}/rimeflake-dist.XXXXXX")
  _scratch_dirs+=("$_dir")
  trap '_cleanup' EXIT
  printf -v "$1" %s "$_dir"
}
_scratch_dirs=()
_cleanup_hooks=()
# on_exit CMD: run CMD (a string) when the script exits, before the scratch directories go.
on_exit() { _cleanup_hooks+=("$1"); trap '_cleanup' EXIT; }
_cleanup() {
  local h
  for h in "${_cleanup_hooks[@]}"; do eval "$h" || true; done
  [ "${RIMEFLAKE_KEEP_SCRATCH:-}" = 1 ] || rm -rf "${_scratch_dirs[@]}"
}

# A free TCP port on 127.0.0.1.
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# wait_port PORT SECONDS: until something listens on 127.0.0.1:PORT.
wait_port() {
  local port=$1 deadline=$((SECONDS + $2))
  until (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.2
  done
}

# check NAME CMD...: runs one check of the artifact, says whether it passed, and counts it;
# summary prints the count in the form test runners close with, and fails if any check failed.
_passed=0
_failed=0
check() {
  local name=$1
  shift
  say "$name"
  # A subshell outside any condition, so that `set -e` holds inside the check's functions.
  local status
  set +e
  (set -e; "$@")
  status=$?
  set -e
  if [ "$status" = 0 ]; then
    _passed=$((_passed + 1)); echo "ok: $name"
  else
    _failed=$((_failed + 1)); echo "FAILED: $name (exit $status)" >&2
  fi
}
summary() {
  echo "${0##*/}: $_passed passed, $_failed failed"
  [ "$_failed" = 0 ]
}

# results_section HEADING FILE: puts "## HEADING" followed by FILE's text into bench/RESULTS.md,
# in place of the section whose heading starts as HEADING does up to its first " (" (so a new
# date replaces the old section), or at the end.
results_section() {
  python3 - "$root/bench/RESULTS.md" "$1" "$2" <<'PY'
import re, sys
path, heading, body = sys.argv[1], sys.argv[2], open(sys.argv[3]).read()
text = open(path).read()
section = f"## {heading}\n\n{body.rstrip()}\n\n"
stem = re.escape(heading.split(" (")[0])
pattern = re.compile(rf"^## {stem}( \([^\n]*)?\n.*?(?=^## |\Z)", re.S | re.M)
text = pattern.sub(lambda _: section, text, count=1) if pattern.search(text) else text.rstrip("\n") + "\n\n" + section
open(path, "w").write(text)
PY
  echo "updated $root/bench/RESULTS.md (## $1)"
}
