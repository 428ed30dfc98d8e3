-- caio 0.6.0 to 0.7.0: the fourth review's fixes (issue 33).

\echo Use "ALTER EXTENSION caio UPDATE TO '0.7.0'" to load this file. \quit

-- Each change below has a section of its own, in the order of the install
-- script (sql/caio.sql), and qualifies every function and operator that is
-- not caio's own.

-- F3 (issue 33): rotating caio_lock_key split the lock keys between
-- sessions, which cached the secret for their life.  The trigger makes a
-- rotation wait for the transactions that use the old secret and every
-- session read the new one; creating it invalidates caio_lock_key, which
-- also makes every session of the 0.7.0 library compare its version with
-- the schema's.  A later update that changes how lock keys are made must
-- write caio_lock_key (UPDATE ... SET key = key fires the trigger), so that
-- sessions still on the older library are refused until they reconnect.
CREATE FUNCTION @extschema@.caio_lock_key_trigger() RETURNS trigger
    AS 'MODULE_PATHNAME', 'caio_lock_key_trigger'
    LANGUAGE C;
CREATE TRIGGER caio_lock_key_rotation
    BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON @extschema@.caio_lock_key
    FOR EACH STATEMENT EXECUTE FUNCTION @extschema@.caio_lock_key_trigger();
REVOKE ALL ON FUNCTION @extschema@.caio_lock_key_trigger() FROM PUBLIC;
COMMENT ON FUNCTION @extschema@.caio_lock_key_trigger() IS
    'The trigger on caio_lock_key: a rotation of the lock key secret waits for the transactions that use it, and every session reads the new one.';
