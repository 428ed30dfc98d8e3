#!/usr/bin/env bash
# The lease and the fencing stress (test/stress/run.sh lease|fence) through a
# real PgBouncer (Debian's package) in transaction pooling mode, then a check
# that caio_use is transaction-scoped there.
#
# PgBouncer listens only on a Unix socket in a directory of its own (no TCP
# port to collide with anything) and runs as the postgres user when this
# script runs as root (it refuses to run as root).  Clients log in with
# SCRAM, with the password in PGPASSWORD (trust when there is none);
# PgBouncer logs in to the server the PG* variables name with the same
# password.  POOL_SIZE (3) server connections serve the stress's 8 pgbench
# clients, so clients really share server connections between their
# transactions; each stress run's log tables record the server backend of
# every statement (backend_pid), and the pooling checks below fail unless
# that log shows the sharing.  The stress's setup and check connect to the
# server directly; only the pgbench load goes through PgBouncer, with
# -M extended (PgBouncer 1.18 cannot pool named prepared statements, so
# -M prepared would fail).  STRESS_SECONDS (default 8) sets each run's
# length.  Needs the PG* variables to name a server (superuser) with caio
# installed; test/suites.sh runs it inside test/pgenv.sh's server.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
stress=$here/../stress
POOL_SIZE=3
CLIENTS=8                       # test/stress/run.sh's pgbench -c
PORT=6432                       # only names the socket file, in a directory of our own
server_host=${PGHOST:-/var/run/postgresql}
server_port=${PGPORT:-5432}
user=${PGUSER:-$(id -un)}
# PgBouncer refuses a connection that sends PGOPTIONS (startup parameter
# "options"); the setup and check need none either.
unset PGOPTIONS

dir=$(mktemp -d /tmp/caio-pgbouncer.XXXXXX)
chmod 755 "$dir"
. "$here/../common.sh"
[ "$(id -u)" -eq 0 ] && chown postgres: "$dir"

# On exit, also on failure: stop PgBouncer (showing its log on failure).
stop_bouncer() {
    local status=$? pid
    if [ -s "$dir/pgbouncer.pid" ]; then
        pid=$(cat "$dir/pgbouncer.pid")
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    fi
    if [ "$status" -ne 0 ] && [ -f "$dir/pgbouncer.log" ]; then
        echo "--- pgbouncer.log (last 30 lines)"
        tail -n 30 "$dir/pgbouncer.log"
    fi
    rm -rf "$dir"
    exit "$status"
}
trap stop_bouncer EXIT

if [ -n "${PGPASSWORD:-}" ]; then auth_type=scram-sha-256; else auth_type=trust; fi
as_pg tee "$dir/userlist.txt" >/dev/null <<EOF
"${user//\"/\"\"}" "${PGPASSWORD:+${PGPASSWORD//\"/\"\"}}"
EOF
chmod 600 "$dir/userlist.txt"
as_pg tee "$dir/pgbouncer.ini" >/dev/null <<EOF
[databases]
; a pool of exactly one server connection, for the caio_use check
caio_bouncer_one = host=$server_host port=$server_port dbname=caio_bouncer_use pool_size=1
* = host=$server_host port=$server_port

[pgbouncer]
unix_socket_dir = $dir
listen_port = $PORT
auth_type = $auth_type
auth_file = $dir/userlist.txt
admin_users = $user
pool_mode = transaction
default_pool_size = $POOL_SIZE
reserve_pool_size = 0
max_client_conn = 100
logfile = $dir/pgbouncer.log
pidfile = $dir/pgbouncer.pid
EOF
as_pg pgbouncer -d -q "$dir/pgbouncer.ini"
for _ in $(seq 100); do [ -S "$dir/.s.PGSQL.$PORT" ] && break; sleep 0.1; done
[ -S "$dir/.s.PGSQL.$PORT" ] || { echo "PgBouncer did not start"; exit 1; }
echo "PgBouncer $(pgbouncer --version | head -n1 | cut -d' ' -f2), pool_mode = transaction," \
     "$POOL_SIZE server connections for $CLIENTS clients"

direct() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }
bounced() { psql -X -q -v ON_ERROR_STOP=1 -h "$dir" -p "$PORT" "$@"; }

# admin COMMAND COLUMN...: those columns of the admin console's COMMAND, for
# the row of database DB (a variable set by the caller).
admin() {
    local command=$1; shift
    psql -X -A -F' ' --pset footer=off -h "$dir" -p "$PORT" -d pgbouncer -c "$command" |
        awk -v db="$db" -v want="$*" '
            NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; n = split(want, w, " "); next }
            $col["database"] == db { line = ""; for (i = 1; i <= n; i++) line = line " " $col[w[i]]; print substr(line, 2) }'
}

for name in lease fence; do
    db=caio_bouncer_$name
    echo "== $name stress through PgBouncer (pgbench -M extended)"
    fresh_db "$db" caio
    PGDATABASE=$db "$stress/run.sh" "$name" -M extended -h "$dir" -p "$PORT"
    stats=$(admin "SHOW STATS" total_xact_count total_query_count total_wait_time)
    read -r xacts queries wait_us <<<"$stats"
    servers=$(admin "SHOW SERVERS" database | wc -l)
    echo "PgBouncer: $xacts transactions ($queries queries) over $servers server connections;" \
         "clients spent $((wait_us / 1000)) ms in all waiting for one"
    if [ "$servers" -gt "$POOL_SIZE" ]; then
        echo "PgBouncer kept $servers server connections, more than its pool of $POOL_SIZE"; exit 1
    fi
    direct -d "$db" -v pool_size="$POOL_SIZE" -v clients="$CLIENTS" -f "$here/${name}_pooling.sql"
done

echo "== caio_use through PgBouncer: one server connection, two clients"
fresh_db caio_bouncer_use caio
direct -d caio_bouncer_use -f "$here/use_setup.sql"
bounced -d caio_bouncer_one -f "$here/use_client_a.sql"
bounced -d caio_bouncer_one -c "SELECT use_write_refused('b', 'other client, next transaction')" >/dev/null
direct -d caio_bouncer_use -f "$here/use_check.sql"
