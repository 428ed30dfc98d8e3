#!/usr/bin/env bash
# caio_tap against tables that keep caio's contract and tables that do not:
# installs caio_tap, makes a fresh database with pgtap, caio and caio_tap
# and the tables of setup.sql, then runs pg_prove on good.sql, which must
# pass, and on broken.sql, which must fail with the diagnostics below.  At
# the end, from a session of its own, checks that the stories left nothing
# behind.  Then shadow.sh (nothing planted in public binds into caio_tap),
# and an upgrade from each earlier version, which must end with the objects
# of a fresh install (definitions.sql).  Runs against the server the PG*
# variables name (test/suites.sh runs it inside test/pgenv.sh's server); installing
# needs root.
set -euo pipefail
cd "$(dirname "$0")/../.."
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
here=test/tap_contract
db=caio_tap_contract

make -s -C tap PG_CONFIG="$PG_CONFIG" install >/dev/null

. test/common.sh
fresh_db "$db" pgtap caio caio_tap
psql -X -q -v ON_ERROR_STOP=1 -d "$db" -f "$here/setup.sql" >/dev/null

echo "== caio_tap on tables that keep the contract (must pass)"
pg_prove -d "$db" "$here/good.sql"

echo "== caio_tap on broken tables (must fail)"
if out=$(pg_prove -d "$db" "$here/broken.sql" 2>&1); then
    echo "$out"
    echo "broken.sql passed: caio_tap did not notice the broken tables"
    exit 1
fi
echo "$out"
# One diagnostic for each way of breaking a table.
for diagnostic in \
    "transfers_unprotected has no trigger calling caio's caio_fence_trigger(): caio_protect was never run on it, or its trigger was dropped." \
    "A's stale UPDATE (token" \
    "was accepted: transfers_unprotected is not fenced: is caio's trigger on it installed and enabled (caio_protect)?" \
    "caio's trigger caio_fence on transfers_disabled is disabled" \
    "was accepted: transfers_disabled is not fenced" \
    "caio's trigger caio_fence on transfers_renamed names column wallet, which the table no longer has" \
    "overwrote the first (a lost update): payments_unversioned does not check versions" \
    "table \"operations_disabled\" is not claimable" \
    "caio's trigger caio_fence on transfers_replica is enabled in replica mode: it fires only when session_replication_role = replica" \
    "was accepted: transfers_replica is not fenced" \
    "caio's trigger caio_claim on operations_replica is enabled in replica mode" \
    "caio's trigger caio_fence on transfers_generated names column wallet, which is now a generated column" \
    "caio's trigger caio_fence on transfers_generated_token names column fence_token, which is now a generated column" \
    "transfers_inherited has inheritance children (transfers_inherited_child): row triggers on a table do not fire for its children's rows" \
    "payments_inherited has inheritance children (payments_inherited_child)" \
    "operations_inherited has inheritance children (operations_inherited_child)" \
    "column \"priority\" of table \"operations\" does not exist"
do
    if ! grep -qF -- "$diagnostic" <<<"$out"; then
        echo "broken.sql failed, but without the diagnostic: $diagnostic"
        exit 1
    fi
done
# Every stale write in broken.sql must fail its test; count them.  (Not on
# transfers_inherited: its rows are fenced, only its children's are not.)
stale=$(grep -vF transfers_inherited <<<"$out" |
        grep -cE "^# +Failed test [0-9]+: \"[^\"]*: A's stale (UPDATE|DELETE|INSERT)" || true)
if [ "$stale" -ne 21 ]; then
    echo "expected 21 failed stale-write tests in broken.sql, found $stale"
    exit 1
fi
echo "== broken.sql failed as it must, with the diagnostics above"

before=$(psql -X -At -d "$db" -c "SELECT digest FROM contract_before")
after=$(psql -X -At -d "$db" -c "SELECT contract_state()")
if [ "$before" != "$after" ]; then
    echo "the stories left something behind: state $before before, $after after"
    exit 1
fi
echo "== nothing left behind: rows, leases and test clock as before (digest $after)"

test/tap_contract/shadow.sh

# Each earlier version, upgraded: the objects of a fresh install.
version=$(sed -n "s/^default_version *= *'\(.*\)'/\1/p" tap/caio_tap.control)
fresh_db caio_tap_fresh pgtap caio caio_tap
fresh=$(psql -X -At -v ON_ERROR_STOP=1 -d caio_tap_fresh -f "$here/definitions.sql")
for old in $(ls tap/sql | sed -n 's/^caio_tap--\([0-9.]*\)\.sql$/\1/p' | grep -vxF "$version"); do
    fresh_db caio_tap_upgraded pgtap caio
    psql -X -q -v ON_ERROR_STOP=1 -d caio_tap_upgraded \
        -c "CREATE EXTENSION caio_tap VERSION '$old'" -c "ALTER EXTENSION caio_tap UPDATE"
    upgraded=$(psql -X -At -v ON_ERROR_STOP=1 -d caio_tap_upgraded -f "$here/definitions.sql")
    if ! diff -u --label "caio_tap $version" --label "caio_tap $old, updated" \
            <(echo "$fresh") <(echo "$upgraded"); then
        echo "caio_tap $old updated to $version differs from a fresh install"
        exit 1
    fi
    echo "== caio_tap $old updated: the same $(grep -c '^function ' <<<"$fresh") functions as a fresh $version install"
done
