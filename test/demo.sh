#!/usr/bin/env bash
# The demo.  On a fresh Debian machine: installs what caio needs, builds and
# installs it, starts a throwaway PostgreSQL 15 cluster, and walks through
# test/demo.sql in it.
set -euo pipefail
cd "$(dirname "$0")/.."
test/setup.sh >/dev/null
unset PGHOST PGPORT PGUSER PGPASSWORD PGDATABASE PGSERVICE
pg_virtualenv -v 15 sh -c '
    psql -X -q -v ON_ERROR_STOP=1 -c "CREATE EXTENSION caio" &&
    psql -X -q -v ON_ERROR_STOP=1 -f test/demo.sql'
