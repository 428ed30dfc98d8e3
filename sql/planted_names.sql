-- Names planted in caio's schema before CREATE EXTENSION or ALTER EXTENSION
-- UPDATE: every constraint and index caio makes is named, the scripts check
-- first that the names they take are free, and one error names everything
-- in the way.  caio finds its indexes through its tables, not by name in
-- the schema.
SET client_min_messages = warning;
DROP EXTENSION caio CASCADE;
RESET client_min_messages;
\set SHOW_CONTEXT never

-- A table under the name of caio_lease_state's primary key (before 0.7.0
-- the key then became caio_lease_state_pkey1, and every call failed), and
-- a type and a function under caio's names.
CREATE TABLE public.caio_lease_state_pkey (x int);
CREATE TYPE public.caio_lease AS (x int);
CREATE FUNCTION public.caio_now() RETURNS timestamptz LANGUAGE sql AS 'SELECT now()';
CREATE EXTENSION caio;
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS extensions FROM pg_extension WHERE extname = 'caio';

-- Installed by 0.6.0's script, whose primary keys were unnamed, beside the
-- planted table: the key is named otherwise, and caio finds it all the same
-- (it is the table's primary key).
DROP TYPE public.caio_lease;
DROP FUNCTION public.caio_now();
CREATE EXTENSION caio VERSION '0.6.0';
SELECT indexrelid::regclass AS lease_state_key FROM pg_index
 WHERE indrelid = 'caio_lease_state'::regclass;
SELECT token > 0 AS granted FROM caio_acquire('planted:key', 'app', '1 minute');
SELECT resource FROM caio_lease_of('planted:key');
SET client_min_messages = warning;
DROP EXTENSION caio CASCADE;
RESET client_min_messages;
DROP TABLE public.caio_lease_state_pkey;

-- The update from 0.5.0, which makes caio_lock_key (and the key of its
-- lock keys), with a table of that name and a function under the new
-- caio_claim's signature in the way: refused before anything changed,
-- naming both.
CREATE EXTENSION caio VERSION '0.5.0';
CREATE TABLE public.caio_lock_key (x int);
CREATE FUNCTION public.caio_claim(anyelement, text, interval, int, text, text)
    RETURNS SETOF anyelement LANGUAGE sql AS 'SELECT $1';
ALTER EXTENSION caio UPDATE;
\echo :LAST_ERROR_SQLSTATE
SELECT extversion FROM pg_extension WHERE extname = 'caio';
-- Out of the way, the update goes through to today's version.
DROP TABLE public.caio_lock_key;
DROP FUNCTION public.caio_claim(anyelement, text, interval, int, text, text);
ALTER EXTENSION caio UPDATE;
SELECT extversion = (SELECT default_version FROM pg_available_extensions WHERE name = 'caio') AS current
  FROM pg_extension WHERE extname = 'caio';
SELECT token > 0 AS granted FROM caio_acquire('planted:update', 'app', '1 minute');

-- Every constraint and index of a fresh install has the name it had
-- before 0.7.0, when PostgreSQL chose them.
SET client_min_messages = warning;
DROP EXTENSION caio CASCADE;
RESET client_min_messages;
CREATE EXTENSION caio;
SELECT conrelid::regclass AS tbl, conname, contype FROM pg_constraint
 WHERE connamespace = 'public'::regnamespace AND conrelid::regclass::text LIKE 'caio\_%'
   AND contype <> 'n'
 ORDER BY 1, 2;
SELECT indrelid::regclass AS tbl, indexrelid::regclass AS index FROM pg_index
 WHERE indrelid::regclass::text LIKE 'caio\_%' ORDER BY 1, 2;
