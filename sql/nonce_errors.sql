-- Every argument error of the nonce functions, with its SQLSTATE; nothing
-- is written.
SELECT caio_nonce_reserve(1, '0x27b1fdb04752bbc536007a920d24acb045561c26') AS nonce;
CREATE TEMP TABLE before AS
    SELECT (SELECT count(*) FROM caio_nonce_wallet) AS wallets,
           (SELECT count(*) FROM caio_nonce_reservation) AS reservations;
-- (Counted again at the end: the errors must leave no row behind, and the
-- two successful calls on chain 2 below add one wallet and one nonce.)

-- Addresses: 22P02 when malformed or mis-checksummed.
SELECT caio_nonce_reserve(1, '0x27b1fdb04752bbc536007a920d24acb045561c2');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_nonce_reserve(1, '0x27b1fdb04752bbc536007a920d24acb045561c266');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_nonce_reserve(1, '27b1fdb04752bbc536007a920d24acb045561c2600');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_nonce_reserve(1, '0x27b1fdb04752bbc536007a920d24acb045561cZZ');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_nonce_reserve(1, ' 0x27b1fdb04752bbc536007a920d24acb045561c2');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_nonce_reserve(1, '');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_nonce_reserve(1, '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_address_checksum('0x5AAeb6053F3E94C9b9A09f33669435E7Ef1BeAed');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_nonce_reserve(1, NULL);
\echo :LAST_ERROR_SQLSTATE

-- chain_id: positive.
SELECT caio_nonce_reserve(0, '0x27b1fdb04752bbc536007a920d24acb045561c26');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_nonce_reserve(-1, '0x27b1fdb04752bbc536007a920d24acb045561c26');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_nonce_reserve(NULL, '0x27b1fdb04752bbc536007a920d24acb045561c26');
\echo :LAST_ERROR_SQLSTATE

-- Nonces and counts: not negative, not NULL.
SELECT caio_nonce_release(1, '0x27b1fdb04752bbc536007a920d24acb045561c26', -1);
\echo :LAST_ERROR_SQLSTATE
SELECT caio_nonce_release(1, '0x27b1fdb04752bbc536007a920d24acb045561c26', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT caio_nonce_sync(1, '0x27b1fdb04752bbc536007a920d24acb045561c26', -5);
\echo :LAST_ERROR_SQLSTATE
SELECT caio_nonce_sync(1, '0x27b1fdb04752bbc536007a920d24acb045561c26', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT caio_nonce_sync(1, '0x27b1fdb04752bbc536007a920d24acb045561c26', 9223372036854775807);
\echo :LAST_ERROR_SQLSTATE
SELECT caio_nonce_mark(1, '0x27b1fdb04752bbc536007a920d24acb045561c26', 9007199254740992, 'signed');
\echo :LAST_ERROR_SQLSTATE
-- A reading far below the wallet's nonces (a node that is badly behind).
SELECT caio_nonce_sync(2, '0x27b1fdb04752bbc536007a920d24acb045561c26', 5000000) AS next_nonce;
SELECT caio_nonce_reserve(2, '0x27b1fdb04752bbc536007a920d24acb045561c26') AS nonce;
SELECT caio_nonce_sync(2, '0x27b1fdb04752bbc536007a920d24acb045561c26', 3);
\echo :LAST_ERROR_SQLSTATE
SELECT chain_count, next_nonce FROM caio_nonce_wallet WHERE chain_id = 2;

-- caio_nonce_mark: state, hash, reservation.
SELECT caio_nonce_mark(1, '0x27b1fdb04752bbc536007a920d24acb045561c26', 0, 'sent');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_nonce_mark(1, '0x27b1fdb04752bbc536007a920d24acb045561c26', 0, NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT caio_nonce_mark(1, '0x27b1fdb04752bbc536007a920d24acb045561c26', 0, 'broadcast', '0x1234');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_nonce_mark(1, '0x27b1fdb04752bbc536007a920d24acb045561c26', 0, 'broadcast', repeat('ab', 33));
\echo :LAST_ERROR_SQLSTATE
SELECT caio_nonce_mark(1, '0x27b1fdb04752bbc536007a920d24acb045561c26', 5, 'signed');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_nonce_mark(1, '0x27b1fdb04752bbc536007a920d24acb045561c26', 0, 'signed', NULL,
                       ROW('send:x', 'worker-a', NULL, NULL, NULL)::caio_lease);
\echo :LAST_ERROR_SQLSTATE
SELECT caio_nonce_reserve(1, '0x27b1fdb04752bbc536007a920d24acb045561c26',
                          ROW('send:never', 'worker-a', 1, NULL, NULL)::caio_lease);
\echo :LAST_ERROR_SQLSTATE

SELECT (SELECT count(*) FROM caio_nonce_wallet) = wallets + 1 AS no_other_wallet_written,
       (SELECT count(*) FROM caio_nonce_reservation) = reservations + 1 AS no_other_reservation_written
  FROM before;
SELECT nonce, state FROM caio_nonces WHERE chain_id = 1 AND address = '0x27b1fdb04752bbc536007a920d24acb045561c26';

-- The last nonce is 2^53 - 1: reserve hands it out, and then refuses
-- (22023) rather than hand out 2^53, which no other function would take.
-- The wallet stays usable: release, mark and sync still work, and a sync
-- can move it back down.
\set last_wallet '''0x8617e340b3d01fa5f11f306f4090fd50e238070d'''
SELECT caio_nonce_sync(7, :last_wallet, 9007199254740990) AS next_nonce;
SELECT caio_nonce_reserve(7, :last_wallet) AS nonce;
SELECT caio_nonce_reserve(7, :last_wallet) AS last_nonce;
SELECT caio_nonce_reserve(7, :last_wallet);
\echo :LAST_ERROR_SQLSTATE
-- Sync says so: 2^53 is "none left".
SELECT caio_nonce_sync(7, :last_wallet, 9007199254740990) AS next_nonce;
-- A nonce handed back is handed out again.
SELECT caio_nonce_release(7, :last_wallet, 9007199254740991) AS released;
SELECT caio_nonce_reserve(7, :last_wallet) AS nonce;
SELECT caio_nonce_reserve(7, :last_wallet);
\echo :LAST_ERROR_SQLSTATE
-- Marks and a count of 2^53 (every nonce used) settle them.
SELECT caio_nonce_mark(7, :last_wallet, 9007199254740990, 'broadcast', '0x' || repeat('f6', 32));
SELECT caio_nonce_mark(7, :last_wallet, 9007199254740991, 'broadcast', '0x' || repeat('f7', 32));
SELECT caio_nonce_sync(7, :last_wallet, 9007199254740992) AS next_nonce;
SELECT nonce, state FROM caio_nonces WHERE chain_id = 7 ORDER BY nonce;
SELECT caio_nonce_reserve(7, :last_wallet);
\echo :LAST_ERROR_SQLSTATE
-- The readings were a node's mistake: the transactions mined with those
-- nonces were not ours.  Marked dropped, they no longer hold the wallet up,
-- and a sync moves it back down.
SELECT caio_nonce_mark(7, :last_wallet, 9007199254740990, 'dropped');
SELECT caio_nonce_mark(7, :last_wallet, 9007199254740991, 'dropped');
SELECT caio_nonce_sync(7, :last_wallet, 5) AS next_nonce;
SELECT caio_nonce_reserve(7, :last_wallet) AS nonce;
SELECT chain_count, next_nonce FROM caio_nonce_wallet WHERE chain_id = 7;

-- caio_nonce_sync touches only what its caller may touch.  A wallet whose
-- nonces went under a lease is synced under that lease: without one, another
-- role's sync is refused (LK003) before it settles anything or moves the
-- counter, up or down; another role's lease is refused (42501), a lease on
-- another resource too (22023), and a lease that is no longer current
-- (LK001).  Nothing was written by any of them.
-- Tokens from here on are 7501, 7502, ... whatever earlier suites drew.
SELECT setval('caio_token_seq', 7500);
CREATE ROLE regress_caio_sender;
CREATE ROLE regress_caio_intruder;
GRANT USAGE ON TYPE caio_lease TO regress_caio_sender, regress_caio_intruder;
GRANT EXECUTE ON FUNCTION caio_acquire(text, text, interval, interval),
                          caio_lease_of(text),
                          caio_nonce_reserve(bigint, text, caio_lease),
                          caio_nonce_mark(bigint, text, bigint, text, text, caio_lease),
                          caio_nonce_sync(bigint, text, bigint),
                          caio_nonce_sync(bigint, text, bigint, caio_lease)
  TO regress_caio_sender, regress_caio_intruder;
\set fenced_wallet '''0x4f9b7e8a2c1d3e5f60718293a4b5c6d7e8f90a1b'''
SET ROLE regress_caio_sender;
SELECT token FROM caio_acquire('send:fenced', 'sender', '1 hour');
SELECT caio_nonce_reserve(5, :fenced_wallet, caio_lease_of('send:fenced')) AS nonce
  FROM generate_series(1, 2);
SELECT caio_nonce_mark(5, :fenced_wallet, 0, 'broadcast', '0x' || repeat('a1', 32),
                       caio_lease_of('send:fenced'));
SET ROLE regress_caio_intruder;
-- Settling nonce 0 as mined, or moving the counter far up:
SELECT caio_nonce_sync(5, :fenced_wallet, 1);
\echo :LAST_ERROR_SQLSTATE
SELECT caio_nonce_sync(5, :fenced_wallet, 1000000);
\echo :LAST_ERROR_SQLSTATE
-- With the sender's lease, or a lease of its own on another resource:
SELECT caio_nonce_sync(5, :fenced_wallet, 1, caio_lease_of('send:fenced'));
\echo :LAST_ERROR_SQLSTATE
SELECT token FROM caio_acquire('send:intruder', 'intruder', '1 hour');
SELECT caio_nonce_sync(5, :fenced_wallet, 1, caio_lease_of('send:intruder'));
\echo :LAST_ERROR_SQLSTATE
-- The sender's own sync settles nonce 0; its lease also covers the count
-- going down again below the mined nonce, which the intruder cannot do.
SET ROLE regress_caio_sender;
SELECT caio_nonce_sync(5, :fenced_wallet, 1, caio_lease_of('send:fenced')) AS next_nonce;
SET ROLE regress_caio_intruder;
SELECT caio_nonce_sync(5, :fenced_wallet, 0);
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
SELECT nonce, state, holder, token FROM caio_nonces WHERE chain_id = 5 ORDER BY nonce;
SELECT chain_count, next_nonce FROM caio_nonce_wallet WHERE chain_id = 5;
-- A lease taken over is refused: the old holder's sync names a token that is
-- no longer current.
SELECT caio_lease_of('send:fenced') AS old_lease \gset
SELECT caio_release(caio_lease_of('send:fenced'));
SET ROLE regress_caio_sender;
SELECT token FROM caio_acquire('send:fenced', 'sender', '1 hour');
SELECT caio_nonce_sync(5, :fenced_wallet, 2, :'old_lease');
\echo :LAST_ERROR_SQLSTATE
-- A wallet whose nonces never went under a lease syncs as before; a
-- superuser (the trusted way) may sync any wallet without a lease.
SET ROLE regress_caio_intruder;
SELECT caio_nonce_reserve(6, :fenced_wallet) AS nonce;
SELECT caio_nonce_sync(6, :fenced_wallet, 3) AS next_nonce;
RESET ROLE;
SELECT caio_nonce_sync(5, :fenced_wallet, 1) AS next_nonce;
DROP OWNED BY regress_caio_sender, regress_caio_intruder;
DROP ROLE regress_caio_sender, regress_caio_intruder;
