-- Objects planted where caio looks for its own, by a role with CREATE in
-- caio's schema (here public, where caio lives): caio never reads, writes
-- or runs them, and nothing of caio's binds to them.
--   * A database still at 0.1 has no caio_token_epoch; caio uses a relation
--     it finds by name only if it belongs to the extension, so a view of
--     that name, which would run its functions as the extension owner, is
--     ignored.
--   * While an install or upgrade script runs, the search path is caio's
--     schema: a public.unnest(text[]) is a better match than
--     pg_catalog.unnest(anyarray).  The scripts qualify every function and
--     operator that is not caio's own.
SET client_min_messages = warning;
DROP EXTENSION caio CASCADE;
RESET client_min_messages;
CREATE ROLE regress_caio_mig;
CREATE ROLE regress_caio_app;
GRANT CREATE ON SCHEMA public TO regress_caio_mig;
-- Every planted function writes here when it runs, and as whom.
CREATE TABLE planted_ran (what text, ran_as name);
GRANT INSERT ON planted_ran TO PUBLIC;

SET ROLE regress_caio_mig;
CREATE FUNCTION public.planted(what text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO public.planted_ran VALUES (what, current_user);
    IF (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user) THEN
        EXECUTE 'ALTER ROLE regress_caio_mig SUPERUSER';
    END IF;
END $$;
CREATE FUNCTION public.unnest(a text[]) RETURNS SETOF text LANGUAGE plpgsql AS $$
BEGIN PERFORM public.planted('unnest(text[])'); RETURN QUERY SELECT pg_catalog.unnest(a); END $$;
CREATE FUNCTION public.generate_series(a bigint, b bigint) RETURNS SETOF bigint LANGUAGE plpgsql AS $$
BEGIN PERFORM public.planted('generate_series'); RETURN QUERY SELECT pg_catalog.generate_series(a, b); END $$;
CREATE FUNCTION public.octet_length(t text) RETURNS int LANGUAGE plpgsql AS $$
BEGIN PERFORM public.planted('octet_length'); RETURN pg_catalog.octet_length(t); END $$;
CREATE FUNCTION public.clock_timestamp() RETURNS timestamptz LANGUAGE plpgsql AS $$
BEGIN PERFORM public.planted('clock_timestamp'); RETURN pg_catalog.clock_timestamp(); END $$;
CREATE FUNCTION public.planted_texteq(a text, b text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN PERFORM public.planted('text = text'); RETURN a OPERATOR(pg_catalog.=) b; END $$;
CREATE OPERATOR public.= (LEFTARG = text, RIGHTARG = text, FUNCTION = public.planted_texteq);
CREATE FUNCTION public.planted_int8eq(a bigint, b bigint) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN PERFORM public.planted('bigint = bigint'); RETURN a OPERATOR(pg_catalog.=) b; END $$;
CREATE OPERATOR public.= (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = public.planted_int8eq);
CREATE FUNCTION public.planted_tsgt(a timestamptz, b timestamptz) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN PERFORM public.planted('timestamptz > timestamptz'); RETURN a OPERATOR(pg_catalog.>) b; END $$;
CREATE OPERATOR public.> (LEFTARG = timestamptz, RIGHTARG = timestamptz, FUNCTION = public.planted_tsgt);
CREATE FUNCTION public.planted_int84mi(a bigint, b int) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN PERFORM public.planted('bigint - int'); RETURN a OPERATOR(pg_catalog.-) b; END $$;
CREATE OPERATOR public.- (LEFTARG = bigint, RIGHTARG = int, FUNCTION = public.planted_int84mi);
RESET ROLE;

-- A database at 0.1, under today's library, and a caio_token_epoch planted
-- by the migration role: a view whose rows come from a function that makes
-- the migration role a superuser when a superuser reads it.
CREATE EXTENSION caio VERSION '0.1';
GRANT USAGE ON TYPE caio_lease TO regress_caio_app;
GRANT EXECUTE ON FUNCTION caio_acquire(text, text, interval, interval) TO regress_caio_app;
SET ROLE regress_caio_mig;
CREATE FUNCTION public.pwn() RETURNS numeric LANGUAGE plpgsql AS $$
BEGIN PERFORM public.planted('caio_token_epoch'); RETURN 0; END $$;
CREATE VIEW public.caio_token_epoch AS
    SELECT s.system_identifier::numeric + public.pwn() AS system_identifier,
           (SELECT oid FROM pg_database WHERE datname = current_database()) AS database_oid,
           1::bigint AS timeline_id, 0::bigint AS epoch, now() AS recorded_at
      FROM pg_control_system() s;
SET ROLE regress_caio_app;
SELECT token > 0 AS granted FROM caio_acquire('planted:y', 'app', '1 minute');
RESET ROLE;
SELECT rolsuper FROM pg_roles WHERE rolname = 'regress_caio_mig';
-- The update makes the real table, once the planted view is out of its way.
DROP VIEW public.caio_token_epoch;
DROP FUNCTION public.pwn();

-- Installed at 0.1 and updated to today's version with every shadow in
-- place, caio's views give what they should, and nothing planted ran.
-- Since 0.7.0 the update is refused while the migration role can create
-- objects in caio's schema (below); the shadows it planted meanwhile stay.
REVOKE CREATE ON SCHEMA public FROM regress_caio_mig;
ALTER EXTENSION caio UPDATE;
SELECT caio_nonce_reserve(1, '0xde709f2102306220921060314715629080e2fb77') AS nonce;
SELECT caio_nonce_mark(1, '0xde709f2102306220921060314715629080e2fb77', 0, 'signed',
                       '0x' || repeat('ab', 32));
SELECT caio_nonce_sync(1, '0xde709f2102306220921060314715629080e2fb77', 0) AS next_nonce;
SELECT nonce, attempt FROM caio_nonce_attempts;
SELECT nonce, state FROM caio_nonce_holes;
SELECT resource FROM caio_leases;
SELECT * FROM planted_ran;

-- Nothing of caio's depends on a planted function or operator.
CREATE FUNCTION pg_temp.planted_objects() RETURNS TABLE (classid oid, objid oid)
LANGUAGE sql AS $$
    SELECT c, o
      FROM (SELECT 'pg_proc'::regclass::oid, oid FROM pg_proc
             WHERE pronamespace = 'public'::regnamespace
            UNION ALL
            SELECT 'pg_operator'::regclass::oid, oid FROM pg_operator
             WHERE oprnamespace = 'public'::regnamespace) AS public_objects(c, o)
     WHERE NOT EXISTS (SELECT FROM pg_depend e
                        WHERE e.classid = c AND e.objid = o AND e.deptype = 'e')
$$;
CREATE FUNCTION pg_temp.depends_on_planted() RETURNS TABLE (object text, depends_on text)
LANGUAGE sql AS $$
    SELECT pg_describe_object(d.classid, d.objid, d.objsubid),
           pg_describe_object(d.refclassid, d.refobjid, d.refobjsubid)
      FROM pg_depend d JOIN pg_temp.planted_objects() p
        ON d.refclassid = p.classid AND d.refobjid = p.objid
     WHERE (d.classid, d.objid) NOT IN (SELECT * FROM pg_temp.planted_objects())
$$;
SELECT count(*) AS planted FROM pg_temp.planted_objects();
SELECT * FROM pg_temp.depends_on_planted();

-- The same for a fresh install of today's version.
SET client_min_messages = warning;
DROP EXTENSION caio CASCADE;
RESET client_min_messages;
CREATE EXTENSION caio;
SELECT caio_nonce_reserve(1, '0xde709f2102306220921060314715629080e2fb77') AS nonce;
SELECT caio_nonce_mark(1, '0xde709f2102306220921060314715629080e2fb77', 0, 'signed',
                       '0x' || repeat('cd', 32));
SELECT nonce, attempt FROM caio_nonce_attempts;
SELECT count(*) AS holes FROM caio_nonce_holes;
SELECT count(*) AS leases FROM caio_leases;
SELECT * FROM planted_ran;
SELECT * FROM pg_temp.depends_on_planted();

-- What caio needs but does not find among the extension's members is an
-- error with its own SQLSTATE (55000), not an internal one.
ALTER EXTENSION caio DROP TABLE caio_clock;
\c
SELECT caio_now() IS NOT NULL AS read;
\echo :LAST_ERROR_SQLSTATE
ALTER EXTENSION caio ADD TABLE caio_clock;
CREATE TABLE planted_transfers (id int, wallet text, fence_token bigint);
ALTER EXTENSION caio DROP FUNCTION caio_fence_trigger();
SELECT caio_protect('planted_transfers', 'fence_token', 'wallet');
\echo :LAST_ERROR_SQLSTATE
ALTER EXTENSION caio ADD FUNCTION caio_fence_trigger();
SELECT caio_protect('planted_transfers', 'fence_token', 'wallet');
DROP TABLE planted_transfers;

-- Planted overloads (the fourth review).  The README calls caio with
-- untyped literals, which resolve toward text: a caio_protect(text, text,
-- text, text) that a role planted in any schema of the caller's
-- search_path is a better match than caio's, and runs instead, as the
-- caller.  caio cannot see a call that never reaches it, so it refuses the
-- set-ups that allow one: its install and update where an untrusted role
-- can create objects in its schema or planted a function named like its
-- own there, and its set-up and housekeeping calls (and any call a
-- superuser makes) while such a role can create objects in caio's schema
-- or a schema of the search_path.
CREATE TABLE planted_payments (id int, wallet text, fence_token bigint);
-- PostgreSQL 18 shows the install script's statement as the context of an
-- error raised in it; the errors are the same on every version.
\set SHOW_CONTEXT never
SET client_min_messages = warning;
DROP EXTENSION caio CASCADE;
RESET client_min_messages;
GRANT CREATE ON SCHEMA public TO regress_caio_mig;
CREATE EXTENSION caio;
\echo :LAST_ERROR_SQLSTATE
REVOKE CREATE ON SCHEMA public FROM regress_caio_mig;
GRANT CREATE ON SCHEMA public TO PUBLIC;
CREATE EXTENSION caio;
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
-- A function planted while the role could is still there after the revoke.
GRANT CREATE ON SCHEMA public TO regress_caio_mig;
SET ROLE regress_caio_mig;
CREATE FUNCTION public.caio_protect(tbl text, token_column text, resource_column text, resource_prefix text)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN PERFORM public.planted('caio_protect(text, text, text, text)'); END $$;
RESET ROLE;
REVOKE CREATE ON SCHEMA public FROM regress_caio_mig;
CREATE EXTENSION caio;
\echo :LAST_ERROR_SQLSTATE
DROP FUNCTION public.caio_protect(text, text, text, text);
CREATE EXTENSION caio;
SELECT caio_protect('planted_payments', 'fence_token', 'wallet', 'send:');

-- CREATE granted after the install: the set-up and housekeeping calls
-- refuse to run, for a superuser as for anyone, and so does any call a
-- superuser makes; a call qualified with caio's schema too.
GRANT CREATE ON SCHEMA public TO regress_caio_mig;
SELECT caio_protect('planted_payments', 'fence_token', 'wallet', 'send:');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_versioned('planted_payments', 'id');
SELECT caio_claimable('planted_payments');
SELECT caio_lease_purge('1 day');
SELECT caio_clock_advance('1 second');
SELECT token FROM caio_acquire('planted:root', 'root', '1 minute');
SET search_path = pg_catalog;
SELECT public.caio_protect('public.planted_payments', 'fence_token', 'wallet', 'send:');
RESET search_path;
-- The migration role may run its own set-up: the only other role that can
-- create in public is the database owner.  An application role's lease
-- calls are not refused: a capture of them is no escalation to a
-- superuser, and doc/privileges.md says what to keep to.
ALTER TABLE planted_payments OWNER TO regress_caio_mig;
GRANT EXECUTE ON FUNCTION caio_protect(regclass, name, name, text) TO regress_caio_mig;
GRANT USAGE ON TYPE caio_lease TO regress_caio_app;
GRANT EXECUTE ON FUNCTION caio_acquire(text, text, interval, interval) TO regress_caio_app;
SET ROLE regress_caio_mig;
SELECT caio_protect('planted_payments', 'fence_token', 'wallet', 'send:');
SET ROLE regress_caio_app;
SELECT token > 0 AS granted FROM caio_acquire('planted:app', 'app', '1 minute');
RESET ROLE;
REVOKE CREATE ON SCHEMA public FROM regress_caio_mig;
-- Another role's schema on the search_path: its owner can create there.
CREATE SCHEMA planted_app AUTHORIZATION regress_caio_app;
SET search_path = planted_app, public;
SELECT caio_protect('planted_payments', 'fence_token', 'wallet', 'send:');
RESET search_path;
DROP SCHEMA planted_app;
SELECT caio_protect('planted_payments', 'fence_token', 'wallet', 'send:');

-- The update from 0.6.0 is refused as the install is.
SET client_min_messages = warning;
DROP EXTENSION caio CASCADE;
RESET client_min_messages;
CREATE EXTENSION caio VERSION '0.6.0';
GRANT CREATE ON SCHEMA public TO regress_caio_mig;
ALTER EXTENSION caio UPDATE;
\echo :LAST_ERROR_SQLSTATE
REVOKE CREATE ON SCHEMA public FROM regress_caio_mig;
ALTER EXTENSION caio UPDATE;
SELECT e.extversion = a.default_version AS updated
  FROM pg_extension e JOIN pg_available_extensions a ON a.name = e.extname WHERE e.extname = 'caio';
SELECT * FROM planted_ran WHERE what LIKE 'caio%';
DROP TABLE planted_payments;
\set SHOW_CONTEXT errors

-- Leave the database as the suites found it.
DROP EXTENSION caio CASCADE;
DROP FUNCTION public.unnest(text[]), public.generate_series(bigint, bigint),
    public.octet_length(text), public.clock_timestamp() CASCADE;
DROP OPERATOR public.= (text, text), public.= (bigint, bigint),
    public.> (timestamptz, timestamptz), public.- (bigint, int);
DROP FUNCTION public.planted_texteq(text, text), public.planted_int8eq(bigint, bigint),
    public.planted_tsgt(timestamptz, timestamptz), public.planted_int84mi(bigint, int),
    public.planted(text);
DROP TABLE planted_ran;
REVOKE CREATE ON SCHEMA public FROM regress_caio_mig;
DROP ROLE regress_caio_mig;
DROP ROLE regress_caio_app;
CREATE EXTENSION caio;
