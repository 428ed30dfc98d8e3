#!/usr/bin/env bash
# The counters of caio_stats need caio in shared_preload_libraries, which the
# test command's cluster does not have (every other suite proves caio works
# without it).  This starts a second throwaway cluster that preloads caio and
# runs the pg_regress suite test/stats/sql/stats_preloaded.sql in it.  With
# caio preloaded tokens take another path (they wait for no WAL flush of
# their own, and a server's first token moves the sequence), so the
# isolation specs and the pgbench stress runs, with their invariant checks,
# run in this cluster too.  Last, test/stats/slotless.sh: a session's first
# token in a database that got no slot of caio's shared memory.
set -euo pipefail
cd "$(dirname "$0")/../.."
. test/durability/lib.sh

echo "== counters (a cluster with shared_preload_libraries = 'caio')"
dir=$(cluster_init stats "shared_preload_libraries = 'caio'" "max_prepared_transactions = 10")
cluster_start "$dir"
out=$DURABILITY_DIR/stats_out
mkdir -p "$out"
# pg_regress runs as the caller, who can read the checkout (the postgres
# user may not: a checkout under /root is root's alone).
if ! "$("$PG_CONFIG" --pkglibdir)/pgxs/src/test/regress/pg_regress" \
        --bindir="$PGBIN" --inputdir=test/stats --outputdir="$out" --host="$dir.sock" --port="$PGPORT_FIXED" \
        --user=postgres --dbname=contrib_regression --load-extension=caio stats_preloaded; then
    cat "$out/regression.diffs"
    # Kept where pg_regress would keep them: the directory goes on exit.
    mkdir -p test/stats/results && cp "$out"/results/* test/stats/results/
    exit 1
fi

# The rest connects as the PG* variables say.
export PGHOST=$dir.sock PGPORT=$PGPORT_FIXED PGUSER=postgres
export PG_CONFIG
echo "== isolation specs, caio preloaded"
installcheck REGRESS=
echo "== preloaded: $INSTALLCHECK_PASSED isolation specs passed"
stress_runs "caio preloaded"

test/stats/slotless.sh
