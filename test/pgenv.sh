#!/usr/bin/env bash
# A throwaway PostgreSQL server of the version PG_CONFIG names, for one
# command, as Debian's pg_virtualenv does for installed versions (it cannot
# start the trees of test/pgtree.sh).
#   test/pgenv.sh PG_CONFIG COMMAND...
# initdb in a temporary directory (as the postgres user when run as root),
# a server on a Unix socket only, with jit off (the trees carry no LLVM);
# COMMAND runs with PATH, PG_CONFIG and the PG* variables pointing at it;
# then the server is stopped and its directory removed, whatever COMMAND did.
# Exits with COMMAND's status.
set -euo pipefail
pg_config=${1:?usage: test/pgenv.sh PG_CONFIG COMMAND...}
shift
bindir=$("$pg_config" --bindir)
. "$(dirname "$0")/common.sh"

dir=$(mktemp -d /tmp/caio-pgenv.XXXXXX)
chmod 755 "$dir"
[ "$(id -u)" -eq 0 ] && chown postgres: "$dir"
stop_server() {
    local status=$?
    if [ -f "$dir/data/postmaster.pid" ]; then
        as_pg "$bindir/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 ||
            as_pg "$bindir/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
    fi
    if [ "$status" -ne 0 ] && [ -f "$dir/server.log" ]; then
        echo "--- server log (last 30 lines)"
        tail -n 30 "$dir/server.log"
    fi
    rm -rf "$dir"
    exit "$status"
}
trap stop_server EXIT

as_pg "$bindir/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --locale=C -N >/dev/null
as_pg tee -a "$dir/data/postgresql.conf" >/dev/null <<CONF
listen_addresses = ''
unix_socket_directories = '$dir'
port = 5432
jit = off
fsync = off
max_connections = 60
max_prepared_transactions = 10
CONF
as_pg "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 120 start >/dev/null

unset PGPASSWORD PGSERVICE PGOPTIONS
export PGHOST=$dir PGPORT=5432 PGUSER=postgres PGDATABASE=postgres
export PG_CONFIG=$pg_config PATH=$bindir:$PATH
set +e
"$@"
status=$?
set -e
exit "$status"
