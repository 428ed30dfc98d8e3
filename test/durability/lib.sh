# Throwaway PostgreSQL 15 clusters for the durability tests, which kill,
# restart and promote servers and so cannot share the test command's
# cluster.  Each lives in a directory under $DURABILITY_DIR on its own port;
# as root, the servers run as the postgres user.  Sourced, not run.

PGBIN=/usr/lib/postgresql/15/bin
unset PGHOST PGPORT PGUSER PGPASSWORD PGDATABASE PGSERVICE PGOPTIONS
DURABILITY_DIR=$(mktemp -d /tmp/caio-durability.XXXXXX)
chmod 755 "$DURABILITY_DIR"
[ "$(id -u)" -eq 0 ] && chown postgres: "$DURABILITY_DIR"
STARTED_DIRS=()

as_pg() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

stop_all() {
    for dir in "${STARTED_DIRS[@]}"; do
        as_pg "$PGBIN/pg_ctl" -D "$dir" -m immediate stop >/dev/null 2>&1 || true
    done
    rm -rf "$DURABILITY_DIR"
}
trap stop_all EXIT

# free_port: a TCP port on loopback that nothing listens on.
free_port() {
    local port
    for port in $(seq 54400 54499); do
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            echo "$port"; return
        fi
    done
    echo "no free port" >&2; return 1
}

# cluster_conf DIR PORT: the settings every test cluster gets.
cluster_conf() {
    as_pg tee -a "$1/postgresql.conf" >/dev/null <<CONF
port = $2
listen_addresses = '127.0.0.1'
unix_socket_directories = ''
fsync = on
max_connections = 40
log_min_messages = warning
log_statement = none
CONF
}

# cluster_init NAME: a new cluster; prints its data directory.  Settings
# passed as further arguments are appended to postgresql.conf.
cluster_init() {
    local dir=$DURABILITY_DIR/$1 port
    shift
    port=$(free_port)
    as_pg "$PGBIN/initdb" -D "$dir" -U postgres --auth=trust -N >/dev/null
    cluster_conf "$dir" "$port"
    for setting in "$@"; do echo "$setting" | as_pg tee -a "$dir/postgresql.conf" >/dev/null; done
    echo "$dir"
}

cluster_port() { sed -n 's/^port = //p' "$1/postgresql.conf" | tail -1; }

cluster_start() {
    local dir=$1 tries
    STARTED_DIRS+=("$dir")
    # After a SIGKILL the old server's children may take a moment to go.
    for tries in $(seq 1 30); do
        if as_pg "$PGBIN/pg_ctl" -D "$dir" -l "$dir/server.log" -w -t 60 start >/dev/null 2>&1; then
            return 0
        fi
        sleep 1
    done
    cat "$dir/server.log"; echo "cluster $dir did not start" >&2; return 1
}

cluster_stop() { as_pg "$PGBIN/pg_ctl" -D "$1" -m fast -w stop >/dev/null; }

# cluster_kill DIR: SIGKILL the postmaster, as a crash would, and wait for
# its children to notice and exit.
cluster_kill() {
    local dir=$1 pid
    pid=$(head -1 "$dir/postmaster.pid")
    kill -9 "$pid"
    while pgrep -P "$pid" >/dev/null 2>&1 || kill -0 "$pid" 2>/dev/null; do sleep 0.2; done
    sleep 1
}

# sql DIR DB [psql args...]: psql against a test cluster.
sql() {
    local dir=$1 db=$2
    shift 2
    "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$(cluster_port "$dir")" \
        -U postgres -d "$db" "$@"
}

# run_clients DIR DB PHASE SECONDS: start four clients (client.pl) in the
# background, two that write and reserve nonces and two that only take
# leases, their pids in CLIENT_PIDS; each writes what it saw to
# $DURABILITY_DIR/seen.PHASE.WORKER.
CLIENT_PIDS=()
run_clients() {
    local dir=$1 db=$2 phase=$3 seconds=$4 kind
    CLIENT_PIDS=()
    for worker in 1 2 3 4; do
        kind=$([ "$worker" -le 2 ] && echo full || echo lease)
        perl "$(dirname "${BASH_SOURCE[0]}")/client.pl" "$(cluster_port "$dir")" "$db" \
            "$phase" "$worker" "$seconds" "$kind" >"$DURABILITY_DIR/seen.$phase.$worker" \
            2>"$DURABILITY_DIR/client.$phase.$worker.log" &
        CLIENT_PIDS+=($!)
    done
}

# wait_clients: wait for the clients; fail if one failed other than by
# losing its server.
wait_clients() {
    local pid failed=0
    for pid in "${CLIENT_PIDS[@]}"; do wait "$pid" || failed=1; done
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
