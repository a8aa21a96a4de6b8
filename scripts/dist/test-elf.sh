#!/usr/bin/env bash
# Every ELF file that a release ships, read from the artifacts in $dist as a user unpacks them
# (the wheel, the npm platform package, the C and CLI tarballs): each needs no glibc newer than
# $glibc (common.sh), the version its build links against, and loads no library beyond glibc's
# and libgcc_s. The newest GLIBC_ symbol version of each is printed. A static archive (.a) has no
# versioned symbols of its own: a program linked with it takes the glibc it is linked with
# (test-c.sh links one). Each is also held to the size targets (common.sh: elf_max), and the
# wheel and the npm platform package as downloaded (download_max).
set -euo pipefail
source "$(dirname "$0")/common.sh"

scratch unpacked
# The artifacts that must each ship at least one ELF file, and those files.
expected=(
  "rimeflake-$version-cp39-abi3-manylinux*.whl"
  "rimeflake-linux-x64-gnu-$version.tgz"
  "rimeflake-$version-$triple.tar.gz"
  "rimeflake-cli-$version-$triple.tar.gz"
)
files=()
archives=()
for pattern in "${expected[@]}"; do
  # shellcheck disable=SC2206 # the pattern is a glob, meant to expand
  found=("$dist"/$pattern)
  [ -f "${found[0]}" ] || die "no $pattern in $dist: run make dist"
  a=${found[0]}
  archives+=("$a")
  d=$unpacked/${a##*/}
  mkdir -p "$d"
  case "$a" in
    *.whl) python3 -m zipfile -e "$a" "$d" ;;
    *) tar -xzf "$a" -C "$d" ;;
  esac
  n=0
  while IFS= read -r -d '' f; do
    [ -L "$f" ] && continue
    [[ "$f" == *.a ]] && continue
    head -c 4 "$f" | grep -q $'\x7fELF' || continue
    files+=("$f")
    n=$((n + 1))
  done < <(find "$d" -type f -print0 | sort -z)
  [ "$n" -gt 0 ] || die "${a##*/} holds no ELF file"
done

glibc_baseline() {
  local f bad=0 newest libs other
  printf '%-64s %-12s %s\n' "file" "newest" "loads"
  for f in "${files[@]}"; do
    newest=$(newest_glibc "$f")
    libs=$(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | paste -sd ' ' -)
    printf '%-64s %-12s %s\n' "${f#"$unpacked"/}" "${newest:-none}" "$libs"
    if ! at_most_glibc "$f"; then
      echo "  needs $newest: newer than glibc $glibc" >&2
      bad=1
    fi
    other=$(tr ' ' '\n' <<<"$libs" |
      grep -Ev '^(libc|libm|libgcc_s|libpthread|libdl|librt|libutil)\.so\.[0-9]+$|^ld-linux-x86-64\.so\.2$|^$' || true)
    if [ -n "$other" ]; then
      echo "  loads a library outside glibc and libgcc_s: $other" >&2
      bad=1
    fi
  done
  [ "$bad" = 0 ]
}

within_sizes() {
  local f a size bad=0
  for f in "${files[@]}"; do
    size=$(stat -c %s "$f")
    printf '%-64s %s\n' "${f#"$unpacked"/}" "$(mib "$size")"
    if [ "$size" -gt "$elf_max" ]; then
      echo "  above $(mib "$elf_max")" >&2
      bad=1
    fi
  done
  for a in "${archives[@]}"; do
    case "$a" in *.whl | */rimeflake-linux-*.tgz) ;; *) continue ;; esac
    size=$(stat -c %s "$a")
    printf '%-64s %s (as downloaded)\n' "${a##*/}" "$(mib "$size")"
    if [ "$size" -gt "$download_max" ]; then
      echo "  above $(mib "$download_max")" >&2
      bad=1
    fi
  done
  [ "$bad" = 0 ]
}

check "every shipped ELF file needs glibc $glibc or older, and only glibc and libgcc_s" glibc_baseline
check "every shipped ELF file within $(mib "$elf_max"), the wheel and the npm platform package within $(mib "$download_max") as downloaded" within_sizes
summary
