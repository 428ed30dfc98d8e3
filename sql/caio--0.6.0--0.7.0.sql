-- caio 0.6.0 to 0.7.0: the fourth review's fixes (issue 33).

\echo Use "ALTER EXTENSION caio UPDATE TO '0.7.0'" to load this file. \quit

-- Each change below has a section of its own, in the order of the install
-- script (sql/caio.sql), and qualifies every function and operator that is
-- not caio's own.

------------------------------------------------------------------------------
-- Issue 33, finding 1: planted overloads.
------------------------------------------------------------------------------

-- caio's schema must be one that no untrusted role can create objects in:
-- a role that can would plant functions that capture calls to caio made
-- with untyped arguments (caio_protect('transfers', ...) resolves toward
-- text), and so run its code as whoever calls caio, superusers included.
-- Trusted are the role running this script, the extension's owner,
-- superusers and the database's owner (doc/privileges.md).  A function
-- named like caio's that is no extension's member was planted while
-- someone could: it is named too.
DO $trusted_schema$
DECLARE
    creator pg_catalog.text;
    planted pg_catalog.text;
BEGIN
    SELECT pg_catalog.format('%s, owned by %s', p.oid::pg_catalog.regprocedure,
                             pg_catalog.quote_ident(p.proowner::pg_catalog.regrole::pg_catalog.text))
      INTO planted
      FROM pg_catalog.pg_proc p
     WHERE p.pronamespace OPERATOR(pg_catalog.=) '@extschema@'::pg_catalog.regnamespace
       AND p.proname OPERATOR(pg_catalog.~~) 'caio\_%'
       AND NOT EXISTS (SELECT FROM pg_catalog.pg_depend d
                        WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
                          AND d.objid OPERATOR(pg_catalog.=) p.oid
                          AND d.deptype OPERATOR(pg_catalog.=) 'e')
     ORDER BY 1
     LIMIT 1;
    IF planted IS NOT NULL THEN
        RAISE EXCEPTION 'schema % holds a function named like caio''s that is not caio''s: %', '@extschema@', planted
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'It could be chosen instead of caio''s function for a call with untyped arguments, and run with the privileges of whoever called it.',
                  HINT = 'Drop it (or find out who planted it), then run this again.';
    END IF;

    SELECT CASE WHEN c.role OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC'
                ELSE pg_catalog.quote_ident(c.role::pg_catalog.regrole::pg_catalog.text) END
      INTO creator
      FROM pg_catalog.pg_namespace n
     CROSS JOIN LATERAL (
            SELECT n.nspowner AS role
            UNION ALL
            SELECT a.grantee
              FROM pg_catalog.aclexplode(COALESCE(n.nspacl,
                       pg_catalog.acldefault('n', n.nspowner))) a
             WHERE a.privilege_type OPERATOR(pg_catalog.=) 'CREATE') c
     WHERE n.oid OPERATOR(pg_catalog.=) '@extschema@'::pg_catalog.regnamespace
       AND c.role OPERATOR(pg_catalog.<>) ALL (ARRAY[
               (SELECT r.oid FROM pg_catalog.pg_roles r
                 WHERE r.rolname OPERATOR(pg_catalog.=) CURRENT_USER),
               (SELECT d.datdba FROM pg_catalog.pg_database d
                 WHERE d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database()),
               COALESCE((SELECT e.extowner FROM pg_catalog.pg_extension e
                                     WHERE e.extname OPERATOR(pg_catalog.=) 'caio'), 0),
               'pg_database_owner'::pg_catalog.regrole::pg_catalog.oid])
       AND NOT COALESCE((SELECT r.rolsuper FROM pg_catalog.pg_roles r
                                     WHERE r.oid OPERATOR(pg_catalog.=) c.role), false)
     LIMIT 1;
    IF creator IS NOT NULL THEN
        RAISE EXCEPTION 'role % can create objects in schema %, where caio would live', creator, '@extschema@'
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'A function that role planted beside caio''s could be chosen instead of caio''s for a call with untyped arguments, and run with the privileges of whoever called it.',
                  HINT = pg_catalog.format('Revoke it (REVOKE CREATE ON SCHEMA %s FROM %s), or install caio in a schema of its own (CREATE SCHEMA caio; CREATE EXTENSION caio SCHEMA caio).', '@extschema@', creator);
    END IF;
END
$trusted_schema$;
