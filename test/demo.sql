-- The caio demo: a hot wallet's "send" resource, two payment workers, one of
-- which pauses past its lease.  Run by test/demo.sh in a throwaway database.
\pset footer off
SET timezone = 'UTC';
SET datestyle = 'ISO';

\echo
\echo '== The test clock: frozen at 12:00 so that the story reads the same every time.'
SELECT caio_clock_set('2030-01-01 12:00:00+00') AS now;

\echo
\echo '== worker-a acquires the wallet for 30 seconds and gets fencing token 1.'
SELECT * FROM caio_acquire('send:0xabc', 'worker-a', '30 seconds');

\echo
\echo '== worker-b tries at the same time: NULL, the lease is taken (it did not queue).'
SELECT caio_acquire('send:0xabc', 'worker-b', '30 seconds') IS NULL AS "worker-b refused";

\echo
\echo '== worker-a retries after a lost reply: the same lease, same token, later expiry.'
SELECT caio_clock_advance('5 seconds') AS now;
SELECT holder, token, expires_at FROM caio_acquire('send:0xabc', 'worker-a', '30 seconds');

\echo
\echo '== worker-a freezes (a GC pause, a swapped VM) for 40 seconds.  Its lease expires.'
SELECT caio_clock_advance('40 seconds') AS now;
SELECT * FROM caio_leases;

\echo
\echo '== worker-b takes over: a new lease with a larger token.'
SELECT * FROM caio_acquire('send:0xabc', 'worker-b', '30 seconds');

\echo
\echo '== worker-a wakes up and still believes it holds the wallet.  The database says no:'
\echo '   its renew returns NULL and its release returns false; worker-b keeps the lease.'
SELECT caio_renew(ROW('send:0xabc', 'worker-a', 1, NULL, NULL)::caio_lease, '30 seconds') IS NULL AS "renew refused",
       caio_release(ROW('send:0xabc', 'worker-a', 1, NULL, NULL)::caio_lease) AS "release accepted";
SELECT holder, token, expires_at FROM caio_lease_of('send:0xabc');

\echo
\echo '== worker-b renews (same token) and releases when done.'
SELECT holder, token, expires_at FROM caio_renew(caio_lease_of('send:0xabc'), '1 minute');
SELECT caio_release(caio_lease_of('send:0xabc')) AS released;

\echo
\echo '== Tokens only grow: the next lease on any resource gets a larger one.'
SELECT resource, holder, token FROM caio_acquire('send:0xabc', 'worker-a', '30 seconds');
SELECT resource, holder, token FROM caio_acquire('send:0xdef', 'worker-c', '30 seconds');

\echo
\echo '== Not built yet in this version: the table-side refusal of worker-a''s stale'
\echo '   write (caio_protect, issue 3) and nonce reservation (issue 4).'
SELECT caio_clock_reset() IS NOT NULL AS "clock back to the server's";
