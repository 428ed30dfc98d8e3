-- A fresh caio, so that no earlier suite's leases, tokens or guarded tables
-- matter, and the time settings the suites print under.  Shared by the
-- suites publication and cutover_epoch, which include it.
SET client_min_messages = warning;
DROP EXTENSION caio CASCADE;
CREATE EXTENSION caio;
RESET client_min_messages;
SET timezone = 'UTC';
SET datestyle = 'ISO';
