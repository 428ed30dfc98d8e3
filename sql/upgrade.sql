-- The upgrade path: a database made with caio 0.1 keeps its leases, tokens,
-- nonces and fenced tables through ALTER EXTENSION caio UPDATE, and ends up
-- with exactly the objects of a fresh install of the new version.
SET client_min_messages = warning;
DROP EXTENSION caio CASCADE;
CREATE EXTENSION caio VERSION '0.1';
RESET client_min_messages;
SELECT extversion FROM pg_extension WHERE extname = 'caio';

-- State made under 0.1 (served by the new library until the update).
SELECT resource, holder, token FROM caio_acquire('upgrade:r', 'worker-a', '1 hour');
SELECT caio_nonce_reserve(1, '0xde709f2102306220921060314715629080e2fb77') AS nonce;
SELECT caio_nonce_reserve(1, '0xde709f2102306220921060314715629080e2fb77') AS nonce;
CREATE TABLE upgrade_sends (wallet text PRIMARY KEY, amount int, fence_token bigint);
SELECT caio_protect('upgrade_sends', 'fence_token', 'wallet', 'send:');
SELECT token AS send_token FROM caio_acquire('send:0x1', 'worker-a', '1 hour') \gset
INSERT INTO upgrade_sends VALUES ('0x1', 5, :send_token);

ALTER EXTENSION caio UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'caio';

-- The state is as it was, and works as before.
SELECT resource, holder, token FROM caio_lease_of('upgrade:r');
SELECT nonce, state FROM caio_nonces ORDER BY nonce;
SELECT * FROM upgrade_sends;
UPDATE upgrade_sends SET amount = 6, fence_token = :send_token - 1;
\echo :LAST_ERROR_SQLSTATE
-- The update records this database as its tokens' lineage, in epoch 0,
-- and tokens go on from where they were.
SELECT count(*) AS epoch_rows, max(epoch) AS epoch,
       bool_and(database_oid = (SELECT oid FROM pg_database WHERE datname = current_database())
                AND timeline_id > 0 AND system_identifier > 0) AS this_database
  FROM caio_token_epoch;
SELECT resource, token FROM caio_acquire('upgrade:s', 'worker-a', '1 hour');
SELECT count(*) AS epoch_rows, max(epoch) AS epoch FROM caio_token_epoch;
-- The update shortens ANALYZE of caio_nonce_reservation as a fresh install
-- does (statistics target 10 on every column), and leaves more room on
-- caio_lease_state's pages (fillfactor 30), the other tables' as they were.
SELECT attname, attstattarget FROM pg_attribute
 WHERE attrelid = 'caio_nonce_reservation'::regclass AND attnum > 0 AND NOT attisdropped
 ORDER BY attnum;
SELECT relname, reloptions FROM pg_class
 WHERE relname IN ('caio_lease_state', 'caio_nonce_wallet', 'caio_nonce_reservation')
   AND relnamespace = (SELECT extnamespace FROM pg_extension WHERE extname = 'caio')
 ORDER BY relname;

-- The updated extension has the objects of a fresh install, defined alike.
CREATE FUNCTION pg_temp.caio_objects() RETURNS TABLE (object text, definition text)
LANGUAGE sql AS $$
    WITH members AS (
        SELECT classid, objid, pg_describe_object(classid, objid, objsubid) AS object
          FROM pg_depend
         WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
           AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'caio')
           -- Row types of tables and views (members from PostgreSQL 17 on)
           -- and array types (whose privileges are their element's) are
           -- compared with their relation or element, whatever the version.
           AND NOT (classid = 'pg_type'::regclass AND EXISTS (
                    SELECT FROM pg_type t LEFT JOIN pg_class c ON c.oid = t.typrelid
                     WHERE t.oid = objid AND (t.typcategory = 'A' OR c.relkind <> 'c'))))
    SELECT object,
           CASE classid
           WHEN 'pg_proc'::regclass THEN
               (SELECT pg_get_functiondef(objid) || coalesce(proacl::text, '')
                       || coalesce(' -- ' || obj_description(objid, 'pg_proc'), '')
                  FROM pg_proc WHERE oid = objid)
           WHEN 'pg_class'::regclass THEN
               (SELECT concat_ws(' | ', relkind, reloptions::text, relacl::text,
                       'replica identity ' || relreplident::text,
                       (SELECT string_agg(format('trigger %s %s %s %s', tgname, tgfoid::regprocedure,
                                                 tgtype, tgenabled), ', ' ORDER BY tgname)
                          FROM pg_trigger WHERE tgrelid = objid),
                       (SELECT typacl::text FROM pg_type WHERE oid = reltype),
                       (SELECT string_agg(format('%s %s %s %s %s', attname,
                                                 format_type(atttypid, atttypmod), attnotnull,
                                                 pg_get_expr(adbin, adrelid), attstattarget), ', ' ORDER BY attnum)
                          FROM pg_attribute LEFT JOIN pg_attrdef ON adrelid = attrelid AND adnum = attnum
                         WHERE attrelid = objid AND attnum > 0 AND NOT attisdropped),
                       (SELECT string_agg(pg_get_constraintdef(oid), ', ' ORDER BY conname)
                          FROM pg_constraint WHERE conrelid = objid),
                       (SELECT string_agg(pg_get_indexdef(indexrelid), ', ' ORDER BY indexrelid::regclass::text)
                          FROM pg_index WHERE indrelid = objid),
                       CASE WHEN relkind = 'v' THEN pg_get_viewdef(objid) END)
                  FROM pg_class WHERE oid = objid)
           WHEN 'pg_type'::regclass THEN
               (SELECT typacl::text FROM pg_type WHERE oid = objid)
           END
      FROM members
    UNION ALL
    SELECT 'configuration dumped',
           (SELECT string_agg(c::regclass::text, ', ' ORDER BY c::regclass::text)
              FROM pg_extension, unnest(extconfig) c WHERE extname = 'caio')
$$;
CREATE TEMP TABLE updated_objects AS SELECT * FROM pg_temp.caio_objects();
SET client_min_messages = warning;
DROP EXTENSION caio CASCADE;
RESET client_min_messages;
CREATE EXTENSION caio;
CREATE TEMP TABLE fresh_objects AS SELECT * FROM pg_temp.caio_objects();
SELECT count(*) AS objects_compared FROM fresh_objects;
SELECT 'only after the update' AS side, * FROM (TABLE updated_objects EXCEPT TABLE fresh_objects) a
UNION ALL
SELECT 'only in a fresh install', * FROM (TABLE fresh_objects EXCEPT TABLE updated_objects) b;


DROP TABLE upgrade_sends;

-- From 0.5.0, caio_claim gains order_by, and the update replaces the
-- function: whoever could execute the old one can execute the new one,
-- granted by the same grantor, with the same grant option; its initial
-- privileges (what pg_dump leaves to CREATE EXTENSION) stay the owner's
-- alone, so that pg_dump still dumps these grants.
SET client_min_messages = warning;
DROP EXTENSION caio CASCADE;
CREATE EXTENSION caio VERSION '0.5.0';
RESET client_min_messages;
CREATE ROLE regress_caio_up_lead;
CREATE ROLE regress_caio_up_worker;
CREATE ROLE regress_caio_up_helper;
CREATE ROLE regress_caio_up_nobody;
GRANT EXECUTE ON FUNCTION caio_claim(anyelement, text, interval, int, text)
    TO regress_caio_up_lead WITH GRANT OPTION;
GRANT EXECUTE ON FUNCTION caio_claim(anyelement, text, interval, int, text) TO regress_caio_up_worker;
SET ROLE regress_caio_up_lead;
GRANT EXECUTE ON FUNCTION caio_claim(anyelement, text, interval, int, text) TO regress_caio_up_helper;
RESET ROLE;
CREATE FUNCTION pg_temp.claim_grants()
RETURNS TABLE (function regprocedure, grantee text, grantor text, grantable boolean)
LANGUAGE sql AS $$
    SELECT p.oid::regprocedure, a.grantee::regrole::text,
           CASE WHEN a.grantor = p.proowner THEN '(owner)' ELSE a.grantor::regrole::text END,
           a.is_grantable
      FROM pg_proc p, aclexplode(p.proacl) a
     WHERE p.proname = 'caio_claim' AND a.grantee <> p.proowner
     ORDER BY 1::text, 2
$$;
SELECT * FROM pg_temp.claim_grants();
ALTER EXTENSION caio UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'caio';
SELECT * FROM pg_temp.claim_grants();
SELECT to_regprocedure('caio_claim(anyelement, text, interval, integer, text)') AS old_claim;
SELECT r AS role, has_function_privilege(r, 'caio_claim(anyelement, text, interval, int, text, text)', 'EXECUTE') AS can_claim
  FROM unnest(ARRAY['regress_caio_up_lead', 'regress_caio_up_worker', 'regress_caio_up_helper',
                    'regress_caio_up_nobody']) r;
SELECT i.privtype, count(*) FILTER (WHERE a.grantee <> p.proowner) AS initial_grants_beyond_owner
  FROM pg_init_privs i JOIN pg_proc p ON p.oid = i.objoid, aclexplode(i.initprivs) a
 WHERE i.classoid = 'pg_proc'::regclass
   AND i.objoid = 'caio_claim(anyelement, text, interval, int, text, text)'::regprocedure
 GROUP BY i.privtype;
SET client_min_messages = warning;
DROP EXTENSION caio CASCADE;
RESET client_min_messages;
DROP ROLE regress_caio_up_lead, regress_caio_up_worker, regress_caio_up_helper, regress_caio_up_nobody;

-- The same with role names that must be quoted in SQL: the extension's owner
-- (who made it; a superuser other than the one who updates it), a grantee,
-- and a grantee with the grant option that grants on to a plain role.  The
-- update makes the same grants again, the new function has the same owner,
-- and no warning is raised.
CREATE ROLE "regress_caio_up_Ext-Owner" SUPERUSER;
CREATE ROLE "regress_caio_up_AppRole";
CREATE ROLE "regress_caio_up_Lead";
CREATE ROLE regress_caio_up_plain;
SET ROLE "regress_caio_up_Ext-Owner";
CREATE EXTENSION caio VERSION '0.5.0';
GRANT EXECUTE ON FUNCTION caio_claim(anyelement, text, interval, int, text) TO "regress_caio_up_AppRole";
GRANT EXECUTE ON FUNCTION caio_claim(anyelement, text, interval, int, text)
    TO "regress_caio_up_Lead" WITH GRANT OPTION;
SET ROLE "regress_caio_up_Lead";
GRANT EXECUTE ON FUNCTION caio_claim(anyelement, text, interval, int, text) TO regress_caio_up_plain;
RESET ROLE;
CREATE TEMP TABLE claim_acl_before AS
SELECT p.proowner, p.proacl FROM pg_proc p WHERE p.proname = 'caio_claim';
CREATE TEMP TABLE claim_grants_before AS
SELECT grantee, grantor, grantable FROM pg_temp.claim_grants();
SELECT proowner::regrole AS owner FROM claim_acl_before;
TABLE claim_grants_before;
ALTER EXTENSION caio UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'caio';
SELECT p.oid::regprocedure AS function, p.proowner::regrole AS owner,
       p.proowner = b.proowner AS same_owner, p.proacl::text = b.proacl::text AS same_proacl
  FROM pg_proc p, claim_acl_before b WHERE p.proname = 'caio_claim';
SELECT grantee, grantor, grantable FROM pg_temp.claim_grants();
SELECT r AS role, has_function_privilege(r, 'caio_claim(anyelement, text, interval, int, text, text)', 'EXECUTE') AS can_claim
  FROM unnest(ARRAY['regress_caio_up_AppRole', 'regress_caio_up_Lead', 'regress_caio_up_plain']) r;
SET client_min_messages = warning;
DROP EXTENSION caio CASCADE;
RESET client_min_messages;
DROP ROLE "regress_caio_up_Ext-Owner", "regress_caio_up_AppRole", "regress_caio_up_Lead", regress_caio_up_plain;
CREATE EXTENSION caio;

-- From 0.6.0, caio_nonce_sync takes the wallet's lease (F5): the update adds
-- the four-argument form beside the three-argument one, which stays, and
-- grants it as the old one is granted, as 0.6.0's update carried
-- caio_claim's grants over: the same owner and grants (a quoted grantee,
-- and a grant made by a role holding the grant option), the owner's initial
-- privileges alone; a leased wallet then refuses another role's sync as a
-- fresh install does.
SET client_min_messages = warning;
DROP EXTENSION caio CASCADE;
CREATE EXTENSION caio VERSION '0.6.0';
RESET client_min_messages;
CREATE ROLE "regress_caio_up_Sender";
CREATE ROLE regress_caio_up_lead;
CREATE ROLE regress_caio_up_helper;
GRANT USAGE ON TYPE caio_lease TO "regress_caio_up_Sender", regress_caio_up_helper;
GRANT EXECUTE ON FUNCTION caio_acquire(text, text, interval, interval), caio_lease_of(text),
                          caio_nonce_reserve(bigint, text, caio_lease)
  TO "regress_caio_up_Sender";
GRANT EXECUTE ON FUNCTION caio_nonce_sync(bigint, text, bigint) TO "regress_caio_up_Sender";
GRANT EXECUTE ON FUNCTION caio_nonce_sync(bigint, text, bigint)
    TO regress_caio_up_lead WITH GRANT OPTION;
SET ROLE regress_caio_up_lead;
GRANT EXECUTE ON FUNCTION caio_nonce_sync(bigint, text, bigint) TO regress_caio_up_helper;
RESET ROLE;
CREATE FUNCTION pg_temp.sync_grants()
RETURNS TABLE (function regprocedure, grantee text, grantor text, grantable boolean)
LANGUAGE sql AS $$
    SELECT p.oid::regprocedure, a.grantee::regrole::text,
           CASE WHEN a.grantor = p.proowner THEN '(owner)' ELSE a.grantor::regrole::text END,
           a.is_grantable
      FROM pg_proc p, aclexplode(p.proacl) a
     WHERE p.proname = 'caio_nonce_sync' AND a.grantee <> p.proowner
     ORDER BY 1::text, 2
$$;
SELECT * FROM pg_temp.sync_grants();
ALTER EXTENSION caio UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'caio';
SELECT * FROM pg_temp.sync_grants();
SELECT to_regprocedure('caio_nonce_sync(bigint, text, bigint)') AS old_sync;
SELECT i.privtype, count(*) FILTER (WHERE a.grantee <> p.proowner) AS initial_grants_beyond_owner
  FROM pg_init_privs i JOIN pg_proc p ON p.oid = i.objoid, aclexplode(i.initprivs) a
 WHERE i.classoid = 'pg_proc'::regclass
   AND i.objoid = 'caio_nonce_sync(bigint, text, bigint, caio_lease)'::regprocedure
 GROUP BY i.privtype;
SET ROLE "regress_caio_up_Sender";
SELECT token > 0 AS acquired FROM caio_acquire('send:up', 'sender', '1 hour');
SELECT caio_nonce_reserve(9, '0x2b5ad5c4795c026514f8317c7a215e218dccd6cf',
                          caio_lease_of('send:up')) AS nonce;
SELECT caio_nonce_sync(9, '0x2b5ad5c4795c026514f8317c7a215e218dccd6cf', 0,
                       caio_lease_of('send:up')) AS next_nonce;
SET ROLE regress_caio_up_helper;
SELECT caio_nonce_sync(9, '0x2b5ad5c4795c026514f8317c7a215e218dccd6cf', 5);
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
SET client_min_messages = warning;
DROP EXTENSION caio CASCADE;
RESET client_min_messages;
DROP OWNED BY "regress_caio_up_Sender", regress_caio_up_lead, regress_caio_up_helper;
DROP ROLE "regress_caio_up_Sender", regress_caio_up_lead, regress_caio_up_helper;
CREATE EXTENSION caio;

-- 0.6.0 to 0.7.0, F3 (issue 33): the update adds the trigger that makes a
-- rotation of caio_lock_key wait for the transactions using the old secret
-- and every session read the new one, as a fresh install has it (the
-- object comparison above also compares the function).
SET client_min_messages = warning;
DROP EXTENSION caio CASCADE;
RESET client_min_messages;
CREATE EXTENSION caio VERSION '0.6.0';
SELECT count(*) AS lock_key_triggers FROM pg_trigger WHERE tgrelid = 'caio_lock_key'::regclass;
ALTER EXTENSION caio UPDATE TO '0.7.0';
CREATE TEMP TABLE updated_lock_key_triggers AS
SELECT tgname, tgfoid::regprocedure::text AS function, tgtype, tgenabled
  FROM pg_trigger WHERE tgrelid = 'caio_lock_key'::regclass;
SET client_min_messages = warning;
DROP EXTENSION caio CASCADE;
RESET client_min_messages;
CREATE EXTENSION caio;
SELECT * FROM updated_lock_key_triggers;
SELECT count(*) AS same_as_fresh FROM updated_lock_key_triggers u
  JOIN pg_trigger t ON t.tgrelid = 'caio_lock_key'::regclass AND t.tgname = u.tgname
   AND t.tgfoid::regprocedure::text = u.function AND t.tgtype = u.tgtype AND t.tgenabled = u.tgenabled;
-- 0.6.0 to 0.7.0 (issue 34): a publication FOR ALL TABLES on the database
-- broke caio_start_token_epoch() (caio_token_epoch had no replica
-- identity); after the update it works, and a subscriber's copy of
-- caio_lock_key is skipped, as in a fresh install (suite publication).
SET client_min_messages = warning;
DROP EXTENSION caio CASCADE;
RESET client_min_messages;
CREATE EXTENSION caio VERSION '0.6.0';
SET client_min_messages = error;
CREATE PUBLICATION upgrade_everything FOR ALL TABLES;
RESET client_min_messages;
SELECT caio_start_token_epoch() AS epoch;
\echo :LAST_ERROR_SQLSTATE
ALTER EXTENSION caio UPDATE TO '0.7.0';
SELECT relname, relreplident FROM pg_class
 WHERE relname = 'caio_token_epoch'
   AND relnamespace = (SELECT extnamespace FROM pg_extension WHERE extname = 'caio');
SELECT caio_start_token_epoch() > 0 AS new_epoch;
SELECT md5(key::text) AS own_key FROM caio_lock_key \gset
SET session_replication_role = replica;
INSERT INTO caio_lock_key VALUES (true, '\x0f0e0d0c0b0a09080706050403020100');
RESET session_replication_role;
SELECT count(*) AS lock_key_rows, bool_and(md5(key::text) = :'own_key') AS own_key_kept
  FROM caio_lock_key;
DROP PUBLICATION upgrade_everything;
SET client_min_messages = warning;
DROP EXTENSION caio CASCADE;
RESET client_min_messages;
CREATE EXTENSION caio;

-- A session whose library is older than the schema (after an ALTER
-- EXTENSION caio UPDATE to a newer version than this session loaded) is
-- refused (55000) rather than make keys as the old version did.  Simulated
-- in a transaction that rolls back: the schema's version set past this
-- library's, and caio's catalog looked up again (a write to caio_lock_key
-- invalidates it, as an update that changes the lock keys must).  An older
-- schema under this library is supported (above, and planted).
SELECT caio_lease_of('upgrade:version') IS NULL AS works;
BEGIN;
UPDATE pg_extension SET extversion = '9.9.9' WHERE extname = 'caio';
UPDATE caio_lock_key SET key = key;
SELECT caio_lease_of('upgrade:version');
ROLLBACK;
SELECT caio_lease_of('upgrade:version') IS NULL AS works_again;

-- From 0.6.0 (F6, issue 33): a trigger of caio's trigger function with a
-- column list or a WHEN clause, made while 0.6.0's event trigger let it, is
-- named by the update; afterwards such a trigger is refused when it is made
-- (0A000), as in a fresh install, and the one already there when it fires.
SET client_min_messages = warning;
DROP EXTENSION caio CASCADE;
RESET client_min_messages;
CREATE EXTENSION caio VERSION '0.6.0';
CREATE TABLE upgrade_jobs (id int PRIMARY KEY, state text);
SELECT caio_claimable('upgrade_jobs');
CREATE OR REPLACE TRIGGER caio_claim BEFORE INSERT OR UPDATE OF claim_token OR DELETE ON upgrade_jobs
    FOR EACH ROW EXECUTE FUNCTION caio_claim_trigger();
CREATE TABLE upgrade_docs (id int PRIMARY KEY, body text, version int);
SELECT caio_versioned('upgrade_docs', 'version');
CREATE TRIGGER upgrade_docs_when BEFORE UPDATE ON upgrade_docs
    FOR EACH ROW WHEN (OLD.body IS NOT NULL) EXECUTE FUNCTION caio_version_trigger('version');
ALTER EXTENSION caio UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'caio';
CREATE OR REPLACE TRIGGER caio_version BEFORE UPDATE OF version ON upgrade_docs
    FOR EACH ROW EXECUTE FUNCTION caio_version_trigger('version');
\echo :LAST_ERROR_SQLSTATE
INSERT INTO upgrade_jobs VALUES (1, 'new');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_claimable('upgrade_jobs');
INSERT INTO upgrade_jobs VALUES (1, 'new');
SELECT evtname, evttags FROM pg_event_trigger WHERE evtname = 'caio_guard_inheritance';
DROP TABLE upgrade_jobs, upgrade_docs;
SET client_min_messages = warning;
DROP EXTENSION caio CASCADE;
RESET client_min_messages;
CREATE EXTENSION caio;
SELECT evtname, evttags FROM pg_event_trigger WHERE evtname = 'caio_guard_inheritance';
