-- caio 0.6.0 to 0.7.0: the fourth review's fixes (issue 33).

\echo Use "ALTER EXTENSION caio UPDATE TO '0.7.0'" to load this file. \quit

-- Each change below has a section of its own, in the order of the install
-- script (sql/caio.sql), and qualifies every function and operator that is
-- not caio's own.

------------------------------------------------------------------------------
-- F6 (issue 33): guard triggers are exactly caio's.  caio's event trigger
-- also refuses CREATE [OR REPLACE] TRIGGER that runs caio's fence, version
-- or claim trigger function with a WHEN clause or a column list (UPDATE
-- OF), which would let some writes through unchecked.  An event trigger's
-- tags cannot be altered: it is made again.
------------------------------------------------------------------------------
DROP EVENT TRIGGER caio_guard_inheritance;
CREATE EVENT TRIGGER caio_guard_inheritance ON ddl_command_end
    WHEN TAG IN ('CREATE TABLE', 'ALTER TABLE', 'CREATE FOREIGN TABLE', 'ALTER FOREIGN TABLE',
                 'CREATE TRIGGER')
    EXECUTE FUNCTION @extschema@.caio_guard_inheritance();
COMMENT ON FUNCTION caio_guard_inheritance() IS
    'The event trigger that refuses a table made or altered into an inheritance child of a table caio guards, and a trigger of caio''s trigger functions with a WHEN clause or a column list.';

-- A trigger made so before 0.7.0 is named here.  From 0.7.0 on, caio
-- refuses the writes it fires for, and caio_claim refuses its table; but a
-- trigger with UPDATE OF does not fire at all for an UPDATE that sets none
-- of its columns, so only dropping it closes the gap.
DO $f6$
DECLARE
    t record;
BEGIN
    FOR t IN
        SELECT tg.tgrelid::pg_catalog.regclass::pg_catalog.text AS tbl, tg.tgname,
               tg.tgqual IS NOT NULL AS has_when,
               CASE p.proname WHEN 'caio_fence_trigger' THEN 'caio_protect'
                              WHEN 'caio_version_trigger' THEN 'caio_versioned'
                              ELSE 'caio_claimable' END AS installer
          FROM pg_catalog.pg_trigger tg
          JOIN pg_catalog.pg_proc p ON p.oid OPERATOR(pg_catalog.=) tg.tgfoid
         WHERE tg.tgfoid OPERATOR(pg_catalog.=) ANY (ARRAY[
                   '@extschema@.caio_fence_trigger()'::pg_catalog.regprocedure,
                   '@extschema@.caio_version_trigger()'::pg_catalog.regprocedure,
                   '@extschema@.caio_claim_trigger()'::pg_catalog.regprocedure]::pg_catalog.oid[])
           AND tg.tgparentid OPERATOR(pg_catalog.=) 0
           AND (tg.tgqual IS NOT NULL
                OR pg_catalog.cardinality(tg.tgattr::pg_catalog.int2[]) OPERATOR(pg_catalog.>) 0)
         ORDER BY 1, 2
    LOOP
        RAISE WARNING 'trigger "%" on table % runs caio''s trigger function with %',
                      t.tgname, t.tbl,
                      CASE WHEN t.has_when THEN 'a WHEN clause' ELSE 'a column list (UPDATE OF)' END
            USING DETAIL = 'It does not check every write to the table: caio 0.7.0 refuses the writes it fires for, and caio_claim refuses the table, but the writes it skips go unchecked.',
                  HINT = pg_catalog.format('Drop the trigger; %s() installs caio''s own, which checks every write.', t.installer);
    END LOOP;
END
$f6$;
