#!/usr/bin/env bash
# Runs the regression and isolation suites (make installcheck) against a
# throwaway PostgreSQL 15 cluster whose postmaster, and so every backend,
# runs under valgrind's memcheck; then reads valgrind's logs.  Not part of
# the test command (test/check.sh): each suite runs 30 to 60 times slower
# (about 11 minutes in all on 2 vCPUs, six of them nonce_dropped's 50,000
# reservations).
#
#   test/valgrind.sh                 # as root on Debian 12, or as a user who may sudo
#   VALGRIND_REGRESS_ONLY=1 test/valgrind.sh   # pg_regress suites only, no isolation
#   VALGRIND_PRELOAD=1 test/valgrind.sh  # caio in shared_preload_libraries (its shared
#                                    # memory, the lazy token flush): isolation specs only,
#                                    # since the pg_regress suites expect no preloading
#   VALGRIND_KEEP=1 test/valgrind.sh # keep the cluster's directory afterwards
#   VALGRIND_EXTRA="--gen-suppressions=all" test/valgrind.sh   # more valgrind options
#
# Like test/check.sh it first installs what it needs (and valgrind), builds
# caio with -Wall -Wextra -Werror and installs it (test/setup.sh), so what
# runs is this checkout's caio.  The cluster lives in a directory of its own
# under /tmp on a free port, TCP on 127.0.0.1 only; as root, initdb and the
# server run as the postgres user.
#
# Output: the suites' own output, then every valgrind error whose stack (or
# the stack that allocated the memory it complains about) goes through caio,
# in full, and a count of the other errors, grouped by their top frames.
# Exit status: 1 if any error involves caio, 2 if the suites failed (under
# valgrind a timing-sensitive step can fail; the diffs are printed), else 0.
#
# Debian's PostgreSQL is not built with USE_VALGRIND, so memcheck knows
# nothing of palloc: memory that a memory context hands out again after a
# pfree is "defined", and an overrun inside a context's block goes unseen.
# What it does find: reads of never-written malloc'd memory (a fresh context
# block), overruns past a block, uninitialised bytes that reach a system call
# or a conditional jump.  test/valgrind.supp silences PostgreSQL's own false
# positives of that kind; no entry names a caio frame, and each says why its
# bytes are PostgreSQL's (the WAL one also matches caio's XLogFlush call).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config
PGBIN=/usr/lib/postgresql/15/bin
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
. test/common.sh

test/setup.sh
if ! command -v valgrind >/dev/null; then
    echo "== installing: valgrind"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends valgrind >/dev/null
fi

# The throwaway cluster must not inherit a connection meant for another one.
unset PGHOST PGPORT PGUSER PGPASSWORD PGDATABASE PGSERVICE PGOPTIONS
DIR=$(mktemp -d /tmp/caio-valgrind.XXXXXX)
chmod 755 "$DIR"
[ "$(id -u)" -eq 0 ] && chown postgres: "$DIR"
DATA=$DIR/data
SERVER_PID=

cleanup() {
    if [ -f "$DATA/postmaster.pid" ]; then
        as_pg "$PGBIN/pg_ctl" -D "$DATA" -m immediate -w -t 600 stop >/dev/null 2>&1 || true
    fi
    if [ -n "${VALGRIND_KEEP:-}" ]; then
        echo "== kept $DIR"
    else
        rm -rf "$DIR"
    fi
}
trap cleanup EXIT

# free_port: a TCP port on loopback that nothing listens on.
free_port() {
    local port
    for port in $(seq 54500 54599); do
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            echo "$port"; return
        fi
    done
    echo "no free port" >&2; return 1
}
PORT=$(free_port)

echo "== cluster in $DIR, port $PORT"
as_pg "$PGBIN/initdb" -D "$DATA" -U postgres --auth=trust -N >/dev/null
# Settings that make a server under valgrind bearable: little shared memory,
# few processes, nothing running in the background, no fsync.  No timeouts:
# every statement may run 20 to 50 times slower than usual.
as_pg tee -a "$DATA/postgresql.conf" >/dev/null <<CONF
port = $PORT
listen_addresses = '127.0.0.1'
unix_socket_directories = ''
shared_buffers = 16MB
max_connections = 20
max_wal_senders = 0
max_replication_slots = 0
max_worker_processes = 4
# The isolation spec acquire_prepared needs prepared transactions.
max_prepared_transactions = 10
max_parallel_workers_per_gather = 0
max_logical_replication_workers = 0
autovacuum = off
jit = off
fsync = off
full_page_writes = off
huge_pages = off
statement_timeout = 0
lock_timeout = 0
idle_in_transaction_session_timeout = 0
log_min_messages = warning
log_statement = none
CONF
if [ -n "${VALGRIND_PRELOAD:-}" ]; then
    echo "shared_preload_libraries = 'caio'" | as_pg tee -a "$DATA/postgresql.conf" >/dev/null
fi

# Every process of the server writes its own log, valgrind.<pid>.log.
# --read-inline-info=yes names caio's inlined static functions in a stack.
# --num-callers=40: an error deep in the executor under SPI needs a long
# stack before it reaches the caio function that called it.
echo "== starting postgres under valgrind (memcheck)"
as_pg valgrind --tool=memcheck --trace-children=yes --leak-check=no \
    --track-origins=yes --read-inline-info=yes --num-callers=40 \
    --error-markers=VALGRINDERROR-BEGIN,VALGRINDERROR-END \
    --suppressions="$repo/test/valgrind.supp" \
    --log-file="$DIR/valgrind.%p.log" ${VALGRIND_EXTRA:-} \
    "$PGBIN/postgres" -D "$DATA" >"$DIR/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 600); do
    "$PGBIN/pg_isready" -q -h 127.0.0.1 -p "$PORT" -U postgres && break
    kill -0 "$SERVER_PID" 2>/dev/null || { cat "$DIR/server.log"; echo "server did not start" >&2; exit 1; }
    sleep 1
done
"$PGBIN/pg_isready" -q -h 127.0.0.1 -p "$PORT" -U postgres || { cat "$DIR/server.log"; echo "server did not start" >&2; exit 1; }

export PGHOST=127.0.0.1 PGPORT=$PORT PGUSER=postgres
# isolationtester gives up on a step blocked for longer than this (seconds).
export PGISOLATIONTIMEOUT=3600

start=$(date +%s)
suites=0
rm -rf results output_iso regression.diffs regression.out
if [ -n "${VALGRIND_PRELOAD:-}" ]; then
    echo "== isolation specs under valgrind, caio preloaded"
    make -s PG_CONFIG="$PG_CONFIG" installcheck REGRESS= || suites=$?
elif [ -n "${VALGRIND_REGRESS_ONLY:-}" ]; then
    echo "== regression suites (no isolation) under valgrind"
    make -s PG_CONFIG="$PG_CONFIG" installcheck ISOLATION= || suites=$?
else
    echo "== regression and isolation suites under valgrind"
    make -s PG_CONFIG="$PG_CONFIG" installcheck || suites=$?
fi
if [ "$suites" -ne 0 ]; then
    cat regression.diffs output_iso/regression.diffs 2>/dev/null || true
fi
echo "== suites took $(( $(date +%s) - start )) s"

# Stop the server cleanly, so that every process finishes its log.
as_pg "$PGBIN/pg_ctl" -D "$DATA" -m fast -w -t 600 stop >/dev/null
wait "$SERVER_PID" || true

# Each error is written between the markers.  One involves caio when a frame
# of its stack, or of the stack that allocated or freed the memory concerned,
# is in caio.so: a function caio_*, or one of caio's source files.
echo "== valgrind errors"
# caio's source files, as a frame names them: "(shared.c:42)".
sources=
for source in src/*.c; do source=${source#src/}; sources+="${sources:+|}${source%.c}"; done
awk -v sources="$sources" '
    function strip(line) { sub(/^==[0-9]+== ?/, "", line); return line }
    /VALGRINDERROR-BEGIN/ { inside = 1; block = ""; ours = 0; sig = ""; frames = 0; done = 0; next }
    /VALGRINDERROR-END/ {
        inside = 0; total++
        if (ours) {
            caio++
            printf "---- caio error %d (%s)\n%s", caio, FILENAME, block
        } else {
            others[sig]++
        }
        next
    }
    !inside { next }
    {
        block = block $0 "\n"
        line = strip($0)
        frame = line ~ /^ *(at|by) 0x[0-9A-Fa-f]+: /
        if (frame && (line ~ /caio/ || line ~ ("[( ](" sources ")\\.c:[0-9]")))
            ours = 1
        # Group the others by the error and the first four frames of its stack.
        if (sig == "") sig = line
        else if (frame && !done && frames < 4) {
            sub(/.*0x[0-9A-Fa-f]+: /, "", line); sub(/ \(.*/, "", line)
            sig = sig (frames++ ? " < " : ": ") line
        } else if (!frame && frames) done = 1
    }
    END {
        printf "== %d valgrind errors in all; %d involve caio; %d do not\n", total, caio, total - caio
        for (s in others) printf "   %5d  %s\n", others[s], s
        exit (caio > 0 ? 1 : 0)
    }
' "$DIR"/valgrind.*.log && ours=0 || ours=1
echo "== $(ls "$DIR"/valgrind.*.log | wc -l) processes ran under valgrind"

if [ "$ours" -ne 0 ]; then
    VALGRIND_KEEP=1
    echo "== FAILED: valgrind errors involve caio (logs kept in $DIR)"
    exit 1
fi
if [ "$suites" -ne 0 ]; then
    echo "== FAILED: the suites failed under valgrind (no valgrind error involves caio)"
    exit 2
fi
echo "== no valgrind error involves caio"
