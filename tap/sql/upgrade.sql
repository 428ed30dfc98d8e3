-- caio_tap 0.2.0 to 0.3.0.  The Makefile builds the upgrade script from this
-- file, which holds what only the upgrade does, and from the functions of
-- sql/caio_tap.sql, which replace 0.2.0's (each runs with a fixed
-- search_path now, and test 1 checks generated columns and inheritance
-- children too).

\echo Use "ALTER EXTENSION caio_tap UPDATE TO '0.3.0'" to load this file. \quit

-- 0.2.0's caio_tap_enter() put caio_tap's, caio's and pgTAP's schemas on the
-- caller's search_path; caio_tap_enter(text) keeps the caller's path aside.
DROP FUNCTION @extschema@.caio_tap_enter();

