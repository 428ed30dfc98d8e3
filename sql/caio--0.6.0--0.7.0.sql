-- caio 0.6.0 to 0.7.0: the fourth review's fixes (issue 33).

\echo Use "ALTER EXTENSION caio UPDATE TO '0.7.0'" to load this file. \quit

-- Each change below has a section of its own, in the order of the install
-- script (sql/caio.sql), and qualifies every function and operator that is
-- not caio's own.

-- Every name this update takes in caio's schema, checked first: a relation,
-- type or function there under one of them that is not caio's (made by
-- anyone with CREATE in the schema) is named, all in one error, before
-- anything changes.  F7 (issue 33).  A section below that creates a relation,
-- type or function adds its name to these lists.
DO $clash$
DECLARE
    -- Tables, sequences, views and indexes (also the row types of the first).
    relations CONSTANT pg_catalog.text[] := '{}';
    types CONSTANT pg_catalog.text[] := '{}';
    -- Each function as its name and pg_catalog.oidvectortypes(proargtypes).
    functions CONSTANT pg_catalog.text[] := '{}';
    schema CONSTANT pg_catalog.oid := '@extschema@'::pg_catalog.regnamespace;
    caio CONSTANT pg_catalog.oid := (SELECT e.oid FROM pg_catalog.pg_extension e
                                      WHERE e.extname OPERATOR(pg_catalog.=) 'caio');
    taken pg_catalog.text;
BEGIN
    SELECT pg_catalog.string_agg(o.what, ', ' ORDER BY o.what) INTO taken FROM (
        SELECT pg_catalog.format('%s %I.%I',
                   CASE c.relkind WHEN 'r' THEN 'table' WHEN 'p' THEN 'table'
                                  WHEN 'v' THEN 'view' WHEN 'm' THEN 'materialized view'
                                  WHEN 'S' THEN 'sequence' WHEN 'c' THEN 'type'
                                  WHEN 'f' THEN 'foreign table' ELSE 'index' END,
                   n.nspname, c.relname) AS what, 'pg_catalog.pg_class'::pg_catalog.regclass AS classid, c.oid
          FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
         WHERE c.relnamespace OPERATOR(pg_catalog.=) schema
           AND c.relname OPERATOR(pg_catalog.=) ANY (relations OPERATOR(pg_catalog.||) types)
        UNION ALL
        SELECT pg_catalog.format('type %I.%I', n.nspname, t.typname), 'pg_catalog.pg_type'::pg_catalog.regclass, t.oid
          FROM pg_catalog.pg_type t JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) t.typnamespace
         WHERE t.typnamespace OPERATOR(pg_catalog.=) schema AND t.typrelid OPERATOR(pg_catalog.=) 0
           AND t.typname OPERATOR(pg_catalog.=) ANY (relations OPERATOR(pg_catalog.||) types)
        UNION ALL
        SELECT pg_catalog.format('function %I.%I(%s)', n.nspname, p.proname,
                                 pg_catalog.oidvectortypes(p.proargtypes)),
               'pg_catalog.pg_proc'::pg_catalog.regclass, p.oid
          FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) p.pronamespace
         WHERE p.pronamespace OPERATOR(pg_catalog.=) schema
           AND (p.proname::pg_catalog.text OPERATOR(pg_catalog.||) '('
                OPERATOR(pg_catalog.||) pg_catalog.oidvectortypes(p.proargtypes)
                OPERATOR(pg_catalog.||) ')') OPERATOR(pg_catalog.=) ANY (functions)) o
     WHERE NOT EXISTS (
           SELECT FROM pg_catalog.pg_depend d
            WHERE d.classid OPERATOR(pg_catalog.=) o.classid AND d.objid OPERATOR(pg_catalog.=) o.oid
              AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass
              AND d.refobjid OPERATOR(pg_catalog.=) caio AND d.deptype OPERATOR(pg_catalog.=) 'e');
    IF taken IS NOT NULL THEN
        RAISE EXCEPTION 'caio cannot be updated to 0.7.0: names it needs are taken'
            USING ERRCODE = 'duplicate_object',
                  DETAIL = pg_catalog.format('Objects that are not caio''s are in the way: %s.', taken),
                  HINT = 'Drop or rename them, then run ALTER EXTENSION caio UPDATE again.';
    END IF;
END
$clash$;

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
