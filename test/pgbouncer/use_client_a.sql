-- Client a, through PgBouncer's pool of one server connection: transaction 1
-- takes the lease, transaction 2 writes under it through caio_use, and
-- transaction 3, on the same server backend, names no token and must be
-- refused with LK003: caio_use never outlives its transaction.
\set ON_ERROR_STOP on
SELECT (caio_acquire('use:w', 'client-a', '1 minute')).token AS tok \gset
BEGIN;
SELECT caio_use(ROW('use:w', 'client-a', :tok, NULL, NULL)::caio_lease) \g /dev/null
UPDATE use_accounts SET balance = balance + 1 WHERE wallet = 'w';
INSERT INTO use_log (client, step) VALUES ('a', 'caio_use: write landed');
COMMIT;
SELECT use_write_refused('a', 'next transaction') \g /dev/null
