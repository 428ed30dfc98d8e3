-- Dropping and re-creating the extension in a session that already used it:
-- caio notices the new objects and keeps working.
SELECT token > 0 AS has_token FROM caio_acquire('reinstall:r', 'worker-a', '1 minute');

-- Protected tables depend on caio: the extension cannot be dropped from
-- under them by accident.
DROP EXTENSION caio;
\echo :LAST_ERROR_SQLSTATE
DROP TABLE transfers, ledger;
DROP EXTENSION caio;
CREATE EXTENSION caio;

-- A new extension starts a new token sequence: DROP EXTENSION removes every
-- lease and token with it, as it removes any table.
SELECT resource, holder, token FROM caio_acquire('reinstall:r', 'worker-a', '1 minute');
SELECT caio_release(caio_lease_of('reinstall:r')) AS released;

-- The extension lives in one schema and cannot be moved.
ALTER EXTENSION caio SET SCHEMA pg_catalog;
\echo :LAST_ERROR_SQLSTATE
