-- After a restore or copy (restore.sh): the next token is above every token
-- the source handed out (psql variable source_max, taken after the dump),
-- in a new epoch; the live lease is still live; the table is still fenced.
-- A failed check raises an error.
\set ON_ERROR_STOP on
SELECT token AS new_token, token >> 47 AS new_epoch
  FROM caio_acquire('dur:after-restore', 'newcomer', '1 minute') \gset
SELECT :new_token > :source_max AND :new_epoch >= 1 AS tokens_ok,
       (SELECT holder = 'keeper' FROM caio_lease_of('dur:live')) AS live_lease_kept,
       (SELECT count(*) FROM caio_token_epoch) = 1 AS one_lineage \gset
\if :tokens_ok
\echo new token :new_token (epoch :new_epoch) is above every token of the source (:source_max)
\else
DO $$ BEGIN RAISE EXCEPTION 'tokens of the copy do not grow past the source''s'; END $$;
\endif
\if :live_lease_kept
\else
DO $$ BEGIN RAISE EXCEPTION 'the live lease did not survive'; END $$;
\endif
\if :one_lineage
\else
DO $$ BEGIN RAISE EXCEPTION 'the copy did not record a lineage of its own'; END $$;
\endif

-- A write under a token older than the resource's newest is refused.
\set ON_ERROR_STOP off
\set VERBOSITY terse
INSERT INTO ledger (worker, nonce, fence_token) VALUES ('live', 0, 1);
\set ON_ERROR_STOP on
SELECT :'LAST_ERROR_SQLSTATE' = 'LK001' AS still_fenced \gset
\if :still_fenced
\echo the copy still refuses a stale writer
\else
DO $$ BEGIN RAISE EXCEPTION 'the copy accepted a stale write'; END $$;
\endif
