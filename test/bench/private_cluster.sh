# shellcheck shell=bash
# Sourced by the fence's profiling scripts: a cluster of their own in a
# temporary directory, set up as make bench's (caio preloaded,
# test/bench/setup.sql), on a Unix socket only, removed on exit.
#   private_cluster_start "extra postgresql.conf lines"
# sets dir, bindir, token_base and the PG* variables, and leaves it running.
# shellcheck disable=SC1091
. test/common.sh
bindir=$(/usr/lib/postgresql/15/bin/pg_config --bindir)
dir=$(mktemp -d /tmp/caio-profile.XXXXXX)
chmod 755 "$dir"
[ "$(id -u)" -eq 0 ] && chown postgres: "$dir"
private_cluster_stop() {
    as_pg "$bindir/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$dir"
}
trap private_cluster_stop EXIT
private_cluster_start() {
    as_pg "$bindir/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --locale=C -N >/dev/null
    as_pg tee -a "$dir/data/postgresql.conf" >/dev/null <<CONF
listen_addresses = ''
unix_socket_directories = '$dir'
shared_preload_libraries = 'caio'
shared_buffers = 1GB
synchronous_commit = off
$1
CONF
    as_pg "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w start >/dev/null
    export PGHOST=$dir PGUSER=postgres PGDATABASE=postgres PGOPTIONS="-c client_min_messages=warning"
    psql -X -q -v ON_ERROR_STOP=1 -c "CREATE EXTENSION caio" >/dev/null
    # The ordered claims' tables as in a smoke run: the fence does not read them.
    # shellcheck disable=SC2034 # read by the scripts that source this file
    token_base=$(psql -X -q -t -A -v ON_ERROR_STOP=1 -v ordered_small=2000 -v ordered_large=20000 -f test/bench/setup.sql | tail -n 1 | cut -d ' ' -f 1)
    psql -X -q -v ON_ERROR_STOP=1 -c "VACUUM" >/dev/null
}
