#!/usr/bin/env bash
# The C library's size for each choice of server backends (rimeflake-capi's cargo features),
# each built as c.sh builds the shipped one (the release profile, zig for glibc 2.17) and
# installed as it installs it (install.sh strips the archive's debug info):
#   c-sizes.sh            print the table
#   c-sizes.sh --results  also put it into bench/RESULTS.md ("C library by build option")
# The shipped build (both backends) is built last, so $zig_release holds it afterwards.
set -euo pipefail
source "$(dirname "$0")/common.sh"

scratch work
{
  echo "| features | \`librimeflake.so\` | \`librimeflake.a\` | glibc | a server URL |"
  echo "|---|---:|---:|---|---|"
} >"$work/table.md"
for features in "" "redis" "postgres" "mysql zookeeper" "redis postgres mysql zookeeper"; do
  say "C: librimeflake with features '${features}'"
  zig_build -p rimeflake-capi --no-default-features --features "$features"
  prefix=$work/prefix-${features// /-}
  "$root/crates/rimeflake-capi/install/install.sh" "$prefix" "$zig_release" "$version" >/dev/null
  so=$prefix/lib/librimeflake.so.$version
  at_most_glibc "$so" || die "$so needs $(newest_glibc "$so"), newer than glibc $glibc"
  case "$features" in
    "") label="none (\`--no-default-features\`)"; url="RIMEFLAKE_CONFIG for every one" ;;
    "redis postgres mysql zookeeper") label="redis, postgres, mysql, zookeeper (the default; the release tarball)"; url="every one taken" ;;
    redis) label="redis"; url="RIMEFLAKE_CONFIG for the others" ;;
    postgres) label="postgres"; url="RIMEFLAKE_CONFIG for the others" ;;
    "mysql zookeeper") label="mysql, zookeeper"; url="RIMEFLAKE_CONFIG for the others" ;;
  esac
  echo "| $label | $(mib "$(stat -c %s "$so")") | $(mib "$(stat -c %s "$prefix/lib/librimeflake.a")") |" \
    "$(newest_glibc "$so" | sed 's/GLIBC_//') | $url |" >>"$work/table.md"
done
echo
cat "$work/table.md"

if [ "${1:-}" = --results ]; then
  when=$(date -u '+%Y-%m-%d %H:%M UTC')
  {
    echo "Version $version, Linux x86-64, the release profile as \`make dist-c\` builds it (zig, glibc"
    echo "$glibc; the archive's debug info stripped, as the tarball has it). Each server backend"
    echo "brings its client, TLS (rustls with ring) and, for PostgreSQL, tokio; MySQL's and"
    echo "ZooKeeper's clients are the core's own (MySQL's TLS through rustls)."
    echo
    cat "$work/table.md"
  } >"$work/section.md"
  results_section "C library by build option ($when, \`make bench-c-size\`)" "$work/section.md"
fi
