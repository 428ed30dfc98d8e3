#!/usr/bin/env bash
# Runs every suite against the server that the PG* variables point at
# (test/check.sh starts a throwaway one): pg_regress and isolation specs,
# pgTAP through pg_prove (caio's own suites, and caio_tap on kept and broken
# tables), the pgbench stress runs with their invariant checks (the lease
# and fence ones also through PgBouncer in transaction pooling mode,
# test/pgbouncer/run.sh), the durability tests (crash, failover, dump and
# restore) and the counters' suite (shared_preload_libraries), which start
# clusters of their own.
set -euo pipefail
cd "$(dirname "$0")/.."
PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config

. test/common.sh

echo "== regression and isolation suites"
if ! make -s PG_CONFIG="$PG_CONFIG" installcheck; then
    cat regression.diffs output_iso/regression.diffs 2>/dev/null || true
    exit 1
fi

echo "== pgTAP suites"
fresh_db caio_pgtap pgtap caio
pg_prove -d caio_pgtap test/pgtap/*.sql

echo "== caio_tap: its pgTAP checks on kept and broken tables"
test/tap_contract/run.sh

for stress in lease fence nonce claims; do
    echo "== $stress stress (pgbench)"
    fresh_db caio_stress caio
    PGDATABASE=caio_stress test/stress/run.sh "$stress"
done

echo "== lease and fence stress through PgBouncer (transaction pooling)"
test/pgbouncer/run.sh

test/durability/run.sh
test/stats/run.sh

echo "== all suites passed"
