#!/usr/bin/env bash
# Where the time of a fenced UPDATE goes at 8 clients, beside its baselines:
# on 2 CPUs every run at 8 clients is CPU-bound, so ops/s follow the CPU
# that a transaction costs the whole machine (server, pgbench, kernel), which
# is what this measures.  A cluster of its own is set up as make bench's
# (test/bench/private_cluster.sh: caio preloaded, fsync on, synchronous_commit
# off); then each of the fenced-UPDATE scripts of make bench runs for
# SECONDS under pgbench (-M prepared, 8 clients, 2 threads) while
# `perf record -a` samples every CPU (the cpu-clock event: on machines
# without hardware counters it is the one there is).  Uses the caio that is
# installed.
#   test/bench/perf_fence.sh [SECONDS] [CLIENTS]     (default 10 8)
# PERF_SCRIPTS: some of "plain floor caio hand" (default all four).
# Prints, per script: ops/s, CPU per transaction (user and system, from
# /proc/stat), and the symbols with the most CPU per transaction, caio
# beside the hand-written fence.  Keeps the perf files in $PERF_OUT
# (default a temporary directory, removed) for `perf report -i`.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-10}
clients=${2:-8}
command -v perf >/dev/null || { echo "perf_fence.sh needs perf (Debian's linux-perf)" >&2; exit 1; }
# shellcheck source=test/bench/private_cluster.sh
. test/bench/private_cluster.sh
private_cluster_start "fsync = on"
keep=${PERF_OUT:-}
[ -z "$keep" ] || mkdir -p "$keep"
hz=997

# user and system jiffies of the whole machine
cpu_jiffies() { awk '/^cpu / { print $2 + $3, $4 }' /proc/stat; }

declare -A tps cpu_us
scripts=${PERF_SCRIPTS:-plain floor caio hand}
for s in $scripts; do
    case $s in
        plain) script=fenced_update_plain ;; floor) script=fenced_update_floor ;;
        caio) script=fenced_update_caio ;; hand) script=fenced_update_hand ;;
    esac
    read -r u0 k0 < <(cpu_jiffies)
    perf record -q -a -F "$hz" -o "$dir/$s.perf" -- \
        pgbench -n -M prepared -c "$clients" -j 2 -T "$seconds" -D token_base="$token_base" \
        -f "test/bench/$script.pgbench" >"$dir/$s.out" 2>"$dir/$s.err"
    read -r u1 k1 < <(cpu_jiffies)
    tx=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$dir/$s.out")
    tps[$s]=$(awk -v n="$tx" -v t="$seconds" 'BEGIN { printf "%.0f", n / t }')
    tick=$(getconf CLK_TCK)
    cpu_us[$s]=$(awk -v u=$((u1 - u0)) -v k=$((k1 - k0)) -v n="$tx" -v h="$tick" \
        'BEGIN { printf "%.1f %.1f", u / h / n * 1e6, k / h / n * 1e6 }')
    # samples per symbol, as microseconds per transaction
    perf report -i "$dir/$s.perf" --no-children --sort dso,symbol --stdio -F overhead,sample,dso,sym 2>/dev/null |
        awk -v n="$tx" -v hz="$hz" '/^ +[0-9.]+%/ { sub(/^ +/, ""); split($0, f, /  +/);
            printf "%s\t%.2f\n", f[3] " " f[4], f[2] / hz / n * 1e6 }' >"$dir/$s.sym"
    [ -z "$keep" ] || cp "$dir/$s.perf" "$keep/"
done

printf '%-38s %8s %22s\n' "UPDATE of one row, $clients clients" "ops/s" "CPU µs/tx (user, sys)"
for s in $scripts; do
    case $s in
        plain) label="unprotected" ;; floor) label="no-op C row trigger (the floor)" ;;
        caio) label="caio's fence (caio_protect)" ;; hand) label="hand-written fence (leases FOR SHARE)" ;;
    esac
    read -r u k <<<"${cpu_us[$s]}"
    printf '%-38s %8s %10s %5s %5s\n' "$label" "${tps[$s]}" "$(awk -v u="$u" -v k="$k" 'BEGIN { print u + k }')" "$u" "$k"
done
[[ " $scripts " == *" caio "* && " $scripts " == *" hand "* ]] || exit 0
echo
echo "CPU µs per transaction by symbol (samples of every CPU): the 25 largest differences, caio's fence minus the hand-written fence"
join -t $'\t' -a 1 -a 2 -e 0 -o 0,1.2,2.2 <(sort -t $'\t' -k1,1 "$dir/caio.sym") <(sort -t $'\t' -k1,1 "$dir/hand.sym") |
    awk -F '\t' '{ d = $2 - $3; printf "%+8.2f\t%7.2f\t%7.2f\t%s\n", d, $2, $3, $1 }' |
    sort -t $'\t' -k1,1 -g -r | awk 'NR <= 12' >"$dir/top"
join -t $'\t' -a 1 -a 2 -e 0 -o 0,1.2,2.2 <(sort -t $'\t' -k1,1 "$dir/caio.sym") <(sort -t $'\t' -k1,1 "$dir/hand.sym") |
    awk -F '\t' '{ d = $2 - $3; printf "%+8.2f\t%7.2f\t%7.2f\t%s\n", d, $2, $3, $1 }' |
    sort -t $'\t' -k1,1 -g | awk 'NR <= 13' >>"$dir/top"
printf '%8s %7s %7s  %s\n' "caio-hand" "caio" "hand" "dso symbol"
sort -t $'\t' -k1,1 -g -r "$dir/top" | uniq | awk -F '\t' '{ printf "%8s %7s %7s  %s\n", $1, $2, $3, $4 }'
