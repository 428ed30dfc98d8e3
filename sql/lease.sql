-- The lease story: A acquires, B is refused, the clock passes A's expiry, B
-- takes over with a larger token, A's renew and release find the lease lost.
SET timezone = 'UTC';
SET datestyle = 'ISO';
SET intervalstyle = 'postgres';
SELECT caio_clock_set('2030-01-01 00:00:00+00');
-- Tokens from here on are 1001, 1002, ... whatever earlier suites drew.
SELECT setval('caio_token_seq', 1000);

-- A acquires a free resource: token 1001, the first after the base above.
SELECT * FROM caio_acquire('send:0xabc', 'worker-a', '30 seconds');

-- B is refused at once while A's lease is live.
SELECT caio_acquire('send:0xabc', 'worker-b', '30 seconds') IS NULL AS b_refused;

-- A asks again (a retry after a lost reply): the same lease and token, with
-- the expiry moved to now + ttl.
SELECT caio_clock_advance('10 seconds');
SELECT * FROM caio_acquire('send:0xabc', 'worker-a', '30 seconds');

-- What anyone can see.
SELECT * FROM caio_lease_of('send:0xabc');
SELECT * FROM caio_leases;

-- A renews: the token stays, the expiry moves.
SELECT caio_clock_advance('20 seconds');
SELECT * FROM caio_renew(ROW('send:0xabc', 'worker-a', 1001, NULL, NULL)::caio_lease, '15 seconds');

-- A pauses; the clock passes its expiry.  The lease is no longer live.
SELECT caio_clock_advance('16 seconds');
SELECT caio_lease_of('send:0xabc') IS NULL AS no_live_lease;
SELECT count(*) AS live_leases FROM caio_leases;

-- An expired lease is never renewed, even though nobody took it yet.
SELECT caio_renew(ROW('send:0xabc', 'worker-a', 1001, NULL, NULL)::caio_lease, '30 seconds') IS NULL AS a_renew_refused;

-- B takes over with a larger token.
SELECT * FROM caio_acquire('send:0xabc', 'worker-b', '30 seconds');

-- A wakes up: its renew is NULL and its release false, and B keeps the lease.
SELECT caio_renew(ROW('send:0xabc', 'worker-a', 1001, NULL, NULL)::caio_lease, '30 seconds') IS NULL AS a_renew_lost;
SELECT caio_release(ROW('send:0xabc', 'worker-a', 1001, NULL, NULL)::caio_lease) AS a_released;
SELECT holder, token FROM caio_lease_of('send:0xabc');

-- A cannot come back with a made-up token either.
SELECT caio_renew(ROW('send:0xabc', 'worker-b', 1003, NULL, NULL)::caio_lease, '30 seconds') IS NULL AS forged_renew_refused;
SELECT caio_release(ROW('send:0xabc', 'worker-b', 1003, NULL, NULL)::caio_lease) AS forged_release;
SELECT caio_renew(ROW('send:0xabc', 'worker-a', 1002, NULL, NULL)::caio_lease, '30 seconds') IS NULL AS wrong_holder_renew_refused;

-- The times in the argument are ignored: (resource, holder, token) is the lease.
SELECT token, expires_at FROM caio_renew(ROW('send:0xabc', 'worker-b', 1002, '1999-01-01', '1999-01-01')::caio_lease, '1 minute');

-- B releases: true once, then false; releasing twice is harmless.
SELECT caio_release(ROW('send:0xabc', 'worker-b', 1002, NULL, NULL)::caio_lease) AS b_released;
SELECT caio_release(ROW('send:0xabc', 'worker-b', 1002, NULL, NULL)::caio_lease) AS b_released_again;
SELECT caio_renew(ROW('send:0xabc', 'worker-b', 1002, NULL, NULL)::caio_lease, '1 minute') IS NULL AS released_not_renewed;
SELECT caio_lease_of('send:0xabc') IS NULL AS free_again;

-- The next lease, even to a holder that had one before, gets a new, larger token.
SELECT * FROM caio_acquire('send:0xabc', 'worker-a', '30 seconds');

-- Tokens come from one source: a new resource's first token is larger than
-- every token issued before, for any resource.
SELECT resource, holder, token FROM caio_acquire('send:0xdef', 'worker-a', '30 seconds');

-- Releasing an expired lease returns false (it was lost) but closes it, so
-- that its token stops fencing at once; the next lease gets a new token.
SELECT caio_clock_advance('31 seconds');
SELECT caio_release(ROW('send:0xdef', 'worker-a', 1004, NULL, NULL)::caio_lease) AS expired_release;
SELECT resource, holder, token FROM caio_acquire('send:0xdef', 'worker-a', '30 seconds');

-- A holder re-acquiring after its own lease expired gets a new token too.
SELECT caio_clock_advance('31 seconds');
SELECT resource, holder, token FROM caio_acquire('send:0xabc', 'worker-a', '30 seconds');

-- A lease acquired in a transaction that rolls back was never granted, and
-- its token is never handed out again.
BEGIN;
SELECT token FROM caio_acquire('job:1', 'worker-c', '1 minute');
SELECT token FROM caio_acquire('job:1', 'worker-c', '2 minutes');
ROLLBACK;
SELECT caio_lease_of('job:1') IS NULL AS rolled_back;
SELECT resource, token FROM caio_acquire('job:1', 'worker-c', '1 minute');

-- Unicode names count in bytes; any text is a valid name.
SELECT resource, holder, token FROM caio_acquire('wallet:ñandú', 'trabajador ü', '1 minute');
SELECT octet_length(resource) AS resource_bytes FROM caio_acquire(repeat('r', 255), 'worker-a', '1 minute');

-- Calendar intervals are fine, as long as they end after they start.
SELECT expires_at FROM caio_acquire('calendar', 'worker-a', '1 mon');

-- The view lists live leases only.
SELECT left(resource, 12) AS resource, holder, token FROM caio_leases ORDER BY token;

-- caio's readers are kept out of parallel plans (they read the newest
-- lease state, which a parallel worker cannot).
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SELECT count(*) AS live_leases FROM caio_leases;
SELECT count(caio_lease_of(resource)) AS live_leases FROM caio_lease_state;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;

-- Tokens never repeated.
SELECT count(*) = count(DISTINCT token) AS tokens_unique FROM caio_lease_state;

SELECT caio_clock_reset() IS NOT NULL AS reset;
