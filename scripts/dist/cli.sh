#!/usr/bin/env bash
# dist/rimeflake-cli-<version>-<triple>.tar.gz: the rimeflake command as a release ships it.
#   rimeflake-cli-<version>-<triple>/rimeflake   the release build of crates/rimeflake-cli,
#                                                stripped (the release profile strips it)
#   rimeflake-cli-<version>-<triple>/LICENSE, README.md
# The CLI always has the Redis, PostgreSQL, MySQL and ZooKeeper backends (its dependency on
# rimeflake turns them on; it has no features of its own), so this one build is the one to ship.
set -euo pipefail
source "$(dirname "$0")/common.sh"

# grep -q for a pipeline: reads all its input, so the command before it never dies of SIGPIPE
# (which `set -o pipefail` would count as the pipeline failing, or not matching).
matches() { grep "$@" >/dev/null; }

top=rimeflake-cli-$version-$triple
say "CLI: cargo build --release -p rimeflake-cli (a cold build takes several minutes)"
(cd "$root" && cargo build --release -p rimeflake-cli)
bin=$target/release/rimeflake
# What ships carries no symbol table and no debug info.
file -b "$bin" | matches ', stripped' || die "$bin is not stripped: the release profile should strip it"

scratch stage
mkdir "$stage/$top"
install -m 755 "$bin" "$stage/$top/rimeflake"
install -m 644 "$root/LICENSE" "$stage/$top/LICENSE"
cat >"$stage/$top/README.md" <<README
# rimeflake $version, the command line ($triple)

\`rimeflake\` generates and decodes 64-bit, time-ordered, unique IDs that survive clock
rollbacks, restarts and forks. Put it on your PATH and run \`rimeflake gen\`, \`rimeflake decode\`,
\`rimeflake state show\` or \`rimeflake --help\`. It needs glibc and nothing else; the Redis,
PostgreSQL, MySQL and ZooKeeper backends (\`--backend redis://...\`, \`postgresql://...\`,
\`mysql://...\`, \`zookeeper://...\`, TLS included) are built in.
License: MIT (LICENSE).
README

mkdir -p "$dist"
# This artifact of an earlier version, if any (the other artifacts are other names).
rm -f "$dist"/rimeflake-cli-[0-9]*-"$triple".tar.gz
# A tarball that is the same for the same files: sorted names, no owner, the commit's time.
mtime=$(git -C "$root" log -1 --format=%ct 2>/dev/null || date +%s)
tar -C "$stage" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$mtime" \
  -cf - "$top" | gzip -n -9 >"$dist/$top.tar.gz"
echo "wrote $dist/$top.tar.gz ($(stat -c %s "$dist/$top.tar.gz") bytes; rimeflake $(stat -c %s "$bin") bytes)"
