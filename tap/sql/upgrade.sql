-- caio_tap 0.3.0 to 0.4.0.  The Makefile builds the upgrade script from this
-- file, which holds what only the upgrade does, and from the functions of
-- sql/caio_tap.sql, which replace 0.3.0's (caio_tap_claimable takes the
-- order the workers claim in, caio_claim's order_by of caio 0.6.0).

\echo Use "ALTER EXTENSION caio_tap UPDATE TO '0.4.0'" to load this file. \quit

-- caio_tap_claimable gains a parameter, and so do the functions of its
-- story: a CREATE OR REPLACE would add them beside the old ones, so the old
-- ones go.  The roles that could execute the old caio_tap_claimable are
-- named, to be granted the new one.
DO $grants$
DECLARE
    holders pg_catalog.text;
BEGIN
    SELECT pg_catalog.string_agg(DISTINCT CASE WHEN a.grantee OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC'
                                               ELSE a.grantee::pg_catalog.regrole::pg_catalog.text END, ', ')
      INTO holders
      FROM pg_catalog.pg_proc p, pg_catalog.aclexplode(p.proacl) a
     WHERE p.oid OPERATOR(pg_catalog.=) '@extschema@.caio_tap_claimable(pg_catalog.regclass, pg_catalog.jsonb)'::pg_catalog.regprocedure
       AND a.grantee OPERATOR(pg_catalog.<>) p.proowner
       AND a.privilege_type OPERATOR(pg_catalog.=) 'EXECUTE';
    IF holders IS NOT NULL THEN
        RAISE WARNING 'caio_tap_claimable is replaced by caio_tap_claimable(regclass, jsonb, text), and the grants of the old one are gone'
            USING DETAIL = pg_catalog.format('These roles had EXECUTE on caio_tap_claimable: %s.', holders),
                  HINT = 'Grant EXECUTE on caio_tap_claimable(regclass, jsonb, text) to them again.';
    END IF;
END
$grants$;
DROP FUNCTION @extschema@.caio_tap_claimable(regclass, jsonb);
DROP FUNCTION @extschema@.caio_tap_claimable_tests(text, regclass, jsonb);
DROP FUNCTION @extschema@.caio_tap_claimable_run(regclass, jsonb);
DROP FUNCTION @extschema@.caio_tap_claimable_story(regclass, jsonb);
DROP FUNCTION @extschema@.caio_tap_claim_sql(regclass, text, text);
