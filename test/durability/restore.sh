#!/usr/bin/env bash
# Dump and restore: pg_dump a database with caio's leases, tokens, nonces
# and a protected table, let the source go on handing out tokens, and
# pg_restore the dump into a new database of the same cluster, into a new
# cluster, and over the source itself (--clean), and copy the source as a
# template.  Every copy keeps caio's state as it was dumped, keeps fencing
# the table, and hands out tokens above every token the source handed out,
# even those after the dump: each starts a token epoch of its own.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

source_dir=$(cluster_init source)
cluster_start "$source_dir"
sql "$source_dir" postgres -c "CREATE DATABASE durability"
sql "$source_dir" durability -f "$here/setup.sql" >/dev/null
run_clients "$source_dir" durability before 2 0
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
as_pg "$PGBIN/pg_dump" -h "$source_dir.sock" -p "$PGPORT_FIXED" -U postgres -Fc \
    -f "$DURABILITY_DIR/durability.dump" durability
# The source goes on after the dump: tokens that no copy may hand out again.
source_max=$(sql "$source_dir" durability -A -t -c \
    "SELECT max(token) FROM generate_series(1, 50) i,
            LATERAL caio_acquire('dur:after-dump-' || i, 'source', '1 hour')")

# check DIR DB EXPECTED_STATE_FILE: the copy's state, fencing and tokens.
check() {
    sql "$1" "$2" -A -t -f "$here/state.sql" > "$DURABILITY_DIR/state.copy"
    if ! diff "$3" "$DURABILITY_DIR/state.copy"; then
        echo "the copy $2 in $(basename "$1") does not have the dumped state"; return 1
    fi
    sql "$1" "$2" -v source_max="$source_max" -f "$here/restore_check.sql"
}

# restore_into DIR PG_RESTORE_ARGS...: the dump, restored in cluster DIR.
restore_into() {
    local dir=$1
    shift
    as_pg "$PGBIN/pg_restore" -h "$dir.sock" -p "$PGPORT_FIXED" -U postgres --exit-on-error \
        "$@" "$DURABILITY_DIR/durability.dump"
}

target_dir=$(cluster_init target)
cluster_start "$target_dir"
echo "== restored into a new database of the same cluster"
sql "$source_dir" postgres -c "CREATE DATABASE restored"
restore_into "$source_dir" -d restored
check "$source_dir" restored "$DURABILITY_DIR/state.source"
echo "== restored into a new cluster"
sql "$target_dir" postgres -c "CREATE DATABASE restored"
restore_into "$target_dir" -d restored
check "$target_dir" restored "$DURABILITY_DIR/state.source"
echo "== a template's copy of the source, as it is now"
sql "$source_dir" durability -A -t -f "$here/state.sql" > "$DURABILITY_DIR/state.now"
sql "$source_dir" postgres -c "CREATE DATABASE copied TEMPLATE durability"
check "$source_dir" copied "$DURABILITY_DIR/state.now"
echo "== restored over the source (--clean)"
restore_into "$source_dir" --clean -d durability
check "$source_dir" durability "$DURABILITY_DIR/state.source"
