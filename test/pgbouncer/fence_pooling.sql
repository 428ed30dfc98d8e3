-- After the fencing stress through PgBouncer: the event log names the server
-- backend of each grant, write and refusal; prove that clients shared a few
-- backends, and that leases outlived their server connection: a lease
-- granted on one backend was written under (or refused) on another.
-- psql variable: pool_size.
\set ON_ERROR_STOP on
SELECT set_config('bouncer_test.pool_size', :'pool_size', false) \g /dev/null

-- Each lease (resource, token) with the backend that granted it and the
-- backends that wrote under it or were refused.
CREATE TEMP VIEW lease_backends AS
SELECT g.resource, g.token, g.backend_pid AS granted_on,
       count(*) FILTER (WHERE e.kind <> 'refused' AND e.backend_pid <> g.backend_pid) AS writes_elsewhere,
       count(*) FILTER (WHERE e.kind = 'refused' AND e.backend_pid <> g.backend_pid) AS refusals_elsewhere
  FROM stress_events g
  JOIN stress_events e ON e.resource = g.resource AND e.token = g.token AND e.kind <> 'grant'
 WHERE g.kind = 'grant'
 GROUP BY g.resource, g.token, g.backend_pid;

SELECT (SELECT count(DISTINCT backend_pid) FROM stress_events) AS server_backends,
       count(*) AS leases_used,
       count(*) FILTER (WHERE writes_elsewhere > 0) AS written_on_another_backend,
       count(*) FILTER (WHERE refusals_elsewhere > 0) AS refused_on_another_backend
  FROM lease_backends;

DO $$
DECLARE
    pool_size int := current_setting('bouncer_test.pool_size');
    n bigint;
BEGIN
    SELECT count(DISTINCT backend_pid) INTO n FROM stress_events;
    IF n > pool_size THEN
        RAISE EXCEPTION 'events came from % server backends, more than the pool of %: no pooling', n, pool_size;
    END IF;
    SELECT count(*) INTO n FROM lease_backends WHERE writes_elsewhere > 0;
    IF n = 0 THEN RAISE EXCEPTION 'no lease was written under on another server backend than the one that granted it'; END IF;
    SELECT count(*) INTO n FROM lease_backends WHERE refusals_elsewhere > 0;
    IF n = 0 THEN RAISE EXCEPTION 'no stale write was refused on another server backend than the one that granted its lease'; END IF;
    RAISE NOTICE 'fencing stress ran pooled: leases and refusals crossed server connections';
END $$;
