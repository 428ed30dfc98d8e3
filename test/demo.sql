-- The caio demo: a hot wallet's "send" resource, two payment workers, one of
-- which pauses past its lease.  Run by test/demo.sh in a throwaway database.
\pset footer off
SET timezone = 'UTC';
SET datestyle = 'ISO';

\echo
\echo '== The test clock is frozen at 12:00, so that the story reads the same every time.'
SELECT caio_clock_set('2030-01-01 12:00:00+00') AS now;

\echo
\echo '== The payments table is protected: each row belongs to the resource'
\echo '   send:<wallet>, and every write must name that resource''s newest token.'
CREATE TABLE transfers (
    id          int PRIMARY KEY,
    wallet      text NOT NULL,
    amount      numeric NOT NULL,
    state       text NOT NULL,
    fence_token bigint
);
-- caio_protect returns nothing: its empty result is not shown.
\o /dev/null
SELECT caio_protect('transfers', 'fence_token', 'wallet', 'send:');
\o

\echo
\echo '== worker-a acquires the wallet for 30 seconds and gets fencing token 1.'
SELECT * FROM caio_acquire('send:0xabc', 'worker-a', '30 seconds');

\echo
\echo '== worker-b tries at the same time: NULL, the lease is taken (it did not queue).'
SELECT caio_acquire('send:0xabc', 'worker-b', '30 seconds') IS NULL AS "worker-b refused";

\echo
\echo '== worker-a records the transfer it is about to send, under token 1.'
INSERT INTO transfers VALUES (1, '0xabc', 250.00, 'signed', 1);

\echo
\echo '== worker-a retries its acquire after a lost reply: same lease, same token, later expiry.'
SELECT caio_clock_advance('5 seconds') AS now;
SELECT holder, token, expires_at FROM caio_acquire('send:0xabc', 'worker-a', '30 seconds');

\echo
\echo '== worker-a freezes (a GC pause, a swapped VM) for 40 seconds.  Its lease expires.'
SELECT caio_clock_advance('40 seconds') AS now;
SELECT count(*) AS live_leases FROM caio_leases;

\echo
\echo '== worker-b takes over: a new lease with a larger token, and it writes under it.'
SELECT * FROM caio_acquire('send:0xabc', 'worker-b', '30 seconds');
UPDATE transfers SET state = 'broadcast', fence_token = 2 WHERE id = 1;

\echo
\echo '== worker-a wakes up, still believing it holds the wallet, and writes.'
\echo '   The table refuses it (SQLSTATE LK001), and a write naming no token (LK003):'
\set ON_ERROR_STOP 0
\set VERBOSITY default
UPDATE transfers SET state = 'resent', fence_token = 1 WHERE id = 1;
\echo 'SQLSTATE' :LAST_ERROR_SQLSTATE
UPDATE transfers SET state = 'resent' WHERE id = 1;
\echo 'SQLSTATE' :LAST_ERROR_SQLSTATE
\set ON_ERROR_STOP 1

\echo
\echo '== Its renew returns NULL and its release false; worker-b keeps the wallet.'
SELECT caio_renew(ROW('send:0xabc', 'worker-a', 1, NULL, NULL)::caio_lease, '30 seconds') IS NULL AS "renew refused",
       caio_release(ROW('send:0xabc', 'worker-a', 1, NULL, NULL)::caio_lease) AS "release accepted";
SELECT holder, token, expires_at FROM caio_lease_of('send:0xabc');
SELECT * FROM transfers;

\echo
\echo '== worker-b names its lease once with caio_use, then writes without repeating the token.'
BEGIN;
SELECT token FROM caio_use(caio_lease_of('send:0xabc'));
UPDATE transfers SET state = 'mined' WHERE id = 1 RETURNING id, state, fence_token;
COMMIT;
SELECT caio_release(caio_lease_of('send:0xabc')) AS "worker-b released";

\echo
\echo '== Tokens only grow: the next lease on any resource gets a larger one.'
SELECT resource, holder, token FROM caio_acquire('send:0xabc', 'worker-a', '30 seconds');
SELECT resource, holder, token FROM caio_acquire('send:0xdef', 'worker-c', '30 seconds');

\echo
\echo '== Nonces: worker-a holds the wallet again (lease send:0xabc, token 3) and reserves'
\echo '   nonces of the wallet 0x5aAe...eAed inside the transactions'
\echo '   that record its payments.  The first commits, the second rolls back (its nonce'
\echo '   goes back), the third gets the nonce the second gave back.'
BEGIN;
SELECT caio_nonce_reserve(1, '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', caio_lease_of('send:0xabc')) AS nonce;
COMMIT;
BEGIN;
SELECT caio_nonce_reserve(1, '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', caio_lease_of('send:0xabc')) AS nonce;
ROLLBACK;
SELECT caio_nonce_reserve(1, '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed', caio_lease_of('send:0xabc')) AS nonce;

\echo
\echo '== It signs and broadcasts nonce 0; nonce 1 fails to sign and is handed back, and the'
\echo '   next reservation reuses it.'
\o /dev/null
SELECT caio_nonce_mark(1, '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed', 0, 'signed', NULL, caio_lease_of('send:0xabc'));
SELECT caio_nonce_mark(1, '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed', 0, 'broadcast',
                       '0x' || repeat('5f', 32), caio_lease_of('send:0xabc'));
SELECT caio_nonce_mark(1, '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed', 1, 'released', NULL, caio_lease_of('send:0xabc'));
\o
SELECT nonce, state FROM caio_nonces ORDER BY nonce;
SELECT * FROM caio_nonce_holes;
SELECT caio_nonce_reserve(1, '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed', caio_lease_of('send:0xabc')) AS nonce;

\echo
\echo '== worker-a pauses again; worker-c takes the wallet over.  worker-a''s mark under its'
\echo '   old lease is refused (LK001); worker-c''s goes through.'
SELECT token AS a_token FROM caio_lease_of('send:0xabc') \gset
SELECT caio_clock_advance('31 seconds') AS now;
SELECT holder, token FROM caio_acquire('send:0xabc', 'worker-c', '30 seconds');
\set ON_ERROR_STOP 0
SELECT caio_nonce_mark(1, '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed', 1, 'signed', NULL,
                       ROW('send:0xabc', 'worker-a', :a_token, NULL, NULL)::caio_lease);
\echo 'SQLSTATE' :LAST_ERROR_SQLSTATE
\set ON_ERROR_STOP 1
\o /dev/null
SELECT caio_nonce_mark(1, '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed', 1, 'signed', NULL, caio_lease_of('send:0xabc'));
\o

\echo
\echo '== The chain says one transaction from the wallet is mined: nonce 0 settles.'
SELECT caio_nonce_sync(1, '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed', 1) AS next_nonce;
SELECT nonce, state, holder, token, left(tx_hash, 10) AS tx_hash FROM caio_nonces ORDER BY nonce;

\echo
\echo '== Work claims: two workers claim payouts; worker-a''s claims expire while it pauses;'
\echo '   worker-b takes them over; worker-a''s finish is refused (LK001).'
CREATE TABLE payouts (id int PRIMARY KEY, state text NOT NULL DEFAULT 'pending', result text);
INSERT INTO payouts (id) SELECT generate_series(1, 4);
\o /dev/null
SELECT caio_claimable('payouts');
\o
CREATE TEMP TABLE a_claims AS
    SELECT * FROM caio_claim(NULL::payouts, 'worker-a', '30 seconds', 2, $$state = 'pending'$$);
SELECT id, claim_holder, claim_token FROM a_claims ORDER BY id;
SELECT caio_clock_advance('31 seconds') AS now;
CREATE TEMP TABLE b_claims AS
    SELECT * FROM caio_claim(NULL::payouts, 'worker-b', '30 seconds', 10, $$state = 'pending'$$);
SELECT id, claim_holder, claim_token FROM b_claims ORDER BY id;
\set ON_ERROR_STOP 0
UPDATE payouts SET state = 'paid', result = 'by worker-a',
       claim_token = (SELECT claim_token FROM a_claims WHERE id = 1) WHERE id = 1;
\echo 'SQLSTATE' :LAST_ERROR_SQLSTATE
\set ON_ERROR_STOP 1

\echo
\echo '== worker-b finishes the four payouts under its own claim tokens, which ends its claims.'
UPDATE payouts p
   SET state = 'paid', result = 'by worker-b',
       claim_holder = NULL, claim_expires_at = NULL, claim_token = b.claim_token
  FROM b_claims b
 WHERE p.id = b.id;
SELECT id, state, result, claim_holder, claim_token FROM payouts ORDER BY id;

SELECT caio_clock_reset() IS NOT NULL AS "clock back to the server's";
