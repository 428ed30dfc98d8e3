-- With caio in shared_preload_libraries: the counters of caio_stats move by
-- exactly what the story in test/stats/story.sql does, per database; only
-- a superuser (or a role granted EXECUTE) resets them.
-- Tokens start at 1 here too: with shared memory the sequence is moved
-- at a server's first token only if it handed a token out before
-- (src/token_flush.c), and this database's never did.
SELECT token FROM caio_acquire('warm-up', 'worker-0', '1 minute');
SELECT caio_stats_reset();
SELECT stats_reset > now() - interval '1 minute' AS reset_just_now,
       leases_granted + leases_busy + leases_taken_over + leases_renewed +
       leases_renew_lost + leases_released + leases_release_lost + writes_accepted +
       refused_lk001 + refused_lk002 + refused_lk003 + nonces_reserved +
       nonces_released + rows_claimed AS sum_of_counters
  FROM caio_stats;

\i test/stats/story.sql

\x on
SELECT leases_granted, leases_busy, leases_taken_over, leases_renewed,
       leases_renew_lost, leases_released, leases_release_lost, writes_accepted,
       refused_lk001, refused_lk002, refused_lk003, nonces_reserved,
       nonces_released, rows_claimed
  FROM caio_stats;
\x off

-- Another database counts on its own.
CREATE DATABASE regress_caio_stats_other;
\c regress_caio_stats_other
CREATE EXTENSION caio;
SELECT leases_granted FROM caio_stats;
SELECT token IS NOT NULL AS granted FROM caio_acquire('elsewhere', 'worker-z', '1 minute');
SELECT leases_granted FROM caio_stats;
\c contrib_regression
SELECT leases_granted FROM caio_stats;
DROP DATABASE regress_caio_stats_other;

-- Without grants a role reads and resets nothing; with them it does.
CREATE ROLE regress_caio_monitor;
SET ROLE regress_caio_monitor;
SELECT leases_granted FROM caio_stats;
\echo :LAST_ERROR_SQLSTATE
SELECT caio_stats_reset();
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
GRANT SELECT ON caio_stats TO regress_caio_monitor;
GRANT EXECUTE ON FUNCTION caio_stats() TO regress_caio_monitor;
SET ROLE regress_caio_monitor;
SELECT leases_granted FROM caio_stats;
RESET ROLE;
DROP OWNED BY regress_caio_monitor;
DROP ROLE regress_caio_monitor;

-- A reset zeroes every counter and moves stats_reset.
SELECT stats_reset AS before_reset FROM caio_stats \gset
SELECT caio_stats_reset();
SELECT stats_reset > :'before_reset' AS reset_moved,
       leases_granted + leases_busy + leases_taken_over + leases_renewed +
       leases_renew_lost + leases_released + leases_release_lost + writes_accepted +
       refused_lk001 + refused_lk002 + refused_lk003 + nonces_reserved +
       nonces_released + rows_claimed AS sum_of_counters
  FROM caio_stats;
