-- caio 0.6.0 to 0.7.0: the fourth review's fixes (issue 33), and publications that never break caio (issue 34).

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
    functions CONSTANT pg_catalog.text[] := ARRAY[
        'caio_nonce_sync(bigint, text, bigint, caio_lease)', 'caio_lock_key_trigger()'];
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

-- F5: caio_nonce_sync takes the wallet's lease.  A sync settled nonces
-- reserved under another role's lease and moved the wallet's counter with no
-- lease at all; now a wallet whose nonces went under a lease is synced under
-- that lease (or by a superuser).  The lease comes as a fourth argument, in
-- a function beside the three-argument one, which stays as it is (its
-- calls and grants keep working; it syncs only wallets never used with a
-- lease, or as a superuser).  No default: with one, three-argument calls
-- would be ambiguous between the two.
CREATE FUNCTION caio_nonce_sync(chain_id bigint, address text, chain_count bigint,
                                lease caio_lease)
    RETURNS bigint
    AS 'MODULE_PATHNAME', 'caio_nonce_sync'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION caio_nonce_sync(bigint, text, bigint, caio_lease) FROM PUBLIC;
COMMENT ON FUNCTION caio_nonce_sync(bigint, text, bigint) IS
    'Tells caio the chain''s transaction count for the address: broadcast nonces below it become mined; returns the next nonce reserve hands out. A wallet whose nonces went under a lease needs that lease (the four-argument form) or a superuser (LK003).';
COMMENT ON FUNCTION caio_nonce_sync(bigint, text, bigint, caio_lease) IS
    'caio_nonce_sync under the wallet''s lease: the caller''s current lease on the resource its nonces went under (LK001, 42501); it may move the count down as well as up.';

-- Whoever could sync can sync under a lease: each EXECUTE granted on the
-- three-argument function is granted on the new one by the same grantor,
-- with the same grant option, as 0.6.0's update did for caio_claim (see
-- there); a grant that cannot be made is named in a warning.
DO $sync$
DECLARE
    old_fn   CONSTANT pg_catalog.oid := '@extschema@.caio_nonce_sync(pg_catalog.int8, pg_catalog.text, pg_catalog.int8)'::pg_catalog.regprocedure;
    new_fn   CONSTANT pg_catalog.oid := '@extschema@.caio_nonce_sync(pg_catalog.int8, pg_catalog.text, pg_catalog.int8, @extschema@.caio_lease)'::pg_catalog.regprocedure;
    owner    pg_catalog.oid;
    old_acl  pg_catalog.aclitem[];
    grants   pg_catalog.aclitem[];
    made     pg_catalog.bool[];
    progress pg_catalog.bool := true;
    g        record;
    missed   pg_catalog.text;
    holders  pg_catalog.text;
BEGIN
    SELECT p.proowner, COALESCE(p.proacl, pg_catalog.acldefault('f', p.proowner))
      INTO owner, old_acl
      FROM pg_catalog.pg_proc p WHERE p.oid OPERATOR(pg_catalog.=) old_fn;
    -- Role names are taken bare (pg_get_userbyid) and quoted once where SQL
    -- is built (%I, quote_ident); set_config('role', ...) takes a bare name.
    EXECUTE pg_catalog.format('ALTER FUNCTION %s OWNER TO %I',
                              new_fn::pg_catalog.regprocedure, pg_catalog.pg_get_userbyid(owner));
    -- The owner's own EXECUTE comes with the ownership.
    grants := ARRAY(SELECT pg_catalog.makeaclitem(a.grantee, a.grantor, 'EXECUTE', a.is_grantable)
                      FROM pg_catalog.aclexplode(old_acl) a
                     WHERE a.privilege_type OPERATOR(pg_catalog.=) 'EXECUTE'
                       AND NOT (a.grantee OPERATOR(pg_catalog.=) owner
                                AND a.grantor OPERATOR(pg_catalog.=) owner));
    made := pg_catalog.array_fill(false, ARRAY[pg_catalog.cardinality(grants)]);
    WHILE progress LOOP
        progress := false;
        FOR i IN 1 .. pg_catalog.cardinality(grants) LOOP
            CONTINUE WHEN made[i];
            SELECT a.grantor, a.grantee, a.is_grantable INTO g
              FROM pg_catalog.aclexplode(ARRAY[grants[i]]) a;
            -- A grantor other than the owner grants once it holds the grant
            -- option on the new function (granted in an earlier round).
            CONTINUE WHEN g.grantor OPERATOR(pg_catalog.<>) owner AND NOT EXISTS (
                SELECT FROM pg_catalog.pg_proc p, pg_catalog.aclexplode(p.proacl) a
                 WHERE p.oid OPERATOR(pg_catalog.=) new_fn
                   AND a.grantee OPERATOR(pg_catalog.=) g.grantor AND a.is_grantable);
            BEGIN
                IF g.grantor OPERATOR(pg_catalog.<>) owner THEN
                    PERFORM pg_catalog.set_config('role', pg_catalog.pg_get_userbyid(g.grantor), true);
                END IF;
                EXECUTE pg_catalog.format('GRANT EXECUTE ON FUNCTION %s TO %s%s',
                    new_fn::pg_catalog.regprocedure,
                    CASE WHEN g.grantee OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC'
                         ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(g.grantee)) END,
                    CASE WHEN g.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END);
                PERFORM pg_catalog.set_config('role', 'none', true);
                made[i] := true;
                progress := true;
            EXCEPTION WHEN OTHERS THEN
                NULL;           -- named in the warning below
            END;
        END LOOP;
    END LOOP;

    -- The new function's initial privileges are the old one's.
    DELETE FROM pg_catalog.pg_init_privs
     WHERE objoid OPERATOR(pg_catalog.=) new_fn
       AND classoid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
       AND objsubid OPERATOR(pg_catalog.=) 0;
    INSERT INTO pg_catalog.pg_init_privs (objoid, classoid, objsubid, privtype, initprivs)
    SELECT new_fn, i.classoid, i.objsubid, i.privtype, i.initprivs
      FROM pg_catalog.pg_init_privs i
     WHERE i.objoid OPERATOR(pg_catalog.=) old_fn
       AND i.classoid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
       AND i.objsubid OPERATOR(pg_catalog.=) 0;

    SELECT pg_catalog.string_agg(pg_catalog.format('EXECUTE to %s granted by %s',
               CASE WHEN a.grantee OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC' ELSE a.grantee::pg_catalog.regrole::pg_catalog.text END,
               a.grantor::pg_catalog.regrole), ', ')
      INTO missed
      FROM pg_catalog.generate_subscripts(grants, 1) s(i),
           pg_catalog.aclexplode(ARRAY[grants[s.i]]) a
     WHERE NOT made[s.i];
    IF missed IS NOT NULL THEN
        SELECT pg_catalog.string_agg(DISTINCT CASE WHEN a.grantee OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC'
                                                   ELSE a.grantee::pg_catalog.regrole::pg_catalog.text END, ', ')
          INTO holders
          FROM pg_catalog.aclexplode(old_acl) a
         WHERE a.privilege_type OPERATOR(pg_catalog.=) 'EXECUTE';
        RAISE WARNING 'caio_nonce_sync gained a form that takes the lease, and not all of the grants on the old form could be made on it: %', missed
            USING DETAIL = pg_catalog.format('These roles had EXECUTE on caio_nonce_sync before the update: %s.', holders),
                  HINT = 'Grant EXECUTE on caio_nonce_sync(bigint, text, bigint, caio_lease) to the roles that lack it.';
    END IF;
END
$sync$;


-- F3 (issue 33): rotating caio_lock_key split the lock keys between
-- sessions, which cached the secret for their life.  The trigger makes a
-- rotation wait for the transactions that use the old secret and every
-- session read the new one; creating it invalidates caio_lock_key, which
-- also makes every session of the 0.7.0 library compare its version with
-- the schema's.  A later update that changes how lock keys are made must
-- write caio_lock_key (UPDATE ... SET key = key fires the trigger), so that
-- sessions still on the older library are refused until they reconnect.
CREATE FUNCTION @extschema@.caio_lock_key_trigger() RETURNS trigger
    AS 'MODULE_PATHNAME', 'caio_lock_key_trigger'
    LANGUAGE C;
CREATE TRIGGER caio_lock_key_rotation
    BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON @extschema@.caio_lock_key
    FOR EACH STATEMENT EXECUTE FUNCTION @extschema@.caio_lock_key_trigger();
REVOKE ALL ON FUNCTION @extschema@.caio_lock_key_trigger() FROM PUBLIC;
COMMENT ON FUNCTION @extschema@.caio_lock_key_trigger() IS
    'The triggers on caio_lock_key: a rotation of the lock key secret waits for the transactions that use it, and every session reads the new one; rows that logical replication brings are skipped.';

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

------------------------------------------------------------------------------
-- Issue 34: publications never break caio.  caio_token_epoch had no replica
-- identity, so while a publication (FOR ALL TABLES, say) published it,
-- caio_start_token_epoch() and the first token after a copy failed on the
-- delete of the rows they replace.  Its replica identity is the whole row
-- (the install script says why there is no key).  A subscriber's copy of
-- another database's caio_lock_key failed on caio_lock_key_pkey, retried
-- for ever: the rows that logical replication brings are now skipped, and
-- the subscriber keeps its own secret.
------------------------------------------------------------------------------
ALTER TABLE @extschema@.caio_token_epoch REPLICA IDENTITY FULL;
CREATE TRIGGER caio_lock_key_replicated
    BEFORE INSERT OR UPDATE OR DELETE ON @extschema@.caio_lock_key
    FOR EACH ROW EXECUTE FUNCTION @extschema@.caio_lock_key_trigger();
ALTER TABLE @extschema@.caio_lock_key ENABLE REPLICA TRIGGER caio_lock_key_replicated;
