#!/usr/bin/env bash
# caio_tap binds only to pg_catalog's built-ins and to caio_tap's, caio's and
# pgTAP's own functions, whatever is planted in public.  A role that is not a
# superuser but may create objects in public plants shadows there
# (shadow.sql); a superuser then runs good.sql and broken.sql with
# search_path = public, and again with public before pg_catalog, and none of
# the shadows may run (none may have made that role a superuser), and the TAP
# lines must be those of a database without shadows (numbers aside: tokens
# differ).  Last, an overload of caio_claim planted for a table's row type:
# caio_tap must refuse to claim rows rather than call it.
#   test/tap_contract/shadow.sh [CAIO_TAP_VERSION]
# (the version installed, by default the newest: 0.2.0 shows the shadows
# that ran).  Run by run.sh, against the server the PG* variables name.
set -euo pipefail
cd "$(dirname "$0")/../.."
here=test/tap_contract
version=${1:-}
role=caio_tap_mallory
clean=caio_tap_clean
shadowed=caio_tap_shadowed

. test/common.sh
# A database with the tables of setup.sql and caio_tap at that version.
tap_db() {
    fresh_db "$1" pgtap caio
    psql -X -q -v ON_ERROR_STOP=1 -d "$1" \
        -c "CREATE EXTENSION caio_tap${version:+ VERSION '$version'}" -f "$here/setup.sql" >/dev/null
}
# A query of this script's own on the shadowed database: public is not on
# its search_path, or the shadows would answer it.
query() {
    PGOPTIONS="-c search_path=pg_catalog" psql -X -At -v ON_ERROR_STOP=1 -d "$shadowed" -c "$1"
}
# The TAP lines of a file, without the numbers (tokens, timings) and
# without the shadows' warnings (the list at the end names those that ran).
tap_lines() {
    local db=$1 file=$2
    shift 2
    env "$@" pg_prove -v -d "$db" "$here/$file" 2>&1 |
        grep -v -e wallclock -e 'WARNING:  shadow ' | sed -E 's/[0-9]+/N/g' || true
}

tap_db "$clean"
tap_db "$shadowed"
psql -X -q -v ON_ERROR_STOP=1 -d postgres -c "DROP ROLE IF EXISTS $role" -c "CREATE ROLE $role"
psql -X -q -v ON_ERROR_STOP=1 -d "$shadowed" \
    -c "GRANT CREATE ON SCHEMA public TO $role" \
    -c "GRANT USAGE ON TYPE caio_tap_outcome, caio_tap_verdict, caio_lease TO $role"
PGOPTIONS="-c role=$role" psql -X -q -v ON_ERROR_STOP=1 -d "$shadowed" -f "$here/shadow.sql" >/dev/null
echo "== $(query "SELECT count(*) FROM public.shadow") shadows planted in public by $role"
# From 0.7.0 caio refuses a superuser's calls while a role it does not trust
# can create objects in its schema (sql/planted.sql shows that): the role
# loses CREATE again, and the shadows it planted meanwhile stay, which is
# what this test is about.
query "REVOKE CREATE ON SCHEMA public FROM $role" >/dev/null

status=0
differences=$(mktemp)
trap 'rm -f "$differences"' EXIT
for path in 'public' 'public,pg_catalog'; do
    for file in good.sql broken.sql; do
        if ! diff -u --label "$file without shadows" --label "$file with shadows, search_path = $path" \
                <(tap_lines "$clean" "$file") \
                <(tap_lines "$shadowed" "$file" PGOPTIONS="-c search_path=$path") >"$differences"; then
            head -n 60 "$differences"
            echo "($(wc -l <"$differences") lines of differences)"
            status=1
        fi
    done
done
[ "$status" -eq 0 ] && echo "== the same TAP lines as without shadows"

# caio_claim's first argument is polymorphic: an overload for the row type
# of operations is a better match than caio's for a claim on it.
query "GRANT CREATE ON SCHEMA public TO $role" >/dev/null
PGOPTIONS="-c role=$role" psql -X -q -v ON_ERROR_STOP=1 -d "$shadowed" >/dev/null <<'SQL'
CREATE FUNCTION public.caio_claim(operations, text, interval, integer, text) RETURNS SETOF operations
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM public.shadow_ran('caio_claim(operations,text,interval,integer,text)');
    RETURN;
END $$;
SELECT public.plant('caio_claim(operations,text,interval,integer,text)');
SQL
query "REVOKE CREATE ON SCHEMA public FROM $role" >/dev/null
claim=$(PGOPTIONS="-c search_path=public" psql -X -At -d "$shadowed" 2>&1 <<'SQL'
BEGIN;
SELECT no_plan();
SELECT * FROM caio_tap_claimable('operations', '{"id": 2}');
ROLLBACK;
SQL
) || true
refusal="public.caio_claim(public.operations,text,interval,integer,text) is in caio's schema but is not caio's"
if ! grep -qF -- "$refusal" <<<"$claim"; then
    echo "$claim"
    echo "caio_tap_claimable did not refuse a caio_claim planted beside caio's"
    status=1
fi

ran=$(query "
    SELECT s.signature || ': ' || q.last_value || ' call' || CASE WHEN q.last_value > 1 THEN 's' ELSE '' END
      FROM public.shadow s JOIN pg_sequences q ON format('%I.%I', q.schemaname, q.sequencename)::regclass = s.calls
     WHERE q.last_value IS NOT NULL ORDER BY s.signature")
if [ -n "$ran" ]; then
    echo "shadows planted in public ran:"
    echo "$ran"
    status=1
fi
if [ "$(query "SELECT rolsuper FROM pg_roles WHERE rolname = '$role'")" != f ]; then
    echo "a shadow made $role a superuser"
    status=1
fi
if [ "$status" -ne 0 ]; then
    echo "(the databases $clean and $shadowed and the role $role are kept)"
    exit "$status"
fi
echo "== no shadow ran; a planted caio_claim was refused"
psql -X -q -v ON_ERROR_STOP=1 -d postgres \
    -c "DROP DATABASE $clean" -c "DROP DATABASE $shadowed" -c "DROP ROLE $role"
