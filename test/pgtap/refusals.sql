-- The contract's refusals, each with its SQLSTATE: a client's error handling
-- is written against these codes.
BEGIN;
SELECT plan(16);

SELECT caio_clock_set('2030-01-01 00:00:00+00');
CREATE TABLE tap_sends (id int PRIMARY KEY, wallet text NOT NULL, state text, fence_token bigint);
SELECT caio_protect('tap_sends', 'fence_token', 'wallet', 'send:');
CREATE TABLE tap_payments (id int PRIMARY KEY, version bigint NOT NULL);
SELECT caio_versioned('tap_payments', 'version');
INSERT INTO tap_payments VALUES (1, 1);

CREATE TEMP TABLE tap_lease AS SELECT * FROM caio_acquire('send:0xtap', 'worker-a', '10 seconds');
SELECT isnt((SELECT token FROM tap_lease), NULL, 'worker-a acquires');
SELECT lives_ok($$INSERT INTO tap_sends SELECT 1, '0xtap', 'signed', token FROM caio_lease_of('send:0xtap')$$,
                'a write under the newest token lands');
SELECT throws_ok($$INSERT INTO tap_sends VALUES (2, '0xtap', 'signed', NULL)$$, 'LK003', NULL,
                 'a write naming no token is refused with LK003');
SELECT throws_ok($$UPDATE tap_sends SET state = 'x' WHERE id = 1$$, 'LK003', NULL,
                 'an UPDATE leaving the token column out is refused with LK003');
SELECT throws_ok($$DELETE FROM tap_sends WHERE id = 1$$, 'LK003', NULL,
                 'a DELETE without caio_use is refused with LK003');
SELECT throws_ok($$UPDATE tap_sends SET state = 'x', fence_token = fence_token + 1000 WHERE id = 1$$, 'LK001', NULL,
                 'a forged future token is refused with LK001');

SELECT caio_clock_advance('11 seconds');
SELECT is((caio_acquire('send:0xtap', 'worker-b', '10 seconds')).holder, 'worker-b', 'worker-b takes over');
SELECT throws_ok($$UPDATE tap_sends SET state = 'stale', fence_token = (SELECT token FROM tap_lease) WHERE id = 1$$, 'LK001', NULL,
                 'the paused holder''s UPDATE is refused with LK001');
SELECT throws_ok($$SELECT caio_use(ROW(l.*)::caio_lease) FROM tap_lease l$$, 'LK001', NULL,
                 'caio_use of the superseded lease is refused with LK001');
SELECT is((SELECT caio_renew(ROW(l.*)::caio_lease, '10 seconds') FROM tap_lease l), NULL,
          'the paused holder''s renew returns NULL');
SELECT is((SELECT caio_release(ROW(l.*)::caio_lease) FROM tap_lease l), false,
          'the paused holder''s release returns false');
SELECT lives_ok($$UPDATE tap_sends SET state = 'sent', fence_token = (SELECT token FROM caio_lease_of('send:0xtap')) WHERE id = 1$$,
                'the new holder''s write lands');

SELECT throws_ok($$UPDATE tap_payments SET version = 3 WHERE id = 1$$, 'LK002', NULL,
                 'a version that skips ahead is refused with LK002');
SELECT lives_ok($$UPDATE tap_payments SET version = 2 WHERE id = 1$$, 'the next version is accepted');
SELECT throws_ok($$UPDATE tap_payments SET version = 2 WHERE id = 1$$, 'LK002', NULL,
                 'a second writer on the same version is refused with LK002');

SELECT throws_ok($$SELECT caio_acquire('', 'worker-a', '1 second')$$, '22023', 'resource must not be empty',
                 'bad arguments are 22023');

SELECT caio_clock_reset();
SELECT * FROM finish();
ROLLBACK;
