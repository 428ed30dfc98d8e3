#!/usr/bin/env bash
# The benchmark command (make bench): sets up like the test command (caio's
# packages, gnuplot-nox for the chart, caio built and installed), starts a
# throwaway cluster tuned as documented (synchronous_commit = off,
# shared_buffers = 1GB, fsync = on, caio in shared_preload_libraries, as
# doc/benchmark.md recommends for production), and runs each workload with caio and
# with its baselines in the same run, at each client count, printing ops/s
# side by side, the ratio, the p99 latencies, and whether the row meets its
# target (a ratio, and caio's p99 at most 1.5 times the baseline's).
# pgbench uses prepared statements (-M prepared), as application drivers do.
# Within a round the runs of a workload alternate (baseline, caio, other
# baseline), so that they meet the same machine, and each round starts with
# the next run of its group (caio first in the second round); each row shows the medians
# of BENCH_ROUNDS rounds, the median of the rounds' ratios (caio's ops/s over
# its baseline's in the same round), and the p99 of every transaction of
# those rounds.
# Then the health under churn: a sustained run of acquire/release cycles and
# nonce reservations in a database of its own, with the sizes, HOT share
# and autovacuum counts of caio's tables before and after, and a verdict per
# table.
#
# Writes, under BENCH_RESULTS (default test/bench/results)/<date-time>/, with
# a symlink "latest": bench.csv (the table), bench.png (the chart), runs.csv
# (every run), churn.txt (the churn report), machine.txt, output.txt.
#
#   BENCH_SECONDS  per run (default 3)      BENCH_ROUNDS  (default 7)
#   BENCH_CLIENTS  (default "1 8")          BENCH_CHURN   cycles and
#                                           reservations (default 1000000)
#   BENCH_SMOKE=1  a smoke run: 1 s, 1 round, churn 20000 (each settable)
#   BENCH_FSYNC=off   the cluster without fsync (pg_virtualenv's own default)
#   BENCH_NO_BUILD=1  benchmark the installed caio: install missing packages
#                     only, neither build nor install caio
set -euo pipefail
cd "$(dirname "$0")/../.."

if [ "${BENCH_SMOKE:-0}" != 0 ]; then
    : "${BENCH_SECONDS:=1}" "${BENCH_ROUNDS:=1}" "${BENCH_CHURN:=20000}"
    # The ordered claims' tables at a hundredth of their size: they exist
    # to show that the cost does not grow with the table, which a smoke run
    # does not measure, and at full size they take minutes to fill.
    ordered_scale=100
fi
ordered_small=$((200000 / ${ordered_scale:-1})) ordered_large=$((2000000 / ${ordered_scale:-1}))
# The pending rows stay at 200,000: a run that drains its queue fails.
ordered_pending=200000
# Seven short rounds rather than three long ones: a round's ratio moves with
# the machine (a durable commit's flush time drifts by half within a minute
# here), and the median of seven rounds moves far less than that of three.
export BENCH_SECONDS=${BENCH_SECONDS:-3} BENCH_ROUNDS=${BENCH_ROUNDS:-7}
export BENCH_CLIENTS=${BENCH_CLIENTS:-"1 8"} BENCH_CHURN=${BENCH_CHURN:-1000000}

if [ -z "${CAIO_BENCH_INSIDE:-}" ]; then
    started=$(date +%s)
    if [ "${BENCH_NO_BUILD:-0}" != 0 ]; then
        test/setup.sh --no-build gnuplot-nox >/dev/null
    else
        test/setup.sh gnuplot-nox >/dev/null
    fi
    results=${BENCH_RESULTS:-test/bench/results}
    mkdir -p "$results"
    out=$(cd "$results" && pwd)/$(date +%Y%m%d-%H%M%S)
    mkdir "$out"
    unset PGHOST PGPORT PGUSER PGPASSWORD PGDATABASE PGSERVICE
    # -t: a cluster in a temporary directory, even as root, so that the
    # benchmark does not collide with the test command's cluster.  fsync=on,
    # PostgreSQL's default, overrides pg_virtualenv's fsync=off: a durable
    # commit (caio's nonces, by default) pays its flush as in production.
    # shared_preload_libraries = caio, as recommended: with shared memory a
    # token waits for no WAL flush of its own (src/token_flush.c).
    # The report goes to fd 3; pg_virtualenv's own chatter on stdout is dropped.
    pg_virtualenv -t -v 15 -o synchronous_commit=off -o shared_buffers=1GB \
        -o "fsync=${BENCH_FSYNC:-on}" -o max_connections=100 -o shared_preload_libraries=caio env CAIO_BENCH_INSIDE=1 BENCH_OUT="$out" "$0" "$@" 3>&1 >/dev/null
    ln -sfn "$(basename "$out")" "$results/latest"
    elapsed=$(( $(date +%s) - started ))
    printf 'total time: %dm%02ds (set-up, cluster, workloads, churn)\n' \
        $(( elapsed / 60 )) $(( elapsed % 60 )) | tee -a "$out/output.txt"
    exit 0
fi

# Inside the throwaway cluster.  The report goes to fd 3 and output.txt.
out=$BENCH_OUT
seconds=$BENCH_SECONDS
rounds=$BENCH_ROUNDS
clients=$BENCH_CLIENTS
churn=$BENCH_CHURN
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PGOPTIONS="-c client_min_messages=warning"
q() { psql -X -q -t -A -v ON_ERROR_STOP=1 "$@"; }
emit() { tee -a "$out/output.txt" >&3; }
say() { echo "$@" | emit; }

setup_started=$(date +%s)
q -c "CREATE EXTENSION caio" >/dev/null
bases=$(q -v ordered_small="$ordered_small" -v ordered_large="$ordered_large" \
    -f test/bench/setup.sql | tail -n 1)
read -r token_base renew_base <<<"$bases"

# The machine and the cluster, printed and kept in machine.txt.
settings=(synchronous_commit shared_buffers max_connections fsync shared_preload_libraries full_page_writes wal_level
          max_wal_size checkpoint_timeout autovacuum autovacuum_naptime jit)
{
    echo "date:        $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "cpu:         $(nproc) x $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
    echo "ram:         $(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
    # shellcheck disable=SC1091
    echo "os:          $(. /etc/os-release && echo "$PRETTY_NAME"), Linux $(uname -r)"
    echo "postgresql:  $(q -c 'SHOW server_version'); pgbench $(pgbench --version | awk '{ print $3 }') on the same machine"
    echo "caio:        $(q -c "SELECT extversion FROM pg_extension WHERE extname = 'caio'")" \
         "$([ "${BENCH_NO_BUILD:-0}" != 0 ] && echo "(as installed, not rebuilt)" \
            || echo "(built from this tree$(git describe --always --dirty 2>/dev/null | sed 's/^/ at /'))")"
    echo "cluster:     pg_virtualenv; $(q -c "SELECT string_agg(s || ' = ' || current_setting(s), ', ' ORDER BY o)
                                              FROM unnest(string_to_array('${settings[*]}', ' '))
                                                   WITH ORDINALITY AS t(s, o)"); the rest default"
    echo "runs:        $seconds s per run, $rounds round(s), clients: $clients; pgbench -M prepared," \
         "-j 2 from 2 clients; medians of the rounds, and of the rounds' ratios; p99 over every transaction of the rounds"
    echo "churn:       $churn acquire/release cycles beside $churn nonce reservations, 8 clients each"
} > "$out/machine.txt"
say "== caio benchmark (set-up in the cluster: $(( $(date +%s) - setup_started )) s)"
sed 's/^/   /' "$out/machine.txt" | emit
say

# The runs: an id, a pgbench script (test/bench/<script>.pgbench), and a
# setting for its sessions ("-" for none).
declare -A run_script run_setting
defrun() { run_script[$1]=$2; run_setting[$1]=$3; }
defrun lease_caio          lease_caio          -
defrun lease_plain         lease_plain         -
defrun lease_advisory      lease_advisory      -
defrun renew_caio          renew_caio          -
defrun renew_plain         renew_plain         -
defrun fenced_caio         fenced_update_caio  -
defrun fenced_plain        fenced_update_plain -
defrun fenced_floor        fenced_update_floor -
defrun fenced_hand         fenced_update_hand  -
defrun nonce_hot           nonce_hot_caio      -
defrun nonce_hot_async     nonce_hot_caio      caio.nonce_synchronous_commit=off
defrun counter             counter_plain       -
defrun nonce_plain         nonce_hot_plain     synchronous_commit=on
defrun nonce_plain_async   nonce_hot_plain     -
defrun nonce_wallets       nonce_wallets_caio  -
defrun nonce_wallets_async nonce_wallets_caio  caio.nonce_synchronous_commit=off
defrun claims_caio         claims_caio         -
defrun claims_plain        claims_plain        -
defrun finish_caio         claim_finish_caio   -
defrun finish_plain        claim_finish_plain  -
defrun finish_floor        claim_finish_floor  -
defrun ordered_200k        ordered_finish_caio_200k  -
defrun ordered_200k_plain  ordered_finish_plain_200k -
defrun ordered_2m          ordered_finish_caio_2m    -
defrun ordered_2m_plain    ordered_finish_plain_2m   -

# The groups: runs that alternate within a round, each run once per round
# whatever the number of rows that use it; then the rows of the table, each
# one (caio run, baseline run, workload, baseline, target).  The target is
# the least ratio of caio's ops/s to the baseline's that the row must reach,
# with caio's p99 at most 1.5 times the baseline's; "-" for a row that is
# for reference only.
groups=(); rows=()
group() { groups+=("$*"); }
row() { rows+=("$(( ${#groups[@]} - 1 ))|$1|$2|$3|$4|$5"); }
group lease_plain lease_caio lease_advisory
row   lease_caio lease_plain             "acquire+release"       "plain SQL pair"    1.0
row   lease_caio lease_advisory          "acquire+release"       "advisory lock"     -
group renew_plain renew_caio
row   renew_caio renew_plain             "renew"                 "plain UPDATE"      1.0
group fenced_plain fenced_caio fenced_floor fenced_hand
row   fenced_caio fenced_plain           "fenced UPDATE"         "unprotected UPDATE" 0.95
row   fenced_caio fenced_hand            "fenced UPDATE"         "hand-written fence" 1.0
row   fenced_caio fenced_floor           "fenced UPDATE"         "no-op C row trigger" 0.97
row   fenced_floor fenced_plain          "no-op C row trigger"   "unprotected UPDATE" -
row   fenced_hand fenced_plain           "hand-written fence"    "unprotected UPDATE" -
group nonce_plain nonce_hot nonce_plain_async nonce_hot_async counter nonce_wallets nonce_wallets_async
row   nonce_hot nonce_plain              "nonce, 1 wallet"       "SQL reservation"   1.0
row   nonce_hot_async nonce_plain_async  "nonce, 1 wallet, async" "SQL res., async"  1.0
row   nonce_hot counter                  "nonce, 1 wallet"       "bare counter"      -
row   nonce_hot_async counter            "nonce, 1 wallet, async" "bare counter"     -
row   nonce_wallets counter              "nonce, 1000 wallets"   "bare counter"      -
row   nonce_wallets_async counter        "nonce, 1000 w., async" "bare counter"      -
group finish_plain finish_caio finish_floor
row   finish_caio finish_plain           "claim+finish 10 rows"  "SKIP LOCKED+finish" 1.0
row   finish_floor finish_plain          "SKIP L.+fin., no-op trg" "SKIP LOCKED+finish" -
row   finish_caio finish_floor           "claim+finish 10 rows"  "SKIP L.+fin., no-op trg" -
# Ordered claims (order_by) with 200,000 and with 2,000,000 finished rows in
# the table: beside the hand-written ORDER BY ... SKIP LOCKED, and the
# larger table beside the smaller (the claim's cost must not grow with the
# finished rows: ops/s at 2M at least 1/1.2 of those at 200k).
group ordered_200k_plain ordered_200k ordered_2m_plain ordered_2m
row   ordered_200k ordered_200k_plain    "ordered claim+fin., 200k" "ORDER BY SKIP L.+fin." 1.0
row   ordered_2m ordered_2m_plain        "ordered claim+fin., 2M" "ORDER BY SKIP L.+fin." 1.0
row   ordered_2m ordered_200k            "ordered claim+fin., 2M" "same, 200k done"  0.83
group claims_plain claims_caio
row   claims_caio claims_plain           "claim 10 of 1M rows"   "SKIP LOCKED"       -

# One pgbench run: run id, clients, round.  Appends its ops/s to
# $work/<id>.<clients>.ops, its transactions' latencies (µs, from pgbench's
# per-transaction log) to $work/<id>.<clients>.lat, and a line to runs.csv.
run() {
    local id=$1 c=$2 options=$PGOPTIONS tps
    case $id in
        finish_caio)  q -v queue=bench_queue -f test/bench/refill_queue.sql >/dev/null ;;
        finish_plain) q -v queue=bench_queue_plain -f test/bench/refill_queue.sql >/dev/null ;;
        finish_floor) q -v queue=bench_queue_floor -f test/bench/refill_queue.sql >/dev/null ;;
        ordered_200k*) q -v queue="bench_$id" -v done="$ordered_small" -v pending="$ordered_pending" \
                           -f test/bench/refill_ordered.sql >/dev/null ;;
        ordered_2m*)   q -v queue="bench_$id" -v done="$ordered_large" -v pending="$ordered_pending" \
                           -f test/bench/refill_ordered.sql >/dev/null ;;
    esac
    [ "${run_setting[$id]}" = "-" ] || options="$options -c ${run_setting[$id]}"
    rm -f "$work"/log.*
    if ! PGOPTIONS=$options pgbench -n -M prepared -c "$c" -j "$(( c < 2 ? 1 : 2 ))" -T "$seconds" \
            -D token_base="$token_base" -D renew_base="$renew_base" \
            -l --log-prefix="$work/log" -f "test/bench/${run_script[$id]}.pgbench" \
            >"$work/pgbench.out" 2>&1; then
        echo "pgbench failed: $id, $c clients" >&2
        cat "$work/pgbench.out" >&2
        exit 1
    fi
    tps=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$work/pgbench.out")
    echo "$tps" >>"$work/$id.$c.ops"
    awk '$3 ~ /^[0-9]+$/ { print $3 }' "$work"/log.* >>"$work/$id.$c.lat"
    echo "$id,${run_script[$id]},${run_setting[$id]},$c,$3,$tps" >>"$out/runs.csv"
}
# median of the numbers on standard input
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# p99 in ms of a file of latencies in µs: the value that 99 % of them do not exceed
p99() {
    local n k
    n=$(wc -l <"$1")
    k=$(( (n * 99 + 99) / 100 ))
    sort -n "$1" | sed -n "${k}p" | awk '{ printf "%.2f", $1 / 1000 }'
}

echo "run,script,setting,clients,round,ops_per_s" >"$out/runs.csv"
echo "workload,baseline,clients,caio_ops_per_s,baseline_ops_per_s,ratio,caio_p99_ms,baseline_p99_ms,target_ratio,target" \
    >"$out/bench.csv"
format='%-23s %-18s %7s %10s %10s %6s %9s %9s  %s\n'
# shellcheck disable=SC2059
printf "$format" workload baseline clients "caio ops/s" "base ops/s" ratio "caio p99" "base p99" "target" | emit
# shellcheck disable=SC2059
printf "$format" "" "" "" "" "" "" "(ms)" "(ms)" "(ratio, p99 <= 1.5 x base)" | emit
# Whether a row meets its target: ratio, target ratio, caio's p99, the baseline's.
verdict() {
    [ "$2" != "-" ] || { echo "-"; return; }
    awk -v r="$1" -v t="$2" -v pa="$3" -v pb="$4" 'BEGIN {
        v = ""
        if (r + 0 < t + 0) v = "ratio"
        if (pa + 0 > 1.5 * pb) v = (v == "" ? "p99" : v " and p99")
        print (v == "" ? "met (>= " t ")" : "NOT met (>= " t "): " v)
    }'
}
bench_started=$(date +%s)
labels=(); declare -A chart ratios caio_ops base_ops
for g in "${!groups[@]}"; do
    for c in $clients; do
        read -r -a ids <<<"${groups[$g]}"
        for r in $(seq "$rounds"); do
            # Each round starts one script further along the group, so that
            # no side always runs first (after a refill, a checkpoint, the
            # other side's dead rows).
            for k in "${!ids[@]}"; do run "${ids[$(( (k + r - 1) % ${#ids[@]} ))]}" "$c" "$r"; done
        done
        for line in "${rows[@]}"; do
            IFS='|' read -r rg caio base workload baseline target <<<"$line"
            [ "$rg" = "$g" ] || continue
            a=$(median <"$work/$caio.$c.ops"); b=$(median <"$work/$base.$c.ops")
            pa=$(p99 "$work/$caio.$c.lat"); pb=$(p99 "$work/$base.$c.lat")
            # The rounds' ratios, each of caio beside its baseline in the same
            # round, and their median: the machine drifts between rounds (a
            # round's ops/s moves by half here), which a ratio of the two
            # medians, taken from different rounds, would carry.
            ratio=$(paste -d ' ' "$work/$caio.$c.ops" "$work/$base.$c.ops" \
                    | awk '{ print $1 / $2 }' | median | awk '{ printf "%.2f", $1 }')
            met=$(verdict "$ratio" "$target" "$pa" "$pb")
            # shellcheck disable=SC2059
            printf "$format" "$workload" "$baseline" "$c" "$(printf %.0f "$a")" "$(printf %.0f "$b")" \
                "$ratio" "$pa" "$pb" "$met" | emit
            echo "\"$workload\",\"$baseline\",$c,$(printf %.0f "$a"),$(printf %.0f "$b"),$ratio,$pa,$pb,$target,\"$met\"" \
                >>"$out/bench.csv"
            label="$workload vs $baseline"
            [ "$target" = "-" ] || label="$label (target $target)"
            [ -n "${chart[$label]:-}" ] || labels+=("$label")
            chart[$label]=1; ratios[$label|$c]=$ratio; caio_ops[$label|$c]=$a; base_ops[$label|$c]=$b
        done
    done
    rm -f "$work"/*.lat
done
say "   (workloads: $(( $(date +%s) - bench_started )) s)"


# The chart: the ratio of each row at each client count, with the 1.0 line,
# and the ops/s of caio and of the baseline.  A row's label is "workload vs
# baseline".
for label in "${labels[@]}"; do
    line="\"$label\""
    for c in $clients; do line="$line\t${ratios[$label|$c]}"; done
    for c in $clients; do line="$line\t${caio_ops[$label|$c]}\t${base_ops[$label|$c]}"; done
    printf '%b\n' "$line"
done >"$work/chart.dat"
# a gnuplot plot command over chart.dat, from "column|title|options" ...
plot() {
    local spec column title options command=""
    for spec in "$@"; do
        IFS='|' read -r column title options <<<"$spec"
        if [ -z "$command" ]; then
            command="plot '$work/chart.dat' using $column:xtic(1) title '$title' $options"
        else
            command="$command, '' using $column title '$title' $options"
        fi
    done
    echo "$command"
}
# One colour per client count; in the lower panel caio solid, its baseline
# hatched.  The ratios are written above their bars (a bar j of n in cluster
# x stands at x + (j + 0.5 - n / 2) / (n + gap)).
ratio_specs=(); ops_specs=(); ratio_labels=""
nc=$(echo "$clients" | wc -w)
i=0
for c in $clients; do
    i=$(( i + 1 ))
    if [ "$c" = 1 ]; then clabel="1 client"; else clabel="$c clients"; fi
    ratio_specs+=("$(( i + 1 ))|$clabel|lc $i")
    ops_specs+=("$(( nc + 2 * i ))|caio, $clabel|lc $i"
                "$(( nc + 2 * i + 1 ))|baseline, $clabel|lc $i fill pattern 4")
    ratio_labels="$ratio_labels, '' using (\$0 + ($(( i - 1 )) + 0.5 - $nc / 2.0) / ($nc + 1)):$(( i + 1 )):(sprintf('%.2f', \$$(( i + 1 )))) with labels offset 0,0.6 font ',8' notitle"
done
cat >"$work/chart.gp" <<GNUPLOT
set terminal pngcairo size 1500,1100 font ",10"
set output '$out/bench.png'
set datafile separator "\t"
set multiplot layout 2,1 title "caio beside its baselines: $(sed -n 's/^cpu: *//p' "$out/machine.txt"), PostgreSQL $(q -c 'SHOW server_version' | awk '{ print $1 }'), $seconds s x $rounds round(s), medians"
set style data histogram
set style histogram cluster gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set grid ytics
set key top right
set lmargin 40
set xtics rotate by 20 right nomirror
set yrange [0:*]
set ylabel "caio ops/s / baseline ops/s"
set title "ratio (above 1.0, caio is faster)"
$(plot "${ratio_specs[@]}")$ratio_labels, 1 with lines lw 2 lc rgb "black" title "1.0"
set ylabel "ops/s"
set title "throughput"
$(plot "${ops_specs[@]}")
unset multiplot
GNUPLOT
gnuplot "$work/chart.gp"

# Health under churn, in a database of its own so that its tables hold the
# churn alone: the cycles and reservations in five steps, with a snapshot of
# caio's tables before and after each step.  The lease
# churn and the nonce churn run side by side, each with its own clients.
# The reservations commit asynchronously (caio.nonce_synchronous_commit =
# off): the commit mode changes nothing in the tables, and a durable
# reservation waits for its own flush, which on a slow disk would make a
# million of them take many minutes.
# The workloads' tables go first: autovacuum, three workers for the whole
# cluster, would otherwise still be working through the millions of dead
# rows of the claim queues while the churn's tables need it.
q -c "DROP TABLE bench_locks, bench_counter, bench_fenced, bench_unfenced, bench_fenced_hand, bench_leases,
        bench_trigger_floor, bench_claims, bench_ordered_200k, bench_ordered_2m,
        bench_ordered_200k_plain, bench_ordered_2m_plain,
        bench_claims_plain, bench_queue, bench_queue_plain, bench_nonce_wallet,
        bench_nonce_reservation" >/dev/null
churn_clients=8
churn_db=caio_churn
per_client_resources=$(( 1000 / churn_clients ))
createdb "$churn_db"
q -d "$churn_db" -c "CREATE EXTENSION caio" -f test/bench/churn.sql >/dev/null
# One churn run: script, transactions in all (rounded up to a multiple of
# the clients: pgbench -t counts per client), a setting for its sessions
# ("-" for none).  Writes the number done to $work/<script>.done.
churn_run() {
    local script=$1 n=$2 options=$PGOPTIONS per processed started
    [ "$3" = "-" ] || options="$options -c $3"
    per=$(( (n + churn_clients - 1) / churn_clients ))
    started=$(date +%s.%N)
    if ! PGOPTIONS=$options pgbench -n -M prepared -d "$churn_db" -c "$churn_clients" -j 2 -t "$per" \
            -D nclients="$churn_clients" -D per_client="$per_client_resources" -D wallets=1000 \
            -f "test/bench/$script.pgbench" >"$work/$script.out" 2>&1; then
        echo "pgbench failed: churn $script" >&2
        cat "$work/$script.out" >&2
        return 1
    fi
    processed=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$work/$script.out")
    if [ "$processed" != $(( per * churn_clients )) ]; then
        echo "churn $script: $processed transactions, not $(( per * churn_clients ))" >&2
        return 1
    fi
    awk -v s="$script" -v n="$processed" -v t0="$started" -v t1="$(date +%s.%N)" \
        'BEGIN { printf "   %-12s %8d transactions in %4.0f s (%.0f/s)\n", s, n, t1 - t0, n / (t1 - t0) }' | emit
    echo "$processed" >"$work/$script.done"
}
# Waits until the churn's sessions are gone: their statistics are flushed.
settle() {
    until [ "$(q -d "$churn_db" -c "SELECT count(*) FROM pg_stat_activity
                                     WHERE datname = current_database() AND pid <> pg_backend_pid()
                                       AND backend_type = 'client backend'")" = 0 ]; do
        sleep 0.2
    done
}
say
say "== Health under churn: $churn acquire/release cycles over 1000 resources ($per_client_resources per client),"
say "   beside $churn nonce reservations over 1000 wallets (caio.nonce_synchronous_commit = off);"
say "   $churn_clients clients each, autovacuum on; snapshots after 10, 25, 50, 75 and 100 % of it"
churn_started=$(date +%s)
cycles=0; reservations=0; step=0; previous=0
for pct in 10 25 50 75 100; do
    step=$(( step + 1 ))
    n=$(( churn * pct / 100 - churn * previous / 100 )); previous=$pct
    rm -f "$work"/*.done
    churn_run churn_lease "$n" - & lease_pid=$!
    churn_run churn_nonce "$n" caio.nonce_synchronous_commit=off & nonce_pid=$!
    wait "$lease_pid"
    wait "$nonce_pid"
    cycles=$(( cycles + $(cat "$work/churn_lease.done") ))
    reservations=$(( reservations + $(cat "$work/churn_nonce.done") ))
    settle
    q -d "$churn_db" -c "SELECT churn_snap($step, $pct, $cycles, $reservations)" >/dev/null
done
say "   (churn: $(( $(date +%s) - churn_started )) s)"
say
q -d "$churn_db" -f test/bench/churn_report.sql >"$out/churn.txt"
# The verdict of the longer run (make bench-soak), when there is one beside
# this run's results: this churn lasts minutes, and a table that grows in
# steps (one per long snapshot hold) can read bounded or not over it.
soak=$(dirname "$out")/soak-latest/soak.txt
{
    echo
    if [ -f "$soak" ]; then
        echo "The longer run (make bench-soak, $(sed -n 's/^ *date: *//p' "$soak" | head -n 1);" \
             "$(sed -n 's/^ *soak: *\([0-9.]* min\).*/\1/p' "$soak" | head -n 1)):"
        grep -E '^caio_(lease_state|nonce_wallet):' "$soak" || echo "(no verdict in $soak)"
    else
        echo "No longer run beside these results: make bench-soak soaks the churn for 10 minutes."
    fi
} >>"$out/churn.txt"
emit <"$out/churn.txt"

say
say "== Files"
for f in bench.csv bench.png runs.csv churn.txt machine.txt output.txt; do say "   $out/$f"; done
