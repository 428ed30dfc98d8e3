-- Fencing where the data lives: a protected table refuses every write whose
-- token is not the newest for the row's resource, or that names none.
SET timezone = 'UTC';
SET datestyle = 'ISO';
SET intervalstyle = 'postgres';
SELECT caio_clock_set('2030-01-01 00:00:00+00');
-- Tokens from here on are 3001, 3002, ... whatever earlier suites drew.
SELECT setval('caio_token_seq', 3000);

CREATE TABLE transfers (
    id          int PRIMARY KEY,
    wallet      text NOT NULL,
    amount      numeric NOT NULL,
    state       text NOT NULL DEFAULT 'new',
    fence_token bigint
);
SELECT caio_protect('transfers', 'fence_token', 'wallet', 'send:');
SELECT tgname, tgenabled FROM pg_trigger WHERE tgrelid = 'transfers'::regclass;

-- worker-a holds the wallet's lease.
SELECT token FROM caio_acquire('send:0xfee', 'worker-a', '30 seconds');

-- Writes that name the newest token land: INSERT names it in the row,
-- UPDATE in its SET list.
INSERT INTO transfers (id, wallet, amount, fence_token) VALUES (1, '0xfee', 10, 3001);
INSERT INTO transfers (id, wallet, amount, fence_token) VALUES (2, '0xfee', 20, 3001);
UPDATE transfers SET state = 'signed', fence_token = 3001 WHERE id = 1;

-- Writes that name no token: LK003.
INSERT INTO transfers (id, wallet, amount) VALUES (3, '0xfee', 30);
\echo :LAST_ERROR_SQLSTATE
UPDATE transfers SET state = 'broadcast' WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE
UPDATE transfers SET state = 'broadcast', fence_token = NULL WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE
DELETE FROM transfers WHERE id = 2;
\echo :LAST_ERROR_SQLSTATE

-- A forged token from the future: LK001.
UPDATE transfers SET state = 'forged', fence_token = 3099 WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE

-- A resource nobody ever leased: LK001.
INSERT INTO transfers (id, wallet, amount, fence_token) VALUES (4, '0xfef', 40, 3001);
\echo :LAST_ERROR_SQLSTATE

-- caio_use names the lease once for the transaction: it covers INSERT,
-- UPDATE and DELETE of the resource's rows and fills the token column in.
BEGIN;
SELECT resource, holder, token FROM caio_use(ROW('send:0xfee', 'worker-a', 3001, NULL, NULL)::caio_lease);
INSERT INTO transfers (id, wallet, amount) VALUES (3, '0xfee', 30) RETURNING id, fence_token;
UPDATE transfers SET state = 'broadcast' WHERE id = 1 RETURNING id, state, fence_token;
DELETE FROM transfers WHERE id = 2 RETURNING id;
-- It covers only its own resource.
INSERT INTO transfers (id, wallet, amount) VALUES (5, '0xfef', 50);
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;

-- ... and ends with the transaction.
UPDATE transfers SET state = 'after' WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE

-- A subtransaction that rolls back takes its caio_use with it.
BEGIN;
SAVEPOINT s;
SELECT token FROM caio_use(ROW('send:0xfee', 'worker-a', 3001, NULL, NULL)::caio_lease);
ROLLBACK TO SAVEPOINT s;
UPDATE transfers SET state = 'after savepoint' WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
-- Naming the lease again inside a savepoint that rolls back keeps the
-- transaction's own caio_use.
BEGIN;
SELECT token FROM caio_use(ROW('send:0xfee', 'worker-a', 3001, NULL, NULL)::caio_lease);
SAVEPOINT s;
SELECT token FROM caio_use(ROW('send:0xfee', 'worker-a', 3001, NULL, NULL)::caio_lease);
ROLLBACK TO SAVEPOINT s;
UPDATE transfers SET state = 'signed' WHERE id = 1 RETURNING id, state, fence_token;
ROLLBACK;
BEGIN;
SAVEPOINT s;
SELECT token FROM caio_use(ROW('send:0xfee', 'worker-a', 3001, NULL, NULL)::caio_lease);
RELEASE SAVEPOINT s;
UPDATE transfers SET state = 'signed' WHERE id = 1 RETURNING id, state, fence_token;
COMMIT;
-- A lease that expired but was not taken over still fences: its token is
-- still the newest, so worker-a's writes land.
SELECT caio_clock_advance('31 seconds');
SELECT caio_lease_of('send:0xfee') IS NULL AS expired;
UPDATE transfers SET state = 'late but unopposed', fence_token = 3001 WHERE id = 1;

-- worker-b takes over.  From now on worker-a is refused, however it writes.
SELECT token FROM caio_acquire('send:0xfee', 'worker-b', '30 seconds');
INSERT INTO transfers (id, wallet, amount, fence_token) VALUES (6, '0xfee', 60, 3001);
\echo :LAST_ERROR_SQLSTATE
UPDATE transfers SET state = 'stale', fence_token = 3001 WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE
SELECT caio_use(ROW('send:0xfee', 'worker-a', 3001, NULL, NULL)::caio_lease);
\echo :LAST_ERROR_SQLSTATE
-- A stale DELETE: it can only name its lease through caio_use, which refuses.
BEGIN;
SELECT caio_use(ROW('send:0xfee', 'worker-a', 3001, NULL, NULL)::caio_lease);
DELETE FROM transfers WHERE id = 1;
ROLLBACK;
-- A holder name that does not match the token: LK001.
SELECT caio_use(ROW('send:0xfee', 'worker-a', 3002, NULL, NULL)::caio_lease);
\echo :LAST_ERROR_SQLSTATE

-- worker-b writes under its token; a DELETE under caio_use.
UPDATE transfers SET state = 'retried', fence_token = 3002 WHERE id = 1;
BEGIN;
SELECT token FROM caio_use(ROW('send:0xfee', 'worker-b', 3002, NULL, NULL)::caio_lease);
DELETE FROM transfers WHERE id = 2 RETURNING id, fence_token;
COMMIT;

-- The token of a released lease no longer fences, even though it is still
-- the newest: writes under it are refused, and so is caio_use.
SELECT caio_release(ROW('send:0xfee', 'worker-b', 3002, NULL, NULL)::caio_lease);
UPDATE transfers SET state = 'after release', fence_token = 3002 WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE
SELECT caio_use(ROW('send:0xfee', 'worker-b', 3002, NULL, NULL)::caio_lease);
\echo :LAST_ERROR_SQLSTATE
-- The same inside one transaction: use, release, then write.
SELECT token FROM caio_acquire('send:0xfee', 'worker-b', '30 seconds');
BEGIN;
SELECT token FROM caio_use(ROW('send:0xfee', 'worker-b', 3003, NULL, NULL)::caio_lease);
SELECT caio_release(ROW('send:0xfee', 'worker-b', 3003, NULL, NULL)::caio_lease);
DELETE FROM transfers WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
SELECT caio_release(ROW('send:0xfee', 'worker-b', 3003, NULL, NULL)::caio_lease);

-- worker-c takes the wallet (token 3004) for the rest of the test.
SELECT token FROM caio_acquire('send:0xfee', 'worker-c', '30 seconds');

-- A row's token never goes backwards.  (Rows written before the table was
-- protected, or while its trigger was disabled, may carry any token.)
ALTER TABLE transfers DISABLE TRIGGER caio_fence;
UPDATE transfers SET fence_token = 9000 WHERE id = 1;
ALTER TABLE transfers ENABLE TRIGGER caio_fence;
UPDATE transfers SET state = 'backwards', fence_token = 3004 WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE
DELETE FROM transfers WHERE id = 1 AND fence_token = 9000;
\echo :LAST_ERROR_SQLSTATE

-- A row cannot move to another resource; a row needs a resource.
UPDATE transfers SET wallet = '0xfef', fence_token = 3004 WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE
ALTER TABLE transfers ALTER COLUMN wallet DROP NOT NULL;
INSERT INTO transfers (id, wallet, amount, fence_token) VALUES (7, NULL, 70, 4);
\echo :LAST_ERROR_SQLSTATE

-- INSERT ... ON CONFLICT DO UPDATE is fenced on both paths.
INSERT INTO transfers (id, wallet, amount, fence_token) VALUES (8, '0xfee', 80, 3004)
    ON CONFLICT (id) DO UPDATE SET amount = excluded.amount, fence_token = excluded.fence_token;
INSERT INTO transfers (id, wallet, amount, fence_token) VALUES (8, '0xfee', 81, 3004)
    ON CONFLICT (id) DO UPDATE SET amount = excluded.amount;
\echo :LAST_ERROR_SQLSTATE

-- COPY is fenced like INSERT (psql does not report COPY's SQLSTATE).
COPY transfers (id, wallet, amount, fence_token) FROM stdin;
9	0xfee	90	3004
\.
COPY transfers (id, wallet, amount, fence_token) FROM stdin;
10	0xfee	100	3003
\.

SELECT id, wallet, amount, state, fence_token FROM transfers ORDER BY id;

-- Partitioned tables: the trigger reaches every partition.
CREATE TABLE ledger (wallet text NOT NULL, entry int, fence_token bigint) PARTITION BY LIST (wallet);
CREATE TABLE ledger_abc PARTITION OF ledger FOR VALUES IN ('0xfee');
SELECT caio_protect('ledger', 'fence_token', 'wallet', 'send:');
CREATE TABLE ledger_def PARTITION OF ledger FOR VALUES IN ('0xfef');
INSERT INTO ledger VALUES ('0xfee', 1, 3004);
INSERT INTO ledger VALUES ('0xfee', 2, 3001);
\echo :LAST_ERROR_SQLSTATE
INSERT INTO ledger VALUES ('0xfef', 3, 3004);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM ledger;

-- Any column type can name the resource; its text form follows the prefix.
CREATE TABLE jobs (job_id bigint PRIMARY KEY, done boolean, claim_token bigint);
SELECT caio_protect('jobs', 'claim_token', 'job_id', 'job:');
SELECT token FROM caio_acquire('job:42', 'worker-a', '1 minute');
INSERT INTO jobs VALUES (42, false, 3005);
UPDATE jobs SET done = true, claim_token = 3005 RETURNING *;

-- Protecting again replaces the trigger (here: a new prefix); dropping the
-- trigger removes the protection.
SELECT caio_protect('jobs', 'claim_token', 'job_id', 'task:');
UPDATE jobs SET done = false, claim_token = 3005;
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS caio_triggers FROM pg_trigger WHERE tgrelid = 'jobs'::regclass AND tgname = 'caio_fence';
DROP TRIGGER caio_fence ON jobs;
UPDATE jobs SET done = false;

-- A savepoint that takes the resource over and names the new lease, then
-- rolls back, brings back the lease the transaction named before it.
SELECT token AS sp_token FROM caio_acquire('send:0xsp', 'worker-a', '30 seconds') \gset
BEGIN;
SELECT token = :sp_token AS named FROM caio_use(ROW('send:0xsp', 'worker-a', :sp_token, NULL, NULL)::caio_lease);
SAVEPOINT s;
SELECT caio_clock_advance('31 seconds') IS NOT NULL AS paused;
SELECT holder FROM caio_use(caio_acquire('send:0xsp', 'worker-b', '30 seconds'));
ROLLBACK TO SAVEPOINT s;
INSERT INTO transfers (id, wallet, amount) VALUES (99, '0xsp', 1)
RETURNING id, fence_token = :sp_token AS under_first_lease;
ROLLBACK;

-- A lease lookup reads first where it found the resource's row last time.
-- Once the row is deleted, that place can hold another row or lie past the
-- table's end (VACUUM truncates it), and after VACUUM FULL it is anywhere:
-- the fence then looks the resource up through its primary key, and reads
-- no block past the end.
CREATE TABLE hint_sends (wallet text PRIMARY KEY, amount int, fence_token bigint);
SELECT caio_protect('hint_sends', 'fence_token', 'wallet', 'hint:');
SELECT count(caio_acquire('hint:' || i, 'worker-a', '1 minute')) AS acquired
  FROM generate_series(1, 400) i;
SELECT token AS hint_token FROM caio_lease_of('hint:400') \gset
INSERT INTO hint_sends VALUES ('400', 1, :hint_token);
UPDATE hint_sends SET amount = 2, fence_token = :hint_token RETURNING amount;
SELECT (ctid::text::point)[0] AS hint_block FROM caio_lease_state
 WHERE resource = 'hint:400' \gset
DELETE FROM caio_lease_state WHERE resource LIKE 'hint:%';
VACUUM caio_lease_state;
SELECT pg_relation_size('caio_lease_state') / current_setting('block_size')::int
       <= :hint_block AS past_the_end;
\set VERBOSITY terse
UPDATE hint_sends SET amount = 3, fence_token = :hint_token;
\echo :LAST_ERROR_SQLSTATE
SELECT token AS hint_token2 FROM caio_acquire('hint:400', 'worker-b', '1 minute') \gset
UPDATE hint_sends SET amount = 4, fence_token = :hint_token2 RETURNING amount;
VACUUM FULL caio_lease_state;
UPDATE hint_sends SET amount = 5, fence_token = :hint_token2 RETURNING amount;
UPDATE hint_sends SET amount = 6, fence_token = :hint_token;
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY default
SELECT amount, fence_token = :hint_token2 AS under_new_token FROM hint_sends;
DROP TABLE hint_sends;

SELECT caio_clock_reset() IS NOT NULL AS reset;
