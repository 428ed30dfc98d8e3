#!/usr/bin/env bash
# The test command.  On a fresh Debian machine: installs what caio needs,
# builds and installs it, runs the static analysis (test/lint.sh), starts a
# throwaway PostgreSQL 15 cluster with pg_virtualenv, and runs every suite in
# it (test/suites.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
test/setup.sh
# Static analysis needs no server: it runs, and fails fast, before one starts.
test/lint.sh
# The throwaway cluster must not inherit a connection meant for another one.
unset PGHOST PGPORT PGUSER PGPASSWORD PGDATABASE PGSERVICE
pg_virtualenv -v 15 test/suites.sh
