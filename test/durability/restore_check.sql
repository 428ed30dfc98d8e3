-- After a restore (restore.sh): new tokens grow past the source's, in the
-- expected epoch (psql variable epoch); the live lease is still live; the
-- table is still fenced.  A failed check raises an error.
\set ON_ERROR_STOP on
SELECT max(token) AS source_max_token FROM (
    SELECT token FROM caio_lease_state UNION ALL SELECT fence_token FROM ledger) t \gset
SELECT token AS new_token, token >> 47 AS new_epoch
  FROM caio_acquire('dur:after-restore', 'newcomer', '1 minute') \gset
SELECT :new_token > :source_max_token AND :new_epoch = :epoch AS tokens_ok,
       (SELECT holder = 'keeper' FROM caio_lease_of('dur:live')) AS live_lease_kept \gset
\if :tokens_ok
\echo new token :new_token is above every source token (:source_max_token), in epoch :epoch
\else
DO $$ BEGIN RAISE EXCEPTION 'tokens after the restore do not grow past the source''s in the expected epoch'; END $$;
\endif
\if :live_lease_kept
\else
DO $$ BEGIN RAISE EXCEPTION 'the live lease did not survive the restore'; END $$;
\endif

-- A write under a token older than the resource's newest is refused.
\set ON_ERROR_STOP off
\set VERBOSITY terse
INSERT INTO ledger (worker, nonce, fence_token) VALUES ('live', 0, 1);
\set ON_ERROR_STOP on
SELECT :'LAST_ERROR_SQLSTATE' = 'LK001' AS still_fenced \gset
\if :still_fenced
\echo the restored table still refuses a stale writer
\else
DO $$ BEGIN RAISE EXCEPTION 'the restored table accepted a stale write'; END $$;
\endif
