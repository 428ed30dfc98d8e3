-- caio 0.3 to 0.4.0: lease purge, security-barrier views, the nonce attempts
-- view.

\echo Use "ALTER EXTENSION caio UPDATE TO '0.4.0'" to load this file. \quit

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
     CROSS JOIN LATERAL pg_catalog.unnest(r.tx_hashes) WITH ORDINALITY AS a(tx_hash, attempt);
REVOKE ALL ON TABLE caio_nonce_attempts FROM PUBLIC;

------------------------------------------------------------------------------
-- What \df+ and \dd show: one line per function, its doc in doc/caio.md.
------------------------------------------------------------------------------

COMMENT ON FUNCTION caio_now() IS
    'The time every caio function reads: clock_timestamp(), or the test clock when it is frozen.';
COMMENT ON FUNCTION caio_clock_set(timestamptz) IS
    'Freezes caio''s test clock at frozen_at for every session of the database, once committed; returns it.';
COMMENT ON FUNCTION caio_clock_advance(interval) IS
    'Moves caio''s test clock forward by step (a running clock is first frozen at the server time); returns the new reading.';
COMMENT ON FUNCTION caio_clock_reset() IS
    'Puts caio back on the server clock; returns the server time.';
COMMENT ON FUNCTION caio_start_token_epoch() IS
    'Superusers: starts a new token epoch by hand, for a copy of the database that nothing marks; returns the epoch.';
COMMENT ON FUNCTION caio_acquire(text, text, interval, interval) IS
    'Grants a lease on resource to holder for ttl, with a new fencing token; NULL when another holder''s lease is live after waiting at most wait.';
COMMENT ON FUNCTION caio_renew(caio_lease, interval) IS
    'Extends a live lease to now + ttl, same token; NULL when the lease is lost (expired, released or superseded).';
COMMENT ON FUNCTION caio_release(caio_lease) IS
    'Releases a lease: true when it released it, false when the lease was already lost.';
COMMENT ON FUNCTION caio_lease_of(text) IS
    'The live lease of a resource, or NULL.';
COMMENT ON FUNCTION caio_lease_purge(interval) IS
    'Housekeeping: deletes at most 1000 leases released or expired longer ago than older_than; returns how many.';
COMMENT ON FUNCTION caio_protect(regclass, name, name, text) IS
    'Puts the fencing trigger caio_fence on a table: every write must name the newest token of the row''s resource, resource_prefix || resource_column (LK001, LK003).';
COMMENT ON FUNCTION caio_use(caio_lease) IS
    'Names a current lease for the rest of the transaction: covers writes to its resource''s rows on protected tables (LK001 if it is not current).';
COMMENT ON FUNCTION caio_versioned(regclass, name) IS
    'Puts the trigger caio_version on a table: an UPDATE must set version_column to the row''s version + 1 (LK002).';
COMMENT ON FUNCTION caio_fence_trigger() IS
    'The trigger function of caio_protect; runs only as the trigger caio installs.';
COMMENT ON FUNCTION caio_version_trigger() IS
    'The trigger function of caio_versioned; runs only as the trigger caio installs.';
COMMENT ON FUNCTION caio_nonce_reserve(bigint, text, caio_lease) IS
    'Hands out the wallet''s lowest free nonce inside the caller''s transaction (a rollback gives it back), fenced by the wallet''s lease when one is given.';
COMMENT ON FUNCTION caio_nonce_release(bigint, text, bigint) IS
    'Hands back a nonce reserved without a lease; the next reservation on the wallet gets it. False when it is not reserved.';
COMMENT ON FUNCTION caio_nonce_sync(bigint, text, bigint) IS
    'Tells caio the chain''s transaction count for the address: broadcast nonces below it become mined; returns the next nonce reserve hands out.';
COMMENT ON FUNCTION caio_nonce_mark(bigint, text, bigint, text, text, caio_lease) IS
    'Moves a reservation forward (signed, broadcast, mined, dropped, released), recording tx_hash; fenced by the lease (LK001).';
COMMENT ON FUNCTION caio_address_checksum(text) IS
    'The EIP-55 (checksummed) form of an EVM address.';
COMMENT ON FUNCTION caio_claimable(regclass) IS
    'Prepares a job table for claims: adds or checks claim_holder, claim_token and claim_expires_at, and installs the trigger caio_claim.';
COMMENT ON FUNCTION caio_claim(anyelement, text, interval, int, text) IS
    'Claims up to max_rows unclaimed or expired rows matching filter for ttl, skipping rows others are claiming; returns them, each with a new claim_token.';
COMMENT ON FUNCTION caio_claim_trigger() IS
    'The trigger function of caio_claimable; runs only as the trigger caio installs.';
COMMENT ON FUNCTION caio_stats() IS
    'The current database''s counters (with caio in shared_preload_libraries); the view caio_stats reads it.';
COMMENT ON FUNCTION caio_stats_reset() IS
    'Sets the current database''s counters to zero.';
