-- caio 0.4.0 to 0.5.0: the views bound to pg_catalog's functions and
-- operators alone, and the event trigger that keeps inheritance children off
-- the tables caio guards.

\echo Use "ALTER EXTENSION caio UPDATE TO '0.5.0'" to load this file. \quit

-- While an extension script runs, the search path is the extension's schema,
-- where anyone with CREATE can plant a function: a public.unnest(text[]) is
-- a better match than pg_catalog.unnest(anyarray), and the views bound to
-- whatever was there then, to run as whoever reads them.  Defined again,
-- qualified, they depend on pg_catalog's objects alone.
CREATE OR REPLACE VIEW caio_leases WITH (security_barrier) AS
    SELECT resource, holder, token, acquired_at, expires_at
      FROM caio_lease_state
     WHERE released_at IS NULL
       AND expires_at OPERATOR(pg_catalog.>) (SELECT caio_now());

CREATE OR REPLACE VIEW caio_nonce_attempts AS
    SELECT r.chain_id, r.address, r.nonce, a.attempt, a.tx_hash
      FROM caio_nonce_reservation r
     CROSS JOIN LATERAL pg_catalog.unnest(r.tx_hashes) WITH ORDINALITY AS a(tx_hash, attempt);

CREATE OR REPLACE VIEW caio_nonce_holes WITH (security_barrier) AS
    SELECT w.chain_id, w.address, n.nonce, r.state
      FROM caio_nonce_wallet w
     CROSS JOIN LATERAL pg_catalog.generate_series(w.chain_count, w.next_nonce OPERATOR(pg_catalog.-) 1) AS n(nonce)
      LEFT JOIN caio_nonce_reservation r
        ON r.chain_id OPERATOR(pg_catalog.=) w.chain_id
       AND r.address OPERATOR(pg_catalog.=) w.address
       AND r.nonce OPERATOR(pg_catalog.=) n.nonce
     WHERE r.state IS NULL OR r.state OPERATOR(pg_catalog.=) 'released';

-- A row trigger does not fire for the rows of a table's inheritance
-- children: this event trigger refuses a table made or altered into a child
-- of one that caio guards.
CREATE FUNCTION caio_guard_inheritance() RETURNS event_trigger
    AS 'MODULE_PATHNAME', 'caio_guard_inheritance'
    LANGUAGE C;
CREATE EVENT TRIGGER caio_guard_inheritance ON ddl_command_end
    WHEN TAG IN ('CREATE TABLE', 'ALTER TABLE', 'CREATE FOREIGN TABLE', 'ALTER FOREIGN TABLE')
    EXECUTE FUNCTION caio_guard_inheritance();
REVOKE ALL ON FUNCTION caio_guard_inheritance() FROM PUBLIC;
COMMENT ON FUNCTION caio_guard_inheritance() IS
    'The event trigger that refuses a table made or altered into an inheritance child of a table caio guards.';
