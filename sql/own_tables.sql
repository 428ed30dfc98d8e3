-- caio writes its own tables directly on its hot paths (renew, acquire,
-- release, nonce reservation), not through SQL.  Such writes still refuse
-- in a read-only transaction, as an UPDATE would; a trigger on caio's tables
-- is refused, never skipped; and indexes that an administrator adds to the
-- tables are kept complete (amcheck compares each with the table).
SET timezone = 'UTC';
SET datestyle = 'ISO';
SELECT caio_clock_set('2030-03-01 00:00:00+00');
SELECT setval('caio_token_seq', 9500);
CREATE EXTENSION amcheck;
SELECT token FROM caio_acquire('own:a', 'worker-a', '1 minute');
SELECT caio_nonce_reserve(5, '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed') AS nonce;

-- A read-only transaction: 25006, as for the statements they stand for.
BEGIN READ ONLY;
SELECT caio_renew(ROW('own:a', 'worker-a', 9501, NULL, NULL)::caio_lease, '2 minutes');
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
BEGIN READ ONLY;
SELECT caio_release(ROW('own:a', 'worker-a', 9501, NULL, NULL)::caio_lease);
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
BEGIN READ ONLY;
SELECT caio_acquire('own:a', 'worker-a', '1 minute');  -- the same holder again
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
BEGIN READ ONLY;
SELECT caio_nonce_reserve(5, '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed');
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
SELECT holder, token, expires_at FROM caio_lease_of('own:a');

-- A trigger on caio's tables: refused (55000), nothing written; dropped,
-- the writes go on.
CREATE FUNCTION own_audit() RETURNS trigger LANGUAGE plpgsql
    AS $$ BEGIN RAISE NOTICE 'audit %', TG_OP; RETURN NEW; END $$;
CREATE TRIGGER own_audit BEFORE UPDATE ON caio_lease_state
    FOR EACH ROW EXECUTE FUNCTION own_audit();
SELECT caio_renew(ROW('own:a', 'worker-a', 9501, NULL, NULL)::caio_lease, '2 minutes');
\echo :LAST_ERROR_SQLSTATE
CREATE TRIGGER own_audit AFTER INSERT ON caio_nonce_reservation
    FOR EACH ROW EXECUTE FUNCTION own_audit();
SELECT caio_nonce_reserve(5, '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed');
\echo :LAST_ERROR_SQLSTATE
SELECT holder, token, expires_at FROM caio_lease_of('own:a');
SELECT nonce FROM caio_nonces WHERE chain_id = 5;
DROP TRIGGER own_audit ON caio_lease_state;
DROP TRIGGER own_audit ON caio_nonce_reservation;
SELECT token, expires_at FROM caio_renew(ROW('own:a', 'worker-a', 9501, NULL, NULL)::caio_lease, '2 minutes');

-- Indexes an administrator adds: a partial one on a column that renewals
-- change (so that a renewal is not HOT and must make index entries), one
-- on an expression, and one on the reservations.
CREATE INDEX own_live_expiry ON caio_lease_state (expires_at) WHERE released_at IS NULL;
CREATE INDEX own_holder ON caio_lease_state (lower(holder));
CREATE INDEX own_reserved_at ON caio_nonce_reservation (reserved_at, nonce);
SELECT token, expires_at FROM caio_renew(ROW('own:a', 'worker-a', 9501, NULL, NULL)::caio_lease, '3 minutes');
SELECT token FROM caio_acquire('own:b', 'worker-b', '1 minute');
SELECT caio_clock_advance('2 minutes') IS NOT NULL AS advanced;
SELECT token FROM caio_acquire('own:b', 'worker-c', '1 minute');  -- a takeover
SELECT caio_release(ROW('own:a', 'worker-a', 9501, NULL, NULL)::caio_lease);
SELECT caio_nonce_reserve(5, '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed') AS nonce;
SELECT caio_nonce_reserve(5, '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed') AS nonce;
-- Through the indexes, the rows are found as they are now.
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT resource, expires_at FROM caio_lease_state
 WHERE expires_at > '2030-01-01' AND released_at IS NULL AND resource LIKE 'own:%';
SELECT resource, holder FROM caio_lease_state WHERE lower(holder) IN ('worker-a', 'worker-b', 'worker-c');
SELECT nonce FROM caio_nonce_reservation WHERE reserved_at > '2030-01-01' AND chain_id = 5 ORDER BY nonce;
RESET enable_seqscan;
RESET enable_bitmapscan;
-- Every index holds every row version it should (heapallindexed).
SELECT c.relname, bt_index_check(c.oid, true) IS NOT NULL AS checked
  FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
 WHERE i.indrelid IN ('caio_lease_state'::regclass, 'caio_nonce_wallet'::regclass,
                      'caio_nonce_reservation'::regclass)
 ORDER BY c.relname;
DROP INDEX own_live_expiry, own_holder, own_reserved_at;
DROP FUNCTION own_audit();
DROP EXTENSION amcheck;
SELECT caio_clock_reset() IS NOT NULL AS reset;
