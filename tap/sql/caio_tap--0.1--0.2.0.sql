-- caio_tap 0.1 to 0.2.0: comments on the three functions a test file calls
-- (what \df+ and \dd show).

\echo Use "ALTER EXTENSION caio_tap UPDATE TO '0.2.0'" to load this file. \quit

COMMENT ON FUNCTION caio_tap_fencing(regclass, jsonb, name, name, text) IS
    'pgTAP: plays a lease takeover against a table protected with caio_protect and returns 8 TAP lines (the stale writer refused with LK001, a write naming no token with LK003); rolled back. Doc: doc/caio_tap.md.';
COMMENT ON FUNCTION caio_tap_versioned(regclass, jsonb, name) IS
    'pgTAP: plays two writers on one version against a table set up with caio_versioned and returns 5 TAP lines (LK002 for the lost update); rolled back. Doc: doc/caio_tap.md.';
COMMENT ON FUNCTION caio_tap_claimable(regclass, jsonb) IS
    'pgTAP: plays a claim takeover against a table set up with caio_claimable and returns 6 TAP lines (the stale finish refused with LK001); rolled back. Doc: doc/caio_tap.md.';
