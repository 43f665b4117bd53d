#!/usr/bin/env bash
# Builds the npm package into pkg/: one cargo build, wasm-bindgen output for bundlers, `--target web` and Node.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/setup.sh
source scripts/setup.sh

for target in bundler web nodejs; do
  dir=${target/nodejs/node}
  rm -rf "pkg/$dir"
  wasm-pack --quiet build --release --target "$target" --out-dir "pkg/$dir" --out-name profile_relayer \
    --no-pack . --features wasm
  # the top-level pkg/package.json describes the package; the Node build is CommonJS
  rm -f "pkg/$dir/.gitignore" "pkg/$dir/package.json" "pkg/$dir/README.md"
done
echo '{ "type": "commonjs" }' > pkg/node/package.json
printf '[build-pkg] pkg/ ready: %s bytes of wasm (%s gzip)\n' \
  "$(wc -c < pkg/web/profile_relayer_bg.wasm)" "$(gzip -9c pkg/web/profile_relayer_bg.wasm | wc -c)"
