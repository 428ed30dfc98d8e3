#!/usr/bin/env bash
# Crash: four clients take leases, write under them and reserve nonces; the
# postmaster is killed with SIGKILL mid-load and started again; four more
# clients run.  crash_check.sql then proves that no token and no nonce was
# handed out twice, that every token after the restart is larger than every
# token a client saw before it (also for eight sessions that ask for their
# first token at once right after it), and that nothing whose commit a
# client saw is lost; with caio preloaded, the log must show exactly one
# move of the token sequence past the restart.
#   crash.sh on|off     synchronous_commit for the whole cluster
# With off, the WAL writer is slowed down (10 s) and given room, so that the
# crash throws away the asynchronous commits still in WAL buffers.  (A
# SIGKILL cannot lose what already reached the OS, so this cannot show the
# power loss that caio's flush of the token sequence guards against;
# sql/tokens.sql checks that flush directly.)
#   crash.sh off preload           the same with caio in shared_preload_libraries,
#                                  where a token's own WAL may still be in WAL
#                                  buffers when it leaves (src/token_flush.c); a
#                                  crash may lose such tokens' records, and the
#                                  restart must move past them
#   crash.sh off preload walwriter the WAL writer is stopped (SIGSTOP), the
#                                  clients run and stop, one session takes 6000
#                                  leases, and the WAL writer is killed instead
#                                  of the postmaster: what no backend flushed,
#                                  those leases' tokens among it, is still in
#                                  WAL buffers and is lost.  The postmaster
#                                  restarts after the crash in the same run
#                                  (restart_after_crash), with caio's shared
#                                  memory made afresh, and the test fails
#                                  unless the crash did take back tokens.
#   crash.sh off nonces            the WAL writer is stopped, and one session
#                                  writes 20 rows under a lease, each with a
#                                  nonce, each in a transaction of its own
#                                  (synchronous_commit off, as in the whole
#                                  cluster); nothing else writes, so only
#                                  caio's flush of a reservation's commit
#                                  (caio.nonce_synchronous_commit) brings
#                                  them to disk before the WAL writer is
#                                  killed: without that flush, this run
#                                  loses them every time (crash.sh off, with
#                                  its clients' other flushes, only often).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
usage="usage: crash.sh on|off [preload] [walwriter|nonces]"
mode=${1:?$usage}
shift
preload='' load=clients
for word in "$@"; do
    case $word:$load in
        preload:*) preload=preload ;;
        walwriter:clients) load=leases ;;
        nonces:clients) load=nonces ;;
        *) echo "$usage" >&2; exit 2 ;;
    esac
done
# Only these prove something: the WAL writer's crash loses what nobody
# flushed only under synchronous_commit off, and the lease burst's lost
# tokens need caio preloaded (without it each token waits for its flush).
case $mode:$load:$preload in
    on:clients:* | off:clients:* | off:leases:preload | off:nonces:*) ;;
    *) echo "$usage (walwriter with off and preload, nonces with off)" >&2; exit 2 ;;
esac

settings=("synchronous_commit = $mode" "wal_writer_delay = 10s"
          "wal_writer_flush_after = 1GB" "wal_buffers = 64MB")
[ "$preload" = preload ] && settings+=("shared_preload_libraries = 'caio'")
dir=$(cluster_init crash "${settings[@]}")
cluster_start "$dir"
# Only the clients' load crashes the postmaster; the others the WAL writer.
[ "$load" = clients ] || walwriter_stop "$dir"
sql "$dir" postgres -c "CREATE DATABASE durability"
sql "$dir" durability -f "$here/setup.sql" -c "CREATE TABLE first_tokens (token bigint NOT NULL)" >/dev/null

if [ "$load" = nonces ]; then
    token=$(sql "$dir" durability -A -t -c "SELECT token FROM caio_acquire('dur:nonces', 'nonces', '1 minute')")
    echo "before lease $token \\N nonces" >"$DURABILITY_DIR/seen.before.nonces"
    for _ in $(seq 1 20); do     # crash_check.sql wants 20 commits before the crash
        cat <<'SQL'
BEGIN;
SELECT caio_use(caio_lease_of('dur:nonces')) \g /dev/null
INSERT INTO ledger (worker, nonce)
VALUES ('nonces', caio_nonce_reserve(1, '0xde709f2102306220921060314715629080e2fb77'))
RETURNING fence_token AS token, nonce \gset
COMMIT;
\echo before commit :token :nonce nonces
SQL
    done | sql "$dir" durability -A -t -f - >>"$DURABILITY_DIR/seen.before.nonces"
    walwriter_kill "$dir"
    cluster_wait_ready "$dir"
elif [ "$load" = leases ]; then
    run_clients "$dir" durability before 3 0
    wait_clients
    sql "$dir" durability -A -t -c "SET synchronous_commit = off" \
        -c "SELECT 'before lease ' || (caio_acquire('burst:' || i, 'burst', '1 minute')).token || ' \\N burst'
              FROM generate_series(1, 6000) i" >"$DURABILITY_DIR/seen.before.burst"
    # The burst may have ended just after a flush; a few leases more make
    # sure that the sequence's newest record is still in WAL buffers.
    sql "$dir" durability -c "CREATE EXTENSION pageinspect"
    for i in $(seq 1 100); do
        read -r token unflushed < <(sql "$dir" durability -A -t -F ' ' \
            -c "SET synchronous_commit = off" \
            -c "SELECT (caio_acquire('tail:$i', 'burst', '1 minute')).token,
                       (page_header(get_raw_page('caio_token_seq', 0))).lsn > pg_current_wal_flush_lsn()")
        echo "before lease $token \\N burst" >>"$DURABILITY_DIR/seen.before.burst"
        [ "$unflushed" = t ] && break
    done
    walwriter_kill "$dir"
    cluster_wait_ready "$dir"
else
    run_clients "$dir" durability before 60 1
    sleep "${CRASH_AFTER_SECONDS:-3}"
    cluster_kill "$dir"
    wait_clients
    cluster_start "$dir"
fi
# The first tokens after the restart: eight sessions, connected first, ask
# at once.  With caio preloaded one of them moves the sequence past what the
# crash took back and the others wait for that move; crash_check.sql wants
# them above every token seen before, and the log one move, no more.
"$PGBIN/pgbench" -n -h "$dir.sock" -p "$PGPORT_FIXED" -U postgres -c 8 -j 2 -t 1 \
    -f "$here/first_tokens.pgbench" durability >"$DURABILITY_DIR/first_tokens.out" 2>&1 ||
    { cat "$DURABILITY_DIR/first_tokens.out"; exit 1; }
run_clients "$dir" durability after 2 0
wait_clients

load_seen "$dir" durability
sql "$dir" durability -f "$here/crash_check.sql"
moves=$(grep -c 'caio moves tokens past those the server may have handed out' "$dir.log" || true)
expected_moves=$([ "$preload" = preload ] && echo 1 || echo 0)
echo "moves of the token sequence past a restart: $moves (expected $expected_moves)"
[ "$moves" -eq "$expected_moves" ] || { echo "the restart moved the token sequence $moves times" >&2; exit 1; }
if [ "$load" = leases ]; then
    # The sequence's value when it was moved past the crash, from the log.
    restarted_at=$(sed -n 's/.*The token sequence was at \([0-9]*\);.*/\1/p' "$dir.log" | tail -n 1)
    last_seen=$(sql "$dir" durability -A -t -c "SELECT max(token) FROM seen WHERE phase = 'before'")
    echo "token sequence after the crash: ${restarted_at:-not moved}; largest token seen before it: $last_seen"
    if [ -z "$restarted_at" ] || [ "$restarted_at" -ge "$last_seen" ]; then
        echo "the crash took back no token: this run proves nothing" >&2
        exit 1
    fi
fi
