-- One story that makes every counter of caio_stats move by a known amount
-- (the numbers in the comments), and every kind of refusal happen once or
-- twice.  Included by sql/stats.sql (no shared memory: refusals logged) and
-- test/stats/sql/stats_preloaded.sql (counters).  Tokens are 9001, 9002, ...
SET timezone = 'UTC';
SET datestyle = 'ISO';
SELECT caio_clock_set('2031-01-01 00:00:00+00') IS NOT NULL AS clock_frozen;
SELECT setval('caio_token_seq', 9000) AS tokens_from;

CREATE TABLE stats_wallets (wallet text PRIMARY KEY, balance int, tok bigint);
SELECT caio_protect('stats_wallets', 'tok', 'wallet', 'send:');
CREATE TABLE stats_docs (id int PRIMARY KEY, body text, version int NOT NULL);
SELECT caio_versioned('stats_docs', 'version');
INSERT INTO stats_docs VALUES (1, 'draft', 0);
CREATE TABLE stats_jobs (id int PRIMARY KEY, state text NOT NULL);
SELECT caio_claimable('stats_jobs');
INSERT INTO stats_jobs SELECT i, 'pending' FROM generate_series(1, 3) i;

-- Leases: granted 2, busy 1, taken over 1, renewed 2, renew lost 1,
-- released 1, release lost 1 (and one more granted below: 3 in all).
SELECT token FROM caio_acquire('send:0xa', 'worker-a', '30 seconds');
SELECT caio_acquire('send:0xa', 'worker-b', '30 seconds') IS NULL AS busy;
INSERT INTO stats_wallets VALUES ('0xa', 10, 9001);             -- accepted
SELECT caio_clock_advance('31 seconds') IS NOT NULL AS paused;
SELECT token FROM caio_acquire('send:0xa', 'worker-b', '30 seconds');

-- Writes: accepted 3 (with the INSERT above), LK001 2, LK002 2, LK003 1.
UPDATE stats_wallets SET balance = 5, tok = 9001 WHERE wallet = '0xa';
UPDATE stats_wallets SET balance = 5 WHERE wallet = '0xa';
SELECT caio_use(ROW('send:0xa', 'worker-a', 9001, NULL, NULL)::caio_lease);
UPDATE stats_wallets SET balance = 5, tok = 9002 WHERE wallet = '0xa'; -- accepted
UPDATE stats_docs SET body = 'final', version = 1 WHERE id = 1;        -- accepted
UPDATE stats_docs SET body = 'other', version = 1 WHERE id = 1;
UPDATE stats_docs SET body = 'other' WHERE id = 1;

SELECT caio_renew(ROW('send:0xa', 'worker-a', 9001, NULL, NULL)::caio_lease,
                  '30 seconds') IS NULL AS renew_lost;
SELECT token FROM caio_renew(ROW('send:0xa', 'worker-b', 9002, NULL, NULL)::caio_lease,
                             '30 seconds');
SELECT token FROM caio_acquire('send:0xa', 'worker-b', '30 seconds');
SELECT caio_release(ROW('send:0xa', 'worker-a', 9001, NULL, NULL)::caio_lease) AS released_a;
SELECT caio_release(ROW('send:0xa', 'worker-b', 9002, NULL, NULL)::caio_lease) AS released_b;

-- Nonces: reserved 3, released 1; a reservation under a lease refuses a
-- mark that names none (LK003).
SELECT token FROM caio_acquire('send:0xb', 'worker-c', '30 seconds');
SELECT caio_nonce_reserve(1, '0x52908400098527886e0f7030069857d2e4169ee7') AS nonce;
SELECT caio_nonce_reserve(1, '0x52908400098527886e0f7030069857d2e4169ee7') AS nonce;
SELECT caio_nonce_reserve(1, '0x52908400098527886e0f7030069857d2e4169ee7',
                          ROW('send:0xb', 'worker-c', 9003, NULL, NULL)::caio_lease) AS nonce;
SELECT caio_nonce_release(1, '0x52908400098527886e0f7030069857d2e4169ee7', 0) AS released;
SELECT caio_nonce_mark(1, '0x52908400098527886e0f7030069857d2e4169ee7', 2, 'signed');

-- Claims: rows claimed 2; accepted 1 (the finish), LK003 1, LK001 1.
SELECT id, claim_token FROM caio_claim(NULL::stats_jobs, 'worker-a', '30 seconds', 2) ORDER BY id;
UPDATE stats_jobs SET state = 'done', claim_token = 9004 WHERE id = 1;  -- accepted
UPDATE stats_jobs SET state = 'done' WHERE id = 2;
UPDATE stats_jobs SET state = 'done', claim_token = 9004 WHERE id = 2;

SELECT caio_clock_reset() IS NOT NULL AS clock_running;
DROP TABLE stats_wallets, stats_docs, stats_jobs;
