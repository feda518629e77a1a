#!/usr/bin/env bash
# The whole test suite: type-check and build once (the boot tests run dist/), then one Jest run of the
# unit tests and of every end-to-end suite on both databases: the embedded one (PGlite, in memory) and
# fresh databases on a PostgreSQL server (TEST_PG_ADMIN_URL, default the local one). Any failure fails
# the run; the last line counts every test.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== type check and build =="
npx tsc --noEmit &
typecheck=$!
node scripts/build-if-changed.js
wait "$typecheck"

echo "== tests: unit, end-to-end on the embedded database and on PostgreSQL =="
NODE_OPTIONS="--experimental-vm-modules --disable-warning=ExperimentalWarning" npx jest --config test/jest.config.js \
  --maxWorkers="${TEST_WORKERS:-3}" --reporters=default --reporters="$PWD/scripts/jest-summary.js" "$@"
