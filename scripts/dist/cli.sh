#!/usr/bin/env bash
# dist/rimeflake-cli-<version>-<triple>.tar.gz: the rimeflake command as a release ships it.
#   rimeflake-cli-<version>-<triple>/rimeflake   the release build of crates/rimeflake-cli,
#                                                stripped (the release profile strips it),
#                                                linked by zig against glibc 2.17's symbols
#                                                (common.sh: zig_build), as the wheel is
#   rimeflake-cli-<version>-<triple>/LICENSE, README.md (which states the glibc measured here)
# The CLI's default features, which this build keeps: the Redis, PostgreSQL, MySQL and ZooKeeper
# backends (with TLS) and `rimeflake serve`, so nothing is missing from what ships.
set -euo pipefail
source "$(dirname "$0")/common.sh"

# grep -q for a pipeline: reads all its input, so the command before it never dies of SIGPIPE
# (which `set -o pipefail` would count as the pipeline failing, or not matching).
matches() { grep "$@" >/dev/null; }

top=rimeflake-cli-$version-$triple
say "CLI: cargo zigbuild --release -p rimeflake-cli for glibc $glibc, whole-program LTO (a cold build takes several minutes)"
# Whole-program (fat) LTO for the command alone: with every backend and serve it is the largest
# file shipped, and fat LTO keeps it within the size target (common.sh: elf_max; 7.0 MB with the
# release profile's thin LTO, 6.2 MB with fat, measured 2026-12-07). The libraries keep thin LTO.
export CARGO_PROFILE_RELEASE_LTO=fat
zig_build -p rimeflake-cli
bin=$zig_release/rimeflake
# What ships carries no symbol table and no debug info.
file -b "$bin" | matches ', stripped' || die "$bin is not stripped: the release profile should strip it"
# The glibc it needs, as measured (its newest symbol version), and the libraries it loads: what
# its README tells the user.
at_most_glibc "$bin" || die "$bin needs $(newest_glibc "$bin"), newer than glibc $glibc"
needs=$(newest_glibc "$bin")
needs=${needs#GLIBC_}
libs=$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | sed 's/.*/`&`/' | paste -sd ',' - | sed 's/,/, /g')
echo "rimeflake needs glibc $needs or later; it loads: $libs"
# What the README says: glibc's libraries alone.
if readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' |
  grep -Ev '^(libc|libm|libpthread|libdl|librt|libutil)\.so\.[0-9]+$|^ld-linux-x86-64\.so\.2$'; then
  die "rimeflake loads the libraries above, which are not glibc's"
fi

scratch stage
mkdir "$stage/$top"
install -m 755 "$bin" "$stage/$top/rimeflake"
install -m 644 "$root/LICENSE" "$stage/$top/LICENSE"
cat >"$stage/$top/README.md" <<README
# rimeflake $version, the command line ($triple)

\`rimeflake\` generates and decodes 64-bit, time-ordered, unique IDs that survive clock
rollbacks, restarts and forks. Put it on your PATH and run \`rimeflake gen\`, \`rimeflake decode\`,
\`rimeflake state show\` or \`rimeflake --help\`; \`rimeflake serve\` serves IDs over HTTP
(https://github.com/rimeflake/rimeflake/blob/main/docs/serve.md). It runs on x86-64 Linux with
glibc $needs or later (RHEL 7 has 2.17, Amazon Linux 2 2.26, Ubuntu 20.04 2.31): the newest
glibc symbol version it uses is GLIBC_$needs. It loads no library but glibc's own, which every
such system has:
$libs.
The Redis, PostgreSQL, MySQL and ZooKeeper backends (\`--backend redis://...\`,
\`postgresql://...\`, \`mysql://...\`, \`zookeeper://...\`, TLS included, through rustls: no
OpenSSL) are built in. License: MIT (LICENSE).
README

mkdir -p "$dist"
# This artifact of an earlier version, if any (the other artifacts are other names).
rm -f "$dist"/rimeflake-cli-[0-9]*-"$triple".tar.gz
# A tarball that is the same for the same files: sorted names, no owner, the commit's time.
mtime=$(git -C "$root" log -1 --format=%ct 2>/dev/null || date +%s)
tar -C "$stage" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$mtime" \
  -cf - "$top" | gzip -n -9 >"$dist/$top.tar.gz"
echo "wrote $dist/$top.tar.gz ($(stat -c %s "$dist/$top.tar.gz") bytes; rimeflake $(stat -c %s "$bin") bytes)"
