-- Guard triggers are exactly caio's: a trigger that runs caio's fence,
-- version or claim trigger function with a WHEN clause or a column list
-- (UPDATE OF) would let the writes it skips through unchecked.  caio's event
-- trigger refuses one at CREATE [OR REPLACE] TRIGGER; made while event
-- triggers were off (or before 0.7.0), it is refused when it fires, by
-- caio_claim, and by caio_protect, caio_claimable and caio_versioned.
SET timezone = 'UTC';
SELECT caio_clock_set('2030-01-01 00:00:00+00') IS NOT NULL AS frozen;
SELECT setval('caio_token_seq', 9000);

-- A fenced table: its own trigger made again with UPDATE OF the token
-- column, or with a WHEN clause, by its owner (here a superuser) ...
CREATE TABLE gt_sends (id int PRIMARY KEY, wallet text, amount int, fence_token bigint);
SELECT caio_protect('gt_sends', 'fence_token', 'wallet', 'gt:');
CREATE OR REPLACE TRIGGER caio_fence BEFORE INSERT OR UPDATE OF fence_token OR DELETE ON gt_sends
    FOR EACH ROW EXECUTE FUNCTION caio_fence_trigger('fence_token', 'wallet', 'gt:');
\echo :LAST_ERROR_SQLSTATE
CREATE OR REPLACE TRIGGER caio_fence BEFORE UPDATE ON gt_sends
    FOR EACH ROW WHEN (NEW.amount > 0) EXECUTE FUNCTION caio_fence_trigger('fence_token', 'wallet', 'gt:');
\echo :LAST_ERROR_SQLSTATE
-- ... or another trigger of caio's function beside caio_fence.
CREATE TRIGGER gt_more BEFORE UPDATE OF amount ON gt_sends
    FOR EACH ROW EXECUTE FUNCTION caio_fence_trigger('fence_token', 'wallet', 'gt:');
\echo :LAST_ERROR_SQLSTATE
-- caio_fence is still caio's own, and works.
SELECT tgname, tgqual IS NULL AS no_when, tgattr::text AS columns
  FROM pg_trigger WHERE tgrelid = 'gt_sends'::regclass ORDER BY tgname;
SELECT token AS a_token FROM caio_acquire('gt:a', 'worker-a', '1 hour') \gset
INSERT INTO gt_sends VALUES (1, 'a', 5, :a_token);
UPDATE gt_sends SET amount = 6;
\echo :LAST_ERROR_SQLSTATE
-- Any other trigger, with WHEN or UPDATE OF, is not caio's business.
CREATE FUNCTION gt_noop() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;
CREATE TRIGGER gt_other BEFORE UPDATE OF amount ON gt_sends
    FOR EACH ROW WHEN (NEW.amount > 0) EXECUTE FUNCTION gt_noop();
DROP TRIGGER gt_other ON gt_sends;

-- With event triggers off (a superuser can), such a trigger can be made;
-- then the writes it fires for are refused ...
SET session_replication_role = replica;
CREATE OR REPLACE TRIGGER caio_fence BEFORE INSERT OR UPDATE OF fence_token OR DELETE ON gt_sends
    FOR EACH ROW EXECUTE FUNCTION caio_fence_trigger('fence_token', 'wallet', 'gt:');
CREATE TRIGGER gt_when BEFORE UPDATE ON gt_sends
    FOR EACH ROW WHEN (NEW.amount > 100) EXECUTE FUNCTION caio_fence_trigger('fence_token', 'wallet', 'gt:');
RESET session_replication_role;
INSERT INTO gt_sends VALUES (2, 'a', 5, :a_token);
\echo :LAST_ERROR_SQLSTATE
UPDATE gt_sends SET fence_token = :a_token;
\echo :LAST_ERROR_SQLSTATE
UPDATE gt_sends SET amount = 200;
\echo :LAST_ERROR_SQLSTATE
-- (The gap itself: an UPDATE that sets no listed column and matches no
-- WHEN clause runs no trigger of caio's.)
UPDATE gt_sends SET amount = 8;
-- ... and caio_protect refuses the table while such a trigger other than
-- its own caio_fence is there; it replaces caio_fence.
SELECT caio_protect('gt_sends', 'fence_token', 'wallet', 'gt:');
\echo :LAST_ERROR_SQLSTATE
DROP TRIGGER gt_when ON gt_sends;
SELECT caio_protect('gt_sends', 'fence_token', 'wallet', 'gt:');
SELECT tgname, tgqual IS NULL AS no_when, tgattr::text AS columns
  FROM pg_trigger WHERE tgrelid = 'gt_sends'::regclass ORDER BY tgname;
UPDATE gt_sends SET amount = 7;
\echo :LAST_ERROR_SQLSTATE
UPDATE gt_sends SET amount = 7, fence_token = :a_token;
SELECT * FROM gt_sends ORDER BY id;

-- A versioned table: the same.
CREATE TABLE gt_docs (id int PRIMARY KEY, body text, version int NOT NULL DEFAULT 1);
SELECT caio_versioned('gt_docs', 'version');
INSERT INTO gt_docs VALUES (1, 'a', 1);
CREATE OR REPLACE TRIGGER caio_version BEFORE UPDATE OF version ON gt_docs
    FOR EACH ROW EXECUTE FUNCTION caio_version_trigger('version');
\echo :LAST_ERROR_SQLSTATE
CREATE OR REPLACE TRIGGER caio_version BEFORE UPDATE ON gt_docs
    FOR EACH ROW WHEN (OLD.body <> 'x') EXECUTE FUNCTION caio_version_trigger('version');
\echo :LAST_ERROR_SQLSTATE
SET session_replication_role = replica;
CREATE OR REPLACE TRIGGER caio_version BEFORE UPDATE OF version ON gt_docs
    FOR EACH ROW EXECUTE FUNCTION caio_version_trigger('version');
RESET session_replication_role;
UPDATE gt_docs SET body = 'b', version = 2;
\echo :LAST_ERROR_SQLSTATE
SELECT caio_versioned('gt_docs', 'version');
UPDATE gt_docs SET body = 'c';
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM gt_docs;

-- A claimable table, the review's case: caio_claim made again with UPDATE
-- OF claim_token would let UPDATE gt_jobs SET state = ... land on a live
-- claim.
CREATE TABLE gt_jobs (id int PRIMARY KEY, state text NOT NULL DEFAULT 'new');
SELECT caio_claimable('gt_jobs');
INSERT INTO gt_jobs (id) VALUES (1), (2);
CREATE OR REPLACE TRIGGER caio_claim BEFORE INSERT OR UPDATE OF claim_token OR DELETE ON gt_jobs
    FOR EACH ROW EXECUTE FUNCTION caio_claim_trigger();
\echo :LAST_ERROR_SQLSTATE
CREATE OR REPLACE TRIGGER caio_claim BEFORE INSERT OR UPDATE OR DELETE ON gt_jobs
    FOR EACH ROW WHEN (pg_trigger_depth() < 5) EXECUTE FUNCTION caio_claim_trigger();
\echo :LAST_ERROR_SQLSTATE
SET session_replication_role = replica;
CREATE OR REPLACE TRIGGER caio_claim BEFORE INSERT OR UPDATE OF claim_token OR DELETE ON gt_jobs
    FOR EACH ROW EXECUTE FUNCTION caio_claim_trigger();
RESET session_replication_role;
-- caio_claim refuses the table, and the trigger refuses what it fires for.
SELECT id FROM caio_claim(NULL::gt_jobs, 'worker-a', '1 hour');
\echo :LAST_ERROR_SQLSTATE
INSERT INTO gt_jobs (id) VALUES (3);
\echo :LAST_ERROR_SQLSTATE
SELECT caio_claimable('gt_jobs');
SELECT id, claim_token AS job_token FROM caio_claim(NULL::gt_jobs, 'worker-a', '1 hour') \gset
UPDATE gt_jobs SET state = 'done' WHERE id = :id;
\echo :LAST_ERROR_SQLSTATE
SELECT id, state, claim_holder FROM gt_jobs ORDER BY id;

-- A partitioned claimable table: a partition's own trigger of caio's
-- function with a WHEN clause stops claims and caio_claimable.
CREATE TABLE gt_parted (id int, region text, state text) PARTITION BY LIST (region);
CREATE TABLE gt_parted_eu PARTITION OF gt_parted FOR VALUES IN ('eu');
SELECT caio_claimable('gt_parted');
SET session_replication_role = replica;
CREATE TRIGGER gt_eu_when BEFORE UPDATE ON gt_parted_eu
    FOR EACH ROW WHEN (NEW.state = 'x') EXECUTE FUNCTION caio_claim_trigger();
RESET session_replication_role;
SELECT caio_claimable('gt_parted');
\echo :LAST_ERROR_SQLSTATE
DROP TRIGGER gt_eu_when ON gt_parted_eu;
SELECT caio_claimable('gt_parted');

SELECT caio_clock_reset() IS NOT NULL AS reset;
