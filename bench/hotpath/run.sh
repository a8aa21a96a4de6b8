#!/usr/bin/env bash
# Compares `next_id` of the core at a past commit with the working tree's, in one run:
# bench/hotpath/main.rs is built against each (release, the workspace's profile), and the two
# binaries run in turns, ROUNDS times each, the first of each round alternating, on one machine
# at one time. Prints a table of medians and ratios (after / before); with --write, puts it in
# bench/RESULTS.md between <!-- hotpath:begin --> and <!-- hotpath:end -->.
#
#   bench/hotpath/run.sh <commit> [--write]      (make bench-hotpath BEFORE=<commit>)
set -euo pipefail

before=${1:?usage: bench/hotpath/run.sh <commit> [--write]}
write=${2:-}
root=$(cd "$(dirname "$0")/../.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
work=$target/hotpath
rounds=${ROUNDS:-5}
rev=$(git -C "$root" rev-parse --short "$before^{commit}")
here=$(git -C "$root" rev-parse --short HEAD)
dirty=$(git -C "$root" status --porcelain -- crates/rimeflake | grep -q . && echo " (with uncommitted changes)" || true)

rm -rf "$work/before-src"
mkdir -p "$work/before-src"
git -C "$root" archive "$rev" | tar -x -C "$work/before-src"

# One small package per build of the core, outside the workspace ([workspace] of its own).
project() { # label core-dir
  local dir=$work/$1
  mkdir -p "$dir"
  cat >"$dir/Cargo.toml" <<TOML
[package]
name = "rimeflake-hotpath-$1"
version = "0.0.0"
edition = "2021"
publish = false

[[bin]]
name = "hotpath-$1"
path = "$root/bench/hotpath/main.rs"

[dependencies]
rimeflake = { path = "$2", features = ["redis"] }
libc = "0.2"

[profile.release]
lto = "thin"
codegen-units = 1
debug = false
strip = true

[workspace]
TOML
  cp "$root/Cargo.lock" "$dir/Cargo.lock"
  CARGO_TARGET_DIR=$work/target cargo build -q --release --manifest-path "$dir/Cargo.toml"
}
echo "building the core at $rev and at $here$dirty (release)..." >&2
project before "$work/before-src/crates/rimeflake"
project after "$root/crates/rimeflake"

redis_dir=$(mktemp -d)
redis_pid=
cleanup() {
  [ -n "$redis_pid" ] && kill "$redis_pid" 2>/dev/null || true
  rm -rf "$redis_dir"
}
trap cleanup EXIT
if command -v redis-server >/dev/null; then
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$redis_dir" \
    --daemonize no >"$redis_dir/log" 2>&1 &
  redis_pid=$!
  for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done
  export RIMEFLAKE_HOTPATH_REDIS=redis://127.0.0.1:$port/0
  export RIMEFLAKE_NO_DURABILITY_WARNING=1
fi

out=$work/runs.txt
: >"$out"
for round in $(seq "$rounds"); do
  if (( round % 2 )); then order="before after"; else order="after before"; fi
  for label in $order; do
    echo "round $round/$rounds: $label" >&2
    "$work/target/release/hotpath-$label" | sed "s/^/$round $label /" >>"$out"
  done
done

python3 - "$out" "$rev" "$here$dirty" "$rounds" "$write" "$root/bench/RESULTS.md" <<'PY'
import os, platform, statistics, sys
runs, rev, here, rounds, write, results = sys.argv[1:]
rows = [line.split() for line in open(runs) if line.strip()]
by = {}
for rnd, label, kind, wall, cpu in rows:
    by.setdefault(kind, {}).setdefault(label, {})[int(rnd)] = (float(wall), float(cpu))
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
load = open("/proc/loadavg").read().split()[:3]
lines = [
    f"`next_id` on one thread, the core at {rev} (before) and at {here} (after), built alike and "
    f"run in turns, {rounds} rounds ({cpu}, {os.cpu_count()} CPUs, load {' '.join(load)} at the "
    "end). Each figure is one process's median of 5 repetitions of 10 loops of 100,000 IDs "
    "(twitter layout, a pause after each loop), timed by the wall clock and by the thread's CPU "
    "time (which leaves out time spent descheduled on a busy machine); ratios are after / "
    "before: of the medians over the rounds, and the median of the per-round ratios. The "
    "verdict reads the CPU-time ratios.",
    "",
    "| generator | before ns/ID (wall, CPU) | after ns/ID (wall, CPU) | wall ratio of medians | CPU ratio of medians | CPU median per-round ratio | within 1.03x |",
    "|---|---:|---:|---:|---:|---:|---|",
]
for kind in ("memory", "embedded", "redis"):
    if kind not in by:
        continue
    b, a = by[kind].get("before", {}), by[kind].get("after", {})
    med = lambda d, i: statistics.median(v[i] for v in d.values())
    wb, wa, cb, ca = med(b, 0), med(a, 0), med(b, 1), med(a, 1)
    per = statistics.median(a[r][1] / b[r][1] for r in a if r in b)
    ok = "yes" if min(ca / cb, per) <= 1.03 else "no"
    lines.append(f"| {kind} | {wb:.2f}, {cb:.2f} | {wa:.2f}, {ca:.2f} | {wa/wb:.3f} | {ca/cb:.3f} | {per:.3f} | {ok} |")
lines.append("")
lines.append(f"Command: `make bench-hotpath BEFORE={rev}`.")
text = "\n".join(lines)
print(text)
if write == "--write":
    begin, end = "<!-- hotpath:begin -->", "<!-- hotpath:end -->"
    doc = open(results).read()
    block = f"{begin}\n{text}\n{end}"
    if begin in doc:
        doc = doc[: doc.index(begin)] + block + doc[doc.index(end) + len(end):]
    else:
        doc = doc.rstrip("\n") + "\n\n## Hot path: before and after a change\n\n" + block + "\n"
    open(results, "w").write(doc)
PY
