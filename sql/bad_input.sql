-- Bad input, systematically: every SQL-callable function of caio gets NULL
-- for each argument, empty and over-long names, negative, zero, huge and
-- infinite intervals and timestamps, absurd numbers, malformed addresses and
-- hashes, unknown tables and columns, and wrong row types.  Each call must
-- fail with a clear message and PostgreSQL's or caio's SQLSTATE (never
-- XX000, never a crash), and together they must change nothing.
--
-- The *_errors suites show single errors in full, with detail and hint; this
-- suite is the sweep: one row per call, built from lists of bad values so
-- that no function or argument is left out.
SET timezone = 'UTC';
SET datestyle = 'ISO';
SET intervalstyle = 'postgres';
-- February: '1 mon -29 days' then ends before it starts.
SELECT caio_clock_set('2030-02-01 00:00:00+00');
-- Tokens from here on are 9001, 9002, ... whatever earlier suites drew.
SELECT setval('caio_token_seq', 9000);

------------------------------------------------------------------------------
-- Something to damage: a live lease and a released one, a wallet with
-- reservations (one broadcast, one under the lease), a protected and
-- versioned table with a row, and a claimable table with claimed rows.
------------------------------------------------------------------------------
SELECT resource, holder, token, expires_at FROM caio_acquire('bad:held', 'worker-a', '10 minutes');
SELECT caio_release(caio_acquire('bad:gone', 'worker-a', '10 minutes')) AS released;

-- The wallet's address, short enough to read in the calls below.
CREATE FUNCTION wallet() RETURNS text IMMUTABLE LANGUAGE sql
    AS $$SELECT '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed'$$;
SELECT caio_nonce_reserve(90, wallet()) AS nonce FROM generate_series(1, 3);
SELECT caio_nonce_mark(90, wallet(), 0, 'broadcast', '0x' || repeat('ab', 32));
SELECT caio_nonce_reserve(90, wallet(), caio_lease_of('bad:held')) AS nonce_under_lease;

-- A column of every kind that caio_protect and caio_versioned must refuse.
CREATE TABLE bad_sends (wallet text PRIMARY KEY, amount int, fence_token bigint,
                        version int, small_token int, sent_at timestamptz, doc jsonb,
                        doubled int GENERATED ALWAYS AS (amount * 2) STORED, gone bigint);
ALTER TABLE bad_sends DROP COLUMN gone;
SELECT caio_protect('bad_sends', 'fence_token', 'wallet', 'bad:send:');
SELECT caio_versioned('bad_sends', 'version');
INSERT INTO bad_sends (wallet, amount, fence_token, version)
    SELECT '0xa', 5, token, 1 FROM caio_acquire('bad:send:0xa', 'worker-a', '10 minutes');

CREATE TABLE bad_jobs (id int PRIMARY KEY, state text);
SELECT caio_claimable('bad_jobs');
INSERT INTO bad_jobs (id, state) VALUES (1, 'pending'), (2, 'pending'), (3, 'done');
SELECT id, claim_holder, claim_token, claim_expires_at
  FROM caio_claim(NULL::bad_jobs, 'worker-a', '5 minutes', 2, $$state = 'pending'$$)
 ORDER BY id;

-- Relations of the wrong kind or shape.
CREATE TABLE bad_int_token (id int, claim_token int);
CREATE TABLE bad_naive_expiry (id int, claim_expires_at timestamp);
CREATE TABLE bad_generated_token (id int, claim_token bigint GENERATED ALWAYS AS (id) STORED);
CREATE TABLE bad_parent (id int, wallet text, fence_token bigint, version int);
CREATE TABLE bad_child () INHERITS (bad_parent);
CREATE VIEW bad_view AS SELECT * FROM bad_jobs;
CREATE MATERIALIZED VIEW bad_matview AS SELECT 1 AS id;
CREATE TYPE bad_composite AS (id int, claim_token bigint);
CREATE SEQUENCE bad_seq;

------------------------------------------------------------------------------
-- caio's whole state, as rows of text: its tables, the token sequence, and
-- the triggers, relations and columns of the schema (caio_protect,
-- caio_versioned and caio_claimable add triggers and columns), plus the
-- rows of the two guarded tables.  Taken now and compared at the end.
------------------------------------------------------------------------------
CREATE TEMP VIEW caio_state (part, item) AS
          SELECT 'lease', l::text FROM caio_lease_state l
UNION ALL SELECT 'wallet', w::text FROM caio_nonce_wallet w
UNION ALL SELECT 'reservation', r::text FROM caio_nonce_reservation r
UNION ALL SELECT 'clock', c::text FROM caio_clock c
UNION ALL SELECT 'token_seq', row(s.last_value, s.is_called)::text FROM caio_token_seq s
UNION ALL SELECT 'token_epoch', e::text FROM caio_token_epoch e
UNION ALL SELECT 'trigger', row(t.tgrelid::regclass, t.tgname, t.tgfoid::regproc, t.tgtype,
                                t.tgenabled, t.tgargs)::text
            FROM pg_trigger t WHERE NOT t.tgisinternal
UNION ALL SELECT 'relation', row(c.oid::regclass, c.relkind)::text
            FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace
UNION ALL SELECT 'column', row(a.attrelid::regclass, a.attnum, a.attname, a.atttypid::regtype,
                               a.attgenerated, a.attidentity)::text
            FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
           WHERE c.relnamespace = 'public'::regnamespace AND a.attnum > 0 AND NOT a.attisdropped
UNION ALL SELECT 'bad_sends', s::text FROM bad_sends s
UNION ALL SELECT 'bad_jobs', j::text FROM bad_jobs j;
CREATE TEMP TABLE state_before AS SELECT * FROM caio_state;

------------------------------------------------------------------------------
-- try(call): the SQLSTATE and message of SELECT <call>, rolled back.
------------------------------------------------------------------------------
\i test/regress/try.sql

-- Every call of the sweep, in order.  UNIQUE: a list that repeats itself
-- fails here rather than counting twice.
CREATE TEMP TABLE calls (n serial PRIMARY KEY, call text NOT NULL UNIQUE);

-- Each call of a template with each bad value, template by template.
CREATE PROCEDURE add_calls(templates text[], bad_values text[]) LANGUAGE sql AS $$
    INSERT INTO calls (call)
    SELECT format(t.template, v.value)
      FROM unnest(templates) WITH ORDINALITY AS t(template, i)
     CROSS JOIN unnest(bad_values) WITH ORDINALITY AS v(value, j)
     ORDER BY t.i, v.j
$$;

------------------------------------------------------------------------------
-- Names: resource and holder are 1 to 255 bytes (bytes: 128 'é' are 256),
-- wherever they appear, also inside a lease argument.
------------------------------------------------------------------------------
CALL add_calls(ARRAY[
    $$caio_acquire(%s, 'worker-a', '1 minute')$$,
    $$caio_acquire('bad:r', %s, '1 minute')$$,
    $$caio_lease_of(%s)$$,
    $$caio_renew(ROW(%s, 'worker-a', 9001, NULL, NULL)::caio_lease, '1 minute')$$,
    $$caio_renew(ROW('bad:held', %s, 9001, NULL, NULL)::caio_lease, '1 minute')$$,
    $$caio_release(ROW(%s, 'worker-a', 9001, NULL, NULL)::caio_lease)$$,
    $$caio_release(ROW('bad:held', %s, 9001, NULL, NULL)::caio_lease)$$,
    $$caio_use(ROW(%s, 'worker-a', 9001, NULL, NULL)::caio_lease)$$,
    $$caio_use(ROW('bad:held', %s, 9001, NULL, NULL)::caio_lease)$$,
    $$caio_nonce_reserve(90, wallet(), ROW(%s, 'worker-a', 9001, NULL, NULL)::caio_lease)$$,
    $$caio_nonce_reserve(90, wallet(), ROW('bad:held', %s, 9001, NULL, NULL)::caio_lease)$$,
    $$caio_nonce_mark(90, wallet(), 3, 'signed', NULL, ROW(%s, 'worker-a', 9001, NULL, NULL)::caio_lease)$$,
    $$caio_nonce_mark(90, wallet(), 3, 'signed', NULL, ROW('bad:held', %s, 9001, NULL, NULL)::caio_lease)$$,
    $$caio_claim(NULL::bad_jobs, %s, '1 minute')$$],
  ARRAY[$$NULL$$, $$''$$, $$repeat('r', 256)$$, $$repeat('é', 128)$$]);

------------------------------------------------------------------------------
-- Lease arguments: NULL, fields missing, tokens that cannot exist, and
-- (where a current lease is required) tokens that are not current.
-- renew and release of a lease that is merely not current are not errors:
-- they return NULL and false (see the last section).
------------------------------------------------------------------------------
CALL add_calls(ARRAY[
    $$caio_renew(%s, '1 minute')$$,
    $$caio_release(%s)$$,
    $$caio_use(%s)$$],
  ARRAY[$$NULL$$]);
CALL add_calls(ARRAY[
    $$caio_renew(%s, '1 minute')$$,
    $$caio_release(%s)$$,
    $$caio_use(%s)$$,
    $$caio_nonce_reserve(90, wallet(), %s)$$,
    $$caio_nonce_mark(90, wallet(), 3, 'signed', NULL, %s)$$],
  ARRAY[$$ROW(NULL, NULL, NULL, NULL, NULL)::caio_lease$$,
        $$ROW('bad:held', 'worker-a', NULL, NULL, NULL)::caio_lease$$,
        $$ROW('bad:held', 'worker-a', 0, NULL, NULL)::caio_lease$$,
        $$ROW('bad:held', 'worker-a', -1, NULL, NULL)::caio_lease$$,
        $$ROW('bad:held', 'worker-a', -9223372036854775808, NULL, NULL)::caio_lease$$]);
CALL add_calls(ARRAY[
    $$caio_use(%s)$$,
    $$caio_nonce_reserve(90, wallet(), %s)$$,
    $$caio_nonce_mark(90, wallet(), 3, 'signed', NULL, %s)$$],
  ARRAY[$$ROW('bad:held', 'worker-a', 424242, NULL, NULL)::caio_lease$$,
        $$ROW('bad:held', 'worker-b', 9001, NULL, NULL)::caio_lease$$,
        $$ROW('bad:gone', 'worker-a', 9002, NULL, NULL)::caio_lease$$,
        $$ROW('bad:never', 'worker-a', 9001, NULL, NULL)::caio_lease$$]);
-- Not a caio_lease at all: PostgreSQL refuses these before caio runs.
INSERT INTO calls (call) VALUES
    ($$caio_renew(ROW('bad:held', 'worker-a', 9001)::caio_lease, '1 minute')$$),
    ($$caio_renew(ROW('bad:held', 'worker-a', 'one', NULL, NULL)::caio_lease, '1 minute')$$),
    ($$caio_release('bad:held')$$),
    ($$caio_use(ROW('bad:held', 'worker-a', 9001))$$);

------------------------------------------------------------------------------
-- Intervals.  ttl: positive and at most 366 days, both with months counted
-- as 30 days and by the calendar from now.  wait: 0 to 1 day.  step: not
-- negative in any field.  Infinite intervals, which PostgreSQL 15 cannot
-- even parse, are swept by the suite versions.
------------------------------------------------------------------------------
CALL add_calls(ARRAY[
    $$caio_acquire('bad:r', 'worker-a', %s)$$,
    $$caio_renew(caio_lease_of('bad:held'), %s)$$,
    $$caio_claim(NULL::bad_jobs, 'worker-a', %s)$$],
  ARRAY[$$NULL$$, $$'0'$$, $$'-1 second'$$, $$'-178000000 years'$$,
        $$'1 mon -30 days'$$, $$'1 mon -29 days'$$, $$'366 days 00:00:00.000001'$$,
        $$'13 mons'$$, $$'1000000 years'$$, $$'178000000 years'$$,
        $$'71000001 mons -2130000000 days'$$,
        $$'1000 mons -29634 days'$$, $$'2000000 mons -59999634 days'$$]);
CALL add_calls(ARRAY[$$caio_acquire('bad:r', 'worker-a', '1 minute', %s)$$],
  ARRAY[$$NULL$$, $$'-1 second'$$, $$'-178000000 years'$$, $$'1 day 00:00:00.000001'$$,
        $$'1 mon'$$, $$'1000000 years'$$, $$'178000000 years'$$]);
-- older_than: not negative, in any field's sense or by the calendar
-- (February 2030 less 1 month plus 32 days is in the future).
CALL add_calls(ARRAY[$$caio_lease_purge(%s)$$],
  ARRAY[$$NULL$$, $$'-1 second'$$, $$'-178000000 years'$$, $$'1 mon -32 days'$$,
        $$'178000000 years'$$]);
CALL add_calls(ARRAY[$$caio_clock_advance(%s)$$],
  ARRAY[$$NULL$$, $$'-1 second'$$, $$'-178000000 years'$$, $$'1 day -1 second'$$,
        $$'-1 mon 31 days'$$, $$'1000000 years'$$, $$'178000000 years'$$]);
CALL add_calls(ARRAY[$$caio_clock_set(%s)$$],
  ARRAY[$$NULL$$, $$'infinity'$$, $$'-infinity'$$, $$'294277-01-01 00:00:00+00'$$,
        $$'4714-11-23 00:00:00+00 BC'$$, $$'never'$$]);

------------------------------------------------------------------------------
-- Numbers.  chain_id: positive.  Nonces: 0 to 2^53 - 1; counts: 0 to 2^53
-- (every nonce used).  max_rows: 1 to 10000.
------------------------------------------------------------------------------
CALL add_calls(ARRAY[
    $$caio_nonce_reserve(%s, wallet())$$,
    $$caio_nonce_release(%s, wallet(), 0)$$,
    $$caio_nonce_sync(%s, wallet(), 0)$$,
    $$caio_nonce_mark(%s, wallet(), 0, 'mined')$$],
  ARRAY[$$NULL$$, $$0$$, $$-1$$, $$-9223372036854775808$$]);
CALL add_calls(ARRAY[
    $$caio_nonce_release(90, wallet(), %s)$$,
    $$caio_nonce_mark(90, wallet(), %s, 'signed')$$],
  ARRAY[$$NULL$$, $$-1$$, $$-9223372036854775808$$, $$9007199254740992$$,
        $$9223372036854775807$$]);
CALL add_calls(ARRAY[$$caio_nonce_sync(90, wallet(), %s)$$],
  ARRAY[$$NULL$$, $$-1$$, $$-9223372036854775808$$, $$9007199254740993$$,
        $$9223372036854775807$$]);
CALL add_calls(ARRAY[$$caio_claim(NULL::bad_jobs, 'worker-a', '1 minute', %s)$$],
  ARRAY[$$NULL$$, $$0$$, $$-1$$, $$-2147483648$$, $$10001$$, $$2147483647$$]);

------------------------------------------------------------------------------
-- Addresses: 0x and 40 hex digits; mixed case must carry the EIP-55
-- checksum (the wallet's is 0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed).
-- caio_address_checksum is STRICT: NULL gives NULL (last section).
------------------------------------------------------------------------------
CALL add_calls(ARRAY[
    $$caio_nonce_reserve(90, %s)$$,
    $$caio_nonce_release(90, %s, 0)$$,
    $$caio_nonce_sync(90, %s, 0)$$,
    $$caio_nonce_mark(90, %s, 0, 'mined')$$],
  ARRAY[$$NULL$$]);
CALL add_calls(ARRAY[
    $$caio_nonce_reserve(90, %s)$$,
    $$caio_nonce_release(90, %s, 0)$$,
    $$caio_nonce_sync(90, %s, 0)$$,
    $$caio_nonce_mark(90, %s, 0, 'mined')$$,
    $$caio_address_checksum(%s)$$],
  ARRAY[$$''$$,
        $$'0x'$$,
        $$'0x5aaeb6'$$,
        $$'0x5aaeb6053f3e94c9b9a09f33669435e7ef1beae'$$,      -- 39 digits
        $$'0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed0'$$,    -- 41 digits
        $$'0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed000'$$,  -- 43 digits
        $$'5aaeb6053f3e94c9b9a09f33669435e7ef1beaed'$$,       -- no 0x
        $$'005aaeb6053f3e94c9b9a09f33669435e7ef1beaed'$$,     -- 0 instead of x
        $$'0x5aaeb6053f3e94c9b9a09f33669435e7ef1beagg'$$,     -- not hex
        $$'0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaé'$$,      -- 42 bytes, é not hex
        $$'0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaedé'$$,    -- 40 digits and é
        $$' 0x5aaeb6053f3e94c9b9a09f33669435e7ef1beae'$$,
        $$'0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed '$$,
        $$'0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD'$$,     -- checksum, last letter wrong
        $$'0x5AAeb6053F3E94C9b9A09f33669435E7Ef1BeAed'$$,     -- checksum, first letter wrong
        $$'0X5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed'$$,     -- 0X: ethers refuses it too
        $$'0X5aaeb6053f3e94c9b9a09f33669435e7ef1beaed'$$,
        $$'0x' || repeat('ab', 30)$$,
        $$'0x' || repeat('é', 50000)$$]);                     -- 100 kB: quoted cut short

------------------------------------------------------------------------------
-- Nonce states and moves, and transaction hashes (0x and 64 hex digits).
-- Nonce 0 is broadcast, 1 and 2 reserved, 3 reserved under the lease.
------------------------------------------------------------------------------
CALL add_calls(ARRAY[$$caio_nonce_mark(90, wallet(), 1, %s)$$],
  ARRAY[$$NULL$$, $$''$$, $$'sent'$$, $$'Signed'$$, $$' signed'$$, $$'reserved'$$,
        $$'dropped'$$, $$repeat('s', 100000)$$]);
INSERT INTO calls (call) VALUES
    ($$caio_nonce_mark(90, wallet(), 0, 'released')$$),
    ($$caio_nonce_mark(90, wallet(), 0, 'signed')$$),
    ($$caio_nonce_mark(90, wallet(), 99, 'signed')$$),
    ($$caio_nonce_mark(90, wallet(), 3, 'signed')$$),
    ($$caio_nonce_release(90, wallet(), 0)$$),
    ($$caio_nonce_release(90, wallet(), 3)$$);
CALL add_calls(ARRAY[$$caio_nonce_mark(90, wallet(), 1, 'signed', %s)$$],
  ARRAY[$$''$$, $$'0x'$$, $$'0x1234'$$,
        $$repeat('ab', 33)$$,
        $$'0x' || repeat('a', 63)$$,
        $$'0x' || repeat('a', 65)$$,
        $$'0x' || repeat('zz', 32)$$,
        $$'0x' || repeat('é', 32)$$,
        $$' 0x' || repeat('ab', 32)$$,
        $$'0X' || repeat('ab', 32)$$,
        $$'0x' || repeat('ab', 40)$$,
        $$'0x' || repeat('ab', 50000)$$]);

------------------------------------------------------------------------------
-- Tables: caio guards ordinary and partitioned tables that the caller owns,
-- without inheritance children.
------------------------------------------------------------------------------
CALL add_calls(ARRAY[
    $$caio_protect(%s, 'fence_token', 'wallet')$$,
    $$caio_versioned(%s, 'version')$$,
    $$caio_claimable(%s)$$],
  ARRAY[$$NULL$$, $$'no_such_table'$$,
        $$'0'$$, $$12345678::oid::regclass$$,
        $$'bad_view'$$, $$'bad_matview'$$, $$'bad_composite'$$, $$'bad_seq'$$,
        $$'bad_jobs_pkey'$$, $$'bad_parent'$$]);
-- caio's own tables and PostgreSQL's catalogs, with columns that fit: refused
-- even to the superuser who owns them, since a trigger or claim columns
-- there would break caio or PostgreSQL.
INSERT INTO calls (call) VALUES
    ($$caio_protect('caio_lease_state', 'token', 'resource')$$),
    ($$caio_protect('caio_nonce_reservation', 'token', 'address')$$),
    ($$caio_versioned('caio_nonce_wallet', 'next_nonce')$$),
    ($$caio_claimable('caio_nonce_wallet')$$),
    ($$caio_claimable('caio_clock')$$),
    ($$caio_claimable('caio_leases')$$),
    ($$caio_claimable('caio_token_seq')$$),
    ($$caio_protect('pg_catalog.pg_sequence', 'seqstart', 'seqincrement')$$),
    ($$caio_versioned('pg_catalog.pg_class', 'relpages')$$),
    ($$caio_claimable('pg_catalog.pg_description')$$);

-- Columns: they must exist (names are never SQL: a "column" holding SQL is
-- just a name that does not exist), be plain stored columns, have the
-- right type, and differ.
CALL add_calls(ARRAY[
    $$caio_protect('bad_sends', %s, 'wallet')$$,
    $$caio_protect('bad_sends', 'fence_token', %s)$$,
    $$caio_versioned('bad_sends', %s)$$],
  ARRAY[$$NULL$$, $$''$$, $$'no_such_column'$$, $$'Fence_Token'$$,
        $$'fence_token; DROP TABLE bad_sends'$$, $$repeat('x', 100)$$,
        $$'ctid'$$, $$'........pg.dropped.9........'$$, $$'doubled'$$, $$'doc'$$]);
INSERT INTO calls (call) VALUES
    ($$caio_protect('bad_sends', 'wallet', 'wallet')$$),
    ($$caio_protect('bad_sends', 'small_token', 'wallet')$$),
    ($$caio_protect('bad_sends', 'fence_token', 'fence_token')$$),
    ($$caio_protect('bad_sends', 'fence_token', 'sent_at')$$),
    ($$caio_versioned('bad_sends', 'wallet')$$),
    ($$caio_versioned('bad_sends', 'sent_at')$$);
-- The prefix: a resource is at most 255 bytes, prefix included.
CALL add_calls(ARRAY[$$caio_protect('bad_sends', 'fence_token', 'wallet', %s)$$],
  ARRAY[$$NULL$$, $$repeat('p', 255)$$, $$repeat('é', 128)$$]);
-- Claim columns that are there but wrong.
CALL add_calls(ARRAY[$$caio_claimable(%s)$$],
  ARRAY[$$'bad_int_token'$$, $$'bad_naive_expiry'$$, $$'bad_generated_token'$$]);

------------------------------------------------------------------------------
-- caio_claim's row type must name a claimable table; its filter must be one
-- boolean expression over the table's columns that runs, its order a list
-- of the table's columns.
------------------------------------------------------------------------------
CALL add_calls(ARRAY[$$caio_claim(%s, 'worker-a', '1 minute')$$],
  ARRAY[$$NULL$$, $$NULL::record$$, $$NULL::int$$, $$42$$, $$NULL::text$$,
        $$NULL::int[]$$, $$ROW(1, 'pending')$$, $$NULL::no_such_table$$,
        $$NULL::bad_view$$, $$NULL::bad_matview$$, $$NULL::bad_composite$$,
        $$NULL::bad_seq$$, $$NULL::caio_lease$$, $$NULL::caio_lease_state$$,
        $$NULL::pg_class$$, $$NULL::bad_int_token$$, $$NULL::bad_parent$$]);
CALL add_calls(ARRAY[$$caio_claim(NULL::bad_jobs, 'worker-a', '1 minute', 1, %s)$$],
  ARRAY[$$''$$, $$'   '$$, $$'no_such_column = 1'$$, $$'id'$$, $$'state ='$$,
        $$'true; DELETE FROM bad_jobs'$$, $$'true) OR (true'$$, $$'true LIMIT 1'$$,
        $$'EXISTS (SELECT FROM no_such_table)'$$, $$'1 / 0 = 1'$$,
        $$'generate_series(1, 2) = id'$$, $$'count(*) > 0'$$,
        $$'row_number() OVER () = 1'$$,
        $$'(WITH d AS (DELETE FROM bad_jobs RETURNING 1) SELECT true)'$$,
        $$'EXISTS (SELECT caio_claim(NULL::bad_jobs, ''b'', ''1s''))'$$]);
-- Its order must be a sort list of the table's columns, nothing else.
CALL add_calls(ARRAY[$$caio_claim(NULL::bad_jobs, 'worker-a', '1 minute', 1, NULL, %s)$$],
  ARRAY[$$''$$, $$'   '$$, $$'no_such_column'$$, $$'ctid'$$, $$'id,'$$,
        $$'id; DELETE FROM bad_jobs'$$, $$'id) UNION (SELECT 1'$$, $$'id LIMIT 1'$$,
        $$'id FOR UPDATE'$$, $$'(SELECT count(*) FROM bad_jobs)'$$, $$'random()'$$,
        $$'caio_claim(NULL::bad_jobs, ''b'', ''1s'')'$$, $$'id USING <'$$,
        $$'id COLLATE "C"'$$, $$'1'$$, $$'bad_jobs.id'$$, $$'id /*'$$]);

------------------------------------------------------------------------------
-- Trigger functions run only as the triggers caio installs.
------------------------------------------------------------------------------
INSERT INTO calls (call) VALUES
    ($$caio_fence_trigger()$$), ($$caio_version_trigger()$$), ($$caio_claim_trigger()$$), ($$caio_lock_key_trigger()$$);

------------------------------------------------------------------------------
-- The sweep, in one transaction, so that we can also see that no call left
-- a lock behind (caio's locks are advisory locks with objsubid 17217 to
-- 17220, held until the transaction ends unless the call fails).
------------------------------------------------------------------------------
BEGIN;
CREATE TEMP TABLE outcomes AS
    SELECT c.n, c.call, r.state AS sqlstate, r.msg AS message
      FROM calls c, LATERAL try(c.call) r;
SELECT count(*) AS caio_locks_left
  FROM pg_locks
 WHERE pid = pg_backend_pid() AND locktype = 'advisory' AND objsubid BETWEEN 17217 AND 17220;
COMMIT;

SELECT call, sqlstate, message FROM outcomes ORDER BY n;

-- Every call failed, none with an internal error.
SELECT count(*) AS calls,
       count(*) FILTER (WHERE sqlstate IS NULL) AS not_refused,
       count(*) FILTER (WHERE sqlstate LIKE 'XX%') AS internal_errors
  FROM outcomes;
SELECT sqlstate, count(*) FROM outcomes GROUP BY sqlstate ORDER BY sqlstate;

-- Every function of the extension that takes arguments, and every trigger
-- function, was called (caio_now() and caio_clock_reset() take none).
SELECT p.oid::regprocedure AS function, count(o.call) AS bad_calls
  FROM pg_depend d
  JOIN pg_proc p ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
  LEFT JOIN outcomes o ON starts_with(o.call, p.proname || '(')
 WHERE d.refclassid = 'pg_extension'::regclass
   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'caio')
   AND (p.pronargs > 0 OR p.prorettype = 'trigger'::regtype)
 GROUP BY p.oid
 ORDER BY p.proname;

------------------------------------------------------------------------------
-- Not errors, by the contract: a lease that is not current is renewed to
-- NULL and released with false; an unknown resource has no lease; an
-- unknown nonce is not released; caio_address_checksum is STRICT; a zero
-- step leaves a frozen clock where it is; a filter may match nothing.
-- None of them changes anything either.
------------------------------------------------------------------------------
SELECT caio_renew(ROW('bad:held', 'worker-a', 424242, NULL, NULL)::caio_lease, '1 minute') IS NULL AS made_up_token_not_renewed;
SELECT caio_renew(ROW('bad:held', 'worker-b', 9001, NULL, NULL)::caio_lease, '1 minute') IS NULL AS other_holder_not_renewed;
SELECT caio_renew(ROW('bad:gone', 'worker-a', 9002, NULL, NULL)::caio_lease, '1 minute') IS NULL AS released_not_renewed;
SELECT caio_renew(ROW('bad:never', 'worker-a', 9223372036854775807, NULL, NULL)::caio_lease, '1 minute') IS NULL AS never_leased_not_renewed;
SELECT caio_release(ROW('bad:held', 'worker-a', 424242, NULL, NULL)::caio_lease) AS made_up_token_released;
SELECT caio_release(ROW('bad:held', 'worker-b', 9001, NULL, NULL)::caio_lease) AS other_holder_released;
SELECT caio_release(ROW('bad:gone', 'worker-a', 9002, NULL, NULL)::caio_lease) AS released_twice;
SELECT caio_release(ROW('bad:never', 'worker-a', 1, NULL, NULL)::caio_lease) AS never_leased_released;
SELECT caio_lease_of('bad:never') IS NULL AS never_leased, caio_lease_of('bad:gone') IS NULL AS released_gone;
SELECT caio_nonce_release(90, wallet(), 99) AS unknown_nonce_released,
       caio_nonce_release(91, wallet(), 0) AS unknown_wallet_released;
SELECT caio_address_checksum(NULL) IS NULL AS checksum_of_null;
SELECT caio_clock_advance('0') AS clock_after_zero_step;
SELECT count(*) AS claimed FROM caio_claim(NULL::bad_jobs, 'worker-a', '1 minute', 10, 'false');

------------------------------------------------------------------------------
-- Nothing changed: no row, token, trigger, relation or column differs.
------------------------------------------------------------------------------
SELECT 'gone' AS change, * FROM (SELECT * FROM state_before EXCEPT ALL SELECT * FROM caio_state) g
UNION ALL
SELECT 'new', * FROM (SELECT * FROM caio_state EXCEPT ALL SELECT * FROM state_before) n
ORDER BY 1, 2, 3;
SELECT (SELECT md5(string_agg(part || ':' || item, E'\n' ORDER BY part, item)) FROM state_before) =
       (SELECT md5(string_agg(part || ':' || item, E'\n' ORDER BY part, item)) FROM caio_state)
       AS state_unchanged;
-- The state that was there to damage, as it still is.
SELECT resource, holder, token, expires_at, released_at IS NOT NULL AS released
  FROM caio_lease_state WHERE resource LIKE 'bad:%' ORDER BY resource;
SELECT nonce, state, holder, token, tx_hash IS NOT NULL AS has_hash
  FROM caio_nonces WHERE chain_id = 90 ORDER BY nonce;
SELECT chain_count, next_nonce FROM caio_nonce_wallet WHERE chain_id = 90;
SELECT wallet, amount, fence_token, version FROM bad_sends;
SELECT id, state, claim_holder, claim_token FROM bad_jobs ORDER BY id;
SELECT last_value FROM caio_token_seq;

DROP VIEW caio_state, bad_view;
DROP TABLE bad_sends, bad_jobs, bad_int_token, bad_naive_expiry, bad_generated_token,
           bad_child, bad_parent;
DROP MATERIALIZED VIEW bad_matview;
DROP TYPE bad_composite;
DROP SEQUENCE bad_seq;
DROP FUNCTION wallet(), try(text);
DROP PROCEDURE add_calls(text[], text[]);
SELECT caio_release(caio_lease_of('bad:held')) AS released,
       caio_release(caio_lease_of('bad:send:0xa')) AS released;
SELECT caio_clock_reset() IS NOT NULL AS reset;
