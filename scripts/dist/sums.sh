#!/usr/bin/env bash
# The last step of `make dist`: dist/SHA256SUMS over every artifact, and dist/SIZES.md, a table
# of each artifact's size and of every ELF file it ships (unpacked), each checked stripped.
#   sums.sh            write both, print the table; fail if a shipped ELF file is not stripped
#   sums.sh --results  also put the table into bench/RESULTS.md (its "Release artifacts" section)
set -euo pipefail
source "$(dirname "$0")/common.sh"

cd "$dist"
artifacts=()
for f in *; do
  case "$f" in SHA256SUMS | SIZES.md) ;; *) [ -f "$f" ] && artifacts+=("$f") ;; esac
done
[ "${#artifacts[@]}" -gt 0 ] || die "nothing in $dist: run make dist"
sha256sum "${artifacts[@]}" >SHA256SUMS

# A file is stripped when it has no symbol table and no debug sections (readelf, from binutils).
# The section list is read whole before it is searched: `readelf | grep -q` would let grep's
# early exit kill readelf, and pipefail would turn that into a pass.
sections() { local out; out=$(readelf -S --wide "$1" 2>/dev/null) || return 1; printf '%s\n' "$out"; }
stripped() { local s; s=$(sections "$1") && ! grep -Eq ' \.(symtab|debug_[a-z_]+) ' <<<"$s"; }
# An archive (.a) keeps the symbols a linker needs: only its debug sections count.
no_debug() { local s; s=$(sections "$1") && ! grep -Eq ' \.debug_[a-z_]+ ' <<<"$s"; }

# The size targets (common.sh, which test-elf.sh enforces): every shipped ELF file but the static
# archive at most elf_max, and the wheel and each npm platform package at most download_max as
# downloaded. Here a miss is reported in the table; test-elf.sh fails on it.
misses=()

scratch unpacked
bad=0
{
  echo "| artifact | file | size | stripped | glibc |"
  echo "|---|---|---:|---|---|"
  for a in "${artifacts[@]}"; do
    size=$(stat -c %s "$a")
    echo "| \`$a\` | (compressed) | $(mib "$size") | | |"
    case "$a" in *.whl | rimeflake-linux-*.tgz | rimeflake-darwin-*.tgz)
      [ "$size" -le "$download_max" ] || misses+=("$a: $(mib "$size"), above 3 MiB") ;;
    esac
    d=$unpacked/$a
    mkdir -p "$d"
    case "$a" in
      *.whl) python3 -m zipfile -e "$a" "$d" ;;
      *.tgz | *.tar.gz) tar -xzf "$a" -C "$d" ;;
      *) continue ;;
    esac
    while IFS= read -r -d '' f; do
      head -c 4 "$f" | grep -q $'\x7fELF' || [[ "$f" == *.a ]] || continue
      rel=${f#"$d"/}
      if [[ "$f" == *.a ]]; then
        if no_debug "$f"; then ok="no debug info"; else ok="**debug info**"; bad=1; fi
      elif stripped "$f"; then ok="yes"; else ok="**no**"; bad=1; fi
      size=$(stat -c %s "$f")
      needs=""
      [[ "$f" == *.a ]] || needs=$(newest_glibc "$f")
      echo "| | \`$rel\` | $(mib "$size") | $ok | ${needs#GLIBC_} |"
      [[ "$f" == *.a ]] || [ "$size" -le "$elf_max" ] || misses+=("$rel: $(mib "$size"), above 6 MiB")
    done < <(find "$d" -type f -print0 | sort -z)
  done
  echo
  echo "Targets: every shipped ELF file but the static archive at most 6 MiB; the wheel and the"
  echo "npm platform package at most 3 MiB compressed."
  if [ "${#misses[@]}" = 0 ]; then
    echo "All met."
  else
    printf -- '- missed: %s\n' "${misses[@]}"
  fi
} >SIZES.md
cat SIZES.md
echo
echo "wrote $dist/SHA256SUMS and $dist/SIZES.md"

if [ "${1:-}" = --results ]; then
  when=$(date -u '+%Y-%m-%d %H:%M UTC')
  {
    echo "Version $version, Linux x86-64 glibc, the release profile (the CLI with fat LTO; stripped, no debug info); \"glibc\""
    echo "is the newest GLIBC_ symbol version a file needs (the oldest glibc it runs on)."
    echo
    cat SIZES.md
  } >"$unpacked/section.md"
  results_section "Release artifacts ($when, \`make dist && scripts/dist/sums.sh --results\`)" "$unpacked/section.md"
fi
[ "$bad" = 0 ] || die "a shipped ELF file carries a symbol table or debug info (see above)"
