-- MERGE on protected, claimable and versioned tables: each action is the
-- write it is, and an action that does not set the token names none.
-- PostgreSQL gives a row trigger the columns that any UPDATE action of the
-- MERGE sets; from 17 on it also names the action that runs, before it does
-- not, so a MERGE whose UPDATE actions differ on the token column differs
-- between versions (merge.out for 15, merge_1.out for 17 and 18, where the
-- NOT MATCHED BY SOURCE and WITH ... MERGE statements also parse).
SET timezone = 'UTC';
SET datestyle = 'ISO';
SELECT caio_clock_set('2030-01-01 00:00:00+00');
-- Tokens from here on are 5001, 5002, ...
SELECT setval('caio_token_seq', 5000);

CREATE TABLE merge_transfers (
    id          int PRIMARY KEY,
    wallet      text NOT NULL,
    state       text NOT NULL,
    fence_token bigint
);
SELECT caio_protect('merge_transfers', 'fence_token', 'wallet', 'send:');

-- worker-a writes under 5001; it pauses past its lease, worker-b takes the
-- wallet over (5002) and writes row 1 under it.
SELECT token FROM caio_acquire('send:m1', 'worker-a', '30 seconds');
INSERT INTO merge_transfers VALUES (1, 'm1', 'new', 5001), (2, 'm1', 'new', 5001);
SELECT caio_clock_advance('31 seconds');
SELECT token FROM caio_acquire('send:m1', 'worker-b', '30 seconds');
UPDATE merge_transfers SET state = 'broadcast', fence_token = 5002 WHERE id = 1;

-- The stale worker-a: a plain UPDATE without the token is LK003 ...
UPDATE merge_transfers SET state = 'stale-a' WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE
-- ... and so is a MERGE whose action that runs sets no token, beside an
-- action that would (the union of their columns names the token column).
MERGE INTO merge_transfers t USING (VALUES (1, 'stale-merge')) s(id, st) ON t.id = s.id
 WHEN MATCHED AND s.st = 'never' THEN UPDATE SET fence_token = 5001
 WHEN MATCHED THEN UPDATE SET state = s.st;
\echo :LAST_ERROR_SQLSTATE
-- A MERGE that names the stale token is LK001; one that sets no token, LK003.
MERGE INTO merge_transfers t USING (VALUES (1)) s(id) ON t.id = s.id
 WHEN MATCHED THEN UPDATE SET state = 'stale-a', fence_token = 5001;
\echo :LAST_ERROR_SQLSTATE
MERGE INTO merge_transfers t USING (VALUES (1)) s(id) ON t.id = s.id
 WHEN MATCHED THEN UPDATE SET state = 'stale-a';
\echo :LAST_ERROR_SQLSTATE
-- worker-b's row stands.
SELECT id, state, fence_token FROM merge_transfers ORDER BY id;

-- worker-b, the holder: an action that names its token lands.
MERGE INTO merge_transfers t USING (VALUES (1, 'mined')) s(id, st) ON t.id = s.id
 WHEN MATCHED THEN UPDATE SET state = s.st, fence_token = 5002;
-- Of a MERGE whose UPDATE actions differ on the token column, an action that
-- changes the row's token names it (row 2 still carries 5001) ...
MERGE INTO merge_transfers t USING (VALUES (2, 'signed')) s(id, st) ON t.id = s.id
 WHEN MATCHED AND s.st = 'never' THEN UPDATE SET state = s.st
 WHEN MATCHED THEN UPDATE SET state = s.st, fence_token = 5002;
-- ... and one that keeps it: from PostgreSQL 17 on, caio knows that the
-- action set it and the write lands; before, it cannot tell that action from
-- its sibling that sets nothing, and refuses (LK003) rather than guess.
MERGE INTO merge_transfers t USING (VALUES (2, 'broadcast')) s(id, st) ON t.id = s.id
 WHEN MATCHED AND s.st = 'never' THEN UPDATE SET state = s.st
 WHEN MATCHED THEN UPDATE SET state = s.st, fence_token = 5002;
\echo :LAST_ERROR_SQLSTATE
-- With caio_use, an action that sets no token is covered, on every version.
BEGIN;
SELECT token FROM caio_use(caio_lease_of('send:m1'));
MERGE INTO merge_transfers t USING (VALUES (2, 'broadcast')) s(id, st) ON t.id = s.id
 WHEN MATCHED AND s.st = 'never' THEN UPDATE SET fence_token = 5001
 WHEN MATCHED THEN UPDATE SET state = s.st;
COMMIT;
-- A MERGE of many rows: each row's action is judged on its own (row 1
-- through the action that names the token, row 2 through the one that
-- sets none).
MERGE INTO merge_transfers t USING (VALUES (1, 'settled'), (2, 'stale-b')) s(id, st) ON t.id = s.id
 WHEN MATCHED AND s.id = 1 THEN UPDATE SET state = s.st, fence_token = 5002
 WHEN MATCHED THEN UPDATE SET state = s.st;
\echo :LAST_ERROR_SQLSTATE
-- Every UPDATE action names the token: each row lands, on every version.
MERGE INTO merge_transfers t
USING (SELECT g AS id, 'settled' AS st FROM generate_series(1, 2) g) s ON t.id = s.id
 WHEN MATCHED AND s.id = 99 THEN UPDATE SET state = 'never', fence_token = 5002
 WHEN MATCHED THEN UPDATE SET state = s.st, fence_token = 5002;
SELECT id, state, fence_token FROM merge_transfers ORDER BY id;
-- INSERT actions name the row's token; DELETE actions name none.
MERGE INTO merge_transfers t USING (VALUES (3, 'new')) s(id, st) ON t.id = s.id
 WHEN NOT MATCHED THEN INSERT VALUES (s.id, 'm1', s.st, 5002);
MERGE INTO merge_transfers t USING (VALUES (4, 'new')) s(id, st) ON t.id = s.id
 WHEN NOT MATCHED THEN INSERT VALUES (s.id, 'm1', s.st, 5001);
\echo :LAST_ERROR_SQLSTATE
MERGE INTO merge_transfers t USING (VALUES (3)) s(id) ON t.id = s.id
 WHEN MATCHED THEN DELETE;
\echo :LAST_ERROR_SQLSTATE
SELECT id, state, fence_token FROM merge_transfers ORDER BY id;

-- PostgreSQL 17's WHEN NOT MATCHED BY SOURCE actions, and a MERGE in a WITH
-- clause, are actions like the others (a syntax error before 17).
MERGE INTO merge_transfers t USING (VALUES (9)) s(id) ON t.id = s.id
 WHEN NOT MATCHED BY SOURCE AND t.id = 1 THEN UPDATE SET state = 'by-source'
 WHEN NOT MATCHED BY SOURCE AND t.id = 99 THEN UPDATE SET fence_token = 5002;
\echo :LAST_ERROR_SQLSTATE
WITH m AS (
    MERGE INTO merge_transfers t USING (VALUES (1)) s(id) ON t.id = s.id
     WHEN MATCHED AND s.id = 99 THEN UPDATE SET fence_token = 5002
     WHEN MATCHED THEN UPDATE SET state = 'in-cte'
     RETURNING t.id)
SELECT * FROM m;
\echo :LAST_ERROR_SQLSTATE

-- A partitioned table whose partition orders its columns otherwise: the
-- actions are matched to the partition's own columns.
CREATE TABLE merge_parted (wallet text NOT NULL, id int, state text, fence_token bigint)
    PARTITION BY LIST (wallet);
CREATE TABLE merge_parted_m1 (fence_token bigint, state text, id int, wallet text NOT NULL);
ALTER TABLE merge_parted ATTACH PARTITION merge_parted_m1 FOR VALUES IN ('m1');
SELECT caio_protect('merge_parted', 'fence_token', 'wallet', 'send:');
INSERT INTO merge_parted VALUES ('m1', 1, 'new', 5002);
MERGE INTO merge_parted t USING (VALUES (1)) s(id) ON t.id = s.id
 WHEN MATCHED AND s.id = 99 THEN UPDATE SET fence_token = 5001
 WHEN MATCHED THEN UPDATE SET state = 'stale';
\echo :LAST_ERROR_SQLSTATE
MERGE INTO merge_parted t USING (VALUES (1)) s(id) ON t.id = s.id
 WHEN MATCHED THEN UPDATE SET state = 'parted', fence_token = 5002;
SELECT * FROM merge_parted;

-- Claims: a worker whose claim was taken over cannot finish or release the
-- row through a MERGE action that names no claim token.
CREATE TABLE merge_jobs (id int PRIMARY KEY, state text NOT NULL DEFAULT 'pending');
SELECT caio_claimable('merge_jobs');
INSERT INTO merge_jobs (id) VALUES (1);
SELECT claim_token AS a_token FROM caio_claim(NULL::merge_jobs, 'worker-a', '30 seconds') \gset
SELECT caio_clock_advance('31 seconds');
SELECT claim_token AS b_token FROM caio_claim(NULL::merge_jobs, 'worker-b', '30 seconds') \gset
SELECT :a_token AS a_token, :b_token AS b_token;
MERGE INTO merge_jobs j USING (VALUES (1)) s(id) ON j.id = s.id
 WHEN MATCHED AND false THEN UPDATE SET claim_token = :a_token
 WHEN MATCHED THEN UPDATE SET state = 'done', claim_holder = NULL, claim_expires_at = NULL;
\echo :LAST_ERROR_SQLSTATE
MERGE INTO merge_jobs j USING (VALUES (1)) s(id) ON j.id = s.id
 WHEN MATCHED THEN UPDATE SET state = 'done', claim_holder = NULL, claim_expires_at = NULL,
                              claim_token = :a_token;
\echo :LAST_ERROR_SQLSTATE
-- worker-b finishes it, naming its token in the action that runs.
MERGE INTO merge_jobs j USING (VALUES (1)) s(id) ON j.id = s.id
 WHEN MATCHED THEN UPDATE SET state = 'done', claim_holder = NULL, claim_expires_at = NULL,
                              claim_token = :b_token;
SELECT id, state, claim_holder, claim_token FROM merge_jobs;

-- Versioned tables: an action that does not set the version is refused
-- (LK002), whatever its siblings set.
CREATE TABLE merge_accounts (id int PRIMARY KEY, balance int, version bigint NOT NULL);
SELECT caio_versioned('merge_accounts', 'version');
INSERT INTO merge_accounts VALUES (1, 100, 1);
MERGE INTO merge_accounts a USING (VALUES (1)) s(id) ON a.id = s.id
 WHEN MATCHED AND false THEN UPDATE SET version = 2
 WHEN MATCHED THEN UPDATE SET balance = 0;
\echo :LAST_ERROR_SQLSTATE
MERGE INTO merge_accounts a USING (VALUES (1)) s(id) ON a.id = s.id
 WHEN MATCHED THEN UPDATE SET balance = 90, version = 2;
SELECT * FROM merge_accounts;

-- A MERGE sent as the first statement of a session that never loaded caio
-- (its first row loads it, after the statement started): caio sees it in the
-- portal, but not which action runs, and refuses it (first_statement has
-- more).
\c
SET timezone = 'UTC';
MERGE INTO merge_transfers t USING (VALUES (1, 'fresh-session')) s(id, st) ON t.id = s.id
 WHEN MATCHED AND s.st = 'never' THEN UPDATE SET fence_token = 5001
 WHEN MATCHED THEN UPDATE SET state = s.st;
\echo :LAST_ERROR_SQLSTATE
SELECT id, state, fence_token FROM merge_transfers ORDER BY id;

DROP TABLE merge_transfers, merge_parted, merge_jobs, merge_accounts;
SELECT caio_release(caio_lease_of('send:m1')) AS released;
SELECT caio_clock_reset() IS NOT NULL AS reset;
