-- Invariants after the nonce stress run; any violation raises an error.
\set ON_ERROR_STOP on
CREATE TEMP VIEW wallet AS
SELECT next_nonce FROM caio_nonce_wallet
 WHERE chain_id = 1 AND address = '0x8617e340b3d01fa5f11f306f4090fd50e238070d';

SELECT (SELECT last_value FROM stress_attempts) AS attempts,
       (SELECT count(*) FROM stress_kept) AS kept,
       (SELECT last_value FROM stress_releases) AS handed_back,
       (SELECT count(*) FROM caio_nonces WHERE state = 'released') AS handed_back_not_yet_reused,
       (SELECT next_nonce FROM wallet) AS next_nonce;

DO $$
DECLARE
    n bigint;
    next bigint := (SELECT next_nonce FROM wallet);
BEGIN
    -- No nonce was handed out twice.
    SELECT count(*) - count(DISTINCT nonce) INTO n FROM stress_kept;
    IF n <> 0 THEN RAISE EXCEPTION '% nonces were kept twice', n; END IF;

    -- No hole: every nonce below the next one is kept, or handed back and
    -- waiting, lowest first, to be reserved again.
    SELECT count(*) INTO n FROM generate_series(0, next - 1) g(nonce)
     WHERE NOT EXISTS (SELECT FROM stress_kept k WHERE k.nonce = g.nonce)
       AND NOT EXISTS (SELECT FROM caio_nonces r WHERE r.nonce = g.nonce AND r.state = 'released');
    IF n <> 0 THEN RAISE EXCEPTION '% holes among the kept nonces', n; END IF;

    -- caio's reservations and the log agree.
    SELECT count(*) INTO n FROM (
        (SELECT nonce FROM stress_kept
         EXCEPT SELECT nonce FROM caio_nonces WHERE state = 'reserved')
        UNION ALL
        (SELECT nonce FROM caio_nonces WHERE state = 'reserved'
         EXCEPT SELECT nonce FROM stress_kept)) d;
    IF n <> 0 THEN RAISE EXCEPTION '% nonces differ between the log and caio', n; END IF;

    -- The run must have exercised rollbacks, hand-backs and their reuse.
    IF (SELECT last_value FROM stress_attempts) - (SELECT count(*) FROM caio_nonces) < 50 THEN
        RAISE EXCEPTION 'too few rollbacks to prove anything';
    END IF;
    IF next < 500 THEN RAISE EXCEPTION 'only % nonces: the run was too small', next; END IF;
    -- Nonces handed back and not waiting any more were reserved again.
    SELECT (SELECT last_value FROM stress_releases)
           - (SELECT count(*) FROM caio_nonces WHERE state = 'released') INTO n;
    IF n < 20 THEN RAISE EXCEPTION 'only % handed-back nonces were reused', n; END IF;
    RAISE NOTICE 'nonce stress invariants hold';
END $$;
