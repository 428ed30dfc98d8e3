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
