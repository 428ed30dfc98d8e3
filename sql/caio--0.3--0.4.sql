-- caio 0.3 to 0.4: lease purge, security-barrier views, the nonce attempts
-- view.

\echo Use "ALTER EXTENSION caio UPDATE TO '0.4'" to load this file. \quit

-- caio_lease_purge: housekeeping of caio_lease_state.  Granted to nobody.
CREATE FUNCTION caio_lease_purge(older_than interval) RETURNS bigint
    AS 'MODULE_PATHNAME', 'caio_lease_purge'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION caio_lease_purge(interval) FROM PUBLIC;

-- The views that hide rows become security barriers: a function in the
-- caller's WHERE clause must not see the rows they hide.
ALTER VIEW caio_leases SET (security_barrier);
ALTER VIEW caio_nonce_holes SET (security_barrier);

-- Every transaction hash recorded for a nonce, one row per attempt (a
-- replacement transaction is another attempt), numbered in the order they
-- were recorded.  A nonce handed back and reserved again starts afresh.
CREATE VIEW caio_nonce_attempts AS
    SELECT r.chain_id, r.address, r.nonce, a.attempt, a.tx_hash
      FROM caio_nonce_reservation r
     CROSS JOIN LATERAL unnest(r.tx_hashes) WITH ORDINALITY AS a(tx_hash, attempt);
REVOKE ALL ON TABLE caio_nonce_attempts FROM PUBLIC;
