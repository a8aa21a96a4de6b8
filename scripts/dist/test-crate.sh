#!/usr/bin/env bash
# Tests the crates as crates.io would get them:
#   - `cargo package` of rimeflake, rimeflake-serve and rimeflake-cli together: each .crate is
#     unpacked and built on its own (cargo's verification), rimeflake-cli against the packaged
#     rimeflake and rimeflake-serve (cargo puts the packages it just made in a local registry in
#     front of crates.io), not the workspace's;
#   - a crate of its own outside the workspace depends on the packaged rimeflake (a path to the
#     unpacked .crate, with default features, as `cargo add rimeflake` gives) and issues IDs.
# Needs cargo (this is the Rust user's side). Debug builds, in the shared target directory.
set -euo pipefail
source "$(dirname "$0")/common.sh"

# grep -q for a pipeline: reads all its input, so the command before it never dies of SIGPIPE
# (which `set -o pipefail` would count as the pipeline failing, or not matching).
matches() { grep "$@" >/dev/null; }

# cargo package verifies in a target directory of its own: a crate from a registry counts as
# never changing, so a rimeflake 0.1.0 built by an earlier run would be linked again instead
# of the one just packaged; here the units of our own crates are removed before each run, and
# the dependencies' stay built.
verify_target=$target/package-verify
pkg=$verify_target/package

package() {
  cd "$root"
  rm -f "$pkg/rimeflake-$version.crate" "$pkg/rimeflake-serve-$version.crate" "$pkg/rimeflake-cli-$version.crate"
  rm -rf "$verify_target"/debug/.fingerprint/rimeflake-*
  # Likewise the sources: cargo unpacks the packages of its local registry under
  # $CARGO_HOME/registry/src/-<hash>/ and reuses what it finds there for the same name and
  # version. (crates.io's are under index.*/, untouched.)
  rm -rf "${CARGO_HOME:-$HOME/.cargo}"/registry/src/-*/{rimeflake,rimeflake-serve,rimeflake-cli}-"$version"
  # --allow-dirty: the test is of what the package holds, built from the working tree; a real
  # publish runs from a clean checkout of the tag, without it.
  CARGO_TARGET_DIR=$verify_target cargo package -p rimeflake -p rimeflake-serve -p rimeflake-cli --allow-dirty
  local c files
  for c in rimeflake rimeflake-serve rimeflake-cli; do
    [ -f "$pkg/$c-$version.crate" ] || die "no $pkg/$c-$version.crate"
    files=$(tar -tzf "$pkg/$c-$version.crate")
    grep -qx "$c-$version/README.md" <<<"$files" || die "$c: no README.md in the package"
    grep -qx "$c-$version/LICENSE" <<<"$files" || die "$c: no LICENSE in the package"
    grep -qx "$c-$version/src/main.rs\|$c-$version/src/lib.rs" <<<"$files" || die "$c: no sources"
    if grep -q "^$c-$version/tests/" <<<"$files"; then die "$c: the package carries tests/"; fi
    echo "$c-$version.crate: $(wc -l <<<"$files") files, $(stat -c %s "$pkg/$c-$version.crate") bytes"
  done
  # The CLI's manifest names rimeflake and rimeflake-serve by version (crates.io), and its
  # default features are everything it ships: both backends and serve (cargo install's build).
  tar -xzf "$pkg/rimeflake-cli-$version.crate" -O "rimeflake-cli-$version/Cargo.toml" |
    python3 -c '
import sys, tomllib
m, version = tomllib.loads(sys.stdin.read()), sys.argv[1]
deps, features = m["dependencies"], m.get("features", {})
assert deps["rimeflake"]["version"] == version, deps["rimeflake"]
assert deps["rimeflake-serve"]["version"] == version and deps["rimeflake-serve"]["optional"], deps
assert set(features["default"]) == {"redis", "postgres", "mysql", "zookeeper", "serve"}, features
for backend in ("redis", "postgres", "mysql", "zookeeper"):
    assert features[backend] == [f"rimeflake/{backend}"], features
assert features["serve"] == ["dep:rimeflake-serve"], features
print("rimeflake-cli: default features", ", ".join(sorted(features["default"])))' "$version" ||
    die "rimeflake-cli's packaged manifest does not build every backend and serve by default"
}

# A user's crate: rimeflake from the unpacked package, IDs from the embedded default (a leased
# worker ID and durable state in RIMEFLAKE_STATE_DIR); run twice, the second run goes on above
# the first.
user_crate() {
  local dir
  scratch dir
  tar -xzf "$pkg/rimeflake-$version.crate" -C "$dir"
  mkdir -p "$dir/app/src"
  cat >"$dir/app/Cargo.toml" <<TOML
[package]
name = "rimeflake-user"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
rimeflake = { path = "../rimeflake-$version" }

# Not part of any workspace around it.
[workspace]
TOML
  cat >"$dir/app/src/main.rs" <<'RUST'
use rimeflake::{format, Encoding, Generator};

fn main() -> Result<(), rimeflake::Error> {
    let generator = Generator::builder().build()?;
    let a = generator.next_id()?;
    let b = generator.next_id()?;
    assert!(a < b);
    let batch = generator.next_ids(1000)?;
    assert!(batch.windows(2).all(|w| w[0] < w[1]) && b < batch[0]);
    let parts = generator.layout().decode(b)?;
    assert_eq!(parts.worker_id, generator.worker_id());
    println!("first {a}");
    println!("last {}", batch[999]);
    println!("base62 {}", format(b, Encoding::Base62));
    println!("worker {} timestamp_ms {}", parts.worker_id, parts.timestamp_ms);
    Ok(())
}
RUST
  # The package's own Cargo.lock seeds the versions, so the build reuses what the workspace has
  # built; without it cargo would pick the newest compatible ones, as for a new project.
  tar -xzf "$pkg/rimeflake-$version.crate" -O "rimeflake-$version/Cargo.lock" >"$dir/app/Cargo.lock"
  export RIMEFLAKE_STATE_DIR=$dir/state RIMEFLAKE_NO_CONTAINER_WARNING=1
  local first second now_ms
  first=$(cd "$dir/app" && CARGO_TARGET_DIR=$target cargo run --quiet)
  echo "$first"
  second=$(cd "$dir/app" && CARGO_TARGET_DIR=$target cargo run --quiet)
  echo "$second"
  local last next
  last=$(sed -n 's/^last //p' <<<"$first")
  next=$(sed -n 's/^first //p' <<<"$second")
  [ "$next" -gt "$last" ] || die "the second run's first ID $next is not above the first run's last $last"
  now_ms=$(($(date +%s) * 1000))
  local ts
  ts=$(sed -n 's/.*timestamp_ms //p' <<<"$second")
  [ $((now_ms - ts)) -lt 600000 ] && [ $((ts - now_ms)) -lt 5000 ] || die "decoded time $ts is not now ($now_ms)"
}

check "cargo package: rimeflake, rimeflake-serve and rimeflake-cli, each built from its .crate" package
check "a crate outside the workspace on the packaged rimeflake issues IDs" user_crate
summary
