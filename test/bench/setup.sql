-- Tables for the benchmark: the plain-SQL baselines, and a protected table
-- beside an unprotected copy, each with 1000 rows, one wallet per row.
CREATE SEQUENCE bench_tokens;
CREATE TABLE bench_locks (
    resource    text PRIMARY KEY,
    holder      text NOT NULL,
    token       bigint NOT NULL,
    expires_at  timestamptz NOT NULL,
    released    boolean NOT NULL DEFAULT false
) WITH (fillfactor = 70);

CREATE TABLE bench_counter (id int PRIMARY KEY, n bigint NOT NULL) WITH (fillfactor = 50);
INSERT INTO bench_counter VALUES (1, 0);

CREATE TABLE bench_fenced (id int PRIMARY KEY, wallet text NOT NULL, amount bigint NOT NULL,
                           fence_token bigint) WITH (fillfactor = 70);
CREATE TABLE bench_unfenced (LIKE bench_fenced INCLUDING ALL) WITH (fillfactor = 70);
INSERT INTO bench_fenced SELECT i, 'w' || i, 0, NULL FROM generate_series(1, 1000) i;
INSERT INTO bench_unfenced SELECT * FROM bench_fenced;
SELECT caio_protect('bench_fenced', 'fence_token', 'wallet', 'bench:');
-- The floor of any fence that a BEFORE ROW trigger enforces: the same
-- table with a C trigger that does next to nothing (PostgreSQL's own
-- suppress_redundant_updates_trigger, which compares the old and the new
-- row; the benchmark's updates always change the row).
CREATE TABLE bench_trigger_floor (LIKE bench_unfenced INCLUDING ALL) WITH (fillfactor = 70);
INSERT INTO bench_trigger_floor SELECT * FROM bench_unfenced;
CREATE TRIGGER bench_floor BEFORE UPDATE ON bench_trigger_floor
    FOR EACH ROW EXECUTE FUNCTION suppress_redundant_updates_trigger();
-- The fence users write by hand: the same table again, unprotected, and a
-- leases table keyed as caio_lease_state (the resource, in the "C"
-- collation, its primary key), with the same resources and tokens as caio's
-- leases (filled below); the UPDATE names the token and takes the lease row
-- FOR SHARE, so that a takeover waits for its commit
-- (fenced_update_hand.pgbench).
CREATE TABLE bench_fenced_hand (LIKE bench_unfenced INCLUDING ALL) WITH (fillfactor = 70);
INSERT INTO bench_fenced_hand SELECT * FROM bench_unfenced;
CREATE TABLE bench_leases (
    resource     text        COLLATE "C" PRIMARY KEY,
    holder       text        NOT NULL,
    token        bigint      NOT NULL,
    acquired_at  timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL,
    released_at  timestamptz
) WITH (fillfactor = 70);
-- Claims: two tables of 1,000,000 operations, one claimable, one for the
-- plain SKIP LOCKED baseline, with the same partial index for the filter.
CREATE TABLE bench_claims (id int PRIMARY KEY, state text NOT NULL DEFAULT 'pending')
    WITH (fillfactor = 80);
INSERT INTO bench_claims (id) SELECT generate_series(1, 1000000);
SELECT caio_claimable('bench_claims');
CREATE INDEX ON bench_claims (id) WHERE state = 'pending';
CREATE TABLE bench_claims_plain (id int PRIMARY KEY, state text NOT NULL DEFAULT 'pending',
                                 claim_holder text, claim_token bigint,
                                 claim_expires_at timestamptz) WITH (fillfactor = 80);
INSERT INTO bench_claims_plain (id) SELECT generate_series(1, 1000000);
CREATE INDEX ON bench_claims_plain (id) WHERE state = 'pending';
-- Claim-and-finish: the cycle a queue runs.  run.sh fills each queue
-- afresh before each run (refill_queue.sql), with more rows than a run uses
-- up (the scripts fail when a claim finds fewer than 10).
CREATE TABLE bench_queue (id int PRIMARY KEY, state text NOT NULL DEFAULT 'pending')
    WITH (fillfactor = 80);
INSERT INTO bench_queue (id) SELECT generate_series(1, 200000);
SELECT caio_claimable('bench_queue');
CREATE INDEX ON bench_queue (id) WHERE state = 'pending';
CREATE TABLE bench_queue_plain (id int PRIMARY KEY, state text NOT NULL DEFAULT 'pending',
                                claim_holder text, claim_token bigint,
                                claim_expires_at timestamptz) WITH (fillfactor = 80);
INSERT INTO bench_queue_plain (id) SELECT generate_series(1, 200000);
CREATE INDEX ON bench_queue_plain (id) WHERE state = 'pending';
-- The floor of a fence that a row trigger enforces on the finish: the plain
-- queue again, under a C row trigger that does next to nothing (as for the
-- fenced UPDATE above).
CREATE TABLE bench_queue_floor (LIKE bench_queue_plain INCLUDING ALL) WITH (fillfactor = 80);
INSERT INTO bench_queue_floor (id) SELECT generate_series(1, 200000);
CREATE TRIGGER bench_floor BEFORE UPDATE ON bench_queue_floor
    FOR EACH ROW EXECUTE FUNCTION suppress_redundant_updates_trigger();
-- Ordered claim-and-finish (order_by): queues with 200,000 and with
-- 2,000,000 finished rows (psql -v ordered_small and ordered_large; a
-- smoke run has a hundredth) before their pending ones, each with the index a
-- priority queue has (filter and order), and a plain copy of each for the
-- hand-written ORDER BY ... LIMIT 10 FOR UPDATE SKIP LOCKED.  run.sh gives
-- each 200,000 pending rows afresh before each run (refill_ordered.sql).
CREATE TABLE bench_ordered_200k (id int PRIMARY KEY, priority int NOT NULL,
                                 run_at timestamptz NOT NULL,
                                 state text NOT NULL DEFAULT 'pending') WITH (fillfactor = 80);
INSERT INTO bench_ordered_200k (id, priority, run_at, state)
SELECT i, (i::bigint * 7919 % 10)::int, '2030-01-01'::timestamptz + i * interval '1 second', 'done'
  FROM generate_series(1, :ordered_small) i;
CREATE TABLE bench_ordered_2m (LIKE bench_ordered_200k INCLUDING ALL) WITH (fillfactor = 80);
INSERT INTO bench_ordered_2m (id, priority, run_at, state)
SELECT i, (i::bigint * 7919 % 10)::int, '2030-01-01'::timestamptz + i * interval '1 second', 'done'
  FROM generate_series(1, :ordered_large) i;
CREATE TABLE bench_ordered_200k_plain (LIKE bench_ordered_200k INCLUDING ALL,
                                       claim_holder text, claim_token bigint,
                                       claim_expires_at timestamptz) WITH (fillfactor = 80);
INSERT INTO bench_ordered_200k_plain (id, priority, run_at, state)
SELECT id, priority, run_at, state FROM bench_ordered_200k;
CREATE TABLE bench_ordered_2m_plain (LIKE bench_ordered_200k_plain INCLUDING ALL) WITH (fillfactor = 80);
INSERT INTO bench_ordered_2m_plain (id, priority, run_at, state)
SELECT id, priority, run_at, state FROM bench_ordered_2m;
SELECT caio_claimable('bench_ordered_200k'), caio_claimable('bench_ordered_2m');
CREATE INDEX ON bench_ordered_200k (priority DESC, run_at, id) WHERE state = 'pending';
CREATE INDEX ON bench_ordered_2m (priority DESC, run_at, id) WHERE state = 'pending';
CREATE INDEX ON bench_ordered_200k_plain (priority DESC, run_at, id) WHERE state = 'pending';
CREATE INDEX ON bench_ordered_2m_plain (priority DESC, run_at, id) WHERE state = 'pending';
VACUUM ANALYZE bench_claims, bench_claims_plain, bench_queue, bench_queue_plain, bench_queue_floor,
    bench_ordered_200k, bench_ordered_2m, bench_ordered_200k_plain, bench_ordered_2m_plain;

-- Nonces by hand: the wallet's row with its counter, and one row per nonce
-- handed out, keyed as caio's tables are.
CREATE TABLE bench_nonce_wallet (chain_id bigint NOT NULL, address text COLLATE "C" NOT NULL,
                                 next_nonce bigint NOT NULL DEFAULT 0,
                                 PRIMARY KEY (chain_id, address)) WITH (fillfactor = 25);
INSERT INTO bench_nonce_wallet VALUES (1, '0x52908400098527886e0f7030069857d2e4169ee7', 0);
CREATE TABLE bench_nonce_reservation (
    chain_id bigint NOT NULL, address text COLLATE "C" NOT NULL, nonce bigint NOT NULL,
    state text NOT NULL, holder text, token bigint, reserved_at timestamptz NOT NULL,
    PRIMARY KEY (chain_id, address, nonce)) WITH (fillfactor = 80);

-- One long lease per wallet; wallet i's token is token_base + i.
CREATE TEMP TABLE wallet_leases AS
SELECT i, (caio_acquire('bench:w' || i, 'bench', '1 day')).token FROM generate_series(1, 1000) i;
INSERT INTO bench_leases (resource, holder, token, acquired_at, expires_at)
SELECT 'bench:w' || i, 'bench', token, clock_timestamp(), clock_timestamp() + '1 day' FROM wallet_leases;
-- The hand-written fence writes under the right token, and not under another.
DO $$
DECLARE
    n bigint;
    m bigint;
BEGIN
    UPDATE bench_fenced_hand t SET fence_token = w.token FROM wallet_leases w
     WHERE t.id = w.i
       AND w.token = (SELECT l.token FROM bench_leases l WHERE l.resource = 'bench:' || t.wallet FOR SHARE);
    GET DIAGNOSTICS n = ROW_COUNT;
    UPDATE bench_fenced_hand t SET fence_token = w.token + 1 FROM wallet_leases w
     WHERE t.id = w.i
       AND w.token + 1 = (SELECT l.token FROM bench_leases l WHERE l.resource = 'bench:' || t.wallet FOR SHARE);
    GET DIAGNOSTICS m = ROW_COUNT;
    IF n <> 1000 OR m <> 0 THEN
        RAISE EXCEPTION 'the hand-written fence wrote % rows under the right tokens and % under wrong ones', n, m;
    END IF;
END $$;
UPDATE bench_fenced_hand SET fence_token = NULL;
VACUUM bench_fenced_hand, bench_leases;
-- Renew: pgbench's client c (from 0; at most max_connections) holds the lease
-- on 'renew:' || c for a day, with token renew_base + c + 1; the plain
-- baseline holds the same lock rows in bench_locks.
CREATE TEMP TABLE renew_leases AS
SELECT c, (caio_acquire('renew:' || c, 'client-' || c, '1 day')).token FROM generate_series(0, 99) c;
INSERT INTO bench_locks (resource, holder, token, expires_at)
SELECT 'renew:' || c, 'client-' || c, token, clock_timestamp() + '1 day' FROM renew_leases;
-- The scripts compute each token from its base: they must be consecutive.
DO $$
BEGIN
    IF (SELECT count(DISTINCT token - i) FROM wallet_leases) <> 1
       OR (SELECT count(DISTINCT token - c) FROM renew_leases) <> 1 THEN
        RAISE EXCEPTION 'the benchmark''s leases did not get consecutive tokens';
    END IF;
END $$;
-- The tables' pages and WAL go to disk now, not under the first workloads.
CHECKPOINT;
SELECT (SELECT min(token) - 1 FROM wallet_leases) AS token_base,
       (SELECT min(token) - 1 FROM renew_leases) AS renew_base \gset
\echo :token_base :renew_base
