-- After the lease stress through PgBouncer: the grants log names the server
-- backend that granted each lease; prove that clients shared a few backends.
-- psql variables: pool_size, clients.
\set ON_ERROR_STOP on
SELECT set_config('bouncer_test.pool_size', :'pool_size', false),
       set_config('bouncer_test.clients', :'clients', false) \g /dev/null
SELECT count(DISTINCT holder) AS clients,
       count(DISTINCT backend_pid) AS server_backends,
       (SELECT count(*) FROM (SELECT FROM stress_grants GROUP BY holder
                               HAVING count(DISTINCT backend_pid) > 1) h) AS clients_on_several_backends,
       (SELECT count(*) FROM (SELECT FROM stress_grants GROUP BY backend_pid
                               HAVING count(DISTINCT holder) > 1) b) AS backends_for_several_clients
  FROM stress_grants;

DO $$
DECLARE
    pool_size int := current_setting('bouncer_test.pool_size');
    clients int := current_setting('bouncer_test.clients');
    n bigint;
BEGIN
    SELECT count(DISTINCT holder) INTO n FROM stress_grants;
    IF n <> clients THEN RAISE EXCEPTION 'only % of % clients were granted a lease', n, clients; END IF;
    SELECT count(DISTINCT backend_pid) INTO n FROM stress_grants;
    IF n > pool_size THEN
        RAISE EXCEPTION 'leases were granted by % server backends, more than the pool of %: no pooling', n, pool_size;
    END IF;
    -- Each client's transactions went to whichever server connection was
    -- free, and each server connection served several clients.
    SELECT count(*) INTO n FROM (SELECT FROM stress_grants GROUP BY holder
                                  HAVING count(DISTINCT backend_pid) > 1) h;
    IF n = 0 THEN RAISE EXCEPTION 'no client was served by more than one server backend'; END IF;
    SELECT count(*) INTO n FROM (SELECT FROM stress_grants GROUP BY backend_pid
                                  HAVING count(DISTINCT holder) > 1) b;
    IF n = 0 THEN RAISE EXCEPTION 'no server backend served more than one client'; END IF;
    RAISE NOTICE 'lease stress ran pooled: % clients shared at most % server backends', clients, pool_size;
END $$;
