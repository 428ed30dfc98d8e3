#!/usr/bin/env bash
# Dump and restore: pg_dump a database with caio's leases, tokens, nonces
# and a protected table; pg_restore it into a new database of the same
# cluster and into a new cluster.  Both keep caio's state as it was, keep
# fencing the table, and hand out tokens above every token of the source;
# the new cluster moves to token epoch 1, the same cluster stays in epoch 0.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

source_dir=$(cluster_init source)
cluster_start "$source_dir"
sql "$source_dir" postgres -c "CREATE DATABASE durability"
sql "$source_dir" durability -f "$here/setup.sql" >/dev/null
run_clients "$source_dir" durability before 2
wait_clients
# A live lease, a released one, and nonces in several states.
sql "$source_dir" durability >/dev/null <<'SQL'
SELECT caio_acquire('dur:live', 'keeper', '1 hour');
SELECT caio_release(caio_acquire('dur:gone', 'leaver', '1 hour'));
SELECT caio_nonce_release(1, '0xde709f2102306220921060314715629080e2fb77', 3);
SELECT caio_nonce_mark(1, '0xde709f2102306220921060314715629080e2fb77', 4, 'broadcast',
                       '0x' || repeat('ab', 32));
SQL
sql "$source_dir" durability -A -t -f "$here/state.sql" > "$DURABILITY_DIR/state.source"
as_pg "$PGBIN/pg_dump" -h 127.0.0.1 -p "$(cluster_port "$source_dir")" -U postgres -Fc \
    -f "$DURABILITY_DIR/durability.dump" durability

target_dir=$(cluster_init target)
cluster_start "$target_dir"
for dir in "$source_dir" "$target_dir"; do
    sql "$dir" postgres -c "CREATE DATABASE restored"
    as_pg "$PGBIN/pg_restore" -h 127.0.0.1 -p "$(cluster_port "$dir")" -U postgres \
        --exit-on-error -d restored "$DURABILITY_DIR/durability.dump"
    sql "$dir" restored -A -t -f "$here/state.sql" > "$DURABILITY_DIR/state.restored"
    if ! diff "$DURABILITY_DIR/state.source" "$DURABILITY_DIR/state.restored"; then
        echo "the restore in $(basename "$dir") changed caio's state"; exit 1
    fi
    epoch=$([ "$dir" = "$source_dir" ] && echo 0 || echo 1)
    sql "$dir" restored -v epoch="$epoch" -f "$here/restore_check.sql"
done
