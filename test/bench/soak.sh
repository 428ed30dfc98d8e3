#!/usr/bin/env bash
# The churn soak (make bench-soak): caio's tables under a long churn, in a
# throwaway cluster set up as make bench's (test/bench/run.sh), with caio
# built and installed the same way.  For BENCH_SOAK_MINUTES (default 10),
# 8 clients cycle acquire/release over 1000 resources (each client on its
# own 125) beside 8 clients reserving nonces across 1000 wallets
# (caio.nonce_synchronous_commit = off), the churn of make bench, with
# autovacuum on.  Every BENCH_SOAK_SAMPLE seconds (default 30) it samples
# caio_lease_state, caio_nonce_wallet and caio_nonce_reservation: heap and
# index size, live and dead tuples, updates and HOT updates, the dead
# versions still on the pages and the free space (pgstattuple), and
# autovacuum and autoanalyze counts; every second it records each session
# that holds a snapshot for more than 0.2 s (pg_stat_activity), which is
# what keeps dead versions from being pruned.  The report (soak.txt) has a
# line per sample, the longest snapshot holds, and a verdict per fixed-size
# table: BOUNDED when its size over the second half of the soak stays
# within 10 % (plus 64 kB) of its size at half time, else NOT BOUNDED.
#
# Writes, under BENCH_RESULTS (default test/bench/results)/soak-<date-time>/,
# with a symlink "soak-latest": soak.txt (the report), samples.csv,
# holds.csv, machine.txt.
#
#   BENCH_SOAK_MINUTES (default 10)   BENCH_SOAK_SAMPLE seconds (default 30)
#   BENCH_SOAK_SQL    SQL run in the soak's database before the churn, to
#                     try a setting (ALTER TABLE caio_lease_state SET ...)
#   BENCH_NO_BUILD=1  soak the installed caio (see test/bench/run.sh)
#   BENCH_FSYNC=off   the cluster without fsync
set -euo pipefail
cd "$(dirname "$0")/../.."

export BENCH_SOAK_MINUTES=${BENCH_SOAK_MINUTES:-10} BENCH_SOAK_SAMPLE=${BENCH_SOAK_SAMPLE:-30}

if [ -z "${CAIO_BENCH_INSIDE:-}" ]; then
    if [ "${BENCH_NO_BUILD:-0}" != 0 ]; then
        test/setup.sh --no-build >/dev/null
    else
        test/setup.sh >/dev/null
    fi
    results=${BENCH_RESULTS:-test/bench/results}
    mkdir -p "$results"
    out=$(cd "$results" && pwd)/soak-$(date +%Y%m%d-%H%M%S)
    mkdir "$out"
    unset PGHOST PGPORT PGUSER PGPASSWORD PGDATABASE PGSERVICE
    pg_virtualenv -t -v 15 -o synchronous_commit=off -o shared_buffers=1GB \
        -o "fsync=${BENCH_FSYNC:-on}" -o max_connections=100 -o shared_preload_libraries=caio \
        env CAIO_BENCH_INSIDE=1 BENCH_OUT="$out" "$0" "$@" 3>&1 >/dev/null
    ln -sfn "$(basename "$out")" "$results/soak-latest"
    exit 0
fi

out=$BENCH_OUT
seconds=$(awk -v m="$BENCH_SOAK_MINUTES" 'BEGIN { printf "%d", m * 60 }')
every=$BENCH_SOAK_SAMPLE
clients=8
work=$(mktemp -d)
pids=()
cleanup() {
    local p
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT
export PGOPTIONS="-c client_min_messages=warning"
q() { psql -X -q -t -A -v ON_ERROR_STOP=1 "$@"; }
emit() { tee -a "$out/soak.txt" >&3; }
say() { echo "$@" | emit; }

createdb caio_soak
q -d caio_soak -c "CREATE EXTENSION caio" -c "CREATE EXTENSION pgstattuple" -f test/bench/soak.sql >/dev/null
[ -z "${BENCH_SOAK_SQL:-}" ] || q -d caio_soak -c "$BENCH_SOAK_SQL" >/dev/null
{
    echo "date:        $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "cpu:         $(nproc) x $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
    echo "load:        $(cut -d ' ' -f 1-3 /proc/loadavg) (1, 5, 15 min, at the start)"
    echo "postgresql:  $(q -c 'SHOW server_version')"
    echo "caio:        $(q -d caio_soak -c "SELECT extversion FROM pg_extension WHERE extname = 'caio'")" \
         "$([ "${BENCH_NO_BUILD:-0}" != 0 ] && echo "(as installed, not rebuilt)" \
            || echo "(built from this tree$(git describe --always --dirty 2>/dev/null | sed 's/^/ at /'))")"
    echo "cluster:     $(q -c "SELECT string_agg(name || ' = ' || setting, ', ' ORDER BY name) FROM pg_settings
                               WHERE name IN ('synchronous_commit', 'shared_buffers', 'fsync', 'autovacuum',
                                              'autovacuum_naptime', 'default_statistics_target')")"
    echo "caio's tables: $(q -d caio_soak -c "SELECT string_agg(relname || ' (' || coalesce(array_to_string(reloptions, ', '), 'defaults') || ')', '; ' ORDER BY relname)
                                                FROM pg_class WHERE relname IN ('caio_lease_state', 'caio_nonce_wallet', 'caio_nonce_reservation')")"
    [ -z "${BENCH_SOAK_SQL:-}" ] || echo "before it:   $BENCH_SOAK_SQL"
    echo "soak:        $BENCH_SOAK_MINUTES min of acquire/release over 1000 resources ($clients clients)" \
         "beside nonce reservations over 1000 wallets ($clients clients, async); a sample every $every s"
} >"$out/machine.txt"
say "== caio churn soak"
sed 's/^/   /' "$out/machine.txt" | emit
say

# The churn, time-bound; the counts so far are read from the tables.
PGOPTIONS="$PGOPTIONS" pgbench -n -M prepared -d caio_soak -c "$clients" -j 2 -T "$seconds" \
    -D nclients="$clients" -D per_client=$(( 1000 / clients )) -D wallets=1000 \
    -f test/bench/churn_lease.pgbench >"$work/lease.out" 2>&1 & pids+=($!); lease_pid=$!
PGOPTIONS="$PGOPTIONS -c caio.nonce_synchronous_commit=off" \
    pgbench -n -M prepared -d caio_soak -c "$clients" -j 2 -T "$seconds" \
    -D nclients="$clients" -D per_client=$(( 1000 / clients )) -D wallets=1000 \
    -f test/bench/churn_nonce.pgbench >"$work/nonce.out" 2>&1 & pids+=($!); nonce_pid=$!
started=$(date +%s)
counts() {
    q -d caio_soak -c "SELECT (coalesce(sum(n_tup_upd), 0) / 2)::bigint FROM pg_stat_user_tables WHERE relname = 'caio_lease_state'" \
      -c "SELECT count(*) FROM caio_nonce_reservation" | tr '\n' ' '
}
q -d caio_soak -c "SELECT soak_snap(0, 0, 0)" >/dev/null
next=$every
while :; do
    now=$(( $(date +%s) - started ))
    q -d caio_soak -c "SELECT soak_poll($now)" >/dev/null
    if [ "$now" -ge "$next" ] || [ "$now" -ge "$seconds" ]; then
        read -r c r <<<"$(counts)"
        q -d caio_soak -c "SELECT soak_snap($now, $c, $r)" >/dev/null
        awk -v t="$now" -v l="$(cut -d ' ' -f 1 /proc/loadavg)" 'BEGIN { printf "   sample at %4d s, load %s\n", t, l }' >&3
        echo "$now $(cut -d ' ' -f 1-3 /proc/loadavg)" >>"$work/load"
        next=$(( next + every ))
    fi
    [ "$now" -lt "$seconds" ] || break
    sleep 1
done
status=0
wait "$lease_pid" || { echo "pgbench failed: lease churn" >&2; cat "$work/lease.out" >&2; status=1; }
wait "$nonce_pid" || { echo "pgbench failed: nonce churn" >&2; cat "$work/nonce.out" >&2; status=1; }
pids=()
[ "$status" = 0 ] || exit 1
# The last sample, after the churn's sessions are gone.
sleep 1
read -r c r <<<"$(counts)"
q -d caio_soak -c "SELECT soak_snap($(( $(date +%s) - started )), $c, $r)" >/dev/null
for f in lease nonce; do
    say "   $f churn: $(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1 transactions/p' "$work/$f.out")," \
        "$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$work/$f.out") per s"
done
say "   load average during the soak (1 min): $(awk '{ print $2 }' "$work/load" | sort -n | sed -n '1p;$p' | paste -sd '-')"
say
q -d caio_soak -f test/bench/soak_report.sql | emit
q -d caio_soak -c "COPY (SELECT * FROM soak_sample ORDER BY tbl, t) TO STDOUT WITH CSV HEADER" >"$out/samples.csv"
q -d caio_soak -c "COPY (SELECT * FROM soak_hold ORDER BY t, pid) TO STDOUT WITH CSV HEADER" >"$out/holds.csv"
say
say "== Files"
for f in soak.txt samples.csv holds.csv machine.txt; do say "   $out/$f"; done
