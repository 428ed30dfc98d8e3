-- Without shared_preload_libraries: caio_stats says why it has nothing to
-- show, and everything else works.  caio.log_refusals logs each refusal
-- (shown here with client_min_messages = log); only a superuser sets it.
SELECT * FROM caio_stats;
\echo :LAST_ERROR_SQLSTATE
SELECT caio_stats_reset();
\echo :LAST_ERROR_SQLSTATE

CREATE ROLE regress_caio_not_super;
SET ROLE regress_caio_not_super;
SET caio.log_refusals = on;
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
SHOW caio.log_refusals;

SET caio.log_refusals = on;
SET client_min_messages = log;
\i test/stats/story.sql
RESET client_min_messages;
RESET caio.log_refusals;
DROP ROLE regress_caio_not_super;
