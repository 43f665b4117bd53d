#!/usr/bin/env bash
# The project's main command: set-up, build the npm package into pkg/, start the local dev stack
# (anvil with the LUKSO contracts on http://127.0.0.1:8545, the Worker on http://127.0.0.1:8787, its D1 database migrated
# from worker/migrations by scripts/stack.mjs). Ctrl-C stops everything it started.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/setup.sh
source scripts/setup.sh
scripts/build-pkg.sh
scripts/build-worker.sh
exec node scripts/dev.mjs "$@"
