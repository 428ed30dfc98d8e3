#!/usr/bin/env bash
# Instructions per transaction of the fenced UPDATE and its baselines, with
# valgrind's callgrind: repeatable on a busy machine, where ops/s are not.
# A cluster of its own is set up as make bench's (test/bench/setup.sql, caio
# preloaded), then, for each of the benchmark's four fenced-UPDATE scripts
# (unprotected, no-op C row trigger, caio's fence, the hand-written fence),
# a single-user backend under callgrind runs a prepared UPDATE N1 and N2
# times over the same rows, at random, after one pass over all 1000 rows
# that warms the session's caches (each EXECUTE its own transaction); the
# difference of the two totals over N2 - N1 is the cost of one transaction,
# without start-up and first-use costs.  Uses the caio that is installed.
#   test/bench/callgrind_fence.sh [N1 N2]     (default 200 1200)
# CALLGRIND_SCRIPTS: some of "plain floor caio hand" (default all four).
# Prints a line per script: instructions per transaction, and the ratio of
# the unprotected UPDATE's to it (what ops/s would be if instructions were
# all).  Keeps the callgrind files in $CALLGRIND_OUT (default a temporary
# directory, removed) for callgrind_annotate.
# shellcheck disable=SC2016 # the statements' $1 and $2 are PostgreSQL's
set -euo pipefail
cd "$(dirname "$0")/../.."
n1=${1:-200}
n2=${2:-1200}
# shellcheck source=test/bench/private_cluster.sh
. test/bench/private_cluster.sh
keep=${CALLGRIND_OUT:-}
if [ -n "$keep" ]; then mkdir -p "$keep"; fi
private_cluster_start "fsync = off
autovacuum = off
jit = off"
as_pg "$bindir/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null

# The statements, as the pgbench scripts have them, with $1 the row and $2
# its wallet's token.
declare -A stmt
stmt[plain]='UPDATE bench_unfenced SET amount = amount + 1, fence_token = $2 WHERE id = $1'
stmt[floor]='UPDATE bench_trigger_floor SET amount = amount + 1, fence_token = $2 WHERE id = $1'
stmt[caio]='UPDATE bench_fenced SET amount = amount + 1, fence_token = $2 WHERE id = $1'
stmt[hand]="UPDATE bench_fenced_hand t SET amount = amount + 1, fence_token = \$2 WHERE t.id = \$1 AND \$2 = (SELECT l.token FROM bench_leases l WHERE l.resource = 'bench:' || t.wallet FOR SHARE)"
# total instructions of a single-user backend running script S's statement N times
count() {
    local s=$1 n=$2 f=$dir/$1.$2
    {
        echo "PREPARE p(int, bigint) AS ${stmt[$s]}"
        awk -v n="$n" -v b="$token_base" 'BEGIN {
            for (i = 1; i <= 1000; i++) printf "EXECUTE p(%d, %d)\n", i, b + i
            srand(1); for (k = 0; k < n; k++) { i = 1 + int(rand() * 1000); printf "EXECUTE p(%d, %d)\n", i, b + i } }'
    } >"$f.sql"
    chmod 644 "$f.sql"
    as_pg valgrind --tool=callgrind --callgrind-out-file="$f.out" \
        "$bindir/postgres" --single -D "$dir/data" -c shared_preload_libraries=caio postgres \
        <"$f.sql" >"$f.log" 2>&1
    [ -z "$keep" ] || cp "$f.out" "$keep/"
    if grep -q ERROR "$f.log"; then
        echo "$s: an error in the single-user backend:" >&2
        grep ERROR "$f.log" | head -n 3 >&2
        exit 1
    fi
    sed -n 's/^summary: *\([0-9]*\).*/\1/p;s/^totals: *\([0-9]*\).*/\1/p' "$f.out" | head -n 1
}
scripts=${CALLGRIND_SCRIPTS:-plain floor caio hand}
declare -A per=([plain]=0 [floor]=0 [caio]=0 [hand]=0)
for s in $scripts; do
    a=$(count "$s" "$n1"); b=$(count "$s" "$n2")
    per[$s]=$(( (b - a) / (n2 - n1) ))
done
[ "$scripts" = "plain floor caio hand" ] || { for s in $scripts; do echo "$s ${per[$s]}"; done; exit 0; }
printf '%-38s %12s %18s\n' "UPDATE of one row, prepared" "instr./tx" "unprotected / it"
for s in $scripts; do
    case $s in
        plain) label="unprotected" ;;
        floor) label="no-op C row trigger (the floor)" ;;
        caio)  label="caio's fence (caio_protect)" ;;
        hand)  label="hand-written fence (leases FOR SHARE)" ;;
    esac
    awk -v l="$label" -v n="${per[$s]}" -v p="${per[plain]}" 'BEGIN { printf "%-38s %12d %18.3f\n", l, n, p / n }'
done
awk -v c="${per[caio]}" -v f="${per[floor]}" -v h="${per[hand]}" 'BEGIN {
    printf "caio over the floor: %+d instructions (floor / caio %.3f); hand / caio %.3f\n", c - f, f / c, h / c }'
