#!/usr/bin/env bash
# Multi-process lease stress: 8 pgbench clients acquire, renew and release four
# resources for STRESS_SECONDS (default 8), then lease_check.sql proves that no
# token repeated, that each resource's grants follow token order, and that no
# grant overlapped a live lease.  Needs a database with caio (PG* variables).
set -euo pipefail
here=$(dirname "$0")
seconds=${STRESS_SECONDS:-8}

psql -X -q -v ON_ERROR_STOP=1 -f "$here/lease_setup.sql" >/dev/null
out=$(pgbench -n -c 8 -j 2 -T "$seconds" -f "$here/lease_churn.pgbench" 2>&1) || {
    echo "$out"; echo "pgbench failed"; exit 1; }
echo "$out" | grep -E "^(number of (transactions actually processed|failed transactions)|latency average|tps)"
if ! echo "$out" | grep -q "number of failed transactions: 0 "; then
    echo "$out"; echo "some stress transactions failed"; exit 1
fi
psql -X -v ON_ERROR_STOP=1 -f "$here/lease_check.sql"
