#!/usr/bin/env bash
# caio on a Citus cluster (a coordinator and two workers that each test
# starts with PostgreSQL::Test::Cluster), with the PostgreSQL that PG_CONFIG
# names; caio must be installed there, and Citus too.  Citus is not packaged
# by Debian, and this repository carries neither its source nor a recipe to
# build it: where the PostgreSQL has no Citus, or one that does not load,
# the suite says so and is skipped (exit 77, which test/suites.sh reports as
# skipped); doc/citus.md says how to run it.
#   test/citus/run.sh [TEST...]        (default: every test/citus/t/*.pl)
set -euo pipefail
cd "$(dirname "$0")/../.."
pg_config=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
. test/common.sh

# Exit 77 (skipped) says that this PostgreSQL has no Citus that works: none
# installed, or one whose library does not load (built against another
# minor version, say); what it printed says why.
if [ ! -f "$("$pg_config" --sharedir)/extension/citus.control" ]; then
    echo "== Citus: skipped: $("$pg_config" --version) has no Citus installed (see doc/citus.md)"
    exit 77
fi
probe=$(mktemp -d /tmp/caio-citus-probe.XXXXXX)
chmod 777 "$probe"
if ! as_pg "$("$pg_config" --bindir)/initdb" -D "$probe/data" >"$probe/log" 2>&1 ||
   ! echo 'SELECT 1' | as_pg "$("$pg_config" --bindir)/postgres" --single -D "$probe/data" \
        -c shared_preload_libraries=citus postgres >>"$probe/log" 2>&1; then
    echo "== Citus: skipped: the Citus installed into $("$pg_config" --version) does not load:"
    grep -m 3 -E 'FATAL|ERROR|could not' "$probe/log" || tail -n 5 "$probe/log"
    rm -rf "$probe"
    exit 77
fi
rm -rf "$probe"
# PostgreSQL::Test::Cluster needs IPC::Run (libipc-run-perl, from test/setup.sh).

pgxs=$("$pg_config" --pkglibdir)/pgxs
# The tests run as postgres (a server refuses root), from a copy that it can
# read: the checkout may be readable by root alone.
dir=$(mktemp -d /tmp/caio-citus.XXXXXX)
trap 'rm -rf "$dir"' EXIT
cp -r test/citus/. "$dir/"
chmod -R a+rX "$dir"
[ "$(id -u)" -eq 0 ] && chown -R postgres: "$dir"
tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=($(cd test/citus && echo t/*.pl))
status=0
as_pg env -C "$dir" TESTDIR="$dir" PATH="$("$pg_config" --bindir):$PATH" \
    PG_REGRESS="$pgxs/src/test/regress/pg_regress" \
    PERL5LIB="$pgxs/src/test/perl" \
    prove --timer "${tests[@]}" || status=$?
if [ "$status" -ne 0 ]; then
    for log in "$dir"/tmp_check/log/regress_log_*; do
        echo "--- $log (last 40 lines)"
        tail -n 40 "$log"
    done
fi
exit "$status"
