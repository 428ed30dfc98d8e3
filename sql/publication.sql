-- A publication FOR ALL TABLES on the database caio runs in (green
-- publishing back to blue for a rollback, say) never breaks caio: every
-- caio table has a replica identity, so none of caio's writes is refused.
-- And a subscriber's copy of caio_lock_key (another database's secret) is
-- skipped: it neither fails nor replaces the subscriber's own (issue 34).
\i test/regress/fresh_caio.sql

-- Each caio table has one: its primary key, or for caio_token_epoch the
-- whole row (sql/caio.sql says why).
SELECT c.relname, c.relreplident,
       (SELECT i.indexrelid::regclass FROM pg_index i
         WHERE i.indrelid = c.oid AND i.indisprimary) AS primary_key
  FROM pg_class c
 WHERE c.relkind = 'r'
   AND c.oid IN (SELECT objid FROM pg_depend
                  WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
                    AND classid = 'pg_class'::regclass
                    AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'caio'))
 ORDER BY 1;

-- Without wal_level = logical the publication is made all the same (with a
-- warning, silenced here), and the checks on writes are the same.
SET client_min_messages = error;
CREATE PUBLICATION caio_everything FOR ALL TABLES;
RESET client_min_messages;
SELECT pubname, puballtables, pubdelete FROM pg_publication;

-- A new epoch by hand: it replaces the epoch rows (a delete) and moves the
-- tokens.
SELECT setval('caio_token_seq', 10) AS token_seq_at;
SELECT caio_start_token_epoch() AS epoch;
SELECT count(*) AS epoch_rows, max(epoch) AS epoch FROM caio_token_epoch;
-- Another system's epoch row (as a subscription copies it): the next
-- session's first token starts a lineage of its own above it, deleting it.
INSERT INTO caio_token_epoch VALUES (1, 1, 1, 4, now());
\c -
SET timezone = 'UTC';
SET datestyle = 'ISO';
SELECT token >> 47 AS epoch, token & ((1::bigint << 47) - 1) AS n
  FROM caio_acquire('pub:first', 'worker-a', '1 minute');
SELECT count(*) AS epoch_rows, max(epoch) AS epoch FROM caio_token_epoch;
-- Leases: acquire, renew, release, and a fenced write.
CREATE TABLE pub_sends (wallet text PRIMARY KEY, amount int, fence_token bigint);
SELECT caio_protect('pub_sends', 'fence_token', 'wallet', 'pub:send:');
SELECT token AS send_token FROM caio_acquire('pub:send:0xa', 'worker-a', '1 minute') \gset
INSERT INTO pub_sends VALUES ('0xa', 1, :send_token);
UPDATE pub_sends SET amount = 2, fence_token = :send_token RETURNING wallet, amount;
SELECT caio_renew(caio_lease_of('pub:send:0xa'), '2 minutes') IS NOT NULL AS renewed;
SELECT caio_release(caio_lease_of('pub:send:0xa')) AS released;
-- Nonces: reserve, release, reserve again, mark, sync.
SELECT caio_nonce_reserve(1, '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed') AS nonce;
SELECT caio_nonce_reserve(1, '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed') AS nonce;
SELECT caio_nonce_release(1, '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed', 0) AS released;
SELECT caio_nonce_reserve(1, '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed') AS nonce;
SELECT caio_nonce_mark(1, '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed', 0, 'broadcast',
                       '0x' || repeat('ab', 32));
SELECT caio_nonce_sync(1, '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed', 1) AS next_nonce;
SELECT nonce, state FROM caio_nonces ORDER BY nonce;
-- Claims.
CREATE TABLE pub_jobs (id int PRIMARY KEY, state text);
SELECT caio_claimable('pub_jobs');
INSERT INTO pub_jobs (id, state) VALUES (1, 'pending'), (2, 'pending');
SELECT id, claim_holder FROM caio_claim(NULL::pub_jobs, 'worker-a', '30 seconds', 2) ORDER BY id;
UPDATE pub_jobs SET state = 'done', claim_token = claim_token WHERE id = 1 RETURNING id, state;
-- The test clock: set, advance, and back to the server clock (a delete).
SELECT caio_clock_set('2018-01-01 00:00:00+00');
SELECT caio_clock_advance('1 hour');
SELECT caio_release(caio_acquire('pub:purged', 'worker-a', '1 minute')) AS released;
SELECT caio_clock_advance('1 day');
-- Purge deletes leases.
SELECT caio_lease_purge('1 hour') AS purged;
SELECT caio_clock_reset() IS NOT NULL AS reset;
SELECT count(*) AS clock_rows FROM caio_clock;

-- caio_lock_key as a subscription brings it: logical replication's workers
-- write with session_replication_role = replica, the initial copy by COPY
-- (here from a file that holds another database's row).  Each row is
-- skipped: no duplicate key, and the secret stays this database's own,
-- whatever comes later (an update, a delete: another database's rotation).
SELECT md5(key::text) AS own_key FROM caio_lock_key \gset
SET session_replication_role = replica;
COPY caio_lock_key (singleton, key) FROM stdin;
t	\\x000102030405060708090a0b0c0d0e0f
\.
INSERT INTO caio_lock_key VALUES (true, '\x0f0e0d0c0b0a09080706050403020100');
UPDATE caio_lock_key SET key = '\x0f0e0d0c0b0a09080706050403020100';
DELETE FROM caio_lock_key;
RESET session_replication_role;
SELECT count(*) AS lock_key_rows, bool_and(md5(key::text) = :'own_key') AS own_key_kept
  FROM caio_lock_key;
-- caio's locks work as before.
SELECT token > 0 AS acquired FROM caio_acquire('pub:after-copy', 'worker-a', '1 minute');
-- A rotation made here (not as replication writes) works as before.
BEGIN;
DELETE FROM caio_lock_key;
INSERT INTO caio_lock_key (key) VALUES (uuid_send(gen_random_uuid()));
COMMIT;
SELECT count(*) AS lock_key_rows, bool_and(md5(key::text) <> :'own_key') AS rotated FROM caio_lock_key;

DROP PUBLICATION caio_everything;
DROP TABLE pub_sends, pub_jobs;
