-- Nonce reservation for EVM wallets: consecutive nonces, rollback gives a
-- nonce back, the lowest released nonce first, sync up and down, and a
-- reservation's states.
SET timezone = 'UTC';
SET datestyle = 'ISO';
SELECT caio_clock_set('2030-01-01 00:00:00+00');
SELECT setval('caio_token_seq', 7000);

-- EIP-55: the EIP's own test vectors (all caps, all lowercase, mixed case).
-- Each is its own checksummed form, and so is its lowercase spelling.
SELECT v AS vector, caio_address_checksum(v) = v AS is_checksummed,
       caio_address_checksum(lower(v)) = v AS from_lowercase
  FROM (VALUES ('0x52908400098527886E0F7030069857D2E4169EE7'),
               ('0x8617E340B3D01FA5F11F306F4090FD50E238070D'),
               ('0xde709f2102306220921060314715629080e2fb77'),
               ('0x27b1fdb04752bbc536007a920d24acb045561c26'),
               ('0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed'),
               ('0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359'),
               ('0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB'),
               ('0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb')) AS t(v);

-- One wallet, however it is spelled: lowercase, uppercase, checksummed, and
-- as caio_address_checksum spells it.  ("0X" is refused: bad_input.)
SELECT caio_nonce_reserve(1, '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed') AS nonce;
SELECT caio_nonce_reserve(1, '0x5AAEB6053F3E94C9B9A09F33669435E7EF1BEAED') AS nonce;
SELECT caio_nonce_reserve(1, '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed') AS nonce;
SELECT caio_nonce_reserve(1, caio_address_checksum('0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed')) AS nonce;
SELECT DISTINCT address FROM caio_nonces;
-- Another chain, same address: another wallet.
SELECT caio_nonce_reserve(137, '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed') AS nonce;

\set wallet '''0xfb6916095ca1df60bb79ce92ce3ea74c37c5d359'''

-- A rollback gives the nonce back.
BEGIN;
SELECT caio_nonce_reserve(1, :wallet) AS nonce;
SELECT caio_nonce_reserve(1, :wallet) AS nonce;
ROLLBACK;
SELECT caio_nonce_reserve(1, :wallet) AS nonce;
SELECT caio_nonce_reserve(1, :wallet) AS nonce;
SELECT caio_nonce_reserve(1, :wallet) AS nonce;
SELECT caio_nonce_reserve(1, :wallet) AS nonce;

-- Released nonces are reused first, lowest first.
SELECT caio_nonce_release(1, :wallet, 2) AS released;
SELECT caio_nonce_release(1, :wallet, 1) AS released;
SELECT caio_nonce_release(1, :wallet, 1) AS released_again;
SELECT caio_nonce_release(1, :wallet, 99) AS never_reserved;
SELECT nonce, state FROM caio_nonce_holes WHERE address = :wallet ORDER BY nonce;
SELECT caio_nonce_reserve(1, :wallet) AS nonce;
SELECT caio_nonce_reserve(1, :wallet) AS nonce;
SELECT caio_nonce_reserve(1, :wallet) AS nonce;
SELECT count(*) AS holes FROM caio_nonce_holes WHERE address = :wallet;

-- A reservation moves forward, and records every transaction hash it was
-- broadcast with (a replacement is another attempt on the same nonce).
SELECT caio_nonce_mark(1, :wallet, 0, 'signed', '0x' || repeat('a1', 32));
SELECT caio_nonce_mark(1, :wallet, 0, 'broadcast', '0x' || repeat('A1', 32));
SELECT caio_nonce_mark(1, :wallet, 0, 'broadcast', '0x' || repeat('b2', 32));
SELECT caio_nonce_mark(1, :wallet, 1, 'broadcast', '0x' || repeat('c3', 32));
SELECT caio_nonce_mark(1, :wallet, 2, 'signed');
SELECT caio_nonce_mark(1, :wallet, 3, 'mined', '0x' || repeat('d4', 32));
SELECT nonce, state, left(tx_hash, 10) AS tx_hash FROM caio_nonces WHERE address = :wallet ORDER BY nonce;
SELECT nonce, array_length(tx_hashes, 1) AS attempts FROM caio_nonce_reservation WHERE address = :wallet AND nonce = 0;
-- caio_nonce_attempts shows them, one row per attempt, in order (the same
-- hash spelled in uppercase is the same attempt).
SELECT nonce, attempt, tx_hash FROM caio_nonce_attempts WHERE address = :wallet ORDER BY nonce, attempt;

-- Moves that go backwards or skip a rule: 22023.
SELECT caio_nonce_mark(1, :wallet, 0, 'signed');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_nonce_mark(1, :wallet, 0, 'released');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_nonce_release(1, :wallet, 0);
\echo :LAST_ERROR_SQLSTATE
SELECT caio_nonce_mark(1, :wallet, 3, 'broadcast');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_nonce_mark(1, :wallet, 2, 'reserved');
\echo :LAST_ERROR_SQLSTATE
-- Dropped only once the chain's count has passed the nonce.
SELECT caio_nonce_mark(1, :wallet, 1, 'dropped');
\echo :LAST_ERROR_SQLSTATE

-- Sync settles what the chain's count proves: broadcast nonces below it are
-- mined.  The next nonce moves up to the count ...
SELECT caio_nonce_sync(1, :wallet, 2) AS next_nonce;
SELECT nonce, state FROM caio_nonces WHERE address = :wallet ORDER BY nonce;
SELECT caio_nonce_sync(1, :wallet, 10) AS next_nonce;
SELECT caio_nonce_reserve(1, :wallet) AS nonce;
-- ... and down again (a node that ran ahead, or transactions that never
-- reached the chain), never to a nonce still in use (10 is reserved).  We
-- never used 5 to 9 (the count of 10 said someone had): they are holes now,
-- which reserve fills first, lowest first.
SELECT caio_nonce_sync(1, :wallet, 4) AS next_nonce;
SELECT nonce, state FROM caio_nonce_holes WHERE address = :wallet ORDER BY nonce;
SELECT caio_nonce_release(1, :wallet, 10) AS released;
SELECT caio_nonce_sync(1, :wallet, 4) AS next_nonce;
SELECT caio_nonce_reserve(1, :wallet) AS nonce;
-- Nonces below the count cannot be released, but can be marked dropped.
SELECT caio_nonce_sync(1, :wallet, 6) AS next_nonce;
SELECT caio_nonce_release(1, :wallet, 2);
\echo :LAST_ERROR_SQLSTATE
SELECT caio_nonce_mark(1, :wallet, 2, 'dropped');
-- Sync marked 1 mined; the caller learns that the transaction mined with
-- nonce 1 was not ours: dropped.  Repeating a final mark is a harmless retry.
SELECT caio_nonce_mark(1, :wallet, 1, 'dropped');
SELECT caio_nonce_mark(1, :wallet, 1, 'dropped');
SELECT caio_nonce_mark(1, :wallet, 0, 'mined');
SELECT caio_nonce_mark(1, :wallet, 0, 'signed');
\echo :LAST_ERROR_SQLSTATE
SELECT nonce, state FROM caio_nonces WHERE address = :wallet ORDER BY nonce;
SELECT chain_id, address, nonce, state FROM caio_nonce_holes WHERE address = :wallet;

-- Under a lease: the reservation records the holder and token, and later
-- marks must name a current lease on the same resource.
SELECT token FROM caio_acquire('send:' || :wallet, 'worker-a', '30 seconds');
SELECT caio_nonce_reserve(1, :wallet, caio_lease_of('send:' || :wallet)) AS nonce;
SELECT nonce, state, holder, token FROM caio_nonces WHERE address = :wallet AND nonce = 6;
SELECT caio_nonce_mark(1, :wallet, 6, 'signed', NULL, caio_lease_of('send:' || :wallet));
SELECT caio_nonce_mark(1, :wallet, 6, 'broadcast');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_nonce_release(1, :wallet, 6);
\echo :LAST_ERROR_SQLSTATE
SELECT token FROM caio_acquire('other', 'worker-a', '30 seconds');
SELECT caio_nonce_mark(1, :wallet, 6, 'broadcast', NULL, caio_lease_of('other'));
\echo :LAST_ERROR_SQLSTATE
-- worker-a pauses; worker-b takes the wallet over.  worker-a's lease is
-- refused; worker-b, under its newer token, may finish what it inherited.
SELECT caio_clock_advance('31 seconds');
SELECT token FROM caio_acquire('send:' || :wallet, 'worker-b', '30 seconds');
SELECT caio_nonce_mark(1, :wallet, 6, 'broadcast', NULL, ROW('send:' || :wallet, 'worker-a', 7001, NULL, NULL)::caio_lease);
\echo :LAST_ERROR_SQLSTATE
SELECT caio_nonce_reserve(1, :wallet, ROW('send:' || :wallet, 'worker-a', 7001, NULL, NULL)::caio_lease);
\echo :LAST_ERROR_SQLSTATE
SELECT caio_nonce_mark(1, :wallet, 6, 'broadcast', '0x' || repeat('e5', 32), caio_lease_of('send:' || :wallet));
SELECT nonce, state, holder, token FROM caio_nonces WHERE address = :wallet AND nonce = 6;
-- A reservation made under a lease is released with its lease, through
-- caio_nonce_mark; its nonce is then reused.
SELECT caio_nonce_reserve(1, :wallet, caio_lease_of('send:' || :wallet)) AS nonce;
SELECT caio_nonce_mark(1, :wallet, 7, 'released', NULL, caio_lease_of('send:' || :wallet));
SELECT caio_nonce_reserve(1, :wallet) AS nonce;

-- A reservation made without a lease is fenced from the first mark that
-- names one.
SELECT caio_nonce_reserve(1, :wallet) AS nonce;
SELECT caio_nonce_mark(1, :wallet, 8, 'signed', NULL, caio_lease_of('send:' || :wallet));
SELECT caio_nonce_mark(1, :wallet, 8, 'broadcast');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_nonce_mark(1, :wallet, 8, 'released', NULL, caio_lease_of('send:' || :wallet));

-- Nonce 10 was handed back above the counter when sync moved it down; the
-- counter reaches it and takes the row over.
SELECT caio_nonce_reserve(1, :wallet) AS nonce FROM generate_series(1, 3);
SELECT nonce, state FROM caio_nonces WHERE address = :wallet AND nonce >= 8 ORDER BY nonce;

-- A reserved nonce that a crash lost would be handed out again, so the
-- transaction that reserves one flushes its commit even when the session
-- runs with synchronous_commit off (test/durability/crash.sh off proves it;
-- here: the session's setting is left alone).  Only a superuser may turn
-- that off.
SET synchronous_commit = off;
BEGIN;
SELECT caio_nonce_reserve(1, :wallet) IS NOT NULL AS reserved;
SHOW synchronous_commit;
COMMIT;
RESET synchronous_commit;
SET caio.nonce_synchronous_commit = off;
RESET caio.nonce_synchronous_commit;
CREATE ROLE regress_caio_nonce_user;
SET ROLE regress_caio_nonce_user;
SET caio.nonce_synchronous_commit = off;
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
DROP ROLE regress_caio_nonce_user;

-- The holder of a wallet's lease syncs it under that lease, a role that is
-- not a superuser too: the count moves up (settling what it proves) and
-- down again when the chain says so (LESSONS.md: a resync that can only
-- raise the counter jams the wallet), never below a nonce still in use.
CREATE ROLE regress_caio_nonce_sender;
GRANT USAGE ON TYPE caio_lease TO regress_caio_nonce_sender;
GRANT EXECUTE ON FUNCTION caio_acquire(text, text, interval, interval), caio_lease_of(text),
                          caio_nonce_reserve(bigint, text, caio_lease),
                          caio_nonce_mark(bigint, text, bigint, text, text, caio_lease),
                          caio_nonce_sync(bigint, text, bigint, caio_lease)
  TO regress_caio_nonce_sender;
\set own_wallet '''0x1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d'''
SET ROLE regress_caio_nonce_sender;
SELECT token > 0 AS acquired FROM caio_acquire('send:own', 'sender', '1 hour');
SELECT caio_nonce_reserve(8, :own_wallet, caio_lease_of('send:own')) AS nonce
  FROM generate_series(1, 3);
SELECT caio_nonce_mark(8, :own_wallet, 0, 'broadcast', NULL, caio_lease_of('send:own'));
SELECT caio_nonce_mark(8, :own_wallet, 1, 'broadcast', NULL, caio_lease_of('send:own'));
SELECT caio_nonce_sync(8, :own_wallet, 20, caio_lease_of('send:own')) AS next_nonce;
SELECT caio_nonce_sync(8, :own_wallet, 1, caio_lease_of('send:own')) AS next_nonce;
SELECT caio_nonce_mark(8, :own_wallet, 2, 'released', NULL, caio_lease_of('send:own'));
SELECT caio_nonce_sync(8, :own_wallet, 1, caio_lease_of('send:own')) AS next_nonce;
SELECT caio_nonce_sync(8, :own_wallet, 2, caio_lease_of('send:own')) AS next_nonce;
RESET ROLE;
SELECT nonce, state FROM caio_nonces WHERE chain_id = 8 ORDER BY nonce;
SELECT chain_count, next_nonce FROM caio_nonce_wallet WHERE chain_id = 8;
DROP OWNED BY regress_caio_nonce_sender;
DROP ROLE regress_caio_nonce_sender;

SELECT caio_clock_reset() IS NOT NULL AS reset;
