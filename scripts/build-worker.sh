#!/usr/bin/env bash
# Builds the Worker (worker-build → worker/build/). Skipped when the build is newer than every source file, so
# starting `wrangler dev` repeatedly (tests) costs nothing. Needs the environment of scripts/setup.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=worker/build/index.js
if [ -f "$out" ] && [ -z "$(find src worker/src worker/openapi.json worker/Cargo.toml Cargo.toml Cargo.lock -newer "$out" -print -quit)" ]; then
  exit 0
fi
if [ -z "${WASM_BINDGEN_BIN:-}" ]; then
  # shellcheck source=scripts/setup.sh
  source scripts/setup.sh
fi
(cd worker && worker-build --release)
touch "$out"
