# Throwaway clusters for the durability tests, which kill, restart and
# promote servers and so cannot share the test command's cluster; of the
# PostgreSQL that PG_CONFIG names (default: 15's).  Cluster NAME keeps its data in $DURABILITY_DIR/NAME, its log in
# NAME.log and listens only on a Unix socket in NAME.sock, outside the data
# directory so that a base backup does not copy it (no TCP port to collide
# with anything); as root, the servers run as the postgres user.  Sourced,
# not run.

PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
PGBIN=$("$PG_CONFIG" --bindir)
PGPORT_FIXED=5432
unset PGHOST PGPORT PGUSER PGPASSWORD PGDATABASE PGSERVICE PGOPTIONS
DURABILITY_DIR=$(mktemp -d /tmp/caio-durability.XXXXXX)
chmod 755 "$DURABILITY_DIR"
[ "$(id -u)" -eq 0 ] && chown postgres: "$DURABILITY_DIR"
STARTED_DIRS=()
CLIENT_PIDS=()

. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"

# On exit: stop clients and servers; on failure, show the servers' logs
# first, since the directory goes with them.
stop_all() {
    local status=$? dir
    for pid in "${CLIENT_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    for dir in "${STARTED_DIRS[@]}"; do
        if [ "$status" -ne 0 ] && [ -f "$dir.log" ]; then
            echo "--- $(basename "$dir").log (last 40 lines)"
            tail -n 40 "$dir.log"
        fi
        as_pg "$PGBIN/pg_ctl" -D "$dir" -m immediate stop >/dev/null 2>&1 || true
    done
    rm -rf "$DURABILITY_DIR"
    exit "$status"
}
trap stop_all EXIT

# cluster_conf DIR: the settings every test cluster gets.
cluster_conf() {
    as_pg mkdir -p "$1.sock"
    as_pg tee -a "$1/postgresql.conf" >/dev/null <<CONF
port = $PGPORT_FIXED
listen_addresses = ''
unix_socket_directories = '$1.sock'
fsync = on
jit = off
max_connections = 40
log_min_messages = warning
lc_messages = 'C'
CONF
}

# cluster_init NAME [SETTING...]: a new cluster; prints its data directory.
cluster_init() {
    local dir=$DURABILITY_DIR/$1
    shift
    as_pg "$PGBIN/initdb" -D "$dir" -U postgres --auth=trust -N >/dev/null
    cluster_conf "$dir"
    for setting in "$@"; do echo "$setting" | as_pg tee -a "$dir/postgresql.conf" >/dev/null; done
    echo "$dir"
}

cluster_start() {
    local dir=$1
    STARTED_DIRS+=("$dir")
    as_pg "$PGBIN/pg_ctl" -D "$dir" -l "$dir.log" -w -t 120 start >/dev/null
}

cluster_stop() { as_pg "$PGBIN/pg_ctl" -D "$1" -m fast -w stop >/dev/null; }

# cluster_kill DIR: SIGKILL the postmaster, as a crash would, and wait (up
# to a minute) until its children have noticed and gone.
cluster_kill() {
    local dir=$1 pid children tries
    pid=$(head -1 "$dir/postmaster.pid")
    children=$(pgrep -P "$pid" || true)
    kill -9 "$pid"
    for tries in $(seq 1 300); do
        alive=""
        for child in $pid $children; do kill -0 "$child" 2>/dev/null && alive=1; done
        [ -z "$alive" ] && return 0
        sleep 0.2
    done
    echo "the killed server's processes did not exit" >&2; return 1
}

# walwriter_stop DIR / walwriter_kill DIR: stop the WAL writer, so that
# WAL stays in WAL buffers until a backend flushes it; then kill it, and the
# postmaster ends every backend and restarts after the crash (in the same
# postmaster, with shared memory made afresh).
walwriter_pid() {
    local tries
    for tries in $(seq 1 50); do
        pgrep -P "$(head -1 "$1/postmaster.pid")" -f 'postgres: walwriter' && return 0
        sleep 0.1
    done
    echo "no WAL writer found" >&2; return 1
}
walwriter_stop() { kill -STOP "$(walwriter_pid "$1")"; }
walwriter_kill() { kill -9 "$(walwriter_pid "$1")"; }

# cluster_wait_ready DIR: wait (up to a minute) until the server has
# restarted after a crash and accepts connections again.
cluster_wait_ready() {
    local dir=$1 tries
    for tries in $(seq 1 300); do
        if grep -q "all server processes terminated; reinitializing" "$dir.log" &&
           "$PGBIN/pg_isready" -q -h "$dir.sock" -p "$PGPORT_FIXED"; then
            return 0
        fi
        sleep 0.2
    done
    echo "the server did not restart after the crash" >&2; return 1
}

# sql DIR DB [psql args...]: psql against a test cluster.
sql() {
    local dir=$1 db=$2
    shift 2
    "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$dir.sock" -p "$PGPORT_FIXED" -U postgres -d "$db" "$@"
}

# run_clients DIR DB PHASE SECONDS LOSE: start four clients (client.pl) in
# the background, two that write and reserve nonces and two that only take
# leases; each writes what it saw to $DURABILITY_DIR/seen.PHASE.WORKER.
# LOSE is 1 when the server is meant to go away under them.
run_clients() {
    local dir=$1 db=$2 phase=$3 seconds=$4 lose=$5 kind
    CLIENT_PIDS=()
    for worker in 1 2 3 4; do
        kind=$([ "$worker" -le 2 ] && echo full || echo lease)
        perl "$(dirname "${BASH_SOURCE[0]}")/client.pl" "$dir.sock" "$db" "$phase" "$worker" \
            "$seconds" "$kind" "$lose" >"$DURABILITY_DIR/seen.$phase.$worker" \
            2>"$DURABILITY_DIR/client.$phase.$worker.log" &
        CLIENT_PIDS+=($!)
    done
}

# wait_clients: wait for the clients; fail if one failed.
wait_clients() {
    local pid failed=0
    for pid in "${CLIENT_PIDS[@]}"; do wait "$pid" || failed=1; done
    CLIENT_PIDS=()
    [ $failed -eq 0 ] || cat "$DURABILITY_DIR"/client.*.log >&2
    return $failed
}

# load_seen DIR DB: put every client's log into the table seen.
load_seen() {
    cat "$DURABILITY_DIR"/seen.* > "$DURABILITY_DIR/seen.all"
    chmod 644 "$DURABILITY_DIR/seen.all"
    sql "$1" "$2" -c "CREATE TABLE seen (phase text, kind text, token bigint, nonce bigint, holder text)" \
        -c "\\copy seen FROM '$DURABILITY_DIR/seen.all' WITH (DELIMITER ' ')"
}
