-- The clock every caio function reads: the server clock, or a test clock
-- frozen for the whole database.
SET timezone = 'UTC';
SET datestyle = 'ISO';
SET intervalstyle = 'postgres';

-- A running clock is the server's clock_timestamp(), not the transaction's now().
SELECT abs(extract(epoch FROM caio_now() - clock_timestamp())) < 1 AS tracks_server_clock;
BEGIN;
SELECT caio_now() AS first_reading \gset
SELECT pg_sleep(0.01);
SELECT caio_now() > :'first_reading' AS moves_within_a_transaction;
COMMIT;

-- Freeze it.
SELECT caio_clock_set('2030-01-01 00:00:00+00');
SELECT pg_sleep(0.01);
SELECT caio_now() AS frozen_reading;

-- Advance it.
SELECT caio_clock_advance('90 seconds');
SELECT caio_clock_advance('1 day 2 hours');
SELECT caio_clock_advance('0');
SELECT caio_now() AS after_advancing;

-- Set it anywhere, backwards too.
SELECT caio_clock_set('2029-06-30 12:00:00+00');

-- A change rolled back is forgotten.
BEGIN;
SELECT caio_clock_set('2040-01-01 00:00:00+00');
SELECT caio_now() AS inside_the_transaction;
ROLLBACK;
SELECT caio_now() AS after_rollback;

-- Back to the server clock.
SELECT abs(extract(epoch FROM caio_clock_reset() - clock_timestamp())) < 1 AS reset_returns_server_time;
SELECT abs(extract(epoch FROM caio_now() - clock_timestamp())) < 1 AS tracks_server_clock_again;

-- Advancing a running clock freezes it at the server's time plus the step.
SELECT caio_clock_advance('1 hour') - clock_timestamp() AS ahead \gset
SELECT :'ahead'::interval BETWEEN '59 min' AND '61 min' AS froze_an_hour_ahead;
SELECT pg_sleep(0.01);
SELECT caio_now() = caio_now() AS stays_frozen;
SELECT caio_clock_reset() IS NOT NULL AS reset;

-- Bad input: a clear error, and the clock is unchanged.
SELECT caio_clock_set('2030-01-01 00:00:00+00');
SELECT caio_clock_set(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT caio_clock_set('infinity');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_clock_set('-infinity');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_clock_advance(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT caio_clock_advance('-1 second');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_clock_advance('1 day -1 second');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_clock_advance('300000 years');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_now() AS unchanged_after_errors;
SELECT caio_clock_reset() IS NOT NULL AS reset;
