-- What differs between the PostgreSQL versions caio supports, in one suite
-- with an expected file per version (versions.out for 15, versions_1.out
-- for 17, versions_2.out for 18):
--   * an infinite interval is invalid syntax (22007) before 17; from 17 on
--     it parses, and caio refuses it itself (22023, "... must be finite");
--   * a regclass naming a missing schema is 3F000 before 17, 42P01 from 17;
--   * from 18 on, the loaded library names itself and its version.
-- (The lease wait event's name, CaioLease from 17 on, is in the isolation
-- spec acquire_wait.)
SET timezone = 'UTC';
SELECT caio_clock_set('2030-02-01 00:00:00+00');
SELECT token AS held_token FROM caio_acquire('versions:held', 'worker-a', '10 minutes') \gset
CREATE TABLE versions_jobs (id int PRIMARY KEY, state text);
SELECT caio_claimable('versions_jobs');
INSERT INTO versions_jobs (id, state) VALUES (1, 'pending');
CREATE TEMP TABLE state_before AS
    SELECT (SELECT string_agg(l::text, ',' ORDER BY resource) FROM caio_lease_state l) AS leases,
           (SELECT string_agg(j::text, ',' ORDER BY id) FROM versions_jobs j) AS jobs,
           caio_now() AS now;

\i test/regress/try.sql

SELECT c.call, r.state, r.msg
  FROM unnest(ARRAY[
    $$caio_acquire('versions:r', 'worker-a', 'infinity')$$,
    $$caio_acquire('versions:r', 'worker-a', '-infinity')$$,
    $$caio_renew(caio_lease_of('versions:held'), 'infinity')$$,
    $$caio_renew(caio_lease_of('versions:held'), '-infinity')$$,
    $$caio_claim(NULL::versions_jobs, 'worker-a', 'infinity')$$,
    $$caio_claim(NULL::versions_jobs, 'worker-a', '-infinity')$$,
    $$caio_acquire('versions:r', 'worker-a', '1 minute', 'infinity')$$,
    $$caio_acquire('versions:r', 'worker-a', '1 minute', '-infinity')$$,
    $$caio_clock_advance('infinity')$$,
    $$caio_clock_advance('-infinity')$$,
    $$caio_protect('no_such_schema.versions_jobs', 'fence_token', 'wallet')$$,
    $$caio_versioned('no_such_schema.versions_jobs', 'version')$$,
    $$caio_claimable('no_such_schema.versions_jobs')$$]) WITH ORDINALITY AS c(call, n),
       LATERAL try(c.call) r
 ORDER BY c.n;

-- Nothing changed: leases, the claimable table and the test clock.
SELECT (SELECT string_agg(l::text, ',' ORDER BY resource) FROM caio_lease_state l) = leases
           AS leases_unchanged,
       (SELECT string_agg(j::text, ',' ORDER BY id) FROM versions_jobs j) = jobs AS jobs_unchanged,
       caio_now() = now AS clock_unchanged
  FROM state_before;

-- PostgreSQL 18 lists loaded modules with the name and version they give
-- (PG_MODULE_MAGIC_EXT): caio's is the version its control file installs.
SELECT to_regproc('pg_catalog.pg_get_loaded_modules') IS NOT NULL AS lists_modules \gset
\if :lists_modules
SELECT module_name, version = (SELECT default_version FROM pg_available_extensions
                                WHERE name = 'caio') AS version_is_default,
       file_name
  FROM pg_get_loaded_modules() WHERE module_name = 'caio';
\else
SELECT 'PostgreSQL ' || current_setting('server_version_num')::int / 10000
       || ' does not list loaded modules' AS lists_modules;
\endif

DROP TABLE versions_jobs;
DROP FUNCTION try(text);
SELECT caio_release(caio_lease_of('versions:held')) AS released;
SELECT caio_clock_reset() IS NOT NULL AS reset;
