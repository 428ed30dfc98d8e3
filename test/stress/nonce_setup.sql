-- The nonce stress run: one hot wallet.  Each reservation that commits is
-- logged in stress_kept in the same transaction (a rolled-back one vanishes
-- from both); a release deletes one log row for its nonce in the same
-- transaction.  The log has no unique constraint, so a duplicate nonce
-- would show in it.
SELECT caio_clock_reset();
CREATE TABLE stress_kept (nonce bigint NOT NULL);
CREATE SEQUENCE stress_attempts;   -- counts attempts, rolled back or not
CREATE SEQUENCE stress_releases;
