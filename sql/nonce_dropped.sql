-- A sync down below a long run of nonces marked dropped: the reservation
-- (or sync) that moves the counter past the run does it in one step, not
-- one statement per dropped nonce.  The work is counted, not timed: how
-- many times the reservation updated the wallet's row (the counter).  It
-- was once per dropped nonce, 50,000 statements: a minute, and hundreds of
-- MB kept until the call returned.  (The counts are read within one
-- transaction, where they are exact.)
\set wallet '''0x52908400098527886e0f7030069857d2e4169ee7'''

-- 50,000 reservations, each in its own transaction, as a hot wallet makes
-- them (in one transaction the wallet row's versions pile up).
CREATE PROCEDURE reserve_many(n int) LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1..n LOOP
    PERFORM caio_nonce_reserve(1, '0x52908400098527886e0f7030069857d2e4169ee7');
    COMMIT;
  END LOOP;
END $$;
CALL reserve_many(50000);

-- 0 is handed back; the chain's count passes the rest, whose transactions
-- were not ours: dropped.
SELECT caio_nonce_release(1, :wallet, 0) AS released;
SELECT caio_nonce_sync(1, :wallet, 50000) AS next_nonce;
DO $$ BEGIN
  PERFORM caio_nonce_mark(1, '0x52908400098527886e0f7030069857d2e4169ee7', n, 'dropped')
     FROM generate_series(1, 49999) AS n;
END $$;

-- The chain's count goes back to 0: 0 is free, then 1 to 49999 are taken.
SELECT caio_nonce_sync(1, :wallet, 0) AS next_nonce;
SELECT caio_nonce_reserve(1, :wallet) AS nonce;
BEGIN;
SELECT pg_stat_get_xact_tuples_updated('caio_nonce_wallet'::regclass) AS updates_before \gset
SELECT caio_nonce_reserve(1, :wallet) AS nonce;
SELECT pg_stat_get_xact_tuples_updated('caio_nonce_wallet'::regclass) - :updates_before
       AS counter_updates;
COMMIT;

-- The same run under a sync: sync walks it, says what reserve will hand
-- out, and reserve takes it in one update.
SELECT caio_nonce_release(1, :wallet, 50000) AS released;
SELECT caio_nonce_sync(1, :wallet, 0) AS next_nonce;
BEGIN;
SELECT pg_stat_get_xact_tuples_updated('caio_nonce_wallet'::regclass) AS updates_before \gset
SELECT caio_nonce_reserve(1, :wallet) AS nonce;
SELECT pg_stat_get_xact_tuples_updated('caio_nonce_wallet'::regclass) - :updates_before
       AS counter_updates;
COMMIT;
SELECT caio_nonce_reserve(1, :wallet) AS nonce;
SELECT state, count(*), min(nonce), max(nonce) FROM caio_nonces
 WHERE address = :wallet GROUP BY state ORDER BY state;
SELECT count(*) AS holes FROM caio_nonce_holes WHERE address = :wallet;

DROP PROCEDURE reserve_many(int);
-- (50,000 rows are no use to the suites that follow.)
DELETE FROM caio_nonce_reservation WHERE address = :wallet;
DELETE FROM caio_nonce_wallet WHERE address = :wallet;
