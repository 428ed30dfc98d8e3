-- caio_tap against tables that keep caio's contract: every test passes, and
-- the stories leave nothing behind, whether caio's test clock runs or is
-- frozen.  No transaction around the file: each story must clean up after
-- itself.  The tables are made by setup.sql.
SELECT plan(8 + 8 + 5 + 6 + 6 + 6 + 3 + 8 + 6 + 3);

-- caio's clock runs.  The wallet 0xabc has a row and a live lease of
-- another holder already.
SELECT * FROM caio_tap_fencing('transfers', '{"id": 2, "wallet": "0xabc", "amount": 5}');
-- The ledger's own trigger calls ledger_note() without its schema: it must
-- find it through the caller's search_path.
SET search_path = "app data", public;
SELECT * FROM caio_tap_fencing('"Ledger Entries"', '{"Account": 42, "delta": -5}');
RESET search_path;
SELECT * FROM caio_tap_versioned('payments', '{"id": 2, "state": "new"}');
SELECT * FROM caio_tap_claimable('operations', '{"id": 2}');
SELECT * FROM caio_tap_claimable('jobs', '{"id": 1, "queue": "mail"}');
-- Workers that claim in an order (caio_claim's order_by).
SELECT * FROM caio_tap_claimable('jobs', '{"id": 1, "queue": "mail"}', 'queue DESC, id');

SELECT is(contract_state(), (SELECT digest FROM contract_before),
          'nothing left behind: rows, leases and the test clock are as before');
SELECT is((SELECT count(*) FROM caio_clock), 0::bigint, 'caio''s test clock is not frozen');
SELECT cmp_ok(abs(extract(epoch FROM caio_now() - clock_timestamp())), '<', 1::numeric,
              'caio_now() reads the server clock again in this session');

-- caio's clock frozen, by the test suite that calls caio_tap.
-- (A typed argument: shadow.sh plants a caio_clock_set(text) in public.)
SELECT caio_clock_set('2031-01-01 00:00:00+00'::timestamptz);
SELECT * FROM caio_tap_fencing('transfers', '{"id": 2, "wallet": "0xabc", "amount": 5}');
SELECT * FROM caio_tap_claimable('operations', '{"id": 2}');
SELECT is(caio_now(), '2031-01-01 00:00:00+00', 'a frozen clock is back where it was');
SELECT is((SELECT frozen_at FROM caio_clock), '2031-01-01 00:00:00+00', 'caio_clock still holds it');
SELECT caio_clock_reset();
SELECT is(contract_state(), (SELECT digest FROM contract_before),
          'nothing left behind after the frozen-clock stories either');

SELECT * FROM finish();
