#!/usr/bin/env bash
# What building the Worker needs, and nothing more: the wasm32 target, wasm-bindgen and worker-build (cached,
# skipped when the pinned version is present). Sourced by scripts/build-worker.sh — the [build] command that
# `wrangler deploy` runs — so deploying installs no test toolchain; scripts/setup.sh sources it and adds the rest
# (Chromium, anvil, schemathesis, the test packages). Esbuild comes from the root `npm ci` (wrangler's own copy).
set -euo pipefail

PROJECT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PR_TOOLS_HOME=${PR_TOOLS_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/profile-relayer}
TOOLS_DIR=$PR_TOOLS_HOME/cargo-tools

WASM_BINDGEN_VERSION=0.2.130
WORKER_BUILD_VERSION=0.8.7

# CI builds once from a clean checkout: incremental artifacts would only cost disk.
if [ "${CI:-}" = true ]; then export CARGO_INCREMENTAL=0; fi

log() { printf '\033[1;34m[setup]\033[0m %s\n' "$*" >&2; }

if ! rustup target list --installed | grep -q '^wasm32-unknown-unknown$'; then
  log "rustup target add wasm32-unknown-unknown"
  rustup target add wasm32-unknown-unknown
fi

# Cargo-installed tools, one at a time, skipped when already present at the pinned version.
install_tool() { # crate version binary [extra cargo args]
  local crate=$1 version=$2 bin=$3 list
  shift 3
  list=$(cargo install --list --root "$TOOLS_DIR" 2>/dev/null || true)
  if [ -x "$TOOLS_DIR/bin/$bin" ] && grep -q "^$crate v$version:" <<<"$list"; then return 0; fi
  log "cargo install $crate $version (one-time, a few minutes)"
  CARGO_TARGET_DIR=$PR_TOOLS_HOME/.build cargo install -q "$crate" --version "$version" --root "$TOOLS_DIR" "$@"
}
install_tool wasm-bindgen-cli "$WASM_BINDGEN_VERSION" wasm-bindgen # no --locked: see toolchain notes
install_tool worker-build "$WORKER_BUILD_VERSION" worker-build --locked
rm -rf "$PR_TOOLS_HOME/.build"

export PATH=$TOOLS_DIR/bin:$PATH
export WASM_BINDGEN_BIN=$TOOLS_DIR/bin/wasm-bindgen
[ -x "$PROJECT_DIR/node_modules/@esbuild/linux-x64/bin/esbuild" ] && export ESBUILD_BIN=$PROJECT_DIR/node_modules/@esbuild/linux-x64/bin/esbuild
export WRANGLER_SEND_METRICS=false WRANGLER_SEND_ERROR_REPORTS=false CLOUDFLARE_CF_FETCH_ENABLED=false
