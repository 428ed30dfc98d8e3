-- caio 0.2 to 0.3: counters in shared memory (with caio in
-- shared_preload_libraries), read through the view caio_stats; the lease
-- and nonce tables lose their CHECK constraints, which cost a tenth of a
-- renew or a reservation (caio's C code checks every value it writes
-- there; see sql/caio.sql); the wallet table leaves three quarters of each
-- page free for its hot rows' versions.

\echo Use "ALTER EXTENSION caio UPDATE TO '0.3'" to load this file. \quit

------------------------------------------------------------------------------
-- Observability
------------------------------------------------------------------------------

-- What caio decided in this database since the last reset, counted in
-- shared memory whether or not the transaction then committed.  Needs caio
-- in shared_preload_libraries; without it, an error says so (55000).
CREATE FUNCTION caio_stats(
    OUT leases_granted      bigint,  -- new leases, each with a new token
    OUT leases_busy         bigint,  -- acquires that returned NULL
    OUT leases_taken_over   bigint,  -- of the granted: over an expired, unreleased lease
    OUT leases_renewed      bigint,  -- renews, and acquires again by the holder
    OUT leases_renew_lost   bigint,  -- renews that returned NULL
    OUT leases_released     bigint,  -- releases that returned true
    OUT leases_release_lost bigint,  -- releases that returned false
    OUT writes_accepted     bigint,  -- rows that a fencing, version or claim check let through
    OUT refused_lk001       bigint,  -- stale token (writes, caio_use, nonce marks)
    OUT refused_lk002       bigint,  -- version conflicts
    OUT refused_lk003       bigint,  -- writes that named no token
    OUT nonces_reserved     bigint,
    OUT nonces_released     bigint,
    OUT rows_claimed        bigint,
    OUT stats_reset         timestamptz)
    AS 'MODULE_PATHNAME', 'caio_stats'
    LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

CREATE VIEW caio_stats AS SELECT * FROM caio_stats();

-- Set this database's counters to zero.  Granted to nobody.
CREATE FUNCTION caio_stats_reset() RETURNS void
    AS 'MODULE_PATHNAME', 'caio_stats_reset'
    LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

REVOKE ALL ON TABLE caio_stats FROM PUBLIC;
REVOKE ALL ON FUNCTION caio_stats(), caio_stats_reset() FROM PUBLIC;

ALTER TABLE caio_nonce_wallet
    SET (fillfactor = 25),
    DROP CONSTRAINT caio_nonce_wallet_chain_id_check,
    DROP CONSTRAINT caio_nonce_wallet_chain_count_check,
    DROP CONSTRAINT caio_nonce_wallet_next_nonce_check;
ALTER TABLE caio_nonce_reservation
    DROP CONSTRAINT caio_nonce_reservation_nonce_check,
    DROP CONSTRAINT caio_nonce_reservation_state_check,
    DROP CONSTRAINT caio_nonce_reservation_tx_hash_check;
ALTER TABLE caio_lease_state
    DROP CONSTRAINT caio_lease_state_resource_check,
    DROP CONSTRAINT caio_lease_state_holder_check,
    DROP CONSTRAINT caio_lease_state_token_check;
