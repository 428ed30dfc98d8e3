-- Every argument error: a clear message and SQLSTATE, and nothing changes.
SET timezone = 'UTC';
SET datestyle = 'ISO';
SET intervalstyle = 'postgres';
SELECT caio_clock_set('2030-02-01 00:00:00+00');
-- Tokens from here on are 2001, 2002, ... whatever earlier suites drew.
SELECT setval('caio_token_seq', 2000);
SELECT token FROM caio_acquire('errors:held', 'worker-a', '1 minute');
CREATE TEMP TABLE before AS
    SELECT (SELECT last_value FROM caio_token_seq) AS last_token,
           (SELECT count(*) FROM caio_lease_state) AS lease_rows;

-- caio_acquire: resource
SELECT caio_acquire(NULL, 'worker-a', '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_acquire('', 'worker-a', '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_acquire(repeat('r', 256), 'worker-a', '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_acquire(repeat('é', 128), 'worker-a', '1 minute');
\echo :LAST_ERROR_SQLSTATE

-- caio_acquire: holder
SELECT caio_acquire('errors:r', NULL, '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_acquire('errors:r', '', '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_acquire('errors:r', repeat('h', 256), '1 minute');
\echo :LAST_ERROR_SQLSTATE

-- caio_acquire: ttl
SELECT caio_acquire('errors:r', 'worker-a', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT caio_acquire('errors:r', 'worker-a', '0');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_acquire('errors:r', 'worker-a', '-5 seconds');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_acquire('errors:r', 'worker-a', '1 mon -30 days');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_acquire('errors:r', 'worker-a', '1 mon -29 days');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_acquire('errors:r', 'worker-a', '367 days');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_acquire('errors:r', 'worker-a', '178000000 years');
\echo :LAST_ERROR_SQLSTATE
-- Months and days of opposite signs pass "months count as 30 days", but
-- the calendar makes these 801 days and about 2400 years: the span counts.
SELECT caio_acquire('errors:r', 'worker-a', '1000 mons -29634 days');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_acquire('errors:r', 'worker-a', '2000000 mons -59999634 days');
\echo :LAST_ERROR_SQLSTATE

-- caio_acquire: wait
SELECT caio_acquire('errors:r', 'worker-a', '1 minute', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT caio_acquire('errors:r', 'worker-a', '1 minute', '-1 second');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_acquire('errors:r', 'worker-a', '1 minute', '25 hours');
\echo :LAST_ERROR_SQLSTATE

-- caio_renew
SELECT caio_renew(NULL, '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_renew(ROW(NULL, NULL, NULL, NULL, NULL)::caio_lease, '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_renew(ROW('errors:held', 'worker-a', NULL, NULL, NULL)::caio_lease, '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_renew(ROW('errors:held', NULL, 1, NULL, NULL)::caio_lease, '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_renew(ROW('', 'worker-a', 1, NULL, NULL)::caio_lease, '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_renew(ROW('errors:held', repeat('h', 300), 1, NULL, NULL)::caio_lease, '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_renew(ROW('errors:held', 'worker-a', 0, NULL, NULL)::caio_lease, '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_renew(ROW('errors:held', 'worker-a', -7, NULL, NULL)::caio_lease, '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_renew(ROW('errors:held', 'worker-a', 1, NULL, NULL)::caio_lease, NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT caio_renew(ROW('errors:held', 'worker-a', 1, NULL, NULL)::caio_lease, '-1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_renew(ROW('errors:held', 'worker-a', 1, NULL, NULL)::caio_lease, '400 days');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_renew(caio_lease_of('errors:held'), '1000 mons -29634 days');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_renew(caio_lease_of('errors:held'), '2000000 mons -59999634 days');
\echo :LAST_ERROR_SQLSTATE
-- 366 days by the calendar is still allowed: 12 months and 1 day from
-- February 2030 (365 + 1 days), renewed back to a minute at once.
SELECT expires_at - caio_now() AS span
  FROM caio_renew(caio_lease_of('errors:held'), '12 mons 1 day');
SELECT expires_at - caio_now() AS span
  FROM caio_renew(caio_lease_of('errors:held'), '1 minute');

-- caio_release
SELECT caio_release(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT caio_release(ROW('errors:held', 'worker-a', NULL, NULL, NULL)::caio_lease);
\echo :LAST_ERROR_SQLSTATE
SELECT caio_release(ROW('errors:held', '', 1, NULL, NULL)::caio_lease);
\echo :LAST_ERROR_SQLSTATE
SELECT caio_release(ROW('errors:held', 'worker-a', 0, NULL, NULL)::caio_lease);
\echo :LAST_ERROR_SQLSTATE

-- caio_lease_of
SELECT caio_lease_of(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT caio_lease_of('');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_lease_of(repeat('r', 1000));
\echo :LAST_ERROR_SQLSTATE

-- caio_lease_purge: older_than is not null and not negative, by the
-- calendar too (February 2030 less 1 month plus 32 days is in the future).
SELECT caio_lease_purge(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT caio_lease_purge('-1 second');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_lease_purge('1 mon -32 days');
\echo :LAST_ERROR_SQLSTATE

-- Wrong types are caught by PostgreSQL before caio runs.
SELECT caio_acquire('errors:r', 'worker-a', 'soon');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_renew(ROW('errors:held', 'worker-a', 'one', NULL, NULL)::caio_lease, '1 minute');
\echo :LAST_ERROR_SQLSTATE

-- Nothing changed: no token drawn, no row written, the held lease intact.
SELECT (SELECT last_value FROM caio_token_seq) = last_token AS no_token_drawn,
       (SELECT count(*) FROM caio_lease_state) = lease_rows AS no_row_written
  FROM before;
SELECT resource, holder, token, expires_at FROM caio_lease_of('errors:held');

SELECT caio_clock_reset() IS NOT NULL AS reset;
