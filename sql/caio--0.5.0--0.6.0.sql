-- caio 0.5.0 to 0.6.0.

\echo Use "ALTER EXTENSION caio UPDATE TO '0.6.0'" to load this file. \quit

-- On a Citus cluster, a table that an earlier caio guarded and that is (or
-- became) a Citus table has caio's trigger on the coordinator's shell only:
-- its shards were never fenced.  0.6.0 refuses to guard such a table; one
-- guarded before is named here, so that nobody goes on relying on it.
DO $citus$
DECLARE
    guarded pg_catalog.text;
BEGIN
    IF pg_catalog.to_regclass('pg_catalog.pg_dist_partition') IS NULL THEN
        RETURN;
    END IF;
    FOR guarded IN EXECUTE $sql$
        SELECT DISTINCT t.tgrelid::pg_catalog.regclass::pg_catalog.text
          FROM pg_catalog.pg_trigger t
          JOIN pg_catalog.pg_dist_partition p
            ON p.logicalrelid OPERATOR(pg_catalog.=) t.tgrelid
          JOIN pg_catalog.pg_depend d
            ON d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
           AND d.objid OPERATOR(pg_catalog.=) t.tgfoid
           AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass
           AND d.deptype OPERATOR(pg_catalog.=) 'e'
          JOIN pg_catalog.pg_extension e
            ON e.oid OPERATOR(pg_catalog.=) d.refobjid
         WHERE e.extname OPERATOR(pg_catalog.=) 'caio'
    $sql$
    LOOP
        RAISE WARNING 'caio has never fenced the shards of "%"', guarded
            USING DETAIL = 'It is a Citus table, and caio''s trigger is on the coordinator''s table alone, which Citus''s writes do not go through.',
                  HINT = 'See caio''s doc/citus.md: caio 0.6.0 guards tables local to the coordinator only.';
    END LOOP;
END
$citus$;

-- A shorter ANALYZE of caio_nonce_reservation, as in a fresh install (see
-- caio.sql): each autoanalyze of it holds a snapshot under which the hot
-- rows of caio_lease_state and caio_nonce_wallet cannot be pruned.
ALTER TABLE @extschema@.caio_nonce_reservation
    ALTER COLUMN chain_id SET STATISTICS 10, ALTER COLUMN address SET STATISTICS 10,
    ALTER COLUMN nonce SET STATISTICS 10, ALTER COLUMN state SET STATISTICS 10,
    ALTER COLUMN resource SET STATISTICS 10, ALTER COLUMN holder SET STATISTICS 10,
    ALTER COLUMN token SET STATISTICS 10, ALTER COLUMN tx_hash SET STATISTICS 10,
    ALTER COLUMN tx_hashes SET STATISTICS 10, ALTER COLUMN reserved_at SET STATISTICS 10,
    ALTER COLUMN updated_at SET STATISTICS 10;

-- More room on caio_lease_state's pages for the dead versions of hot
-- leases while a snapshot is held, as in a fresh install (see caio.sql).
-- Pages written from now on are filled to 30 %; those there keep their rows.
ALTER TABLE @extschema@.caio_lease_state SET (fillfactor = 30);
