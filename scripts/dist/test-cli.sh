#!/usr/bin/env bash
# Tests dist/rimeflake-cli-<version>-<triple>.tar.gz as a user gets it: unpacked into a temporary
# directory and run from there with no Rust toolchain on PATH, its state in a temporary directory.
set -euo pipefail
source "$(dirname "$0")/common.sh"

# grep -q for a pipeline: reads all its input, so the command before it never dies of SIGPIPE
# (which `set -o pipefail` would count as the pipeline failing, or not matching).
matches() { grep "$@" >/dev/null; }

top=rimeflake-cli-$version-$triple
tarball=$dist/$top.tar.gz
[ -f "$tarball" ] || die "$tarball is missing: run make dist-cli"

scratch work
tar -xzf "$tarball" -C "$work"
bin=$work/$top/rimeflake
export RIMEFLAKE_STATE_DIR=$work/state
# No container warning on stderr: the checks below compare what the command prints.
export RIMEFLAKE_NO_CONTAINER_WARNING=1

contents() {
  local got
  got=$(tar -tzf "$tarball" | sort | tr '\n' ' ')
  [ "$got" = "$top/ $top/LICENSE $top/README.md $top/rimeflake " ] || die "tarball holds: $got"
  [ -x "$bin" ] || die "rimeflake is not executable"
  # Stripped: no symbol table, no debug sections.
  if readelf -S --wide "$bin" | matches -E ' \.(symtab|debug_[a-z_]+) '; then die "rimeflake is not stripped"; fi
  # Nothing but glibc and the loader: TLS is rustls, not OpenSSL.
  local other
  other=$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' |
    grep -Ev '^(libc|libm|libgcc_s|libpthread|libdl|librt|libutil)\.so\.[0-9]+$|^ld-linux' || true)
  [ -z "$other" ] || die "rimeflake needs more than glibc: $other"
}

version_line() {
  local got
  got=$(as_user "$bin" --version)
  [ "$got" = "rimeflake $version" ] || die "--version printed '$got', expected 'rimeflake $version'"
}

gen_decode() {
  local ids first last decoded
  ids=$(as_user "$bin" gen -n 3)
  [ "$(wc -l <<<"$ids")" = 3 ] || die "gen -n 3 printed: $ids"
  first=$(head -n 1 <<<"$ids")
  last=$(tail -n 1 <<<"$ids")
  [[ "$first" =~ ^[0-9]+$ && "$last" =~ ^[0-9]+$ ]] || die "gen printed non-numeric IDs: $ids"
  [ "$first" -lt "$last" ] || die "IDs do not increase: $ids"
  # A second process goes on above the first one's IDs (its state file is in the state dir).
  local next
  next=$(as_user "$bin" gen)
  [ "$next" -gt "$last" ] || die "a second run gave $next, not above $last"
  decoded=$(as_user "$bin" decode "$last")
  echo "$decoded"
  # The decoded time is today's date (UTC), read with the default layout the IDs were made with.
  grep -q "$(date -u +%Y-%m-%d)" <<<"$decoded" || die "decode does not show today's date"
}

state_show() {
  local shown
  shown=$(as_user "$bin" state show)
  echo "$shown"
  # The worker ID the runs above leased, in the default namespace.
  grep -q default <<<"$shown" || die "state show does not list the default namespace"
}

# The backends are built in: a Redis or PostgreSQL URL with nothing listening fails to connect
# (an error naming that server and the refused connection), not as an unknown or missing backend.
backends() {
  local port url out status
  port=$(free_port)
  for url in "redis://127.0.0.1:$port" "postgresql://rimeflake@127.0.0.1:$port/rimeflake"; do
    status=0
    out=$(as_user "$bin" gen --backend "$url" 2>&1) || status=$?
    echo "$out"
    [ "$status" = 1 ] || die "gen --backend $url: exit $status, expected 1 (a failure to connect)"
    grep -q "$url" <<<"$out" || die "the error does not name $url"
    grep -qi 'refused' <<<"$out" || die "the error is not a refused connection"
  done
}

check "CLI tarball: its files; rimeflake stripped, needing only glibc" contents
# `rimeflake serve` is in the binary: it serves an ID over HTTP, and SIGTERM stops it with exit 0.
serves() {
  local port pid answer status=0
  port=$(free_port)
  # exec: $! is the server itself, which the SIGTERM below must reach.
  (PATH=$(user_path) exec "$bin" serve --listen "127.0.0.1:$port" >/dev/null 2>"$work/serve.log") &
  pid=$!
  wait_port "$port" 30 || { cat "$work/serve.log"; die "rimeflake serve did not listen on $port"; }
  exec 3<>"/dev/tcp/127.0.0.1/$port"
  printf 'GET /id HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n' >&3
  answer=$(cat <&3)
  exec 3<&-
  echo "$answer" | tail -n 1
  matches -E '^HTTP/1.1 200' <<<"$answer" || die "GET /id answered: $answer"
  matches -E '^[0-9]+\r?$' <<<"$(tail -n 1 <<<"$answer")" || die "GET /id gave no ID: $answer"
  kill -TERM "$pid"
  wait "$pid" || status=$?
  [ "$status" = 0 ] || die "rimeflake serve exited $status after SIGTERM: $(cat "$work/serve.log")"
}

check "rimeflake --version" version_line
check "rimeflake gen, then decode" gen_decode
check "rimeflake state show" state_show
check "the Redis and PostgreSQL backends are built in" backends
check "rimeflake serve serves an ID and stops on SIGTERM" serves
summary
