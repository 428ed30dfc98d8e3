-- caio_claimable and caio_claim: every argument error, with its SQLSTATE.
CREATE TABLE plain (id int PRIMARY KEY, state text);
CREATE TABLE badly_typed (id int, claim_holder text, claim_token int);
CREATE VIEW plain_view AS SELECT * FROM plain;
INSERT INTO plain VALUES (1, 'pending');

SELECT caio_claimable(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT caio_claimable('plain_view');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_claimable('badly_typed');
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS columns_added FROM pg_attribute WHERE attrelid = 'badly_typed'::regclass AND attname = 'claim_expires_at';

-- Not claimable yet.
SELECT * FROM caio_claim(NULL::plain, 'worker-a', '30 seconds');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_claimable('plain');

-- The row type must name a table.
SELECT * FROM caio_claim(NULL::int, 'worker-a', '30 seconds');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM caio_claim(NULL::plain_view, 'worker-a', '30 seconds');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM caio_claim(NULL::caio_lease, 'worker-a', '30 seconds');
\echo :LAST_ERROR_SQLSTATE

-- holder, ttl, max_rows, filter.
SELECT * FROM caio_claim(NULL::plain, NULL, '30 seconds');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM caio_claim(NULL::plain, '', '30 seconds');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM caio_claim(NULL::plain, 'worker-a', '0');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM caio_claim(NULL::plain, 'worker-a', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM caio_claim(NULL::plain, 'worker-a', '30 seconds', 0);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM caio_claim(NULL::plain, 'worker-a', '30 seconds', 10001);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM caio_claim(NULL::plain, 'worker-a', '30 seconds', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM caio_claim(NULL::plain, 'worker-a', '30 seconds', 1, '  ');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM caio_claim(NULL::plain, 'worker-a', '30 seconds', 1, 'no_such_column = 1');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM caio_claim(NULL::plain, 'worker-a', '30 seconds', 1, 'state');
\echo :LAST_ERROR_SQLSTATE
-- The filter is one expression, not a way to run other statements.
SELECT * FROM caio_claim(NULL::plain, 'worker-a', '30 seconds', 1, 'true) LIMIT 1; DELETE FROM plain; SELECT (1');
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS rows_kept FROM plain;

-- Nothing was claimed by any of the above.
SELECT id, claim_holder, claim_token FROM plain;

-- The filter runs with the caller's privileges.
CREATE ROLE regress_caio_worker;
GRANT EXECUTE ON FUNCTION caio_claim(anyelement, text, interval, int, text) TO regress_caio_worker;
GRANT USAGE ON SCHEMA public TO regress_caio_worker;
SET ROLE regress_caio_worker;
SELECT * FROM caio_claim(NULL::plain, 'worker-a', '30 seconds');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
GRANT SELECT, UPDATE ON plain TO regress_caio_worker;
SET ROLE regress_caio_worker;
SELECT id, claim_holder FROM caio_claim(NULL::plain, 'worker-a', '30 seconds');
RESET ROLE;

DROP TABLE plain CASCADE;
DROP TABLE badly_typed;
DROP OWNED BY regress_caio_worker;
DROP ROLE regress_caio_worker;
