#!/usr/bin/env bash
# Runs every test of the project. Does all set-up first (scripts/setup.sh: idempotent, cached tool installs).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# Each step is timed; the table at the end (also when a step fails) shows where the time went.
STEP_ROWS=()
step_label=
step_start=$SECONDS
end_step() { # status
  if [ -n "$step_label" ]; then STEP_ROWS+=("$(printf '%6ss  %-7s %s' "$((SECONDS - step_start))" "$1" "$step_label")"); fi
  step_label=
}
step() { # label, description
  end_step ok
  step_label=$1
  step_start=$SECONDS
  printf '\n\033[1;32m==> %s: %s\033[0m\n' "$1" "$2"
}
summary() {
  local rc=$?
  end_step "$([ "$rc" = 0 ] && echo ok || echo FAILED)"
  printf '\n\033[1m%s\033[0m\n' "test command: time per step"
  printf '%s\n' "${STEP_ROWS[@]}"
  printf '%6ss  %-7s %s\n' "$SECONDS" "$([ "$rc" = 0 ] && echo passed || echo FAILED)" "total"
}
trap summary EXIT

step "set-up" "tools (cached when present) and npm dependencies"
# shellcheck source=scripts/setup.sh
source scripts/setup.sh

step "lint: rustfmt" "cargo fmt --check"
cargo fmt --all --check

step "lint: biome" "format and lint of the JS/TS in tests/, scripts/, www/, worker/js/, console/, src/wasm/js/ (fix: npx biome check --write)"
npx --no-install biome ci --error-on-warnings .

step "lint: imports" "the module structure (scripts/imports.mjs --check): nothing imports the dispatcher, no core spec \
module imports api/wasm, no Worker cycle above the limit, ARCHITECTURE.md quotes the figures (fix: --update)"
node scripts/imports.mjs --check

step "lint: clippy native" "core, native; also with the schema feature the OpenAPI generator uses"
cargo clippy --all-targets -- -D warnings
cargo clippy --all-targets --features schema -- -D warnings
step "lint: clippy wasm32" "core + wasm bindings, and the worker, wasm32"
cargo clippy --target wasm32-unknown-unknown --features wasm,wasm-recover --all-targets -- -D warnings
cargo clippy -p profile-relayer-worker --target wasm32-unknown-unknown --all-targets -- -D warnings

step "lint: rustdoc" "cargo doc, warnings denied (workspace native; core with the wasm features)"
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --workspace --quiet
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --target wasm32-unknown-unknown --features wasm,wasm-recover --quiet

step "test: core" "unit, property, vector and doc tests (native)"
cargo test
step "test: worker" "unit tests (native)"
cargo test -p profile-relayer-worker

step "test: wasm" "wasm-bindgen tests in Node and headless Chromium"
cargo test --target wasm32-unknown-unknown --features wasm --test wasm_node --test wasm_browser

step "build: pkg + worker" "the npm package (scripts/build-pkg.sh) and the Worker (scripts/build-worker.sh) side by \
side: each is mostly one rustc process (LTO into one codegen unit), so the two keep both cores busy"
(
  log=$(mktemp)
  trap 'rm -f "$log"' EXIT
  started=$SECONDS
  scripts/build-worker.sh >"$log" 2>&1 &
  worker=$!
  scripts/build-pkg.sh || { kill "$worker" 2>/dev/null; wait "$worker"; exit 1; }
  pkg_done=$SECONDS
  wait "$worker" || { cat "$log"; echo "[test] scripts/build-worker.sh failed" >&2; exit 1; }
  cat "$log"
  echo "[test] build-pkg.sh $((pkg_done - started)) s; build-worker.sh done after $((SECONDS - started)) s"
)

step "test: schemathesis" "the Worker against worker/openapi.json (wrangler dev + anvil)"
node scripts/schemathesis.mjs

step "test: wasm clients" "typed clients in headless Chromium against the real Worker (wrangler dev + anvil)"
node scripts/with-stack.mjs cargo test --target wasm32-unknown-unknown --features wasm --test wasm_clients

step "test: tsc" "the npm package's TypeScript declarations (tsc --noEmit)"
(cd tests && npx --no-install tsc -p tsconfig.json && npx --no-install tsc -p tsconfig.node10.json)

# Each test file is a process of its own with its own stack (anvil + wrangler dev, random ports, its own state), so
# files run side by side: most of them spend their time waiting on the chain, the Worker and Chromium. tests/run.mjs
# runs them in the order listed (`node --test` would sort them): the longest first — measured per file, 2026-12-02 —
# so that none starts last and runs alone at the end (npm/throws.test.mjs is two minutes of one core).
# TEST_CONCURRENCY sets how many run at once.
step "test: node --test" "sample apps (Vite, webpack 5, esbuild, Node, Bun, Deno, Workers, Next.js install the packed \
tarball), npm package (Node, Chromium), e2e (local chain + Worker in wrangler dev), every benchmark's quick run \
(bench/quick.test.mjs); ${TEST_CONCURRENCY:-3} files at a time"
(
  cd tests
  first=(bench/quick.test.mjs e2e/reorg.test.mjs npm/throws.test.mjs e2e/bounds.test.mjs apps/apps.test.mjs
    e2e/gasless.test.mjs e2e/migrations.test.mjs e2e/multichain.test.mjs e2e/nonce-lane.test.mjs e2e/ready.test.mjs
    e2e/indexer-hostile.test.mjs e2e/indexer-oversized.test.mjs e2e/console.test.mjs e2e/genuine.test.mjs
    e2e/worker.test.mjs e2e/signers.test.mjs e2e/upload-token.test.mjs e2e/algolia.test.mjs e2e/ipfs-car.test.mjs
    e2e/webhooks.test.mjs npm/module-types.test.mjs)
  files=("${first[@]}")
  for f in e2e/*.test.mjs browser/*.test.mjs npm/*.test.mjs; do
    [[ " ${first[*]} " == *" $f "* ]] || files+=("$f")
  done
  node run.mjs --concurrency "${TEST_CONCURRENCY:-3}" "${files[@]}"
)

end_step ok
