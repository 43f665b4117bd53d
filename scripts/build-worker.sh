#!/usr/bin/env bash
# Builds the Worker (worker-build → worker/build/). Skipped when the build is newer than every source file, so
# starting `wrangler dev` repeatedly (tests) costs nothing. This is wrangler's [build] command, so `wrangler deploy`
# runs it: it installs only what the build needs (scripts/setup-build.sh), never the test toolchain.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=worker/build/index.js
if [ -f "$out" ] && [ -z "$(find src worker/src console worker/openapi.json worker/Cargo.toml Cargo.toml Cargo.lock -newer "$out" -print -quit)" ]; then
  exit 0
fi
if [ -z "${WASM_BINDGEN_BIN:-}" ]; then
  # shellcheck source=scripts/setup-build.sh
  source scripts/setup-build.sh
fi
(cd worker && worker-build --release)
touch "$out"
