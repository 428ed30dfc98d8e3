-- Claims in an order (order_by): the rows first in the order are claimed
-- first and returned first; the order is a sort list of the table's
-- columns and nothing else; the statements are kept per table, filter and
-- order.
SET timezone = 'UTC';
SET datestyle = 'ISO';
SELECT caio_clock_set('2030-01-01 00:00:00+00');

CREATE TABLE order_jobs (
    id       int PRIMARY KEY,
    priority int NOT NULL,
    run_at   timestamptz,
    "Queue"  text NOT NULL DEFAULT 'main',
    state    text NOT NULL DEFAULT 'pending',
    shape    point
);
INSERT INTO order_jobs (id, priority, run_at)
SELECT i, i % 3, CASE WHEN i % 4 = 0 THEN NULL
                      ELSE '2030-01-01'::timestamptz + (20 - i) * interval '1 minute' END
  FROM generate_series(1, 12) i;
SELECT caio_claimable('order_jobs');
-- The index a priority queue would have: filter and order.
CREATE INDEX jobs_pending_by_priority ON order_jobs (priority DESC, run_at, id) WHERE state = 'pending';

-- The highest priority first, the earliest run_at among equals, then id:
-- returned in that order, with tokens that rise along it.
CREATE TEMP TABLE first_claim AS
SELECT row_number() OVER () AS n, * FROM caio_claim(NULL::order_jobs, 'worker-a', '30 seconds', 4,
    $$state = 'pending'$$, 'priority DESC, run_at, id');
SELECT n, id, priority, run_at, claim_holder FROM first_claim ORDER BY n;
SELECT bool_and(claim_token > prev) AS tokens_rise_in_order
  FROM (SELECT claim_token, lag(claim_token) OVER (ORDER BY n) AS prev FROM first_claim) t;
-- A second claimer with the same order gets the next rows, none of the first's.
SELECT id, priority, run_at, claim_holder
  FROM caio_claim(NULL::order_jobs, 'worker-b', '30 seconds', 3, $$state = 'pending'$$,
                  'priority DESC, run_at, id');
-- The rest, in the same order.
SELECT id, priority, run_at, claim_holder
  FROM caio_claim(NULL::order_jobs, 'worker-c', '30 seconds', 10, $$state = 'pending'$$,
                  'priority DESC, run_at, id');
SELECT count(*) AS nothing_left
  FROM caio_claim(NULL::order_jobs, 'worker-d', '30 seconds', 10, $$state = 'pending'$$,
                  'priority DESC, run_at, id');

-- Release every claim (under its token), and order by other keys.
\set release 'UPDATE order_jobs SET claim_holder = NULL, claim_expires_at = NULL, claim_token = claim_token WHERE claim_holder IS NOT NULL'
:release;
-- NULLs sort last in ascending order, unless NULLS FIRST says otherwise.
SELECT id, run_at FROM caio_claim(NULL::order_jobs, 'worker-a', '30 seconds', 3, NULL, 'run_at NULLS FIRST, id');
:release;
SELECT id, run_at FROM caio_claim(NULL::order_jobs, 'worker-a', '30 seconds', 2, NULL, 'run_at DESC NULLS LAST');
:release;
SELECT id, run_at FROM caio_claim(NULL::order_jobs, 'worker-a', '30 seconds', 2, NULL, 'run_at ASC');
:release;
-- Keys in any case and spacing, a quoted column name, a trailing comment.
SELECT id, priority FROM caio_claim(NULL::order_jobs, 'worker-a', '30 seconds', 2, NULL,
    E'"Queue" asc,\n  PRIORITY desc nulls first , Id DESC -- the newest first');
:release;
-- A filter and an order together.
SELECT id, priority, run_at FROM caio_claim(NULL::order_jobs, 'worker-a', '30 seconds', 10,
    'priority = 1', 'id DESC');
-- Without order_by, the claim takes rows as before (the plan's order).
SELECT count(*) AS claimed FROM caio_claim(NULL::order_jobs, 'worker-a', '30 seconds', 10);
:release;

-- An order that is not a sort list of the table's columns is refused (a
-- syntax error, 42601), before any row is touched.
SELECT * FROM caio_claim(NULL::order_jobs, 'worker-e', '30 seconds', 1, NULL, 'id; DELETE FROM order_jobs');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM caio_claim(NULL::order_jobs, 'worker-e', '30 seconds', 1, NULL, E'id\n;\nDROP TABLE order_jobs');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM caio_claim(NULL::order_jobs, 'worker-e', '30 seconds', 1, NULL, '(SELECT max(id) FROM pg_authid)');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM caio_claim(NULL::order_jobs, 'worker-e', '30 seconds', 1, NULL, 'no_such_column, (SELECT 1 FROM order_jobs LIMIT 1)');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM caio_claim(NULL::order_jobs, 'worker-e', '30 seconds', 1, NULL, 'EXISTS (SELECT FROM order_jobs)');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM caio_claim(NULL::order_jobs, 'worker-e', '30 seconds', 1, NULL, 'id) UNION (SELECT 1');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM caio_claim(NULL::order_jobs, 'worker-e', '30 seconds', 1, NULL, 'pg_sleep(1)');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM caio_claim(NULL::order_jobs, 'worker-e', '30 seconds', 1, NULL, 'random()');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM caio_claim(NULL::order_jobs, 'worker-e', '30 seconds', 1, NULL, 'priority + 1');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM caio_claim(NULL::order_jobs, 'worker-e', '30 seconds', 1, NULL, '1');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM caio_claim(NULL::order_jobs, 'worker-e', '30 seconds', 1, NULL, 'order_jobs.id');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM caio_claim(NULL::order_jobs, 'worker-e', '30 seconds', 1, NULL, '*');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM caio_claim(NULL::order_jobs, 'worker-e', '30 seconds', 1, NULL, 'id USING <');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM caio_claim(NULL::order_jobs, 'worker-e', '30 seconds', 1, NULL, 'id COLLATE "C"');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM caio_claim(NULL::order_jobs, 'worker-e', '30 seconds', 1, NULL, 'id LIMIT 1');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM caio_claim(NULL::order_jobs, 'worker-e', '30 seconds', 1, NULL, 'id OFFSET 5');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM caio_claim(NULL::order_jobs, 'worker-e', '30 seconds', 1, NULL, 'id FOR SHARE');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM caio_claim(NULL::order_jobs, 'worker-e', '30 seconds', 1, NULL, 'id /*');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM caio_claim(NULL::order_jobs, 'worker-e', '30 seconds', 1, NULL, 'id,');
\echo :LAST_ERROR_SQLSTATE
-- A name that is not a column of the table (42703), a system column, a
-- column whose type has no ordering (42883).
SELECT * FROM caio_claim(NULL::order_jobs, 'worker-e', '30 seconds', 1, NULL, 'no_such_column');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM caio_claim(NULL::order_jobs, 'worker-e', '30 seconds', 1, NULL, 'queue');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM caio_claim(NULL::order_jobs, 'worker-e', '30 seconds', 1, NULL, 'ctid');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM caio_claim(NULL::order_jobs, 'worker-e', '30 seconds', 1, NULL, 'shape');
\echo :LAST_ERROR_SQLSTATE
-- An empty or blank order (22023).
SELECT * FROM caio_claim(NULL::order_jobs, 'worker-e', '30 seconds', 1, NULL, '');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM caio_claim(NULL::order_jobs, 'worker-e', '30 seconds', 1, NULL, E' \n\t');
\echo :LAST_ERROR_SQLSTATE
-- None of them claimed a row, and the table is as it was.
SELECT count(*) AS rows_kept, count(*) FILTER (WHERE claim_holder = 'worker-e') AS claimed_by_e FROM order_jobs;

-- The statements are prepared once per table, filter and order, and kept:
-- caio says so (DEBUG1) when it prepares, and says nothing when it finds them.
SET client_min_messages = debug1;
SELECT id FROM caio_claim(NULL::order_jobs, 'worker-f', '1 second', 1, NULL, 'id DESC');
SELECT id FROM caio_claim(NULL::order_jobs, 'worker-f', '1 second', 1, NULL, 'id DESC');
SELECT id FROM caio_claim(NULL::order_jobs, 'worker-f', '1 second', 1, NULL, 'id');
SELECT id FROM caio_claim(NULL::order_jobs, 'worker-f', '1 second', 1, NULL, 'id DESC');
SELECT id FROM caio_claim(NULL::order_jobs, 'worker-f', '1 second', 1, $$state = 'pending'$$, 'id DESC');
SELECT id FROM caio_claim(NULL::order_jobs, 'worker-f', '1 second', 1, $$state = 'pending'$$, 'id DESC');
SELECT id FROM caio_claim(NULL::order_jobs, 'worker-f', '1 second', 1, $$state = 'pending'$$);
RESET client_min_messages;

-- With the index that matches filter and order, the claim reads the index
-- in order and stops at max_rows: its cost does not grow with the rows the
-- filter leaves out.
INSERT INTO order_jobs (id, priority, run_at, state)
SELECT i, i % 5, '2030-01-01'::timestamptz + i * interval '1 second', 'done'
  FROM generate_series(100, 20099) i;
ANALYZE order_jobs;
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF)
SELECT tableoid, ctid FROM ONLY order_jobs WHERE (state = 'pending')
   AND (claim_token IS NULL OR claim_expires_at IS NULL OR claim_expires_at <= (caio_now() + '0'::interval))
 ORDER BY priority DESC, run_at, id LIMIT 10 FOR UPDATE SKIP LOCKED;
RESET plan_cache_mode;

-- A BEFORE UPDATE trigger that fires after caio's (its name sorts after
-- caio_claim) and changes the claim token: the claim hands the rows out as
-- they were written, with an order as without one.
:release;
CREATE FUNCTION shift_claim_token() RETURNS trigger LANGUAGE plpgsql AS
    $$BEGIN IF NEW.claim_holder = 'worker-g' THEN NEW.claim_token := -NEW.claim_token; END IF; RETURN NEW; END$$;
CREATE TRIGGER zz_shift_claim_token BEFORE UPDATE ON order_jobs
    FOR EACH ROW EXECUTE FUNCTION shift_claim_token();
SELECT id, claim_token < 0 AS token_changed
  FROM caio_claim(NULL::order_jobs, 'worker-g', '30 seconds', 2, $$state = 'pending'$$) ORDER BY id;
SELECT id, claim_token < 0 AS token_changed
  FROM caio_claim(NULL::order_jobs, 'worker-g', '30 seconds', 2, $$state = 'pending'$$, 'id DESC') ORDER BY id;
DROP TRIGGER zz_shift_claim_token ON order_jobs;

-- A partitioned table, in order across its partitions.
CREATE TABLE part_jobs (id int, priority int NOT NULL, state text NOT NULL DEFAULT 'pending')
    PARTITION BY RANGE (id);
CREATE TABLE part_jobs_1 PARTITION OF part_jobs FOR VALUES FROM (1) TO (6);
CREATE TABLE part_jobs_2 PARTITION OF part_jobs FOR VALUES FROM (6) TO (11);
INSERT INTO part_jobs (id, priority) SELECT i, (i * 7) % 10 FROM generate_series(1, 10) i;
SELECT caio_claimable('part_jobs');
SELECT id, priority FROM caio_claim(NULL::part_jobs, 'worker-a', '30 seconds', 4, NULL, 'priority DESC');
SELECT tableoid::regclass AS part, count(*) AS claimed FROM part_jobs
 WHERE claim_holder IS NOT NULL GROUP BY 1 ORDER BY 1;

DROP TABLE order_jobs, part_jobs;
DROP FUNCTION shift_claim_token();
SELECT caio_clock_reset() IS NOT NULL AS reset;
