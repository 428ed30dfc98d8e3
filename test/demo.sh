#!/usr/bin/env bash
# The demo.  On a fresh Debian machine: installs what caio needs, builds and
# installs it, starts a throwaway PostgreSQL 15 cluster, and walks through
# test/demo.sql in it.  It ignores the PG* connection variables of the
# caller (PGHOST, PGPORT, ...): the cluster is its own (test/pgenv.sh: a
# server in a temporary directory, on a Unix socket there), and is removed
# at the end.
set -euo pipefail
cd "$(dirname "$0")/.."

for var in PGHOST PGPORT PGUSER PGPASSWORD PGDATABASE PGSERVICE PGOPTIONS; do
    if [ -n "${!var:-}" ]; then
        echo "== ignoring $var=${!var}: the demo runs in a throwaway cluster of its own"
    fi
done
unset PGHOST PGPORT PGUSER PGPASSWORD PGDATABASE PGSERVICE PGOPTIONS

echo "== setting up: Debian packages (installed only if missing), then caio"
test/setup.sh
echo "== starting a throwaway PostgreSQL 15 cluster"
test/pgenv.sh /usr/lib/postgresql/15/bin/pg_config sh -c '
    psql -X -q -v ON_ERROR_STOP=1 -c "CREATE EXTENSION caio" &&
    psql -X -q -v ON_ERROR_STOP=1 -f test/demo.sql'
echo
echo "== the demo's cluster is gone; caio stays installed in PostgreSQL 15"
