-- caio 0.5.0 to 0.6.0.

\echo Use "ALTER EXTENSION caio UPDATE TO '0.6.0'" to load this file. \quit

-- Every name this update takes in caio's schema, checked first: a relation,
-- type or function there under one of them that is not caio's (made by
-- anyone with CREATE in the schema) is named, all in one error, before
-- anything changes.  (Added in 0.7.0: a table planted as caio_lock_key used to stop this
-- update with "relation already exists", and with it the lock-key fix.)
DO $clash$
DECLARE
    -- Tables, sequences, views and indexes (also the row types of the first).
    relations CONSTANT pg_catalog.text[] := ARRAY['caio_lock_key', 'caio_lock_key_pkey'];
    types CONSTANT pg_catalog.text[] := '{}';
    -- Each function as its name and pg_catalog.oidvectortypes(proargtypes).
    functions CONSTANT pg_catalog.text[] := ARRAY['caio_claim(anyelement, text, interval, integer, text, text)'];
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
        RAISE EXCEPTION 'caio cannot be updated to 0.6.0: names it needs are taken'
            USING ERRCODE = 'duplicate_object',
                  DETAIL = pg_catalog.format('Objects that are not caio''s are in the way: %s.', taken),
                  HINT = 'Drop or rename them, then run ALTER EXTENSION caio UPDATE again.';
    END IF;
END
$clash$;

-- Every session's lock keys must agree, and this update changes how they
-- are made (caio_lock_key, at the end).  So it first waits for the
-- transactions that are using caio's leases and wallets, and holds back new
-- ones until it commits (doc/upgrading.md).
LOCK TABLE @extschema@.caio_lease_state, @extschema@.caio_nonce_wallet IN ACCESS EXCLUSIVE MODE;

-- On a Citus cluster, a table that an earlier caio guarded and that is (or
-- became) a Citus table has caio's trigger on the coordinator's shell only:
-- its shards were never fenced.  0.6.0 refuses to guard such a table; one
-- guarded before is named here, so that nobody goes on relying on it.
DO $citus$
DECLARE
    guarded pg_catalog.text;
BEGIN
    IF pg_catalog.to_regclass('pg_catalog.pg_dist_partition') IS NULL THEN
        RETURN;
    END IF;
    FOR guarded IN EXECUTE $sql$
        SELECT DISTINCT t.tgrelid::pg_catalog.regclass::pg_catalog.text
          FROM pg_catalog.pg_trigger t
          JOIN pg_catalog.pg_dist_partition p
            ON p.logicalrelid OPERATOR(pg_catalog.=) t.tgrelid
          JOIN pg_catalog.pg_depend d
            ON d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
           AND d.objid OPERATOR(pg_catalog.=) t.tgfoid
           AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass
           AND d.deptype OPERATOR(pg_catalog.=) 'e'
          JOIN pg_catalog.pg_extension e
            ON e.oid OPERATOR(pg_catalog.=) d.refobjid
         WHERE e.extname OPERATOR(pg_catalog.=) 'caio'
    $sql$
    LOOP
        RAISE WARNING 'caio has never fenced the shards of "%"', guarded
            USING DETAIL = 'It is a Citus table, and caio''s trigger is on the coordinator''s table alone, which Citus''s writes do not go through.',
                  HINT = 'See caio''s doc/citus.md: caio 0.6.0 guards tables local to the coordinator only.';
    END LOOP;
END
$citus$;

-- caio_claim takes order_by.  A function cannot gain a parameter through
-- CREATE OR REPLACE, so the new caio_claim is made beside the old one, takes
-- over its owner, its grants and its initial privileges (those that pg_dump
-- leaves to CREATE EXTENSION), and the old one is dropped.  A call with five
-- arguments or fewer reaches the new one.
CREATE FUNCTION caio_claim(rowtype anyelement, holder text, ttl interval,
                           max_rows int DEFAULT 1, filter text DEFAULT NULL,
                           order_by text DEFAULT NULL)
    RETURNS SETOF anyelement
    AS 'MODULE_PATHNAME', 'caio_claim'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION caio_claim(anyelement, text, interval, int, text, text) FROM PUBLIC;
COMMENT ON FUNCTION caio_claim(anyelement, text, interval, int, text, text) IS
    'Claims up to max_rows unclaimed or expired rows matching filter for ttl, the first in order_by first, skipping rows others are claiming; returns them, each with a new claim_token.';

-- Each EXECUTE granted on the old function is granted on the new one by the
-- same grantor, with the same grant option: a grant of the owner's first,
-- then one of a role that the old function's owner let grant on, as that
-- role, once its own grant option is in place.  A grant that cannot be made
-- so is named in a warning, with the roles that had EXECUTE.
DO $claim$
DECLARE
    old_fn   CONSTANT pg_catalog.oid := '@extschema@.caio_claim(anyelement, pg_catalog.text, pg_catalog.interval, pg_catalog.int4, pg_catalog.text)'::pg_catalog.regprocedure;
    new_fn   CONSTANT pg_catalog.oid := '@extschema@.caio_claim(anyelement, pg_catalog.text, pg_catalog.interval, pg_catalog.int4, pg_catalog.text, pg_catalog.text)'::pg_catalog.regprocedure;
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
    -- A regrole's text is quoted already, and would be quoted twice.
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
        RAISE WARNING 'caio_claim was replaced, and not all of its grants could be made again: %', missed
            USING DETAIL = pg_catalog.format('These roles had EXECUTE on caio_claim before the update: %s.', holders),
                  HINT = 'Grant EXECUTE on caio_claim(anyelement, text, interval, int, text, text) to the roles that lack it.';
    END IF;
END
$claim$;

DROP FUNCTION caio_claim(anyelement, text, interval, int, text);
-- A shorter ANALYZE of caio_nonce_reservation, as in a fresh install (see
-- caio.sql): each autoanalyze of it holds a snapshot under which the hot
-- rows of caio_lease_state and caio_nonce_wallet cannot be pruned.
ALTER TABLE @extschema@.caio_nonce_reservation
    ALTER COLUMN chain_id SET STATISTICS 10, ALTER COLUMN address SET STATISTICS 10,
    ALTER COLUMN nonce SET STATISTICS 10, ALTER COLUMN state SET STATISTICS 10,
    ALTER COLUMN resource SET STATISTICS 10, ALTER COLUMN holder SET STATISTICS 10,
    ALTER COLUMN token SET STATISTICS 10, ALTER COLUMN tx_hash SET STATISTICS 10,
    ALTER COLUMN tx_hashes SET STATISTICS 10, ALTER COLUMN reserved_at SET STATISTICS 10,
    ALTER COLUMN updated_at SET STATISTICS 10;

-- More room on caio_lease_state's pages for the dead versions of hot
-- leases while a snapshot is held, as in a fresh install (see caio.sql).
-- Pages written from now on are filled to 30 %; those there keep their rows.
ALTER TABLE @extschema@.caio_lease_state SET (fillfactor = 30);

-- Lock keys under a secret of the database (see caio.sql): from here on,
-- resource and wallet locks are SipHash-2-4 keys, no longer a hash that
-- anyone can compute.  The update took the tables' locks first (above).
CREATE TABLE @extschema@.caio_lock_key (
    singleton  boolean DEFAULT true CONSTRAINT caio_lock_key_pkey PRIMARY KEY
                       CONSTRAINT caio_lock_key_singleton_check CHECK (singleton),
    key        bytea   NOT NULL
                       CONSTRAINT caio_lock_key_key_check CHECK (pg_catalog.length(key) OPERATOR(pg_catalog.=) 16)
);
INSERT INTO @extschema@.caio_lock_key (key) VALUES (pg_catalog.uuid_send(pg_catalog.gen_random_uuid()));
