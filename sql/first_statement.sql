-- The first statement of a session that has not loaded caio (caio is not
-- preloaded here: pg_regress runs without shared_preload_libraries).  It
-- starts before its first row loads caio, so caio's executor hooks never saw
-- it: a write caio cannot establish from the portal (EXPLAIN ANALYZE, a
-- MERGE whose actions differ, a statement a function runs) names no token
-- and is refused (LK003) with a hint, never taken as naming the row's token.
-- A plain UPDATE, INSERT, INSERT ... ON CONFLICT, COPY or DELETE still works.
SET timezone = 'UTC';
SELECT caio_clock_set('2030-01-01 00:00:00+00');
SELECT setval('caio_token_seq', 9000);

CREATE TABLE first_transfers (
    id          int PRIMARY KEY,
    wallet      text NOT NULL,
    state       text NOT NULL,
    fence_token bigint
);
SELECT caio_protect('first_transfers', 'fence_token', 'wallet', 'send:');
CREATE TABLE first_jobs (id int PRIMARY KEY, state text NOT NULL DEFAULT 'pending');
SELECT caio_claimable('first_jobs');
INSERT INTO first_jobs (id) VALUES (1), (2);

-- worker-b holds the wallet (9001) and writes both rows under it; it claims
-- job 1 (9002).
SELECT token FROM caio_acquire('send:f1', 'worker-b', '1 hour');
INSERT INTO first_transfers VALUES (1, 'f1', 'new', 9001), (2, 'f1', 'new', 9001);
SELECT id, claim_token FROM caio_claim(NULL::first_jobs, 'worker-b', '1 hour', 1);

-- A function that runs a MERGE, and returns false.
CREATE FUNCTION first_merge() RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    MERGE INTO first_transfers t USING (VALUES (1, 'by-function')) s(id, st) ON t.id = s.id
     WHEN MATCHED AND s.st = 'never' THEN UPDATE SET fence_token = 9001
     WHEN MATCHED THEN UPDATE SET state = s.st;
    RETURN false;
END $$;

-- worker-a holds nothing.  Each of its writes below is the first statement
-- of a new connection (\c): a MERGE's row trigger gets the columns that any
-- UPDATE action sets, so the action that sets only state would pass for one
-- that names the row's token (9001, current) if caio took the write as it
-- looks; it cannot see the MERGE, and refuses.
\c
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
MERGE INTO first_transfers t USING (VALUES (1, 'explained')) s(id, st) ON t.id = s.id
 WHEN MATCHED AND s.st = 'never' THEN UPDATE SET fence_token = 9001
 WHEN MATCHED THEN UPDATE SET state = s.st;
\echo :SQLSTATE
-- The same statement again in that session, now that caio is loaded: refused
-- as every MERGE whose action sets no token is (the detail differs between
-- PostgreSQL versions).
\set VERBOSITY terse
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
MERGE INTO first_transfers t USING (VALUES (1, 'explained')) s(id, st) ON t.id = s.id
 WHEN MATCHED AND s.st = 'never' THEN UPDATE SET fence_token = 9001
 WHEN MATCHED THEN UPDATE SET state = s.st;
\set VERBOSITY default
\c
MERGE INTO first_transfers t USING (VALUES (1, 'merged')) s(id, st) ON t.id = s.id
 WHEN MATCHED AND s.st = 'never' THEN UPDATE SET fence_token = 9001
 WHEN MATCHED THEN UPDATE SET state = s.st;
\echo :SQLSTATE
\c
SELECT first_merge();
\echo :SQLSTATE
-- A plain UPDATE that names the token, whose WHERE runs the function's
-- MERGE: the MERGE's row is not the UPDATE's.
\c
UPDATE first_transfers SET state = 'by-update', fence_token = 9001 WHERE id = 1 AND first_merge();
\echo :SQLSTATE
-- A claimed job, finished by a MERGE that does not name its claim token.
\c
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
MERGE INTO first_jobs j USING (VALUES (1, 'done')) s(id, st) ON j.id = s.id
 WHEN MATCHED AND s.st = 'never' THEN UPDATE SET claim_token = 9002
 WHEN MATCHED THEN UPDATE SET state = s.st;
\echo :SQLSTATE
\set VERBOSITY terse
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
MERGE INTO first_jobs j USING (VALUES (1, 'done')) s(id, st) ON j.id = s.id
 WHEN MATCHED AND s.st = 'never' THEN UPDATE SET claim_token = 9002
 WHEN MATCHED THEN UPDATE SET state = s.st;
\set VERBOSITY default
\c
MERGE INTO first_jobs j USING (VALUES (1, 'done')) s(id, st) ON j.id = s.id
 WHEN MATCHED AND s.st = 'never' THEN UPDATE SET claim_token = 9002
 WHEN MATCHED THEN UPDATE SET state = s.st;
\echo :SQLSTATE
-- Nothing landed.
SELECT id, state, fence_token FROM first_transfers ORDER BY id;
SELECT id, state, claim_holder, claim_token FROM first_jobs ORDER BY id;

-- worker-b's plain writes, each the first statement of a new connection,
-- land as they always did.
\c
UPDATE first_transfers SET state = 'signed', fence_token = 9001 WHERE id = 1;
\c
INSERT INTO first_transfers VALUES (3, 'f1', 'new', 9001);
\c
INSERT INTO first_transfers VALUES (2, 'f1', 'broadcast', 9001)
    ON CONFLICT (id) DO UPDATE SET state = excluded.state, fence_token = excluded.fence_token;
\c
COPY first_transfers FROM STDIN;
4	f1	copied	9001
\.
\c
MERGE INTO first_transfers t USING (VALUES (3, 'merged')) s(id, st) ON t.id = s.id
 WHEN MATCHED THEN UPDATE SET state = s.st, fence_token = 9001;
\c
UPDATE first_jobs SET state = 'done', claim_holder = NULL, claim_expires_at = NULL,
       claim_token = 9002 WHERE id = 1;
\c
DELETE FROM first_jobs WHERE id = 2;
SELECT id, state, fence_token FROM first_transfers ORDER BY id;
SELECT id, state, claim_holder, claim_token FROM first_jobs ORDER BY id;

DROP TABLE first_transfers, first_jobs;
DROP FUNCTION first_merge();
SELECT caio_release(caio_lease_of('send:f1')) AS released;
SELECT caio_clock_reset() IS NOT NULL AS reset;
