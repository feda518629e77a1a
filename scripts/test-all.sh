#!/usr/bin/env bash
# The whole test suite: build, unit tests, then every end-to-end suite twice, on the embedded database
# (PGlite, in memory) and on a fresh database of a PostgreSQL server. Any failure fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."

PG_ADMIN_URL=${TEST_PG_ADMIN_URL:-postgres://postgres@127.0.0.1:5432/postgres}
reports=$(mktemp -d)
db="pms_test_$(date +%s)_$$"
cleanup() {
  node scripts/pg-test-db.js drop "$PG_ADMIN_URL" "$db" >/dev/null 2>&1 || true
  rm -rf "$reports"
}
trap cleanup EXIT

echo "== build (the boot tests run dist/) =="
npm run build --silent

echo "== unit tests =="
npx jest --config test/jest-unit.config.js --json --outputFile="$reports/unit.json"

echo "== end-to-end on the embedded database (PGlite) =="
env -u DATABASE_URL NODE_OPTIONS=--experimental-vm-modules \
  npx jest --config test/jest-e2e.config.js --runInBand --json --outputFile="$reports/e2e-embedded.json"

echo "== end-to-end on PostgreSQL (database $db) =="
node scripts/pg-test-db.js create "$PG_ADMIN_URL" "$db"
DATABASE_URL="${PG_ADMIN_URL%/*}/$db" NODE_OPTIONS=--experimental-vm-modules \
  npx jest --config test/jest-e2e.config.js --runInBand --json --outputFile="$reports/e2e-postgres.json"

echo "== all suites =="
node scripts/jest-summary.js "$reports"/*.json
