#!/usr/bin/env bash
# A session's first token in a database without a slot of caio's shared
# memory: in a cluster that preloads caio, databases made from one that has
# caio each take a slot until one finds them all taken (caio_stats() says
# so, 54000), and the isolation spec first_token_slotless runs there: with
# no slot, every backend moves the token sequence before its first token
# (src/token.c), and that move must not wait for other sessions' open
# transactions.
set -euo pipefail
cd "$(dirname "$0")/../.."
. test/durability/lib.sh

echo "== a session's first token in a database without a slot, caio preloaded"
dir=$(cluster_init slotless "shared_preload_libraries = 'caio'" "fsync = off")
cluster_start "$dir"
export PGHOST=$dir.sock PGPORT=$PGPORT_FIXED PGUSER=postgres
fresh_db caio_slots_template caio
slotless=""
for i in $(seq 1 70); do
    db=caio_slot_$i
    psql -X -q -v ON_ERROR_STOP=1 -d postgres -c "CREATE DATABASE $db TEMPLATE caio_slots_template"
    if ! err=$(psql -X -q -v ON_ERROR_STOP=1 -d "$db" -c "SELECT caio_stats()" 2>&1 >/dev/null); then
        case $err in
            *"this one has none"*) slotless=$db; break ;;
            *) echo "$err"; exit 1 ;;
        esac
    fi
done
[ -n "$slotless" ] || { echo "every database still found a slot after $i"; exit 1; }
echo "   $slotless has no slot"
# A copy of another database starts a token lineage of its own at its first
# token, under a lock held to that transaction's end (src/token.c): done
# here, so that the spec's sessions meet only the start-up move.
psql -X -q -v ON_ERROR_STOP=1 -d "$slotless" \
    -c "SELECT caio_acquire('slotless:lineage', 'worker-0', '1 second')" >/dev/null
out=$DURABILITY_DIR/slotless_out
if ! "$("$PG_CONFIG" --pkglibdir)/pgxs/src/test/isolation/pg_isolation_regress" \
        --bindir="$PGBIN" --inputdir=test/isolation --outputdir="$out" \
        --use-existing --dbname="$slotless" first_token_slotless; then
    cat "$out/regression.diffs"
    exit 1
fi
