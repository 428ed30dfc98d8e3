#!/usr/bin/env bash
# The test command.  On a fresh Debian machine: installs what caio needs,
# builds and installs it, runs the static analysis (test/lint.sh), starts a
# throwaway PostgreSQL 15 cluster with pg_virtualenv, and runs every suite in
# it (test/suites.sh), then a smoke run of the benchmark.
set -euo pipefail
cd "$(dirname "$0")/.."
# gnuplot-nox is the benchmark's, whose smoke run ends the test command:
# installing it here keeps to one apt-get update.
test/setup.sh gnuplot-nox
# Static analysis needs no server: it runs, and fails fast, before one starts.
test/lint.sh
# The throwaway cluster must not inherit a connection meant for another one.
unset PGHOST PGPORT PGUSER PGPASSWORD PGDATABASE PGSERVICE
pg_virtualenv -v 15 test/suites.sh
# The benchmark command works from this checkout (every workload for 1 s,
# a small churn, its table, CSV and chart); its numbers are not checked.
echo "== benchmark smoke run (make bench-smoke; numbers not checked)"
BENCH_SMOKE=1 BENCH_NO_BUILD=1 BENCH_RESULTS="$(mktemp -d)" test/bench/run.sh
