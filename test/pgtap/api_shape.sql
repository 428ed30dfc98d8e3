-- The API's shape, as the contract in DESIGN.md names it: types, functions
-- with their argument names, defaults and results, the view, and privileges.
BEGIN;
SELECT plan(111);

SELECT has_extension('caio', 'the extension is installed');
SELECT is((SELECT extrelocatable FROM pg_extension WHERE extname = 'caio'), false,
          'caio is not relocatable (its functions name its schema)');

-- caio_lease
SELECT has_composite('caio_lease', 'caio_lease is a composite type');
SELECT results_eq(
    $$SELECT attname::text COLLATE "C", format_type(atttypid, atttypmod) COLLATE "C"
        FROM pg_attribute
       WHERE attrelid = (SELECT typrelid FROM pg_type WHERE typname = 'caio_lease')
         AND attnum > 0 AND NOT attisdropped ORDER BY attnum$$,
    $$VALUES ('resource' COLLATE "C", 'text' COLLATE "C"), ('holder', 'text'), ('token', 'bigint'),
             ('acquired_at', 'timestamp with time zone'),
             ('expires_at', 'timestamp with time zone')$$,
    'caio_lease has the contract''s columns, in order');

-- Functions, their results and argument names
SELECT has_function('caio_acquire', ARRAY['text', 'text', 'interval', 'interval']);
SELECT function_returns('caio_acquire', ARRAY['text', 'text', 'interval', 'interval'], 'caio_lease');
SELECT has_function('caio_renew', ARRAY['caio_lease', 'interval']);
SELECT function_returns('caio_renew', ARRAY['caio_lease', 'interval'], 'caio_lease');
SELECT has_function('caio_release', ARRAY['caio_lease']);
SELECT function_returns('caio_release', ARRAY['caio_lease'], 'boolean');
SELECT has_function('caio_lease_of', ARRAY['text']);
SELECT function_returns('caio_lease_of', ARRAY['text'], 'caio_lease');
SELECT has_function('caio_lease_purge', ARRAY['interval']);
SELECT function_returns('caio_lease_purge', ARRAY['interval'], 'bigint');
SELECT has_function('caio_now', ARRAY[]::name[]);
SELECT function_returns('caio_now', ARRAY[]::name[], 'timestamp with time zone');
SELECT has_function('caio_clock_set', ARRAY['timestamp with time zone']);
SELECT has_function('caio_clock_advance', ARRAY['interval']);
SELECT has_function('caio_clock_reset', ARRAY[]::name[]);

SELECT has_function('caio_protect', ARRAY['regclass', 'name', 'name', 'text']);
SELECT function_returns('caio_protect', ARRAY['regclass', 'name', 'name', 'text'], 'void');
SELECT has_function('caio_use', ARRAY['caio_lease']);
SELECT function_returns('caio_use', ARRAY['caio_lease'], 'caio_lease');
SELECT has_function('caio_versioned', ARRAY['regclass', 'name']);
SELECT function_returns('caio_versioned', ARRAY['regclass', 'name'], 'void');
SELECT is((SELECT proargnames FROM pg_proc WHERE oid = 'caio_protect(regclass, name, name, text)'::regprocedure),
          ARRAY['tbl', 'token_column', 'resource_column', 'resource_prefix'],
          'caio_protect takes (tbl, token_column, resource_column, resource_prefix)');
SELECT is((SELECT pg_get_expr(proargdefaults, 0) FROM pg_proc WHERE oid = 'caio_protect(regclass, name, name, text)'::regprocedure),
          '''''::text', 'resource_prefix defaults to the empty string');
SELECT is((SELECT proargnames FROM pg_proc WHERE oid = 'caio_use(caio_lease)'::regprocedure),
          ARRAY['lease'], 'caio_use takes (lease)');
SELECT is((SELECT proargnames FROM pg_proc WHERE oid = 'caio_versioned(regclass, name)'::regprocedure),
          ARRAY['tbl', 'version_column'], 'caio_versioned takes (tbl, version_column)');
SELECT is((SELECT proargnames FROM pg_proc WHERE oid = 'caio_acquire(text, text, interval, interval)'::regprocedure),
          ARRAY['resource', 'holder', 'ttl', 'wait'], 'caio_acquire takes (resource, holder, ttl, wait)');
SELECT is((SELECT pg_get_expr(proargdefaults, 0) FROM pg_proc WHERE oid = 'caio_acquire(text, text, interval, interval)'::regprocedure),
          '''00:00:00''::interval', 'wait defaults to 0: try once');
SELECT is((SELECT proargnames FROM pg_proc WHERE oid = 'caio_renew(caio_lease, interval)'::regprocedure),
          ARRAY['lease', 'ttl'], 'caio_renew takes (lease, ttl)');
SELECT is((SELECT proargnames FROM pg_proc WHERE oid = 'caio_release(caio_lease)'::regprocedure),
          ARRAY['lease'], 'caio_release takes (lease)');
SELECT is((SELECT proargnames FROM pg_proc WHERE oid = 'caio_lease_of(text)'::regprocedure),
          ARRAY['resource'], 'caio_lease_of takes (resource)');
SELECT is((SELECT proargnames FROM pg_proc WHERE oid = 'caio_lease_purge(interval)'::regprocedure),
          ARRAY['older_than'], 'caio_lease_purge takes (older_than)');

-- Nonce reservation
SELECT has_function('caio_nonce_reserve', ARRAY['bigint', 'text', 'caio_lease']);
SELECT function_returns('caio_nonce_reserve', ARRAY['bigint', 'text', 'caio_lease'], 'bigint');
SELECT has_function('caio_nonce_release', ARRAY['bigint', 'text', 'bigint']);
SELECT function_returns('caio_nonce_release', ARRAY['bigint', 'text', 'bigint'], 'boolean');
SELECT has_function('caio_nonce_sync', ARRAY['bigint', 'text', 'bigint']);
SELECT function_returns('caio_nonce_sync', ARRAY['bigint', 'text', 'bigint'], 'bigint');
SELECT has_function('caio_nonce_sync', ARRAY['bigint', 'text', 'bigint', 'caio_lease']);
SELECT function_returns('caio_nonce_sync', ARRAY['bigint', 'text', 'bigint', 'caio_lease'], 'bigint');
SELECT has_function('caio_nonce_mark', ARRAY['bigint', 'text', 'bigint', 'text', 'text', 'caio_lease']);
SELECT function_returns('caio_nonce_mark', ARRAY['bigint', 'text', 'bigint', 'text', 'text', 'caio_lease'], 'void');
SELECT is((SELECT proargnames FROM pg_proc WHERE oid = 'caio_nonce_reserve(bigint, text, caio_lease)'::regprocedure),
          ARRAY['chain_id', 'address', 'lease'], 'caio_nonce_reserve takes (chain_id, address, lease)');
SELECT is((SELECT proargnames FROM pg_proc WHERE oid = 'caio_nonce_release(bigint, text, bigint)'::regprocedure),
          ARRAY['chain_id', 'address', 'nonce'], 'caio_nonce_release takes (chain_id, address, nonce)');
SELECT is((SELECT proargnames FROM pg_proc WHERE oid = 'caio_nonce_sync(bigint, text, bigint, caio_lease)'::regprocedure),
          ARRAY['chain_id', 'address', 'chain_count', 'lease'], 'caio_nonce_sync takes (chain_id, address, chain_count, lease)');
SELECT is((SELECT proargnames FROM pg_proc WHERE oid = 'caio_nonce_sync(bigint, text, bigint)'::regprocedure),
          ARRAY['chain_id', 'address', 'chain_count'], 'caio_nonce_sync takes (chain_id, address, chain_count)');
SELECT is((SELECT pronargdefaults FROM pg_proc WHERE oid = 'caio_nonce_sync(bigint, text, bigint, caio_lease)'::regprocedure),
          0::int2, 'caio_nonce_sync''s lease has no default: three-argument calls reach the three-argument form');
SELECT is((SELECT proargnames FROM pg_proc WHERE oid = 'caio_nonce_mark(bigint, text, bigint, text, text, caio_lease)'::regprocedure),
          ARRAY['chain_id', 'address', 'nonce', 'state', 'tx_hash', 'lease'],
          'caio_nonce_mark takes (chain_id, address, nonce, state, tx_hash, lease)');
SELECT is((SELECT pronargdefaults FROM pg_proc WHERE oid = 'caio_nonce_mark(bigint, text, bigint, text, text, caio_lease)'::regprocedure),
          2::int2, 'tx_hash and lease default to NULL');
SELECT has_view('caio_nonces');
SELECT columns_are('caio_nonces', ARRAY['chain_id', 'address', 'nonce', 'state', 'holder', 'token',
                                        'tx_hash', 'reserved_at', 'updated_at']);
SELECT has_view('caio_nonce_attempts');
SELECT columns_are('caio_nonce_attempts', ARRAY['chain_id', 'address', 'nonce', 'attempt', 'tx_hash']);
SELECT table_privs_are('caio_nonce_attempts', 'public', ARRAY[]::text[]);
SELECT function_privs_are('caio_nonce_reserve', ARRAY['bigint', 'text', 'caio_lease'], 'public', ARRAY[]::text[]);
SELECT function_privs_are('caio_nonce_mark', ARRAY['bigint', 'text', 'bigint', 'text', 'text', 'caio_lease'], 'public', ARRAY[]::text[]);
SELECT table_privs_are('caio_nonce_wallet', 'public', ARRAY[]::text[]);
SELECT table_privs_are('caio_nonce_reservation', 'public', ARRAY[]::text[]);

-- Work claims
SELECT has_function('caio_claimable', ARRAY['regclass']);
SELECT function_returns('caio_claimable', ARRAY['regclass'], 'void');
SELECT has_function('caio_claim', ARRAY['anyelement', 'text', 'interval', 'integer', 'text', 'text']);
SELECT function_returns('caio_claim', ARRAY['anyelement', 'text', 'interval', 'integer', 'text', 'text'], 'setof anyelement');
SELECT is((SELECT proargnames FROM pg_proc WHERE oid = 'caio_claim(anyelement, text, interval, integer, text, text)'::regprocedure),
          ARRAY['rowtype', 'holder', 'ttl', 'max_rows', 'filter', 'order_by'],
          'caio_claim takes (rowtype, holder, ttl, max_rows, filter, order_by)');
SELECT is((SELECT pg_get_expr(proargdefaults, 0) FROM pg_proc WHERE oid = 'caio_claim(anyelement, text, interval, integer, text, text)'::regprocedure),
          '1, NULL::text, NULL::text', 'max_rows defaults to 1, filter and order_by to NULL');
SELECT function_privs_are('caio_claim', ARRAY['anyelement', 'text', 'interval', 'integer', 'text', 'text'], 'public', ARRAY[]::text[]);
SELECT function_privs_are('caio_claimable', ARRAY['regclass'], 'public', ARRAY[]::text[]);

-- Named arguments work as the contract names them.
SELECT isnt((SELECT token FROM caio_acquire(resource => 'tap:named', holder => 'tap', ttl => '1 minute', wait => '0')),
            NULL, 'caio_acquire accepts named arguments');

-- Nothing caio writes is STRICT (NULL is refused with an error, never
-- silently mistaken for "busy"), and everything that writes is VOLATILE.
SELECT isnt_strict('caio_acquire', ARRAY['text', 'text', 'interval', 'interval']);
SELECT isnt_strict('caio_renew', ARRAY['caio_lease', 'interval']);
SELECT isnt_strict('caio_release', ARRAY['caio_lease']);
SELECT isnt_strict('caio_lease_of', ARRAY['text']);
SELECT volatility_is('caio_acquire', ARRAY['text', 'text', 'interval', 'interval'], 'volatile');
SELECT volatility_is('caio_renew', ARRAY['caio_lease', 'interval'], 'volatile');
SELECT volatility_is('caio_release', ARRAY['caio_lease'], 'volatile');
SELECT volatility_is('caio_now', ARRAY[]::name[], 'volatile');

-- The view
SELECT has_view('caio_leases');
SELECT columns_are('caio_leases', ARRAY['resource', 'holder', 'token', 'acquired_at', 'expires_at']);
-- Every view that hides rows is a security barrier (DESIGN, Security).
SELECT ok((SELECT 'security_barrier=true' = ANY (reloptions) FROM pg_class WHERE oid = 'caio_leases'::regclass),
          'caio_leases is a security_barrier view');
SELECT ok((SELECT 'security_barrier=true' = ANY (reloptions) FROM pg_class WHERE oid = 'caio_nonce_holes'::regclass),
          'caio_nonce_holes is a security_barrier view');

-- The counters (doc/observability.md)
SELECT has_view('caio_stats');
SELECT columns_are('caio_stats', ARRAY['leases_granted', 'leases_busy', 'leases_taken_over',
    'leases_renewed', 'leases_renew_lost', 'leases_released', 'leases_release_lost',
    'writes_accepted', 'refused_lk001', 'refused_lk002', 'refused_lk003',
    'nonces_reserved', 'nonces_released', 'rows_claimed', 'stats_reset']);
SELECT function_privs_are('caio_stats_reset', ARRAY[]::name[], 'public', ARRAY[]::text[]);
SELECT table_privs_are('caio_stats', 'public', ARRAY[]::text[]);

-- Every object is named caio_ and belongs to the extension.  (From
-- PostgreSQL 17 on, the row types of its tables and views and their array
-- types are members too; an array type is named by its element.)
SELECT is((SELECT count(*)::int
             FROM pg_depend d
             LEFT JOIN pg_proc p ON d.classid = 'pg_proc'::regclass AND p.oid = d.objid
             LEFT JOIN pg_class c ON d.classid = 'pg_class'::regclass AND c.oid = d.objid
             LEFT JOIN pg_type a ON d.classid = 'pg_type'::regclass AND a.oid = d.objid
             LEFT JOIN pg_type t ON t.oid = CASE WHEN a.typcategory = 'A' THEN a.typelem ELSE a.oid END
            WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
              AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'caio')
              AND coalesce(p.proname, c.relname, t.typname) NOT LIKE 'caio\_%'),
          0, 'every object of the extension is prefixed caio_');

-- Privileges: nothing for PUBLIC.
SELECT function_privs_are('caio_acquire', ARRAY['text', 'text', 'interval', 'interval'], 'public', ARRAY[]::text[]);
SELECT function_privs_are('caio_renew', ARRAY['caio_lease', 'interval'], 'public', ARRAY[]::text[]);
SELECT function_privs_are('caio_release', ARRAY['caio_lease'], 'public', ARRAY[]::text[]);
SELECT function_privs_are('caio_lease_of', ARRAY['text'], 'public', ARRAY[]::text[]);
SELECT function_privs_are('caio_lease_purge', ARRAY['interval'], 'public', ARRAY[]::text[]);
SELECT isnt_strict('caio_lease_purge', ARRAY['interval']);
SELECT function_privs_are('caio_now', ARRAY[]::name[], 'public', ARRAY[]::text[]);
SELECT function_privs_are('caio_protect', ARRAY['regclass', 'name', 'name', 'text'], 'public', ARRAY[]::text[]);
SELECT function_privs_are('caio_use', ARRAY['caio_lease'], 'public', ARRAY[]::text[]);
SELECT function_privs_are('caio_versioned', ARRAY['regclass', 'name'], 'public', ARRAY[]::text[]);
-- Starting a token epoch by hand is for superusers: granted to nobody.
SELECT has_function('caio_start_token_epoch', ARRAY[]::name[]);
SELECT function_returns('caio_start_token_epoch', ARRAY[]::name[], 'bigint');
SELECT function_privs_are('caio_start_token_epoch', ARRAY[]::name[], 'public', ARRAY[]::text[]);
SELECT function_privs_are('caio_fence_trigger', ARRAY[]::name[], 'public', ARRAY[]::text[]);
SELECT function_privs_are('caio_version_trigger', ARRAY[]::name[], 'public', ARRAY[]::text[]);
SELECT function_privs_are('caio_clock_set', ARRAY['timestamp with time zone'], 'public', ARRAY[]::text[]);
SELECT function_privs_are('caio_clock_advance', ARRAY['interval'], 'public', ARRAY[]::text[]);
SELECT function_privs_are('caio_clock_reset', ARRAY[]::name[], 'public', ARRAY[]::text[]);
SELECT table_privs_are('caio_lease_state', 'public', ARRAY[]::text[]);
SELECT table_privs_are('caio_clock', 'public', ARRAY[]::text[]);
SELECT table_privs_are('caio_leases', 'public', ARRAY[]::text[]);
SELECT sequence_privs_are('caio_token_seq', 'public', ARRAY[]::text[]);
SELECT ok(NOT has_type_privilege('public', 'caio_lease', 'USAGE'), 'PUBLIC has no USAGE on caio_lease');

-- Any SECURITY DEFINER function pins search_path.
SELECT is((SELECT count(*)::int
             FROM pg_depend d JOIN pg_proc p ON d.classid = 'pg_proc'::regclass AND p.oid = d.objid
            WHERE d.refclassid = 'pg_extension'::regclass
              AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'caio')
              AND p.prosecdef
              AND NOT EXISTS (SELECT FROM unnest(p.proconfig) c WHERE c LIKE 'search\_path=%')),
          0, 'every SECURITY DEFINER function of caio sets search_path');

SELECT * FROM finish();
ROLLBACK;
