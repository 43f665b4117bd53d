#!/usr/bin/env bash
# Runs every test of the project. Does all set-up first (scripts/setup.sh: idempotent, cached tool installs).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/setup.sh
source scripts/setup.sh

step() { printf '\n\033[1;32m==> %s\033[0m\n' "$*"; }

step "lint: rustfmt"
cargo fmt --all --check

step "lint: JS/TS (Biome: format and lint of tests/, scripts/, www/, worker/js/; fix with npx biome check --write)"
npx --no-install biome ci --error-on-warnings .

step "lint: clippy (core, native; also with the schema feature the OpenAPI generator uses)"
cargo clippy --all-targets -- -D warnings
cargo clippy --all-targets --features schema -- -D warnings
step "lint: clippy (core + wasm bindings, wasm32)"
cargo clippy --target wasm32-unknown-unknown --features wasm,wasm-recover --all-targets -- -D warnings
step "lint: clippy (worker, wasm32)"
cargo clippy -p profile-relayer-worker --target wasm32-unknown-unknown --all-targets -- -D warnings

step "lint: cargo doc, warnings denied (workspace native; core with the wasm features)"
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --workspace --quiet
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --target wasm32-unknown-unknown --features wasm,wasm-recover --quiet

step "core: unit, property, vector and doc tests (native)"
cargo test
step "worker: unit tests (native)"
cargo test -p profile-relayer-worker

step "wasm: wasm-bindgen tests in Node and headless Chromium"
cargo test --target wasm32-unknown-unknown --features wasm --test wasm_node --test wasm_browser

step "npm package: build pkg/"
scripts/build-pkg.sh

step "worker: build (worker-build)"
scripts/build-worker.sh

step "worker: schemathesis against worker/openapi.json (wrangler dev + anvil)"
node scripts/schemathesis.mjs

step "wasm: typed clients in headless Chromium against the real Worker (wrangler dev + anvil)"
node scripts/with-stack.mjs cargo test --target wasm32-unknown-unknown --features wasm --test wasm_clients

step "npm package: TypeScript declarations (tsc --noEmit)"
(cd tests && npx --no-install tsc -p tsconfig.json && npx --no-install tsc -p tsconfig.node10.json)

step "npm package (Node, Chromium), local chain, Worker in wrangler dev: node --test"
(cd tests && node --test --test-concurrency=1 npm/*.test.mjs browser/*.test.mjs e2e/*.test.mjs)

step "npm package: sample apps (Vite, webpack 5, esbuild, Node, Bun, Deno, Workers, Next.js) install the packed tarball"
(cd tests && node --test apps/apps.test.mjs)

step "benchmarks, quick runs: every benchmark of BENCHMARKS.md with small counts, its outputs checked (≈ 2.5 min)"
(
  cd tests
  node bench/sdk.bench.mjs --quick
  node bench/relayer.bench.mjs --quick
  node bench/signers.bench.mjs --quick
  node bench/execute.bench.mjs --quick
  node bench/indexer.bench.mjs --quick
  node bench/indexer.bench.mjs --backfill --quick
  node bench/freshness.bench.mjs --quick
  node bench/search.bench.mjs --quick
  node bench/ipfs-relay.bench.mjs --quick
)

step "all tests passed"
