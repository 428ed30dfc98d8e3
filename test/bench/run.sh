#!/usr/bin/env bash
# The benchmark command: sets up (test/setup.sh), starts a throwaway cluster
# tuned as documented (synchronous_commit = off, shared_buffers = 1GB), and
# runs each workload with caio and with its plain-SQL baseline in the same
# run, printing ops/s side by side and the ratio.  pgbench uses prepared
# statements (-M prepared), as application drivers do.  Each pair runs
# BENCH_ROUNDS times, alternating baseline and caio so that both see the same
# machine, and the table shows the medians.
#   BENCH_SECONDS (default 5) per run; BENCH_ROUNDS (default 3);
#   BENCH_CLIENTS (default "1 8").
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ -z "${CAIO_BENCH_INSIDE:-}" ]; then
    test/setup.sh >/dev/null
    unset PGHOST PGPORT PGUSER PGPASSWORD PGDATABASE PGSERVICE
    exec pg_virtualenv -v 15 -o synchronous_commit=off -o shared_buffers=1GB \
        -o max_connections=100 env CAIO_BENCH_INSIDE=1 "$0" "$@"
fi

seconds=${BENCH_SECONDS:-5}
rounds=${BENCH_ROUNDS:-3}
clients=${BENCH_CLIENTS:-"1 8"}
export PGOPTIONS="-c client_min_messages=warning"
psql -X -q -v ON_ERROR_STOP=1 -c "CREATE EXTENSION caio" >/dev/null
token_base=$(psql -X -q -t -A -v ON_ERROR_STOP=1 -f test/bench/setup.sql | tail -n 1)

# ops/s of one pgbench run: workload file, clients, and a setting for its
# sessions ("-" for none)
ops() {
    local options=$PGOPTIONS
    [ "$3" = "-" ] || options="$options -c $3"
    PGOPTIONS=$options pgbench -n -M prepared -c "$2" -j "$(( $2 < 2 ? 1 : 2 ))" -T "$seconds" \
        -D token_base="$token_base" -f "test/bench/$1.pgbench" 2>&1 \
        | sed -n 's/^tps = \([0-9.]*\) .*/\1/p'
}

printf '%-24s %7s %12s %12s %7s\n' workload clients "caio ops/s" "plain ops/s" ratio
# median of the numbers on standard input
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# caio's workload, the baseline's, a setting for caio's sessions, the label
while read -r caio_script plain_script caio_setting label; do
    for c in $clients; do
        plain_runs=""; caio_runs=""
        for _ in $(seq "$rounds"); do
            plain_runs="$plain_runs $(ops "$plain_script" "$c" -)"
            caio_runs="$caio_runs $(ops "$caio_script" "$c" "$caio_setting")"
        done
        plain=$(echo "$plain_runs" | tr ' ' '\n' | grep . | median)
        caio=$(echo "$caio_runs" | tr ' ' '\n' | grep . | median)
        awk -v w="$label" -v c="$c" -v a="$caio" -v p="$plain" \
            'BEGIN { printf "%-24s %7s %12.0f %12.0f %7.2f\n", w, c, a, p, a / p }'
    done
done <<'WORKLOADS'
lease_caio lease_plain - acquire+release
fenced_update_caio fenced_update_plain - fenced UPDATE
nonce_hot_caio counter_plain - nonce, 1 wallet
nonce_hot_caio counter_plain caio.nonce_synchronous_commit=off nonce, 1 wallet, async
nonce_wallets_caio counter_plain - nonce, 1000 wallets
nonce_wallets_caio counter_plain caio.nonce_synchronous_commit=off nonce, 1000 w., async
claims_caio claims_plain - claim 10 of 1M rows
WORKLOADS
