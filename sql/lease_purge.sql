-- caio_lease_purge: housekeeping of caio_lease_state.  It deletes the leases
-- released or expired longer ago than older_than, by caio_now(), and no
-- fencing decision changes: a write under a purged lease's token is
-- refused, and a new lease on the resource gets a larger token.
--
-- The suite runs in 2019 by the test clock, before every lease of the other
-- suites ends, so that its purges delete only its own leases.
SET timezone = 'UTC';
SET datestyle = 'ISO';
SET intervalstyle = 'postgres';
SELECT caio_clock_set('2019-06-01 00:00:00+00');
-- Tokens from here on are 4001, 4002, ... whatever earlier suites drew.
SELECT setval('caio_token_seq', 4000);

CREATE TABLE purge_sends (wallet text PRIMARY KEY, amount int, fence_token bigint);
SELECT caio_protect('purge_sends', 'fence_token', 'wallet', 'purge:send:');

-- A released lease, an expired one, an expired one with a row written
-- under it, a live one, and one released an hour later.
SELECT caio_release(caio_acquire('purge:released', 'worker-a', '1 minute')) AS released;
SELECT token FROM caio_acquire('purge:expired', 'worker-a', '1 minute');
SELECT token AS send_token FROM caio_acquire('purge:send:0xa', 'worker-a', '1 minute') \gset
INSERT INTO purge_sends VALUES ('0xa', 1, :send_token);
SELECT token FROM caio_acquire('purge:live', 'worker-a', '10 days');
SELECT caio_clock_advance('1 hour');
SELECT caio_release(caio_acquire('purge:recent', 'worker-a', '1 minute')) AS released;
SELECT caio_clock_advance('1 day');

CREATE VIEW purge_leases AS
    SELECT resource, holder, token, expires_at, released_at
      FROM caio_lease_state WHERE resource LIKE 'purge:%' ORDER BY resource;
TABLE purge_leases;

-- Nothing ended more than two days ago.
SELECT caio_lease_purge('2 days') AS purged;
-- An expired lease that nobody took over still fences: a write under it is
-- accepted.
UPDATE purge_sends SET amount = 2, fence_token = :send_token
 RETURNING wallet, amount, fence_token = :send_token AS under_send_token;

-- More than a day ago: the released and the two expired leases.  The one
-- released exactly a day ago stays (longer ago than older_than, strictly),
-- and so does the live one.
SELECT caio_lease_purge('1 day') AS purged;
TABLE purge_leases;
SELECT caio_lease_purge('1 day') AS purged_again;

-- The purged lease's token is refused now (LK001), whether named in the row
-- or with caio_use ...
UPDATE purge_sends SET amount = 3, fence_token = :send_token;
\echo :LAST_ERROR_SQLSTATE
BEGIN;
SELECT caio_use(ROW('purge:send:0xa', 'worker-a', :send_token, NULL, NULL)::caio_lease);
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
-- ... renewing it gets NULL, releasing it false ...
SELECT caio_renew(ROW('purge:send:0xa', 'worker-a', :send_token, NULL, NULL)::caio_lease,
                  '1 minute') IS NULL AS not_renewed;
SELECT caio_release(ROW('purge:send:0xa', 'worker-a', :send_token, NULL, NULL)::caio_lease)
    AS released;
-- ... and a new lease on the resource gets a larger token (tokens come from
-- one sequence, not from the row), under which the row can be written.
SELECT token AS new_token FROM caio_acquire('purge:send:0xa', 'worker-b', '1 minute') \gset
SELECT :new_token > :send_token AS new_token_is_larger;
UPDATE purge_sends SET amount = 4, fence_token = :new_token
 RETURNING wallet, amount, fence_token > :send_token AS under_new_token;
-- A write under the purged token stays refused.
UPDATE purge_sends SET amount = 5, fence_token = :send_token;
\echo :LAST_ERROR_SQLSTATE
SELECT amount FROM purge_sends;

-- Older_than 0: every lease that has ended (purge:live's ten days are
-- over), and no live one.
SELECT caio_clock_advance('10 days');
SELECT token > :new_token AS acquired FROM caio_acquire('purge:now', 'worker-a', '1 minute');
SELECT caio_lease_purge('0') AS purged;
TABLE purge_leases;
-- Released at this very instant by the frozen clock: not yet longer ago.
SELECT caio_release(caio_lease_of('purge:now')) AS released;
SELECT caio_lease_purge('0') AS purged;
SELECT caio_clock_advance('1 second');
SELECT caio_lease_purge('0') AS purged;

-- At most 1000 leases per call (each keeps its resource's lock until the
-- transaction ends); the next calls delete the rest.
INSERT INTO caio_lease_state (resource, holder, holder_role, token, acquired_at, expires_at)
SELECT 'purge:many:' || i, 'worker-a', current_user::regrole, 4100 + i,
       '2019-06-01 00:00:00+00', '2019-06-01 00:01:00+00'
  FROM generate_series(1, 1500) AS i;
SELECT caio_lease_purge('1 day') AS first_call,
       caio_lease_purge('1 day') AS second_call,
       caio_lease_purge('1 day') AS third_call;
SELECT count(*) AS left_over FROM purge_leases;

DROP VIEW purge_leases;
DROP TABLE purge_sends;
SELECT caio_clock_reset() IS NOT NULL AS reset;
