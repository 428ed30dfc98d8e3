#!/usr/bin/env bash
# Multi-process stress with pgbench, then an invariant check:
#   run.sh lease   8 clients acquire, renew and release four resources; no
#                  token repeats, grants follow token order, none overlaps.
#   run.sh fence   8 clients take three wallets over from each other and write
#                  to a protected table; no write under a superseded token
#                  lands, and no row's token goes backwards.
#   run.sh nonce   8 clients reserve nonces on one wallet, a fifth roll back,
#                  some hand theirs back; no nonce is kept twice, and no
#                  hole is left among the kept ones.
#   run.sh claims  8 workers claim rows (half of the claims by priority,
#                  order_by), often pause past their claims, and finish; no
#                  row is held by two live claims at once, no finish under a
#                  superseded token lands, and each ordered claim hands its
#                  rows out in its order.
# Each NAME has NAME_setup.sql, NAME.pgbench and NAME_check.sql beside this
# script.  STRESS_SECONDS (default 8) sets the length.  Needs a fresh
# database with caio, named by the PG* variables.  Further arguments go to
# pgbench alone (setup and check always connect as the PG* variables say):
# test/pgbouncer/run.sh passes `-M extended -h DIR -p PORT` to send the load
# through PgBouncer.
set -euo pipefail
here=$(dirname "$0")
name=${1:?usage: run.sh lease|fence|nonce|claims [pgbench option...]}
shift
seconds=${STRESS_SECONDS:-8}

psql -X -q -v ON_ERROR_STOP=1 -f "$here/${name}_setup.sql" >/dev/null
out=$(pgbench -n -c 8 -j 2 -T "$seconds" -f "$here/$name.pgbench" "$@" 2>&1) || {
    echo "$out"; echo "pgbench failed"; exit 1; }
echo "$out" | grep -E "^(number of (transactions actually processed|failed transactions)|tps)"
if ! echo "$out" | grep -q "number of failed transactions: 0 "; then
    echo "$out"; echo "some stress transactions failed"; exit 1
fi
psql -X -q -v ON_ERROR_STOP=1 -f "$here/${name}_check.sql"
