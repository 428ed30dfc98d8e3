#!/usr/bin/env bash
# Crash: four clients take leases, write under them and reserve nonces; the
# postmaster is killed with SIGKILL mid-load and started again; four more
# clients run.  crash_check.sql then proves that no token and no nonce was
# handed out twice, that every token after the restart is larger than every
# token a client saw before it, and that nothing whose commit a client saw is
# lost.
#   crash.sh on|off     synchronous_commit for the whole cluster
# With off, the WAL writer is slowed down (10 s) and given room, so that the
# crash throws away the asynchronous commits still in WAL buffers.  (A
# SIGKILL cannot lose what already reached the OS, so this cannot show the
# power loss that caio's flush of the token sequence guards against;
# sql/tokens.sql checks that flush directly.)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
mode=${1:?usage: crash.sh on|off}

dir=$(cluster_init crash "synchronous_commit = $mode" "wal_writer_delay = 10s" \
                          "wal_writer_flush_after = 1GB" "wal_buffers = 64MB")
cluster_start "$dir"
sql "$dir" postgres -c "CREATE DATABASE durability"
sql "$dir" durability -f "$here/setup.sql" >/dev/null

run_clients "$dir" durability before 60 1
sleep "${CRASH_AFTER_SECONDS:-3}"
cluster_kill "$dir"
wait_clients
cluster_start "$dir"
run_clients "$dir" durability after 2 0
wait_clients

load_seen "$dir" durability
sql "$dir" durability -f "$here/crash_check.sql"
