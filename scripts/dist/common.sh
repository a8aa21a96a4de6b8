# Sourced by the scripts in scripts/dist: where things are, and the environment a user has.
#   root      the checkout
#   dist      where the release artifacts go (DIST, default <root>/dist)
#   version   the workspace version (Cargo.toml), shared by the crate, the wheel and npm
#   target    cargo's target directory (CARGO_TARGET_DIR, default <root>/target)
#   triple    the Rust target triple the artifacts are built for (this machine's)
# and the functions below.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dist=${DIST:-$root/dist}
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -n 1)
target=${CARGO_TARGET_DIR:-$root/target}
case "$target" in /*) ;; *) target=$root/$target ;; esac
triple=x86_64-unknown-linux-gnu

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
