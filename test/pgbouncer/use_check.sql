-- After use_client_a.sql and client b's write through the pool of one: every
-- step ran on one server backend, a's write under caio_use landed, and the
-- writes naming no token after it, a's own and b's, were refused.
\set ON_ERROR_STOP on
SELECT client, step, backend_pid = min(backend_pid) OVER () AS same_backend FROM use_log ORDER BY seq;
DO $$
DECLARE
    n bigint;
BEGIN
    SELECT count(DISTINCT backend_pid) INTO n FROM use_log;
    IF n <> 1 THEN RAISE EXCEPTION 'the pool of one server connection used % server backends', n; END IF;
    IF (SELECT array_agg(client || ': ' || step ORDER BY seq) FROM use_log)
       IS DISTINCT FROM ARRAY['a: caio_use: write landed', 'a: next transaction: refused LK003',
                              'b: other client, next transaction: refused LK003'] THEN
        RAISE EXCEPTION 'caio_use under transaction pooling: unexpected steps';
    END IF;
    IF (SELECT sum(balance) FROM use_accounts) <> 2 THEN
        RAISE EXCEPTION 'only the write under caio_use should have landed';
    END IF;
    RAISE NOTICE 'caio_use is transaction-scoped under transaction pooling';
END $$;
