#!/usr/bin/env bash
# Builds the npm package into pkg/: three wasm builds of the crate, each bound for bundlers, `--target web` and Node.
#   full (feature `wasm`):            pkg/{bundler,web,node}/         → `profile-relayer`, `profile-relayer/web`, …
#   lite (feature `wasm-lite`):       pkg/lite/{bundler,web,node}/    → `profile-relayer/lite`, `profile-relayer/lite/web`
#   recover (feature `wasm-recover`): pkg/recover/{bundler,web,node}/ → `profile-relayer/recover`, … (lite + signer
#                                     recovery, built like lite but at opt-level 3)
# One cargo build per flavour, then wasm-bindgen and wasm-opt per target.
# The lite entry is built for speed (opt-level 2 with the hot crates at 3, wasm-opt -O3: as fast as opt-level 3 on
# every case, 1.2 KB of gzip smaller; BENCHMARKS.md#bundle-size): it is what hot encoding loops import. The full
# entry is built for size (opt-level "s", wasm-opt -Oz): ≈ 10 % less gzip wasm than opt-level 3, slower than the
# lite build on encodings but still faster than erc725.js / viem on every case (see BENCHMARKS.md). ("z" is another
# 9 % smaller, but its VerifiableURI decode falls below erc725.js's.)
#
#   scripts/build-pkg.sh                      # everything (what the tests and the package need)
#   scripts/build-pkg.sh lite:nodejs full:web # only these flavour:target pairs (while iterating)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/setup.sh
source scripts/setup.sh

# A target directory of its own, beside the one of every other build: the test command builds the package and the
# Worker side by side (each is mostly one rustc process, LTO into one codegen unit), and cargo lets one build at a
# time use a target directory's release artifacts. (Nothing is shared between the two anyway: the +simd128 rustflags
# below give every dependency of the package artifacts of its own.)
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}/pkg"

# the features the release wasm is built with (Rust ≥ 1.82 emits reference types, bulk memory, … by default)
WASM_OPT_FEATURES=(--enable-bulk-memory --enable-nontrapping-float-to-int --enable-reference-types
  --enable-sign-ext --enable-mutable-globals --enable-simd)
# 128-bit SIMD (every browser since 2023, Node ≥ 16.4): hex decoding / encoding of arguments and results runs on
# const-hex's simd128 path (≈ 5× the scalar one on a 1 KB calldata). cargo keeps these artifacts apart from the
# other wasm builds sharing the target directory (rustflags are part of their fingerprint)
export RUSTFLAGS="${RUSTFLAGS:+$RUSTFLAGS }-C target-feature=+simd128"
# The dependencies' source paths in panic locations without the machine's cargo home and registry directory
# (`/root/.cargo/registry/src/index.crates.io-…/ruint-1.21.1/src/fmt.rs` becomes `ruint-1.21.1/src/fmt.rs`): the
# same bytes wherever the package is built, where the full entry's budget is counted in bytes.
for registry in "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/; do
  [ -d "$registry" ] && RUSTFLAGS+=" --remap-path-prefix=$registry="
done

wanted=("$@")
[ ${#wanted[@]} -gt 0 ] || wanted=(full:bundler full:web full:nodejs lite:bundler lite:web lite:nodejs
  recover:bundler recover:web recover:nodejs)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for flavour in full lite recover; do
  targets=()
  for w in "${wanted[@]}"; do [ "${w%%:*}" = "$flavour" ] && targets+=("${w#*:}"); done
  [ ${#targets[@]} -gt 0 ] || continue
  case $flavour in
    full) features=wasm prefix=pkg opt_level=s wasm_opt=-Oz ;;
    lite) features=wasm-lite prefix=pkg/lite opt_level=2 wasm_opt=-O3 ;;
    recover) features=wasm-recover prefix=pkg/recover opt_level=3 wasm_opt=-O3 ;;
  esac
  # the artifact's path as cargo reports it (wherever the target directory is: CARGO_TARGET_DIR, a config, a wrapper)
  artifact=$(CARGO_PROFILE_RELEASE_OPT_LEVEL=$opt_level \
    cargo build --quiet --release --lib --target wasm32-unknown-unknown --features "$features" \
    --message-format=json-render-diagnostics |
    node -e 'let t = ""; process.stdin.on("data", (d) => (t += d)).on("end", () => {
      const files = t.split("\n").filter(Boolean).map((l) => JSON.parse(l))
        .filter((m) => m.reason === "compiler-artifact" && m.target?.name === "profile_relayer")
        .flatMap((m) => m.filenames).filter((f) => f.endsWith(".wasm"));
      if (files.length !== 1) { console.error("[build-pkg] no single wasm artifact: " + files); process.exit(1); }
      console.log(files[0]);
    })')
  # copy at once: the target directory may be shared with other builds of the crate
  cp "$artifact" "$tmp/$flavour.wasm"
  for target in "${targets[@]}"; do
    dir=$prefix/${target/nodejs/node}
    rm -rf "$dir"
    wasm-bindgen --target "$target" --out-dir "$dir" --out-name profile_relayer "$tmp/$flavour.wasm"
    # the `producers` and `target_features` custom sections are read by no engine or bundler: ≈ 0.2 KB of gzip
    # `outcome` (src/wasm/error.rs) stays a call of its own: inlined into an export that throws, its frame would be
    # left on the shadow stack by each throw (the names are those of wasm-bindgen's output, which keeps them)
    wasm-opt '--no-inline=*wasm::error::outcome*' "$wasm_opt" --strip-producers --strip-target-features "${WASM_OPT_FEATURES[@]}" \
      "$dir/profile_relayer_bg.wasm" -o "$dir/profile_relayer_bg.wasm"
    # the package's entries: wasm-bindgen's with the JS facade's exports (src/wasm/js/facade.js) in place of the raw
    # ones (`index.js`), and for bundler builds the zero-config ones sharing its glue: the wasm inline (`default`)
    # and for Workers (`workerd`); the Node build made CommonJS, its JS snippets with it
    node scripts/pkg-entries.mjs "$dir" "$target"
    printf '[build-pkg] %-12s %7s bytes of wasm (%s gzip)\n' "$dir" \
      "$(wc -c <"$dir/profile_relayer_bg.wasm")" "$(gzip -9c "$dir/profile_relayer_bg.wasm" | wc -c)"
  done
done
