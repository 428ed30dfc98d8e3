#!/usr/bin/env bash
# The benchmark command: sets up (test/setup.sh), starts a throwaway cluster
# tuned as documented (synchronous_commit = off, shared_buffers = 1GB), and
# runs each workload with caio and with its plain-SQL baseline in the same
# run, printing ops/s side by side and the ratio.
#   BENCH_SECONDS (default 10) per run; BENCH_CLIENTS (default "1 8").
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ -z "${CAIO_BENCH_INSIDE:-}" ]; then
    test/setup.sh >/dev/null
    exec pg_virtualenv -v 15 -o synchronous_commit=off -o shared_buffers=1GB \
        -o max_connections=100 env CAIO_BENCH_INSIDE=1 "$0" "$@"
fi

seconds=${BENCH_SECONDS:-10}
clients=${BENCH_CLIENTS:-"1 8"}
export PGOPTIONS="-c client_min_messages=warning"
psql -X -q -v ON_ERROR_STOP=1 -c "CREATE EXTENSION caio" -f test/bench/setup.sql

# tps of one pgbench run: workload file, clients
tps() {
    pgbench -n -M prepared -c "$2" -j "$(( $2 < 2 ? 1 : 2 ))" -T "$seconds" -f "test/bench/$1.pgbench" 2>&1 \
        | sed -n 's/^tps = \([0-9.]*\) .*/\1/p'
}

printf '%-24s %7s %14s %14s %7s\n' workload clients "caio ops/s" "plain ops/s" ratio
for workload in lease; do
    for c in $clients; do
        plain=$(tps "${workload}_plain" "$c")
        caio=$(tps "${workload}_caio" "$c")
        awk -v w="acquire+release" -v c="$c" -v a="$caio" -v p="$plain" \
            'BEGIN { printf "%-24s %7s %14.0f %14.0f %7.2f\n", w, c, a, p, a / p }'
    done
done
