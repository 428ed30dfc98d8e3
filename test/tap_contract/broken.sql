-- caio_tap against tables that do not keep caio's contract: this file must
-- FAIL, with diagnostics that say why (run.sh checks both).
SELECT plan(8 + 8 + 8 + 8 + 5 + 6 + 8 + 6 + 8 + 8 + 8 + 5 + 6 + 6);

-- The fencing trigger was dropped: without the trigger's arguments the
-- story cannot run; with the columns given, it shows the stale writes land.
SELECT * FROM caio_tap_fencing('transfers_unprotected', '{"id": 2, "wallet": "0xabc", "amount": 5}');
SELECT * FROM caio_tap_fencing('transfers_unprotected', '{"id": 2, "wallet": "0xabc", "amount": 5}',
                               'fence_token', 'wallet', 'send:');
-- The fencing trigger is disabled.
SELECT * FROM caio_tap_fencing('transfers_disabled', '{"id": 2, "wallet": "0xabc", "amount": 5}');
-- The resource column was renamed after caio_protect.
SELECT * FROM caio_tap_fencing('transfers_renamed', '{"id": 2, "account": "0xabc", "amount": 5}');
-- The version trigger was dropped.
SELECT * FROM caio_tap_versioned('payments_unversioned', '{"id": 2, "state": "new"}', 'version');
-- The claim trigger is disabled.
SELECT * FROM caio_tap_claimable('operations_disabled', '{"id": 2}');
-- caio's triggers are enabled in replica mode only.
SELECT * FROM caio_tap_fencing('transfers_replica', '{"id": 2, "wallet": "0xabc", "amount": 5}');
SELECT * FROM caio_tap_claimable('operations_replica', '{"id": 2}');
-- The resource column, and the token column, are now generated columns.
SELECT * FROM caio_tap_fencing('transfers_generated', '{"id": 2, "wallet": "0xabc", "amount": 5}');
SELECT * FROM caio_tap_fencing('transfers_generated_token', '{"id": 2, "wallet": "0xabc", "amount": 5}');
-- Tables inherit from the protected, versioned and claimable tables.
SELECT * FROM caio_tap_fencing('transfers_inherited', '{"id": 2, "wallet": "0xabc", "amount": 5}');
SELECT * FROM caio_tap_versioned('payments_inherited', '{"id": 2, "state": "new"}');
SELECT * FROM caio_tap_claimable('operations_inherited', '{"id": 2}');
-- The workers' order names a column the table does not have.
SELECT * FROM caio_tap_claimable('operations', '{"id": 2}', 'priority DESC');

SELECT * FROM finish();
