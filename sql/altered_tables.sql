-- A table altered after caio_protect, caio_claimable or caio_versioned is
-- never silently unguarded: what those functions check holds when the
-- trigger fires too, or the write is refused.  And how rows name their
-- resources when they move, or when their resource column is not text.
SET timezone = 'UTC';
SELECT caio_clock_set('2030-01-01 00:00:00+00') IS NOT NULL AS frozen;
-- Tokens from here on are 7001, 7002, ...
SELECT setval('caio_token_seq', 7000);

-- A resource column dropped and added again as a generated column: caio's
-- trigger runs before generated columns are computed, so it would check the
-- row's old resource (g:a) while the row moves to another (g:b).  Refused.
CREATE TABLE gen_transfers (id int PRIMARY KEY, raw text, resource text, fence_token bigint);
SELECT caio_protect('gen_transfers', 'fence_token', 'resource', 'g:');
SELECT token AS a_token FROM caio_acquire('g:a', 'worker-a', '1 hour') \gset
SELECT token AS b_token FROM caio_acquire('g:b', 'worker-b', '1 hour') \gset
INSERT INTO gen_transfers VALUES (1, 'a', 'a', :a_token);
ALTER TABLE gen_transfers DROP COLUMN resource;
ALTER TABLE gen_transfers ADD COLUMN resource text GENERATED ALWAYS AS (raw) STORED;
UPDATE gen_transfers SET raw = 'b', fence_token = :a_token WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE
-- The same for the token column.
CREATE TABLE gen_tokens (id int PRIMARY KEY, wallet text, fence_token bigint);
SELECT caio_protect('gen_tokens', 'fence_token', 'wallet', 'g:');
ALTER TABLE gen_tokens DROP COLUMN fence_token;
ALTER TABLE gen_tokens ADD COLUMN fence_token bigint GENERATED ALWAYS AS (id + 0) STORED;
INSERT INTO gen_tokens (id, wallet) VALUES (1, 'a');
\echo :LAST_ERROR_SQLSTATE
SELECT raw, resource, fence_token FROM gen_transfers;

-- Inheritance children: a row trigger on a table does not fire for the rows
-- of its children, which a write through the table reaches.  caio's event
-- trigger refuses a child of a guarded table, made or attached, at any
-- depth; partitions are fine (they get the partitioned table's trigger).
CREATE TABLE journal_book (id int, wallet text, fence_token bigint, version int);
SELECT caio_protect('journal_book', 'fence_token', 'wallet', 'g:');
CREATE TABLE journal_book_2031 () INHERITS (journal_book);
\echo :LAST_ERROR_SQLSTATE
CREATE TABLE journal_book_loose (id int, wallet text, fence_token bigint, version int);
ALTER TABLE journal_book_loose INHERIT journal_book;
\echo :LAST_ERROR_SQLSTATE
CREATE TABLE claimed_parent (id int, state text);
SELECT caio_claimable('claimed_parent');
CREATE TABLE claimed_child () INHERITS (claimed_parent);
\echo :LAST_ERROR_SQLSTATE
CREATE TABLE versioned_parent (id int, v int);
SELECT caio_versioned('versioned_parent', 'v');
CREATE TABLE versioned_child () INHERITS (versioned_parent);
\echo :LAST_ERROR_SQLSTATE
CREATE TABLE parted_ledger (id int, wallet text, fence_token bigint) PARTITION BY LIST (wallet);
SELECT caio_protect('parted_ledger', 'fence_token', 'wallet', 'g:');
CREATE TABLE parted_ledger_a PARTITION OF parted_ledger FOR VALUES IN ('a');
SELECT tgrelid::regclass, tgname FROM pg_trigger WHERE tgrelid = 'parted_ledger_a'::regclass;
-- A superuser can make a child anyway, with event triggers off
-- (session_replication_role = replica): then no write to the parent goes
-- through, and the child cannot have children of its own.
SET session_replication_role = replica;
CREATE TABLE journal_book_2031 () INHERITS (journal_book);
RESET session_replication_role;
INSERT INTO journal_book VALUES (1, 'a', :a_token, 1);
\echo :LAST_ERROR_SQLSTATE
CREATE TABLE journal_book_2031_q1 () INHERITS (journal_book_2031);
\echo :LAST_ERROR_SQLSTATE
ALTER TABLE journal_book_2031 NO INHERIT journal_book;
INSERT INTO journal_book VALUES (1, 'a', :a_token, 1);

-- Claims need caio's trigger to fire: enabled in origin or always mode, and
-- not origin mode in a session whose session_replication_role is replica
-- (55000); otherwise a claim would hand out rows that nothing fences.
CREATE TABLE replica_jobs (id int PRIMARY KEY, state text DEFAULT 'pending');
SELECT caio_claimable('replica_jobs');
INSERT INTO replica_jobs (id) VALUES (1);
ALTER TABLE replica_jobs ENABLE REPLICA TRIGGER caio_claim;
SELECT id FROM caio_claim(NULL::replica_jobs, 'worker-a', '30 seconds');
\echo :LAST_ERROR_SQLSTATE
ALTER TABLE replica_jobs ENABLE ALWAYS TRIGGER caio_claim;
SELECT id, claim_holder FROM caio_claim(NULL::replica_jobs, 'worker-a', '30 seconds');
ALTER TABLE replica_jobs ENABLE TRIGGER caio_claim;
SET session_replication_role = replica;
SELECT id FROM caio_claim(NULL::replica_jobs, 'worker-b', '30 seconds');
\echo :LAST_ERROR_SQLSTATE
RESET session_replication_role;
-- A partition's own trigger counts too.
CREATE TABLE parted_jobs (id int, region text, state text DEFAULT 'pending') PARTITION BY LIST (region);
CREATE TABLE parted_jobs_eu PARTITION OF parted_jobs FOR VALUES IN ('eu');
SELECT caio_claimable('parted_jobs');
ALTER TABLE parted_jobs_eu DISABLE TRIGGER caio_claim;
SELECT id FROM caio_claim(NULL::parted_jobs, 'worker-a', '30 seconds');
\echo :LAST_ERROR_SQLSTATE

-- A row that moves to another partition of a protected table: PostgreSQL
-- runs the move as a DELETE from the old partition and an INSERT into the
-- new one, and a DELETE names no token in its row, so the move is refused
-- (LK003) unless caio_use names the lease for the transaction.
CREATE TABLE moving (id int, wallet text, region text, fence_token bigint) PARTITION BY LIST (region);
CREATE TABLE moving_eu PARTITION OF moving FOR VALUES IN ('eu');
CREATE TABLE moving_us PARTITION OF moving FOR VALUES IN ('us');
SELECT caio_protect('moving', 'fence_token', 'wallet', 'g:');
INSERT INTO moving VALUES (1, 'a', 'eu', :a_token);
UPDATE moving SET region = 'us', fence_token = :a_token WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE
BEGIN;
SELECT token = :a_token AS named FROM caio_use(caio_lease_of('g:a'));
UPDATE moving SET region = 'us' WHERE id = 1;
COMMIT;
SELECT tableoid::regclass, id, fence_token = :a_token AS under_a FROM moving;

-- A resource is the prefix and the column's text form: char(n) keeps its
-- padding, and numeric 1 and 1.0 are two resources.
CREATE TABLE padded (id int, code char(4), fence_token bigint);
SELECT caio_protect('padded', 'fence_token', 'code', 'c:');
SELECT token AS c_token FROM caio_acquire('c:ab  ', 'worker-a', '1 hour') \gset
INSERT INTO padded VALUES (1, 'ab', :c_token);
SELECT token AS c2_token FROM caio_acquire('c:ab', 'worker-a', '1 hour') \gset
INSERT INTO padded VALUES (2, 'ab', :c2_token);
\echo :LAST_ERROR_SQLSTATE
CREATE TABLE amounts (id int, account numeric, fence_token bigint);
SELECT caio_protect('amounts', 'fence_token', 'account', 'n:');
SELECT token AS n_token FROM caio_acquire('n:1', 'worker-a', '1 hour') \gset
INSERT INTO amounts VALUES (1, 1, :n_token);
INSERT INTO amounts VALUES (2, 1.0, :n_token);
\echo :LAST_ERROR_SQLSTATE

DROP TABLE gen_transfers, gen_tokens, journal_book, journal_book_loose, journal_book_2031, claimed_parent,
    versioned_parent, parted_ledger, replica_jobs, parted_jobs, moving, padded, amounts;
SELECT caio_clock_reset() IS NOT NULL AS reset;
