-- Privileges: nothing for PUBLIC; an application role with the README's
-- grants uses the API but cannot write around it, move the clock, or touch
-- another role's lease; caio's SQL is immune to the caller's search_path.
SET timezone = 'UTC';
SET datestyle = 'ISO';
SET intervalstyle = 'postgres';
-- Tokens from here on are 6001, 6002, ... whatever earlier suites drew.
SELECT setval('caio_token_seq', 6000);
CREATE ROLE regress_caio_app;
CREATE ROLE regress_caio_other;
CREATE ROLE regress_caio_nobody;

-- The grants the README documents, for two application roles.
GRANT USAGE ON TYPE caio_lease TO regress_caio_app, regress_caio_other;
GRANT EXECUTE ON FUNCTION
    caio_now(),
    caio_acquire(text, text, interval, interval),
    caio_renew(caio_lease, interval),
    caio_release(caio_lease),
    caio_lease_of(text),
    caio_use(caio_lease),
    caio_nonce_reserve(bigint, text, caio_lease),
    caio_nonce_release(bigint, text, bigint),
    caio_nonce_sync(bigint, text, bigint),
    caio_nonce_sync(bigint, text, bigint, caio_lease),
    caio_nonce_mark(bigint, text, bigint, text, text, caio_lease),
    caio_address_checksum(text),
    caio_claim(anyelement, text, interval, int, text, text)
  TO regress_caio_app, regress_caio_other;
GRANT SELECT ON caio_leases, caio_nonces, caio_nonce_attempts, caio_nonce_holes TO regress_caio_app, regress_caio_other;

-- A role without grants can do nothing.
SET ROLE regress_caio_nobody;
SELECT caio_acquire('priv:r', 'nobody', '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_lease_of('priv:r');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM caio_leases;
\echo :LAST_ERROR_SQLSTATE
SELECT caio_now();
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
-- The same for every other group of functions (leases, nonces, claims,
-- protected tables, the clock) and for caio's tables, views and sequence,
-- even with every privilege on the table it would claim or protect.  Each
-- call runs in a subtransaction that try() rolls back; a call that was not
-- refused would show a NULL sqlstate.
CREATE FUNCTION try(call text, OUT state text, OUT msg text) LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE call;
    RAISE SQLSTATE 'NOERR';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
    IF state = 'NOERR' THEN
        state := NULL;
        msg := 'not refused';
    END IF;
END $$;
CREATE TABLE regress_queue (id int, wallet text, fence_token bigint, version int);
GRANT ALL ON regress_queue TO regress_caio_nobody;
SET ROLE regress_caio_nobody;
SELECT c.call, r.state AS sqlstate, r.msg AS message
  FROM unnest(ARRAY[
    $$SELECT caio_renew(ROW('priv:r', 'nobody', 1, NULL, NULL)::caio_lease, '1 minute')$$,
    $$SELECT caio_release(ROW('priv:r', 'nobody', 1, NULL, NULL)::caio_lease)$$,
    $$SELECT caio_use(ROW('priv:r', 'nobody', 1, NULL, NULL)::caio_lease)$$,
    $$SELECT caio_nonce_reserve(1, '0xde709f2102306220921060314715629080e2fb77')$$,
    $$SELECT caio_nonce_release(1, '0xde709f2102306220921060314715629080e2fb77', 0)$$,
    $$SELECT caio_nonce_sync(1, '0xde709f2102306220921060314715629080e2fb77', 0)$$,
    $$SELECT caio_nonce_mark(1, '0xde709f2102306220921060314715629080e2fb77', 0, 'signed')$$,
    $$SELECT caio_address_checksum('0xde709f2102306220921060314715629080e2fb77')$$,
    $$SELECT * FROM caio_claim(NULL::regress_queue, 'nobody', '1 minute')$$,
    $$SELECT caio_claimable('regress_queue')$$,
    $$SELECT caio_protect('regress_queue', 'fence_token', 'wallet')$$,
    $$SELECT caio_versioned('regress_queue', 'version')$$,
    $$SELECT caio_clock_set('2030-01-01')$$,
    $$SELECT caio_clock_advance('1 hour')$$,
    $$SELECT caio_clock_reset()$$,
    $$SELECT * FROM caio_nonces$$,
    $$SELECT * FROM caio_nonce_attempts$$,
    $$SELECT * FROM caio_nonce_holes$$,
    $$SELECT * FROM caio_nonce_wallet$$,
    $$INSERT INTO caio_lease_state VALUES ('priv:x', 'nobody', 'regress_caio_nobody', 1, now(), now() + '1 h')$$,
    $$UPDATE caio_clock SET frozen_at = '2030-01-01'$$,
    $$SELECT key FROM caio_lock_key$$,
    $$DELETE FROM caio_nonce_reservation$$,
    $$SELECT nextval('caio_token_seq')$$]) WITH ORDINALITY AS c(call, n),
       LATERAL try(c.call) r
 ORDER BY c.n;
RESET ROLE;
-- ... and the catalog agrees, object by object: no function, relation,
-- sequence or type of the extension grants it anything.  Left out, whatever
-- the version: the row types of its tables and views (members of the
-- extension from PostgreSQL 17 on), which keep PostgreSQL's default USAGE
-- (see sql/caio.sql), and array types, whose privileges are their
-- element's.
WITH members AS (
    SELECT classid, objid FROM pg_depend
     WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
       AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'caio')
       AND NOT (classid = 'pg_type'::regclass AND EXISTS (
                SELECT FROM pg_type t LEFT JOIN pg_class c ON c.oid = t.typrelid
                 WHERE t.oid = objid AND (t.typcategory = 'A' OR c.relkind <> 'c'))))
SELECT d.classid::regclass AS catalog, count(*) > 0 AS checked,
       bool_and(NOT CASE
           WHEN d.classid = 'pg_proc'::regclass
               THEN has_function_privilege('regress_caio_nobody', d.objid, 'EXECUTE')
           WHEN d.classid = 'pg_type'::regclass
               THEN has_type_privilege('regress_caio_nobody', d.objid, 'USAGE')
           WHEN c.relkind = 'S'
               THEN has_sequence_privilege('regress_caio_nobody', d.objid, 'USAGE, SELECT, UPDATE')
           -- An event trigger has no privileges: it fires for everyone.
           WHEN d.classid = 'pg_event_trigger'::regclass
               THEN false
           ELSE has_table_privilege('regress_caio_nobody', d.objid,
                                    'SELECT, INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER')
       END) AS nothing_granted
  FROM members d
  LEFT JOIN pg_class c ON d.classid = 'pg_class'::regclass AND c.oid = d.objid
 GROUP BY d.classid
 ORDER BY d.classid::regclass::text;

-- The application role uses the API.
SET ROLE regress_caio_app;
SELECT resource, holder, token > 0 AS has_token FROM caio_acquire('priv:r', 'app-1', '1 minute');
SELECT resource, holder FROM caio_lease_of('priv:r');
SELECT resource, holder FROM caio_leases WHERE resource = 'priv:r';

-- ... but cannot write caio's tables, draw tokens, or move the clock.
SELECT * FROM caio_lease_state;
\echo :LAST_ERROR_SQLSTATE
UPDATE caio_lease_state SET expires_at = 'infinity';
\echo :LAST_ERROR_SQLSTATE
DELETE FROM caio_lease_state;
\echo :LAST_ERROR_SQLSTATE
INSERT INTO caio_lease_state VALUES ('priv:x', 'app-1', 'regress_caio_app', 1, now(), now() + '1 h');
\echo :LAST_ERROR_SQLSTATE
SELECT nextval('caio_token_seq');
\echo :LAST_ERROR_SQLSTATE
SELECT setval('caio_token_seq', 1);
\echo :LAST_ERROR_SQLSTATE
SELECT caio_nonce_reserve(1, '0xde709f2102306220921060314715629080e2fb77') AS nonce;
SELECT nonce, state FROM caio_nonces WHERE address = '0xde709f2102306220921060314715629080e2fb77';
SELECT count(*) AS attempts FROM caio_nonce_attempts WHERE address = '0xde709f2102306220921060314715629080e2fb77';
UPDATE caio_nonce_wallet SET next_nonce = 0;
\echo :LAST_ERROR_SQLSTATE
DELETE FROM caio_nonce_reservation;
\echo :LAST_ERROR_SQLSTATE
SELECT caio_clock_set('2030-01-01');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_clock_advance('1 hour');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_clock_reset();
\echo :LAST_ERROR_SQLSTATE
INSERT INTO caio_clock VALUES (true, '2030-01-01');
\echo :LAST_ERROR_SQLSTATE
UPDATE caio_nonces SET state = 'mined';
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
-- The catalog agrees: on caio's relations the application role may only read
-- the four views, and of caio's functions it cannot run the clock's, nor
-- those that the migration role needs.
SELECT c.relname,
       ARRAY(SELECT p FROM unnest(ARRAY['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE',
                                        'REFERENCES', 'TRIGGER']) AS p
              WHERE c.relkind <> 'S' AND has_table_privilege('regress_caio_app', c.oid, p)
             UNION ALL
             SELECT p FROM unnest(ARRAY['USAGE', 'SELECT', 'UPDATE']) AS p
              WHERE c.relkind = 'S' AND has_sequence_privilege('regress_caio_app', c.oid, p))
         AS app_privileges
  FROM pg_depend d
  JOIN pg_class c ON d.classid = 'pg_class'::regclass AND c.oid = d.objid
 WHERE d.refclassid = 'pg_extension'::regclass
   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'caio')
 ORDER BY c.relname;
SELECT p.oid::regprocedure AS not_executable_by_app
  FROM pg_depend d
  JOIN pg_proc p ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
 WHERE d.refclassid = 'pg_extension'::regclass
   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'caio')
   AND NOT has_function_privilege('regress_caio_app', p.oid, 'EXECUTE')
 ORDER BY p.proname;

-- Another role cannot renew or release the lease, even knowing its token;
-- nor does it get the lease by using the same holder name.
SELECT token AS app_token FROM caio_lease_of('priv:r') \gset
SET ROLE regress_caio_other;
SELECT caio_renew(ROW('priv:r', 'app-1', :app_token, NULL, NULL)::caio_lease, '1 hour');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_release(ROW('priv:r', 'app-1', :app_token, NULL, NULL)::caio_lease);
\echo :LAST_ERROR_SQLSTATE
SELECT caio_acquire('priv:r', 'app-1', '1 minute') IS NULL AS same_name_other_role_refused;
-- Nor can it name the lease in caio_use or the nonce functions (42501),
-- though caio_lease_of and caio_leases show it: a transaction that did so
-- would hold the resource until it ends, blocking the holder's release and
-- every takeover.  (The isolation spec lease_pin shows that the refusal
-- comes before any lock, and that the holder never waits for it.)
BEGIN;
SELECT caio_use(caio_lease_of('priv:r'));
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
SELECT caio_nonce_reserve(1, '0xde709f2102306220921060314715629080e2fb77', caio_lease_of('priv:r'));
\echo :LAST_ERROR_SQLSTATE
SELECT caio_nonce_mark(1, '0xde709f2102306220921060314715629080e2fb77', 0, 'signed', NULL,
                       caio_lease_of('priv:r'));
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
SELECT holder, token = :app_token AS unchanged, released_at IS NULL AS not_released
  FROM caio_lease_state WHERE resource = 'priv:r';

-- A member of the holding role acts for it.
GRANT regress_caio_app TO regress_caio_other;
SET ROLE regress_caio_other;
SELECT token = :app_token AS renewed_by_member
  FROM caio_renew(ROW('priv:r', 'app-1', :app_token, NULL, NULL)::caio_lease, '1 minute');
RESET ROLE;
REVOKE regress_caio_app FROM regress_caio_other;

-- The application role writes to a protected table it does not own; the
-- fence reads caio's tables for it, without it having any right to them.
CREATE TABLE regress_sends (wallet text PRIMARY KEY, amount int, fence_token bigint);
SELECT caio_protect('regress_sends', 'fence_token', 'wallet', 'send:');
GRANT SELECT, INSERT, UPDATE, DELETE ON regress_sends TO regress_caio_app;
SET ROLE regress_caio_app;
SELECT token AS send_token FROM caio_acquire('send:0x1', 'app-1', '1 minute') \gset
INSERT INTO regress_sends VALUES ('0x1', 5, :send_token);
BEGIN;
SELECT caio_use(caio_lease_of('send:0x1')) IS NOT NULL AS used;
UPDATE regress_sends SET amount = 6 RETURNING amount, fence_token = :send_token AS under_its_token;
COMMIT;
UPDATE regress_sends SET amount = 7;
\echo :LAST_ERROR_SQLSTATE
-- ... and cannot protect or unprotect a table it does not own.
SELECT caio_protect('regress_sends', 'fence_token', 'wallet', 'other:');
\echo :LAST_ERROR_SQLSTATE
DROP TRIGGER caio_fence ON regress_sends;
\echo :LAST_ERROR_SQLSTATE
SELECT caio_release(caio_lease_of('send:0x1'));
RESET ROLE;
DROP TABLE regress_sends;

-- A migration role with the README's grants protects its own partitioned
-- table and keeps adding partitions to it.
CREATE ROLE regress_caio_migrator;
GRANT CREATE ON SCHEMA public TO regress_caio_migrator;
GRANT EXECUTE ON FUNCTION caio_protect(regclass, name, name, text),
                          caio_versioned(regclass, name),
                          caio_claimable(regclass),
                          caio_fence_trigger(), caio_version_trigger(),
                          caio_claim_trigger()
  TO regress_caio_migrator;
SET ROLE regress_caio_migrator;
CREATE TABLE regress_ledger (wallet text NOT NULL, n int, fence_token bigint, version int)
    PARTITION BY LIST (wallet);
CREATE TABLE regress_ledger_1 PARTITION OF regress_ledger FOR VALUES IN ('0x1');
SELECT caio_protect('regress_ledger', 'fence_token', 'wallet', 'send:');
SELECT caio_versioned('regress_ledger', 'version');
SELECT caio_claimable('regress_ledger');
CREATE TABLE regress_ledger_2 PARTITION OF regress_ledger FOR VALUES IN ('0x2');
CREATE TABLE regress_ledger_3 (LIKE regress_ledger);
ALTER TABLE regress_ledger ATTACH PARTITION regress_ledger_3 FOR VALUES IN ('0x3');
SELECT tgrelid::regclass AS partition, tgname FROM pg_trigger
 WHERE tgrelid::regclass::text LIKE 'regress_ledger_%' ORDER BY 1, 2;
DROP TABLE regress_ledger;
-- The application role claims rows of a job table it may update.
CREATE TABLE regress_jobs (id int PRIMARY KEY);
INSERT INTO regress_jobs VALUES (1), (2);
SELECT caio_claimable('regress_jobs');
GRANT SELECT, UPDATE ON regress_jobs TO regress_caio_app;
SET ROLE regress_caio_app;
SELECT id, claim_holder FROM caio_claim(NULL::regress_jobs, 'app-1', '1 minute');
SET ROLE regress_caio_migrator;
DROP TABLE regress_jobs;
RESET ROLE;
REVOKE CREATE ON SCHEMA public FROM regress_caio_migrator;

-- caio_leases is a security barrier: a cheap function in the caller's WHERE
-- clause, which the planner would otherwise run before the view's own
-- conditions, sees only the live leases, never the released or expired
-- ones that the view hides.
CREATE FUNCTION regress_leak(text) RETURNS boolean COST 0.0000001 LANGUAGE plpgsql AS $$
BEGIN
    IF $1 LIKE 'leak:%' THEN
        RAISE NOTICE 'leaked %', $1;
    END IF;
    RETURN true;
END $$;
GRANT EXECUTE ON FUNCTION regress_leak(text) TO regress_caio_app;
SET ROLE regress_caio_app;
SELECT caio_release(caio_acquire('leak:released', 'app-1', '1 minute')) AS released;
SELECT token > 0 AS acquired FROM caio_acquire('leak:expired', 'app-1', '1 millisecond');
SELECT token > 0 AS acquired FROM caio_acquire('leak:live', 'app-1', '1 minute');
SELECT pg_sleep(0.01);
SELECT resource FROM caio_leases WHERE regress_leak(resource) AND resource LIKE 'leak:%';
SELECT caio_release(caio_lease_of('leak:live')) AS released;
RESET ROLE;
DROP FUNCTION regress_leak(text);

-- A superuser may release anyone's lease.
SELECT caio_release(ROW('priv:r', 'app-1', :app_token, NULL, NULL)::caio_lease) AS released_by_superuser;

-- The caller's search_path cannot redirect caio's SQL, which runs as the
-- extension owner: an operator planted ahead of pg_catalog is never called.
CREATE SCHEMA regress_caio_evil AUTHORIZATION regress_caio_app;
SET ROLE regress_caio_app;
CREATE FUNCTION regress_caio_evil.always_equal(text, text) RETURNS boolean
    LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'planted operator was called'; END $$;
CREATE OPERATOR regress_caio_evil.= (FUNCTION = regress_caio_evil.always_equal,
                                     LEFTARG = text, RIGHTARG = text);
CREATE TABLE regress_caio_evil.caio_lease_state (resource text);
SET search_path = regress_caio_evil, public, pg_catalog;
SELECT resource, holder FROM caio_acquire('priv:s', 'app-1', '1 minute');
SELECT resource, holder FROM caio_lease_of('priv:s');
-- caio runs its SQL with search_path pinned to pg_catalog, pg_temp, and
-- gives the caller's back afterwards, and after an error in that SQL too
-- (another role's renew is refused once the row is read).
SET ROLE regress_caio_other;
BEGIN;
SELECT resource, holder FROM caio_acquire('priv:u', 'other-1', '1 minute');
SHOW search_path;
SAVEPOINT refused;
SELECT caio_renew(caio_lease_of('priv:s'), '1 minute');
ROLLBACK TO SAVEPOINT refused;
SHOW search_path;
COMMIT;
SELECT caio_release(caio_lease_of('priv:u')) AS released;
SET ROLE regress_caio_app;
SELECT caio_release(caio_lease_of('priv:s')) AS released;
RESET search_path;
RESET ROLE;
-- The same in a new session, whose first caio call plans under that path.
\c -
SET ROLE regress_caio_app;
SET search_path = regress_caio_evil, public, pg_catalog;
SELECT resource, holder FROM caio_acquire('priv:t', 'app-1', '1 minute');
SELECT caio_release(caio_lease_of('priv:t')) AS released;
RESET search_path;
RESET ROLE;
DROP SCHEMA regress_caio_evil CASCADE;

-- SECURITY DEFINER functions pin search_path.  caio has none: its C
-- functions switch to the extension owner themselves (tested just above).
-- Both counts are 0; one added later must pin search_path, and keep the
-- second count at 0.
SELECT count(*) AS security_definer_functions,
       count(*) FILTER (WHERE NOT EXISTS (SELECT FROM unnest(p.proconfig) AS setting
                                           WHERE setting LIKE 'search\_path=%'))
         AS without_pinned_search_path
  FROM pg_depend d
  JOIN pg_proc p ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
 WHERE d.refclassid = 'pg_extension'::regclass
   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'caio')
   AND p.prosecdef;

-- Nothing in the extension is granted to PUBLIC.
SELECT count(*) AS public_grants
  FROM pg_depend d
  JOIN pg_class c ON d.classid = 'pg_class'::regclass AND d.objid = c.oid
 WHERE d.refclassid = 'pg_extension'::regclass
   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'caio')
   AND EXISTS (SELECT 1 FROM aclexplode(c.relacl) a WHERE a.grantee = 0);
SELECT p.proname
  FROM pg_depend d
  JOIN pg_proc p ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
 WHERE d.refclassid = 'pg_extension'::regclass
   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'caio')
   AND (p.proacl IS NULL OR EXISTS (SELECT 1 FROM aclexplode(p.proacl) a WHERE a.grantee = 0));

DROP TABLE regress_queue;
DROP FUNCTION try(text);
DROP OWNED BY regress_caio_app, regress_caio_other, regress_caio_nobody, regress_caio_migrator;
DROP ROLE regress_caio_app, regress_caio_other, regress_caio_nobody, regress_caio_migrator;
-- The secret of the lock keys: one row of 16 bytes, the owner's alone
-- (refused to the application role above).
SELECT count(*) AS rows, bool_and(length(key) = 16) AS sixteen_bytes FROM caio_lock_key;
-- Without its secret caio makes no lock key: a new session is refused
-- (55000) rather than fall back to a key anyone can compute.  A new secret
-- put back, it works again.
DELETE FROM caio_lock_key;
\c -
SELECT caio_lease_of('privileges:no-key');
\echo :LAST_ERROR_SQLSTATE
INSERT INTO caio_lock_key (key) VALUES (uuid_send(gen_random_uuid()));
\c -
SELECT caio_lease_of('privileges:no-key') IS NULL AS no_lease;
