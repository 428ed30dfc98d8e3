-- The upgrade path: a database made with caio 0.1 keeps its leases, tokens,
-- nonces and fenced tables through ALTER EXTENSION caio UPDATE, and ends up
-- with exactly the objects of a fresh install of the new version.
SET client_min_messages = warning;
DROP EXTENSION caio CASCADE;
CREATE EXTENSION caio VERSION '0.1';
RESET client_min_messages;
SELECT extversion FROM pg_extension WHERE extname = 'caio';

-- State made under 0.1 (served by the new library until the update).
SELECT resource, holder, token FROM caio_acquire('upgrade:r', 'worker-a', '1 hour');
SELECT caio_nonce_reserve(1, '0xde709f2102306220921060314715629080e2fb77') AS nonce;
SELECT caio_nonce_reserve(1, '0xde709f2102306220921060314715629080e2fb77') AS nonce;
CREATE TABLE upgrade_sends (wallet text PRIMARY KEY, amount int, fence_token bigint);
SELECT caio_protect('upgrade_sends', 'fence_token', 'wallet', 'send:');
SELECT token AS send_token FROM caio_acquire('send:0x1', 'worker-a', '1 hour') \gset
INSERT INTO upgrade_sends VALUES ('0x1', 5, :send_token);

ALTER EXTENSION caio UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'caio';

-- The state is as it was, and works as before.
SELECT resource, holder, token FROM caio_lease_of('upgrade:r');
SELECT nonce, state FROM caio_nonces ORDER BY nonce;
SELECT * FROM upgrade_sends;
UPDATE upgrade_sends SET amount = 6, fence_token = :send_token - 1;
\echo :LAST_ERROR_SQLSTATE
-- The update records this database as its tokens' lineage, in epoch 0,
-- and tokens go on from where they were.
SELECT count(*) AS epoch_rows, max(epoch) AS epoch,
       bool_and(database_oid = (SELECT oid FROM pg_database WHERE datname = current_database())
                AND timeline_id > 0 AND system_identifier > 0) AS this_database
  FROM caio_token_epoch;
SELECT resource, token FROM caio_acquire('upgrade:s', 'worker-a', '1 hour');
SELECT count(*) AS epoch_rows, max(epoch) AS epoch FROM caio_token_epoch;
-- The update shortens ANALYZE of caio_nonce_reservation as a fresh install
-- does (statistics target 10 on every column), and leaves more room on
-- caio_lease_state's pages (fillfactor 30), the other tables' as they were.
SELECT attname, attstattarget FROM pg_attribute
 WHERE attrelid = 'caio_nonce_reservation'::regclass AND attnum > 0 AND NOT attisdropped
 ORDER BY attnum;
SELECT relname, reloptions FROM pg_class
 WHERE relname IN ('caio_lease_state', 'caio_nonce_wallet', 'caio_nonce_reservation')
   AND relnamespace = (SELECT extnamespace FROM pg_extension WHERE extname = 'caio')
 ORDER BY relname;

-- The updated extension has the objects of a fresh install, defined alike.
CREATE FUNCTION pg_temp.caio_objects() RETURNS TABLE (object text, definition text)
LANGUAGE sql AS $$
    WITH members AS (
        SELECT classid, objid, pg_describe_object(classid, objid, objsubid) AS object
          FROM pg_depend
         WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
           AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'caio')
           -- Row types of tables and views (members from PostgreSQL 17 on)
           -- and array types (whose privileges are their element's) are
           -- compared with their relation or element, whatever the version.
           AND NOT (classid = 'pg_type'::regclass AND EXISTS (
                    SELECT FROM pg_type t LEFT JOIN pg_class c ON c.oid = t.typrelid
                     WHERE t.oid = objid AND (t.typcategory = 'A' OR c.relkind <> 'c'))))
    SELECT object,
           CASE classid
           WHEN 'pg_proc'::regclass THEN
               (SELECT pg_get_functiondef(objid) || coalesce(proacl::text, '')
                       || coalesce(' -- ' || obj_description(objid, 'pg_proc'), '')
                  FROM pg_proc WHERE oid = objid)
           WHEN 'pg_class'::regclass THEN
               (SELECT concat_ws(' | ', relkind, reloptions::text, relacl::text,
                       (SELECT typacl::text FROM pg_type WHERE oid = reltype),
                       (SELECT string_agg(format('%s %s %s %s %s', attname,
                                                 format_type(atttypid, atttypmod), attnotnull,
                                                 pg_get_expr(adbin, adrelid), attstattarget), ', ' ORDER BY attnum)
                          FROM pg_attribute LEFT JOIN pg_attrdef ON adrelid = attrelid AND adnum = attnum
                         WHERE attrelid = objid AND attnum > 0 AND NOT attisdropped),
                       (SELECT string_agg(pg_get_constraintdef(oid), ', ' ORDER BY conname)
                          FROM pg_constraint WHERE conrelid = objid),
                       (SELECT string_agg(pg_get_indexdef(indexrelid), ', ' ORDER BY indexrelid::regclass::text)
                          FROM pg_index WHERE indrelid = objid),
                       CASE WHEN relkind = 'v' THEN pg_get_viewdef(objid) END)
                  FROM pg_class WHERE oid = objid)
           WHEN 'pg_type'::regclass THEN
               (SELECT typacl::text FROM pg_type WHERE oid = objid)
           END
      FROM members
    UNION ALL
    SELECT 'configuration dumped',
           (SELECT string_agg(c::regclass::text, ', ' ORDER BY c::regclass::text)
              FROM pg_extension, unnest(extconfig) c WHERE extname = 'caio')
$$;
CREATE TEMP TABLE updated_objects AS SELECT * FROM pg_temp.caio_objects();
SET client_min_messages = warning;
DROP EXTENSION caio CASCADE;
RESET client_min_messages;
CREATE EXTENSION caio;
CREATE TEMP TABLE fresh_objects AS SELECT * FROM pg_temp.caio_objects();
SELECT count(*) AS objects_compared FROM fresh_objects;
SELECT 'only after the update' AS side, * FROM (TABLE updated_objects EXCEPT TABLE fresh_objects) a
UNION ALL
SELECT 'only in a fresh install', * FROM (TABLE fresh_objects EXCEPT TABLE updated_objects) b;

DROP TABLE upgrade_sends;
