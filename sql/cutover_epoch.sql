-- caio_start_token_epoch() after a blue/green cutover through logical
-- replication (issue 34): the rows came from the old cluster, with tokens
-- it issued in whatever epoch it reached, and sequences do not replicate.
-- The new epoch is above every token the database holds: in the token and
-- claim-token columns of every table caio guards, and in caio's own tables.
-- Rows are written as logical replication's apply worker writes them: with
-- session_replication_role = replica, where caio's triggers do not fire.
\i test/regress/fresh_caio.sql
CREATE FUNCTION pg_temp.token(epoch int, n bigint) RETURNS bigint
    LANGUAGE sql AS $$ SELECT (epoch::bigint << 47) + n $$;
CREATE VIEW cut_sequence AS
    SELECT last_value >> 47 AS epoch, last_value & ((1::bigint << 47) - 1) AS n
      FROM caio_token_seq;

-- A fenced table, its token column indexed.  Blue (in epoch 2) granted
-- token 2 * 2^47 + 1 = 281474976710657 and a row was written under it.
CREATE TABLE cut_sends (wallet text PRIMARY KEY, amount int, fence_token bigint);
CREATE INDEX cut_sends_fence_token ON cut_sends (fence_token);
SELECT caio_protect('cut_sends', 'fence_token', 'wallet', 'cut:send:');
SET session_replication_role = replica;
INSERT INTO cut_sends VALUES ('0xa', 5, pg_temp.token(2, 1));
RESET session_replication_role;
SELECT * FROM cut_sends;
-- Green's sequence is in epoch 0; the new epoch is above blue's tokens.
SELECT * FROM cut_sequence;
SELECT caio_start_token_epoch() AS epoch;
SELECT * FROM cut_sequence;
SELECT token >> 47 AS epoch, token & ((1::bigint << 47) - 1) AS n,
       token > pg_temp.token(2, 1) AS above_blue
  FROM caio_acquire('cut:send:0xa', 'green-worker', '1 minute');
-- The stale blue holder's write under its token is refused; the new
-- holder's is accepted.
UPDATE cut_sends SET amount = 6, fence_token = pg_temp.token(2, 1);
\echo :LAST_ERROR_SQLSTATE
UPDATE cut_sends SET amount = 7, fence_token = (caio_lease_of('cut:send:0xa')).token
 RETURNING wallet, amount, fence_token >> 47 AS epoch;

-- A claimable table: blue's claim token, in epoch 5.
CREATE TABLE cut_jobs (id int PRIMARY KEY, state text);
SELECT caio_claimable('cut_jobs');
SET session_replication_role = replica;
INSERT INTO cut_jobs VALUES (1, 'pending', 'blue-worker', pg_temp.token(5, 7), '2000-01-01');
RESET session_replication_role;
SELECT caio_start_token_epoch() AS epoch;
SELECT id, claim_holder, claim_token >> 47 AS epoch, claim_token > pg_temp.token(5, 7) AS above_blue
  FROM caio_claim(NULL::cut_jobs, 'green-worker', '30 seconds');

-- A partitioned table, its token column in no index (each partition is
-- scanned), and a token column of a domain over bigint: epochs 7 and 9.
CREATE DOMAIN cut_token AS bigint CONSTRAINT cut_token_positive CHECK (VALUE > 0);
CREATE TABLE cut_ledger (wallet text, seq int, fence_token cut_token,
                         PRIMARY KEY (wallet, seq)) PARTITION BY LIST (wallet);
CREATE TABLE cut_ledger_a PARTITION OF cut_ledger FOR VALUES IN ('0xa');
CREATE TABLE cut_ledger_b PARTITION OF cut_ledger FOR VALUES IN ('0xb');
SELECT caio_protect('cut_ledger', 'fence_token', 'wallet', 'cut:ledger:');
SET session_replication_role = replica;
INSERT INTO cut_ledger VALUES ('0xa', 1, pg_temp.token(6, 1)), ('0xb', 1, pg_temp.token(7, 3));
RESET session_replication_role;
SELECT caio_start_token_epoch() AS epoch;
CREATE TABLE "Cut Notes" ("Wallet" text PRIMARY KEY, "Fence Token" cut_token);
SELECT caio_protect('"Cut Notes"', 'Fence Token', 'Wallet', 'cut:note:');
SET session_replication_role = replica;
INSERT INTO "Cut Notes" VALUES ('0xa', pg_temp.token(9, 1));
RESET session_replication_role;
SELECT caio_start_token_epoch() AS epoch;

-- caio's own tables, as a publication FOR ALL TABLES brings them: a
-- lease of blue's (epoch 11), a nonce reservation under a lease (epoch 13).
INSERT INTO caio_lease_state
VALUES ('cut:blue', 'blue-worker', current_user::regrole, pg_temp.token(11, 3),
        now(), now() + interval '1 minute', now());
SELECT caio_start_token_epoch() AS epoch;
SELECT token >> 47 AS epoch, token > pg_temp.token(11, 3) AS above_blue
  FROM caio_acquire('cut:blue', 'green-worker', '1 minute');
INSERT INTO caio_nonce_reservation
VALUES (1, '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed', 0, 'broadcast', 'send:w01',
        'blue-worker', pg_temp.token(13, 2), NULL, NULL, now(), now());
SELECT caio_start_token_epoch() AS epoch;
-- And another system's epoch row (blue's lineage, in epoch 15).
INSERT INTO caio_token_epoch VALUES (1, 1, 1, 15, now());
SELECT caio_start_token_epoch() AS epoch;
SELECT count(*) AS epoch_rows, max(epoch) AS epoch FROM caio_token_epoch;

-- A call that fails moves nothing.  A guarded column renamed since caio's
-- trigger was installed: caio cannot tell which tokens the table holds, and
-- refuses (42703, as the trigger does when it fires).
SELECT * FROM cut_sequence;
ALTER TABLE "Cut Notes" RENAME COLUMN "Fence Token" TO fence;
SELECT caio_start_token_epoch() AS epoch;
\echo :LAST_ERROR_SQLSTATE
ALTER TABLE "Cut Notes" RENAME COLUMN fence TO "Fence Token";
-- The epoch record cannot be written (a publication that publishes deletes,
-- and a replica identity taken away by hand): the error comes before the
-- sequence moves.
SET client_min_messages = error;
CREATE PUBLICATION cut_everything FOR ALL TABLES;
RESET client_min_messages;
ALTER TABLE caio_token_epoch REPLICA IDENTITY NOTHING;
SELECT caio_start_token_epoch() AS epoch;
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM cut_sequence;
ALTER TABLE caio_token_epoch REPLICA IDENTITY FULL;
DROP PUBLICATION cut_everything;
-- No epoch left above a token of the last epoch: refused (2200H).
SET session_replication_role = replica;
INSERT INTO cut_sends VALUES ('0xz', 1, pg_temp.token(65535, 1));
RESET session_replication_role;
SELECT caio_start_token_epoch() AS epoch;
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM cut_sequence;
SET session_replication_role = replica;
DELETE FROM cut_sends WHERE wallet = '0xz';
RESET session_replication_role;
SELECT caio_start_token_epoch() AS epoch;

DROP TABLE cut_sends, cut_jobs, cut_ledger, "Cut Notes";
DROP VIEW cut_sequence;
DROP DOMAIN cut_token;
