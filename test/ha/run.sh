#!/usr/bin/env bash
# caio under a real failover manager: a pg_auto_failover formation (Debian's
# postgresql-15-auto-failover: a monitor and two data nodes, n1 and n2, on
# 127.0.0.1, each in a throwaway directory and on a free port, with the
# monitor tuned to notice a failure within seconds), caio created on the
# primary.  Four clients (client.pl) connect as applications do, with the
# formation's multi-host connection string and target_session_attrs=read-write,
# and run through every fault: leases acquired, renewed and released, rows of
# a caio_protect'ed table written under their tokens, nonces reserved on one
# hot wallet and marked broadcast, job rows claimed and finished.  The faults,
# in turn, with synchronous replication (pg_auto_failover's default):
#   kill        SIGKILL of the primary's postmaster, its node frozen until
#               the monitor has promoted the standby (an unplanned failover);
#               then the node comes back and rejoins as a standby
#   switchover  pg_autoctl perform switchover (planned), back to that node
#   crash       the primary's whole node (pg_autoctl and Postgres) killed;
#               the standby takes over alone
#   failback    the crashed node started again, rejoins as a standby
#               (pg_rewind), and the new primary's postmaster is killed:
#               a second failover, back to it
# and then with asynchronous replication (number-sync-standbys 0, the
# standby out of the replication quorum):
#   async       the primary's WAL sender paused for 40 writes, as a slow
#               network would, and the primary killed as in kill, so that
#               the failover loses what those writes acknowledged
# After each fault check.sql runs on the new primary and prints one line:
# the checks, and the time from the fault to the first write there.
# PostgreSQL 15 only (the PG_CONFIG, default 15's, must be 15: the only
# version with a pg_auto_failover package in Debian 12).  As root, the
# formation runs as the postgres user, which never reads the checkout;
# the clients and psql run as the caller.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../common.sh"
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
PGBIN=$("$PG_CONFIG" --bindir)
unset PGHOST PGPORT PGUSER PGPASSWORD PGDATABASE PGSERVICE PGOPTIONS
command -v pg_autoctl >/dev/null || { echo "pg_autoctl is missing: install postgresql-15-auto-failover" >&2; exit 1; }

HA_DIR=$(mktemp -d /tmp/caio-ha.XXXXXX)
chmod 755 "$HA_DIR"
[ "$(id -u)" -eq 0 ] && chown postgres: "$HA_DIR"
mkdir "$HA_DIR/clients"
cd "$HA_DIR"
declare -A GROUP PORT
CLIENT_PIDS=()

# On exit, even on failure: the clients, then every node's process group
# (pg_autoctl and its Postgres), then any postmaster left; on failure the
# logs' tails first, since the directory goes with them.
stop_all() {
    local status=$? node pid
    trap - EXIT
    set +e
    for pid in "${CLIENT_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    if [ "$status" -ne 0 ]; then
        for node in mon n1 n2; do
            [ -f "$HA_DIR/$node.log" ] || continue
            echo "--- $node.log (last 30 lines)"; tail -n 30 "$HA_DIR/$node.log"
        done
        tail -n 3 "$HA_DIR"/clients/*.err "$HA_DIR"/clients/*.out 2>/dev/null || true
        [ -z "${HA_KEEP:-}" ] || { echo "HA_KEEP: $HA_DIR kept for $HA_KEEP s"; sleep "$HA_KEEP"; } || true
    fi
    for node in "${!GROUP[@]}"; do
        kill -CONT -- "-${GROUP[$node]}" 2>/dev/null || true
        kill -KILL -- "-${GROUP[$node]}" 2>/dev/null || true
    done
    for node in mon n1 n2; do
        pid=$(head -1 "$HA_DIR/$node/postmaster.pid" 2>/dev/null || true)
        if [ -n "$pid" ] && grep -qs "$HA_DIR/$node" "/proc/$pid/cmdline"; then kill -KILL "$pid"; fi
    done
    for node in mon n1 n2; do wait_gone "$node" || true; done
    rm -rf "$HA_DIR"
    exit "$status"
}
trap stop_all EXIT
trap 'exit 1' INT TERM

# autoctl ARGS...: pg_autoctl as the postgres user, its configuration and
# state kept in the throwaway directory.
autoctl() {
    as_pg env XDG_CONFIG_HOME="$HA_DIR/xdg/config" XDG_DATA_HOME="$HA_DIR/xdg/data" \
        XDG_RUNTIME_DIR="$HA_DIR/xdg/run" HOME="$HA_DIR" PATH="$PGBIN:$PATH" pg_autoctl "$@"
}

# start_node NODE: pg_autoctl run, in a process group of its own (its
# Postgres joins it), so that the node can be frozen or killed whole.
start_node() {
    setsid bash -c "$(declare -f as_pg autoctl); HA_DIR=$HA_DIR PGBIN=$PGBIN; autoctl run --pgdata $HA_DIR/$1" \
        >>"$HA_DIR/$1.log" 2>&1 &
    GROUP[$1]=$!
    disown
}

# wait_gone NODE: until every process of the node's group and its
# postmaster have exited (a minute at most).
wait_gone() {
    local tries pid
    pid=$(head -1 "$HA_DIR/$1/postmaster.pid" 2>/dev/null || true)
    for tries in $(seq 1 300); do
        if ! { [ -n "${GROUP[$1]:-}" ] && pgrep -g "${GROUP[$1]}" >/dev/null 2>&1; } \
           && ! { [ -n "$pid" ] && grep -qs "$HA_DIR/$1" "/proc/$pid/cmdline"; }; then
            return 0
        fi
        sleep 0.2
    done
    echo "node $1 did not stop" >&2; return 1
}

# free_port: a TCP port nobody listens on (nor on the next two).
free_port() {
    local port
    for _ in $(seq 1 50); do
        port=$((20000 + RANDOM % 20000))
        if ! ss -ltnH | awk '{print $4}' | grep -qE ":($port|$((port + 1))|$((port + 2)))\$"; then
            echo "$port"; return 0
        fi
    done
    echo "no free port" >&2; return 1
}

# sql PORT DB [psql args...]: psql over loopback.
sql() {
    local port=$1 db=$2
    shift 2
    "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U postgres -d "$db" "$@"
}

# state: each node's reported/assigned state, as the monitor has them, with
# "!" after a node that the monitor's health checks do not (yet) find
# good.  A fault is only begun from a settled formation whose nodes are all
# healthy: the monitor answers a standby it thinks unhealthy (one that has
# just rejoined, say) by putting the primary in wait_primary, which turns
# synchronous replication off.  (During a switchover a primary can land in
# wait_primary another way, which no health check causes: doc/failover.md,
# "One standby".)
state() {
    sql "$MONPORT" pg_auto_failover -At -c \
        "SELECT string_agg(nodename || ':' || reportedstate || '/' || goalstate
                           || CASE WHEN health = 1 THEN '' ELSE '!' END, ' ' ORDER BY nodename)
           FROM pgautofailover.node"
}

# wait_state WANTED [SECONDS]: until the formation is in that state (as
# printed by state), 180 s at most by default.
wait_state() {
    local wanted=$1 deadline=$((SECONDS + ${2:-180})) now=""
    while [ $SECONDS -lt $deadline ]; do
        now=$(state 2>/dev/null || true)
        [ "$now" = "$wanted" ] && return 0
        sleep 0.3
    done
    echo "the formation did not reach \"$wanted\" (now: \"$now\")" >&2; return 1
}

# settled PRIMARY STANDBY: the state with PRIMARY primary and STANDBY its
# synchronous-capable secondary.
settled() {
    if [ "$1" = n1 ]; then echo "n1:primary/primary n2:secondary/secondary"
    else echo "n1:secondary/secondary n2:primary/primary"; fi
}

now_ms() { date +%s%3N; }

# wait_ready PORT: until the server there takes connections (two minutes
# at most).
wait_ready() {
    local deadline=$((SECONDS + 120))
    until "$PGBIN/pg_isready" -q -h 127.0.0.1 -p "$1"; do
        [ $SECONDS -lt $deadline ] || { echo "nothing listens on port $1" >&2; return 1; }
        sleep 0.2
    done
}

# commits_since MS PORT: how many writes the clients saw committed on that
# node after MS.
commits_since() {
    cat "$HA_DIR"/clients/*.out | awk -v t="$1" -v p="$2" \
        'NF == 7 && $3 == "commit" && $1 > t && $2 == p { n++ } END { print n + 0 }'
}

# wait_commits MS PORT N: until the clients saw N writes on that node after
# MS (two minutes at most).
wait_commits() {
    local deadline=$((SECONDS + 120))
    while [ "$(commits_since "$1" "$2")" -lt "$3" ]; do
        if [ $SECONDS -ge $deadline ]; then
            echo "fewer than $3 writes on port $2 in two minutes" >&2; return 1
        fi
        for pid in "${CLIENT_PIDS[@]}"; do
            kill -0 "$pid" 2>/dev/null || { echo "a client died" >&2; cat "$HA_DIR"/clients/*.err >&2; return 1; }
        done
        sleep 0.2
    done
}

# stale_lease FAULT PORT: a lease taken on the primary just before the
# fault, with a short ttl, and a write under it; prints its token.
stale_lease() {
    sql "$2" ha -At -c "SELECT token FROM caio_acquire('dur:stale-$1', 'stale', '2 seconds')" \
        -c "INSERT INTO ledger (worker, nonce, fence_token)
            SELECT 'stale-$1', -1, token FROM caio_lease_of('dur:stale-$1')" | head -1
}

# check FAULT PORT T0 SYNC STALE: check.sql on the new primary.
check() {
    cat "$HA_DIR"/clients/*.out | awk 'NF == 7' >"$HA_DIR/seen.$1"
    sql "$2" ha -At -v fault="$1" -v port="$2" -v t0="$3" -v sync="$4" -v stale_token="$5" \
        -c "CREATE TEMP TABLE seen (ms bigint, port int, kind text, token bigint, n bigint, a bigint, holder text)" \
        -c "\\copy seen FROM '$HA_DIR/seen.$1' WITH (DELIMITER ' ')" -f "$here/check.sql"
}

# freeze_and_kill NODE: freeze the node (pg_autoctl and Postgres), then
# SIGKILL its postmaster; the node stays frozen until thaw.
freeze_and_kill() {
    local pid
    pid=$(head -1 "$HA_DIR/$1/postmaster.pid")
    kill -STOP -- "-${GROUP[$1]}"
    kill -KILL "$pid"
}
thaw() { kill -CONT -- "-${GROUP[$1]}"; }

# ---------------------------------------------------------------- formation
MONPORT=$(free_port)
PORT[n1]=$((MONPORT + 1))
PORT[n2]=$((MONPORT + 2))
started=$SECONDS
echo "== pg_auto_failover formation: monitor on 127.0.0.1:$MONPORT, n1 :${PORT[n1]}, n2 :${PORT[n2]}"
autoctl create monitor --pgdata "$HA_DIR/mon" --pgport "$MONPORT" --hostname 127.0.0.1 \
    --listen 127.0.0.1 --auth trust --no-ssl --pgctl "$PGBIN/pg_ctl" >>"$HA_DIR/mon.log" 2>&1
# Failure noticed within seconds rather than the defaults' 20 s and more.
as_pg tee -a "$HA_DIR/mon/postgresql.conf" >/dev/null <<'CONF'
pgautofailover.health_check_period = 1000
pgautofailover.health_check_timeout = 1000
pgautofailover.health_check_max_retries = 1
pgautofailover.health_check_retry_delay = 500
pgautofailover.node_considered_unhealthy_timeout = 3000
pgautofailover.primary_demote_timeout = 3000
CONF
start_node mon
monitor="postgres://autoctl_node@127.0.0.1:$MONPORT/pg_auto_failover?sslmode=disable"
for node in n1 n2; do
    # The monitor must be up before a node registers: create postgres asks it.
    autoctl create postgres --pgdata "$HA_DIR/$node" --pgport "${PORT[$node]}" --listen 127.0.0.1 \
        --hostname 127.0.0.1 --name "$node" --dbname ha --auth trust --no-ssl \
        --monitor "$monitor" --pgctl "$PGBIN/pg_ctl" >>"$HA_DIR/$node.log" 2>&1
    start_node "$node"
    if [ "$node" = n1 ]; then
        wait_state "n1:single/single"
        wait_ready "${PORT[n1]}"
        sql "${PORT[n1]}" ha -f "$here/../durability/setup.sql" >/dev/null
        sql "${PORT[n1]}" ha -c "CREATE TABLE jobs (id int PRIMARY KEY, runs int NOT NULL DEFAULT 0)" \
            -c "CREATE TABLE job_runs (job int NOT NULL, token bigint PRIMARY KEY, finished_ms bigint NOT NULL)" \
            -c "SELECT caio_claimable('jobs')" -c "INSERT INTO jobs (id) SELECT generate_series(1, 40)" >/dev/null
    fi
done
wait_state "$(settled n1)"
conninfo=$(autoctl show uri --pgdata "$HA_DIR/mon" --formation default)
echo "== formation up in $((SECONDS - started)) s; clients connect to $conninfo"
echo "   synchronous_standby_names: $(sql "${PORT[n1]}" ha -At -c 'SHOW synchronous_standby_names')"

for worker in 1 2 3 4; do
    perl "$here/client.pl" "$conninfo" "$worker" "$HA_DIR/stop" \
        >"$HA_DIR/clients/$worker.out" 2>"$HA_DIR/clients/$worker.err" &
    CLIENT_PIDS+=($!)
done
wait_commits 0 "${PORT[n1]}" 40

# fault NAME FROM TO SYNC ACTION: with the clients writing on FROM, take
# the stale writer's lease, do ACTION, wait until TO is the primary and
# has taken 40 writes, and check.
fault() {
    local name=$1 from=$2 to=$3 sync=$4 action=$5 stale t0 begun=$SECONDS
    wait_state "$(settled "$from")"
    if [ "$sync" = on ]; then wait_synchronous "${PORT[$from]}"; fi
    wait_commits "$(now_ms)" "${PORT[$from]}" 20
    stale=$(stale_lease "$name" "${PORT[$from]}")
    t0=$(now_ms)
    $action "$from" "$to"
    wait_commits "$t0" "${PORT[$to]}" 40
    check "$name" "${PORT[$to]}" "$t0" "$sync" "$stale" | sed "1s/\$/ ($((SECONDS - begun)) s)/"
}

# wait_synchronous PORT: until the primary there replicates synchronously
# (pg_autoctl sets synchronous_standby_names once its standby is in sync).
wait_synchronous() {
    local deadline=$((SECONDS + 120))
    until [ -n "$(sql "$1" ha -At -c 'SHOW synchronous_standby_names')" ]; do
        [ $SECONDS -lt $deadline ] || { echo "port $1 never replicated synchronously" >&2; return 1; }
        sleep 0.3
    done
}

# wait_promoted NODE: until the monitor has made NODE the primary (alone or
# not), two minutes at most.
wait_promoted() {
    local deadline=$((SECONDS + 120))
    until state | grep -qE "$1:(wait_primary|primary)/(wait_primary|primary)"; do
        [ $SECONDS -lt $deadline ] || { echo "no promotion of $1: $(state)" >&2; return 1; }
        sleep 0.3
    done
}

# The actions: FROM is the primary, TO the standby that takes over.
# kill_and_rejoin: FROM frozen and its postmaster killed; once TO is in
# charge, FROM thaws, and its pg_autoctl (which restarts Postgres) has it
# rejoin as a standby.
kill_and_rejoin() {
    freeze_and_kill "$1"
    wait_promoted "$2"
    thaw "$1"
    wait_state "$(settled "$2")"
}
switchover() {
    autoctl perform switchover --pgdata "$HA_DIR/mon" --formation default >>"$HA_DIR/mon.log" 2>&1
    wait_state "$(settled "$2")"
}
# crash: FROM's pg_autoctl and Postgres killed; TO takes over alone.
crash() {
    kill -KILL -- "-${GROUP[$1]}"
    kill -KILL "$(head -1 "$HA_DIR/$1/postmaster.pid")" 2>/dev/null || true
    wait_gone "$1"
    wait_promoted "$2"
}

fault kill       n1 n2 on kill_and_rejoin
fault switchover n2 n1 on switchover
fault crash      n1 n2 on crash
# The crashed n1 starts again and rejoins as a standby (pg_rewind), which
# turns synchronous replication on again; then n2's postmaster is killed
# and the formation fails back to n1.
start_node n1
wait_state "$(settled n2)"
fault failback   n2 n1 on kill_and_rejoin

# ------------------------------------------------- asynchronous replication
# "pg_autoctl set formation number-sync-standbys 0" and "pg_autoctl set
# node replication-quorum false", through the monitor's functions that
# those commands call: pg_autoctl 2.0 refuses the value 0 ("is not
# valid"), and its set node logs errors (a garbled get_nodes parameter).
# number-sync-standbys is 0 already with one standby; replication-quorum
# false takes n2 out of synchronous_standby_names.
sql "$MONPORT" pg_auto_failover -At \
    -c "SELECT pgautofailover.set_formation_number_sync_standbys('default', 0)" \
    -c "SELECT pgautofailover.set_node_replication_quorum('default', 'n2', false)" >/dev/null
deadline=$((SECONDS + 120))
until [ -z "$(sql "${PORT[n1]}" ha -At -c 'SHOW synchronous_standby_names')" ]; do
    [ $SECONDS -lt $deadline ] || { echo "replication stayed synchronous" >&2; exit 1; }
    sleep 0.3
done
wait_state "$(settled n1)"
echo "   asynchronous: synchronous_standby_names is now empty"
# A slow network: n1's WAL sender paused for 40 writes before n1 dies
# with it, so that n2 never receives what n1 acknowledged in that time.
# No rejoin afterwards: the test ends with the check on n2.
# The node then dies whole, as in crash: its pg_autoctl (which would
# restart it), its postmaster and every backend.  Frozen instead, as kill
# does until it thaws the node, its backends would hold the clients that
# were in a query there for good: nothing thaws it here.
pause_and_kill() {
    local sender postmaster children
    postmaster=$(head -1 "$HA_DIR/$1/postmaster.pid")
    sender=$(pgrep -f "walsender" -P "$postmaster" | head -1)
    [ -n "$sender" ] || { echo "no WAL sender on $1" >&2; return 1; }
    kill -STOP "$sender"
    wait_commits "$(now_ms)" "${PORT[$1]}" 40
    children=$(pgrep -P "$postmaster" || true)
    kill -KILL -- "-${GROUP[$1]}" 2>/dev/null || true
    # shellcheck disable=SC2086 # one pid a word
    kill -KILL $children "$postmaster" 2>/dev/null || true
    wait_gone "$1"
    wait_promoted "$2"
}
fault async n1 n2 off pause_and_kill

touch "$HA_DIR/stop"
for pid in "${CLIENT_PIDS[@]}"; do wait "$pid" || { cat "$HA_DIR"/clients/*.err >&2; exit 1; }; done
CLIENT_PIDS=()
echo "== client reconnections: $(cat "$HA_DIR"/clients/*.err | grep -c reconnecting)"
echo "== pg_auto_failover: every check held ($((SECONDS - started)) s)"
