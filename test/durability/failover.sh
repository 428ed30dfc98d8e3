#!/usr/bin/env bash
# Failover: a primary and a streaming standby (pg_basebackup over loopback,
# asynchronous replication).  Clients load the primary; the standby is cut
# off while the load goes on, so that the primary hands out tokens the
# standby never receives; the primary is killed and the standby promoted.
# failover_check.sql then proves that no token the old primary handed out
# is handed out again by the new one, and that the new primary moved to
# epoch 1.
#   failover.sh [preload]   preload: both with caio in shared_preload_libraries
#                           (the standby's configuration is the primary's copy)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

settings=("synchronous_commit = on")
[ "${1:-}" = preload ] && settings+=("shared_preload_libraries = 'caio'")
primary=$(cluster_init primary "${settings[@]}")
cluster_start "$primary"
sql "$primary" postgres -c "CREATE DATABASE durability"
sql "$primary" durability -f "$here/setup.sql" >/dev/null

standby=$DURABILITY_DIR/standby
as_pg "$PGBIN/pg_basebackup" -h "$primary.sock" -p "$PGPORT_FIXED" -U postgres \
    -D "$standby" -R -X stream -c fast
cluster_conf "$standby"
cluster_start "$standby"

# Load with the standby following, then without it: the tokens of the
# second half reach the old primary's clients but never the standby.
run_clients "$primary" durability before 60 1
sleep 2
cluster_stop "$standby"
sleep 2
cluster_kill "$primary"
wait_clients

cluster_start "$standby"
as_pg "$PGBIN/pg_ctl" -D "$standby" -w promote >/dev/null
run_clients "$standby" durability after 2 0
wait_clients

load_seen "$standby" durability
sql "$standby" durability -f "$here/failover_check.sql"
