-- Work claims: claim, renew, release, finish, expiry and takeover, each
-- write fenced by the row's claim token.
SET timezone = 'UTC';
SET datestyle = 'ISO';
SELECT caio_clock_set('2030-01-01 00:00:00+00');
SELECT setval('caio_token_seq', 8000);

CREATE TABLE operations (
    id      int PRIMARY KEY,
    kind    text NOT NULL,
    state   text NOT NULL DEFAULT 'pending',
    result  text
);
INSERT INTO operations (id, kind) SELECT i, 'send' FROM generate_series(1, 6) i;

-- caio_claimable adds the three columns and the trigger; running it again
-- changes nothing.
SELECT caio_claimable('operations');
SELECT caio_claimable('operations');
SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute
 WHERE attrelid = 'operations'::regclass AND attname LIKE 'claim%' ORDER BY attnum;
SELECT tgname FROM pg_trigger WHERE tgrelid = 'operations'::regclass;

-- Two workers claim: disjoint rows, each with a new token.
SELECT id, claim_holder, claim_token, claim_expires_at
  FROM caio_claim(NULL::operations, 'worker-a', '30 seconds', 2, $$state = 'pending'$$) ORDER BY id;
CREATE TEMP TABLE b_claims AS
SELECT * FROM caio_claim(NULL::operations, 'worker-b', '30 seconds', 3, $$state = 'pending' AND kind = 'send'$$);
SELECT id, claim_holder, claim_token FROM b_claims ORDER BY id;
-- Without a filter, and asking for more than there is: what is left.
SELECT id, claim_holder, claim_token FROM caio_claim(NULL::operations, 'worker-c', '30 seconds', 10);
SELECT count(*) AS nothing_left FROM caio_claim(NULL::operations, 'worker-d', '30 seconds', 10);

-- worker-a finishes row 1 under its token, and ends its claim.
UPDATE operations SET state = 'done', result = 'sent',
       claim_holder = NULL, claim_expires_at = NULL, claim_token = 8001
 WHERE id = 1;
-- Its claim is over: the same finish again (say, retried after a lost
-- reply) names a released claim's token, and is refused (LK001).
UPDATE operations SET state = 'done', result = 'sent',
       claim_holder = NULL, claim_expires_at = NULL, claim_token = 8001
 WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE
-- worker-a renews row 2 for long work.
UPDATE operations SET claim_expires_at = caio_now() + '1 minute', claim_token = 8002 WHERE id = 2;
-- worker-b releases row 3 without finishing: it can be claimed again.
UPDATE operations SET claim_holder = NULL, claim_expires_at = NULL, claim_token = 8003 WHERE id = 3;

-- Refusals: a write that names no token (LK003), another worker's token or
-- a made-up one (LK001), a token on a row never claimed, a DELETE of a row
-- under a live claim.
UPDATE operations SET state = 'done' WHERE id = 4;
\echo :LAST_ERROR_SQLSTATE
UPDATE operations SET state = 'done', claim_token = 8002 WHERE id = 4;
\echo :LAST_ERROR_SQLSTATE
UPDATE operations SET state = 'done', claim_token = 9999 WHERE id = 4;
\echo :LAST_ERROR_SQLSTATE
UPDATE operations SET state = 'done', claim_token = NULL WHERE id = 4;
\echo :LAST_ERROR_SQLSTATE
INSERT INTO operations (id, kind, claim_token) VALUES (7, 'send', 8005);
\echo :LAST_ERROR_SQLSTATE
DELETE FROM operations WHERE id = 4;
\echo :LAST_ERROR_SQLSTATE
-- A new row, and writes to a row never claimed, need no token.
INSERT INTO operations (id, kind) VALUES (7, 'refund');
UPDATE operations SET kind = 'send' WHERE id = 7;

-- The released row is claimed again, with a new token.
SELECT id, claim_holder, claim_token FROM caio_claim(NULL::operations, 'worker-c', '30 seconds', 5, $$id IN (3, 7)$$) ORDER BY id;

-- Time passes: the claims of workers b and c expire (row 2 was renewed).
SELECT caio_clock_advance('31 seconds');
-- An expired claim that nobody took over still fences: its token is the
-- row's newest, so a late finish lands.
UPDATE operations SET state = 'done', result = 'late but unopposed', claim_holder = NULL,
       claim_expires_at = NULL, claim_token = 8004 WHERE id = 4;
-- worker-d takes the other expired claims over; the live one (row 2) stays.
CREATE TEMP TABLE d_claims AS
SELECT * FROM caio_claim(NULL::operations, 'worker-d', '30 seconds', 10, $$state = 'pending'$$);
SELECT id, claim_holder, claim_token FROM d_claims ORDER BY id;
-- The paused worker-b wakes up and finishes row 5 under its token: refused.
UPDATE operations SET state = 'done', result = 'twice',
       claim_token = (SELECT claim_token FROM b_claims WHERE id = 5) WHERE id = 5;
\echo :LAST_ERROR_SQLSTATE
-- worker-d finishes it under its own token.
UPDATE operations SET state = 'done', result = 'sent by d', claim_holder = NULL, claim_expires_at = NULL,
       claim_token = (SELECT claim_token FROM d_claims WHERE id = 5) WHERE id = 5;
-- Rows without a live claim may be deleted.
DELETE FROM operations WHERE id = 1;

SELECT id, state, result, claim_holder, claim_token FROM operations ORDER BY id;

-- A claim inside a transaction that rolls back was never made; its tokens
-- are never handed out again.
BEGIN;
SELECT id, claim_holder, claim_token FROM caio_claim(NULL::operations, 'worker-e', '30 seconds', 1, $$id = 4$$);
ROLLBACK;
SELECT id, claim_holder, claim_token FROM operations WHERE id = 4;

-- Partitioned tables.
CREATE TABLE regional_jobs (id int, region text NOT NULL, state text NOT NULL DEFAULT 'pending') PARTITION BY LIST (region);
CREATE TABLE jobs_eu PARTITION OF regional_jobs FOR VALUES IN ('eu');
CREATE TABLE jobs_us PARTITION OF regional_jobs FOR VALUES IN ('us');
INSERT INTO regional_jobs SELECT i, CASE WHEN i % 2 = 0 THEN 'eu' ELSE 'us' END FROM generate_series(1, 4) i;
SELECT caio_claimable('regional_jobs');
SELECT id, region, claim_holder, claim_token > 0 AS has_token FROM caio_claim(NULL::regional_jobs, 'worker-a', '30 seconds', 10) ORDER BY id;
UPDATE regional_jobs SET state = 'done' WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE
-- A row once claimed cannot move to another partition: the move deletes it
-- under its live claim (LK003), and once the claim has ended, no write
-- names its token any more (LK001).
UPDATE regional_jobs SET region = 'us', claim_token = claim_token WHERE id = 2;
\echo :LAST_ERROR_SQLSTATE
UPDATE regional_jobs SET claim_holder = NULL, claim_expires_at = NULL, claim_token = claim_token WHERE id = 2;
UPDATE regional_jobs SET region = 'us', claim_token = claim_token WHERE id = 2;
\echo :LAST_ERROR_SQLSTATE
SELECT id, region, claim_holder FROM regional_jobs WHERE id = 2;

-- Any column names and shapes: a column named like caio's aliases, a
-- dropped column, columns added after caio_claimable.  The claimed rows
-- come back whole, in the table's rowtype.
CREATE TABLE odd_jobs (t int, dropped text, caio_claimed text, state text DEFAULT 'pending');
INSERT INTO odd_jobs (t, dropped, caio_claimed) VALUES (1, 'x', 'one'), (2, 'y', 'two');
SELECT caio_claimable('odd_jobs');
ALTER TABLE odd_jobs DROP COLUMN dropped;
ALTER TABLE odd_jobs ADD COLUMN added_later int DEFAULT 42;
SELECT t, caio_claimed, state, claim_holder, claim_token > 0 AS has_token, added_later
  FROM caio_claim(NULL::odd_jobs, 'worker-a', '30 seconds', 5, 't = 1');
SELECT (c).t, (c).claim_holder
  FROM (SELECT caio_claim(NULL::odd_jobs, 'worker-b', '30 seconds', 5) AS c) s;

-- A filter may end in a comment; the comment ends where the filter does.
INSERT INTO odd_jobs (t, caio_claimed) VALUES (3, 'three');
SELECT count(*) AS claimed FROM caio_claim(NULL::odd_jobs, 'worker-c', '30 seconds', 5, 'state = ''pending'' -- all of them');

-- A table with inheritance children cannot be made claimable: the trigger
-- on the parent would not guard the children's rows (and a claimable
-- table cannot get children later: sql/altered_tables.sql).
CREATE TABLE parent_jobs (id int, state text DEFAULT 'pending');
CREATE TABLE child_jobs () INHERITS (parent_jobs);
SELECT caio_claimable('parent_jobs');
\echo :LAST_ERROR_SQLSTATE

-- A claim made by a trigger that another claim fired: each claim lets its
-- own rows through, and the outer one carries on after the inner one.
CREATE TABLE batches (id int, state text DEFAULT 'pending');
CREATE TABLE batch_items (id int, batch int, state text DEFAULT 'pending');
INSERT INTO batches SELECT generate_series(1, 2);
INSERT INTO batch_items SELECT i, (i + 1) / 2 FROM generate_series(1, 4) i;
SELECT caio_claimable('batches'), caio_claimable('batch_items');
CREATE TABLE item_claims (batch int, item int, holder text);
CREATE FUNCTION claim_items_of_batch() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO item_claims
    SELECT NEW.id, id, claim_holder
      FROM caio_claim(NULL::batch_items, NEW.claim_holder || '/items', '30 seconds', 10,
                      format('batch = %s', NEW.id));
    RETURN NEW;
END $$;
CREATE TRIGGER claim_items AFTER UPDATE OF claim_token ON batches
    FOR EACH ROW EXECUTE FUNCTION claim_items_of_batch();
SELECT id, claim_holder FROM caio_claim(NULL::batches, 'worker-a', '30 seconds', 2) ORDER BY id;
SELECT * FROM item_claims ORDER BY item;
SELECT count(*) AS items_with_tokens FROM batch_items WHERE claim_token IS NOT NULL;

-- A large claim is taken in chunks (of 64 rows): every row gets its own
-- token, and each row's token is the one its worker can finish it with.
CREATE TABLE bulk_jobs (id int PRIMARY KEY, done boolean NOT NULL DEFAULT false);
SELECT caio_claimable('bulk_jobs');
INSERT INTO bulk_jobs (id) SELECT generate_series(1, 300);
CREATE TEMP TABLE bulk_claims AS
SELECT id, claim_token FROM caio_claim(NULL::bulk_jobs, 'worker-bulk', '30 seconds', 200);
SELECT count(*) AS claimed, count(DISTINCT c.claim_token) AS distinct_tokens,
       bool_and(j.claim_token = c.claim_token) AS rows_hold_their_tokens
  FROM bulk_claims c JOIN bulk_jobs j USING (id);
UPDATE bulk_jobs j SET done = true, claim_token = c.claim_token
  FROM bulk_claims c WHERE j.id = c.id;
SELECT count(*) FILTER (WHERE done) AS finished, count(*) FILTER (WHERE claim_holder IS NULL) AS unclaimed
  FROM bulk_jobs;

-- The filter is tested before a row's expiry, so that the finished rows
-- that fill a queue are passed over by the filter alone.  Two rows under
-- live claims come before a free one in the table: a filter that counts its
-- calls is asked about all three.
CREATE TABLE counted_jobs (id int PRIMARY KEY);
SELECT caio_claimable('counted_jobs');
INSERT INTO counted_jobs VALUES (1), (2);
SELECT count(*) AS claimed FROM caio_claim(NULL::counted_jobs, 'worker-a', '30 seconds', 2);
INSERT INTO counted_jobs VALUES (3);
CREATE SEQUENCE filter_calls;
CREATE FUNCTION counted(id int) RETURNS boolean LANGUAGE plpgsql COST 1
    AS $$ BEGIN PERFORM nextval('filter_calls'); RETURN true; END $$;
SELECT id FROM caio_claim(NULL::counted_jobs, 'worker-b', '30 seconds', 1, 'counted(id)');
SELECT last_value AS filter_calls FROM filter_calls;

DROP TABLE operations, regional_jobs, odd_jobs, parent_jobs, child_jobs,
    batches, batch_items, item_claims, bulk_jobs, counted_jobs;
DROP FUNCTION counted(int);
DROP SEQUENCE filter_calls;
DROP FUNCTION claim_items_of_batch();
SELECT caio_clock_reset() IS NOT NULL AS reset;
