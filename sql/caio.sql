-- caio: leases, fencing tokens and nonce reservation inside PostgreSQL.
--
-- This file is the source of the install script sql/caio--<version>.sql that
-- `make` builds; it is the API's table of contents.  Nothing in it is granted to
-- PUBLIC: the README shows the GRANT an application role needs.

\echo Use "CREATE EXTENSION caio" to load this file. \quit

-- Every name this script takes in caio's schema, checked first: a relation,
-- type or function already there under one of them (made by anyone with
-- CREATE in the schema) is named, all in one error, before anything is
-- made.  Without the check the install would fail at the first clash, or,
-- for an index a constraint makes, quietly pick another name.  Keep the
-- lists in step with the script.
DO $clash$
DECLARE
    -- Tables, sequences, views and indexes (also the row types of the first).
    relations CONSTANT pg_catalog.text[] := ARRAY[
        'caio_token_seq', 'caio_token_epoch',
        'caio_lease_state', 'caio_lease_state_pkey', 'caio_lock_key', 'caio_lock_key_pkey',
        'caio_clock', 'caio_clock_pkey', 'caio_nonce_wallet', 'caio_nonce_wallet_pkey',
        'caio_nonce_reservation', 'caio_nonce_reservation_pkey', 'caio_nonce_released',
        'caio_leases', 'caio_nonces', 'caio_nonce_attempts', 'caio_nonce_holes', 'caio_stats'];
    types CONSTANT pg_catalog.text[] := ARRAY['caio_lease'];
    -- Each function as its name and pg_catalog.oidvectortypes(proargtypes).
    functions CONSTANT pg_catalog.text[] := ARRAY[
        'caio_now()', 'caio_clock_set(timestamp with time zone)', 'caio_clock_advance(interval)',
        'caio_clock_reset()', 'caio_start_token_epoch()',
        'caio_acquire(text, text, interval, interval)', 'caio_renew(caio_lease, interval)',
        'caio_release(caio_lease)', 'caio_lease_of(text)', 'caio_lease_purge(interval)',
        'caio_protect(regclass, name, name, text)', 'caio_use(caio_lease)',
        'caio_versioned(regclass, name)', 'caio_fence_trigger()', 'caio_version_trigger()',
        'caio_nonce_reserve(bigint, text, caio_lease)', 'caio_nonce_release(bigint, text, bigint)',
        'caio_nonce_sync(bigint, text, bigint)', 'caio_nonce_sync(bigint, text, bigint, caio_lease)',
        'caio_nonce_mark(bigint, text, bigint, text, text, caio_lease)',
        'caio_address_checksum(text)', 'caio_claimable(regclass)',
        'caio_claim(anyelement, text, interval, integer, text, text)', 'caio_claim_trigger()',
        'caio_guard_inheritance()', 'caio_stats()', 'caio_stats_reset()',
        'caio_lock_key_trigger()'];
    schema CONSTANT pg_catalog.oid := '@extschema@'::pg_catalog.regnamespace;
    taken pg_catalog.text;
BEGIN
    SELECT pg_catalog.string_agg(o.what, ', ' ORDER BY o.what) INTO taken FROM (
        SELECT pg_catalog.format('%s %I.%I',
                   CASE c.relkind WHEN 'r' THEN 'table' WHEN 'p' THEN 'table'
                                  WHEN 'v' THEN 'view' WHEN 'm' THEN 'materialized view'
                                  WHEN 'S' THEN 'sequence' WHEN 'c' THEN 'type'
                                  WHEN 'f' THEN 'foreign table' ELSE 'index' END,
                   n.nspname, c.relname) AS what
          FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
         WHERE c.relnamespace OPERATOR(pg_catalog.=) schema
           AND c.relname OPERATOR(pg_catalog.=) ANY (relations OPERATOR(pg_catalog.||) types)
        UNION ALL
        SELECT pg_catalog.format('type %I.%I', n.nspname, t.typname)
          FROM pg_catalog.pg_type t JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) t.typnamespace
         WHERE t.typnamespace OPERATOR(pg_catalog.=) schema AND t.typrelid OPERATOR(pg_catalog.=) 0
           AND t.typname OPERATOR(pg_catalog.=) ANY (relations OPERATOR(pg_catalog.||) types)
        UNION ALL
        SELECT pg_catalog.format('function %I.%I(%s)', n.nspname, p.proname,
                                 pg_catalog.oidvectortypes(p.proargtypes))
          FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) p.pronamespace
         WHERE p.pronamespace OPERATOR(pg_catalog.=) schema
           AND (p.proname::pg_catalog.text OPERATOR(pg_catalog.||) '('
                OPERATOR(pg_catalog.||) pg_catalog.oidvectortypes(p.proargtypes)
                OPERATOR(pg_catalog.||) ')') OPERATOR(pg_catalog.=) ANY (functions)) o;
    IF taken IS NOT NULL THEN
        RAISE EXCEPTION 'caio cannot be installed: names it needs are taken'
            USING ERRCODE = 'duplicate_object',
                  DETAIL = pg_catalog.format('Objects that are not caio''s are in the way: %s.', taken),
                  HINT = 'Drop or rename them, or install caio in another schema, then run CREATE EXTENSION caio again.';
    END IF;
END
$clash$;

-- caio's schema must be one that no untrusted role can create objects in:
-- a role that can would plant functions that capture calls to caio made
-- with untyped arguments (caio_protect('transfers', ...) resolves toward
-- text), and so run its code as whoever calls caio, superusers included.
-- Trusted are the role running this script, the extension's owner,
-- superusers and the database's owner (doc/privileges.md).  A function
-- named like caio's that is no extension's member was planted while
-- someone could: it is named too.
DO $trusted_schema$
DECLARE
    creator pg_catalog.text;
    planted pg_catalog.text;
BEGIN
    SELECT pg_catalog.format('%s, owned by %s', p.oid::pg_catalog.regprocedure,
                             pg_catalog.quote_ident(p.proowner::pg_catalog.regrole::pg_catalog.text))
      INTO planted
      FROM pg_catalog.pg_proc p
     WHERE p.pronamespace OPERATOR(pg_catalog.=) '@extschema@'::pg_catalog.regnamespace
       AND p.proname OPERATOR(pg_catalog.~~) 'caio\_%'
       AND NOT EXISTS (SELECT FROM pg_catalog.pg_depend d
                        WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
                          AND d.objid OPERATOR(pg_catalog.=) p.oid
                          AND d.deptype OPERATOR(pg_catalog.=) 'e')
     ORDER BY 1
     LIMIT 1;
    IF planted IS NOT NULL THEN
        RAISE EXCEPTION 'schema % holds a function named like caio''s that is not caio''s: %', '@extschema@', planted
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'It could be chosen instead of caio''s function for a call with untyped arguments, and run with the privileges of whoever called it.',
                  HINT = 'Drop it (or find out who planted it), then run this again.';
    END IF;

    SELECT CASE WHEN c.role OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC'
                ELSE pg_catalog.quote_ident(c.role::pg_catalog.regrole::pg_catalog.text) END
      INTO creator
      FROM pg_catalog.pg_namespace n
     CROSS JOIN LATERAL (
            SELECT n.nspowner AS role
            UNION ALL
            SELECT a.grantee
              FROM pg_catalog.aclexplode(COALESCE(n.nspacl,
                       pg_catalog.acldefault('n', n.nspowner))) a
             WHERE a.privilege_type OPERATOR(pg_catalog.=) 'CREATE') c
     WHERE n.oid OPERATOR(pg_catalog.=) '@extschema@'::pg_catalog.regnamespace
       AND c.role OPERATOR(pg_catalog.<>) ALL (ARRAY[
               (SELECT r.oid FROM pg_catalog.pg_roles r
                 WHERE r.rolname OPERATOR(pg_catalog.=) CURRENT_USER),
               (SELECT d.datdba FROM pg_catalog.pg_database d
                 WHERE d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database()),
               COALESCE((SELECT e.extowner FROM pg_catalog.pg_extension e
                                     WHERE e.extname OPERATOR(pg_catalog.=) 'caio'), 0),
               'pg_database_owner'::pg_catalog.regrole::pg_catalog.oid])
       AND NOT COALESCE((SELECT r.rolsuper FROM pg_catalog.pg_roles r
                                     WHERE r.oid OPERATOR(pg_catalog.=) c.role), false)
     LIMIT 1;
    IF creator IS NOT NULL THEN
        RAISE EXCEPTION 'role % can create objects in schema %, where caio would live', creator, '@extschema@'
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'A function that role planted beside caio''s could be chosen instead of caio''s for a call with untyped arguments, and run with the privileges of whoever called it.',
                  HINT = pg_catalog.format('Revoke it (REVOKE CREATE ON SCHEMA %s FROM %s), or install caio in a schema of its own (CREATE SCHEMA caio; CREATE EXTENSION caio SCHEMA caio).', '@extschema@', creator);
    END IF;
END
$trusted_schema$;

------------------------------------------------------------------------------
-- Internal state.  Only the extension owner can touch these tables; everyone
-- else goes through the functions below, which switch to the owner in C.
------------------------------------------------------------------------------

-- The one source of fencing tokens.  A sequence never hands out a value twice,
-- not after a rollback and not after a crash (it logs ahead of what it hands
-- out), and NO CYCLE keeps it from wrapping.  CACHE 1 matters: a backend that
-- cached a block of values could grant a smaller token after another backend
-- granted a larger one, and a resource's tokens would go backwards.
CREATE SEQUENCE caio_token_seq AS bigint MINVALUE 1 START 1 CACHE 1 NO CYCLE;

-- The lineage of this database's tokens: the system and database that draw
-- them, a timeline, and that timeline's epoch (tokens are epoch * 2^47 + n;
-- a later timeline t of the lineage has epoch + (t - timeline_id)).  A
-- restored or copied database finds a row of another lineage and starts an
-- epoch of its own before its first token.  See src/token.c.
CREATE TABLE caio_token_epoch (
    system_identifier  numeric(20) NOT NULL,
    database_oid       oid         NOT NULL,
    timeline_id        bigint      NOT NULL
        CONSTRAINT caio_token_epoch_timeline_id_check CHECK (timeline_id OPERATOR(pg_catalog.>) 0),
    epoch              bigint      NOT NULL
        CONSTRAINT caio_token_epoch_epoch_check
        CHECK (epoch OPERATOR(pg_catalog.>=) 0 AND epoch OPERATOR(pg_catalog.<=) 65535),
    recorded_at        timestamptz NOT NULL
);
-- Its replica identity is the whole row, so that a publication (FOR ALL
-- TABLES, say) never stops caio's delete of the rows it replaces: a table
-- without one cannot be deleted from while it is published.  There is no
-- key to use instead: the rows of two systems that replicate to each other
-- can share a system identifier and a database OID (a system made from a
-- physical copy of the other keeps both), and a unique key would make the
-- subscriber's apply of such a row fail, again and again.  The whole row
-- makes a replicated delete remove only that very row, never the
-- subscriber's own record; the table holds a row or two, so the apply's
-- scan for it costs nothing.
ALTER TABLE caio_token_epoch REPLICA IDENTITY FULL;
-- This database as the lineage, in epoch 0.  The checkpoint's timeline may
-- lag a promotion that just happened; the first token then moves to the
-- next epoch, which is only cautious.
INSERT INTO caio_token_epoch (system_identifier, database_oid, timeline_id, epoch, recorded_at)
SELECT s.system_identifier, d.oid, c.timeline_id, 0, pg_catalog.clock_timestamp()
  FROM pg_catalog.pg_control_system() s, pg_catalog.pg_control_checkpoint() c,
       pg_catalog.pg_database d
 WHERE d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database();

-- One row per resource ever leased.  A released or expired lease keeps its row:
-- the row holds the newest token of the resource, which is what fencing checks.
-- Resources compare byte for byte (COLLATE "C"), as their lock tags do,
-- whatever collation the database uses.  Like the nonce tables below, it
-- carries no CHECK constraints: every statement that writes a table with
-- CHECKs rebuilds their expressions (a tenth of a renew), and only caio's C
-- code writes its rows, with resource and holder of 1 to 255 bytes and
-- tokens above 0.
CREATE TABLE caio_lease_state (
    resource     text        COLLATE "C" CONSTRAINT caio_lease_state_pkey PRIMARY KEY,
    holder       text        NOT NULL,
    holder_role  regrole     NOT NULL,
    token        bigint      NOT NULL,
    acquired_at  timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL,
    released_at  timestamptz
) WITH (fillfactor = 30);
-- Room on the page keeps acquires, renewals and releases HOT, and their dead
-- versions are pruned on the page; but none newer than the oldest snapshot
-- can be, so while a snapshot is held (an ANALYZE, any long transaction) a
-- hot row's versions pile up on its page, and when the page is full the
-- next update moves the row to another page and the table grows a step.
-- At 70 % the churn soak grew it in steps (352 -> 560 -> 760 kB for 1000
-- resources in 10 minutes; up to 1.7 MB in make bench's runs); at 30 % the
-- pages have room for the versions of a hold of seconds and it stayed at
-- its first size (doc/benchmark.md, churn soak).  The price: a row that
-- is seldom updated takes about 2.3 times the space.

-- The secret from which caio derives the keys of its resource and wallet
-- locks (SipHash-2-4, src/resource_lock.c): 16 random bytes, made here and
-- never dumped, so a restored database makes its own.  With keys anyone can
-- compute, a role could find a resource name whose lock is another role's
-- resource's, and hold it.
CREATE TABLE caio_lock_key (
    singleton  boolean DEFAULT true CONSTRAINT caio_lock_key_pkey PRIMARY KEY
                       CONSTRAINT caio_lock_key_singleton_check CHECK (singleton),
    key        bytea   NOT NULL
                       CONSTRAINT caio_lock_key_key_check CHECK (pg_catalog.length(key) OPERATOR(pg_catalog.=) 16)
);
INSERT INTO caio_lock_key (key) VALUES (pg_catalog.uuid_send(pg_catalog.gen_random_uuid()));
-- Rotating the secret must not split the keys between sessions: before any
-- change, the trigger waits for every transaction that made a lock key with
-- the old secret (each holds this table's lock until it ends), and makes
-- every session read the secret again at its next transaction.
CREATE FUNCTION caio_lock_key_trigger() RETURNS trigger
    AS 'MODULE_PATHNAME', 'caio_lock_key_trigger'
    LANGUAGE C;
CREATE TRIGGER caio_lock_key_rotation
    BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON caio_lock_key
    FOR EACH STATEMENT EXECUTE FUNCTION caio_lock_key_trigger();
-- The secret is this database's own: a subscriber that copies caio's
-- tables from another database (a publication FOR ALL TABLES) must neither
-- fail on the publisher's row (its initial copy would hit
-- caio_lock_key_pkey, and be retried forever) nor take it over.  Logical
-- replication applies rows with session_replication_role = replica, where
-- only triggers enabled for replicas fire: this one skips every row that
-- comes that way.  (A TRUNCATE replicated from the publisher is not a row:
-- it would empty the table, and caio would then refuse its locks with a
-- hint until a new secret is made; doc/upgrading.md.)
CREATE TRIGGER caio_lock_key_replicated
    BEFORE INSERT OR UPDATE OR DELETE ON caio_lock_key
    FOR EACH ROW EXECUTE FUNCTION caio_lock_key_trigger();
ALTER TABLE caio_lock_key ENABLE REPLICA TRIGGER caio_lock_key_replicated;

-- The database-wide test clock: no row means caio reads the server clock.
CREATE TABLE caio_clock (
    singleton  boolean     DEFAULT true CONSTRAINT caio_clock_pkey PRIMARY KEY
                           CONSTRAINT caio_clock_singleton_check CHECK (singleton),
    frozen_at  timestamptz NOT NULL
                           CONSTRAINT caio_clock_frozen_at_check
                           CHECK (frozen_at OPERATOR(pg_catalog.>) '-infinity' AND frozen_at OPERATOR(pg_catalog.<) 'infinity')
);

-- One row per EVM wallet (chain, address): the hot row of nonce reservation.
-- Only next_nonce changes on a reservation, and it is in no index, so with
-- room on the page the update is HOT.  Three quarters of each page are left
-- free: while something holds back the oldest snapshot, dead versions of a
-- hot wallet cannot be pruned, and once its page is full the next update
-- moves the row and the table grows (the benchmark's churn: 464 -> 808 kB
-- for 1000 wallets at fillfactor 50, 824 -> 880 kB at 25).  No CHECK
-- constraints, as for
-- caio_lease_state: only caio's C code writes these rows, with values it
-- has checked (chain_id > 0, counts and nonces >= 0, a state from the list
-- below, a tx hash of 0x and 64 lowercase hex digits).
CREATE TABLE caio_nonce_wallet (
    chain_id     bigint      NOT NULL,
    address      text        COLLATE "C" NOT NULL,  -- parsed and lowercased in C
    chain_count  bigint      NOT NULL DEFAULT 0,
    next_nonce   bigint      NOT NULL DEFAULT 0,
    synced_at    timestamptz,
    CONSTRAINT caio_nonce_wallet_pkey PRIMARY KEY (chain_id, address)
) WITH (fillfactor = 25);

-- One row per nonce handed out, with its state and the lease it went under.
CREATE TABLE caio_nonce_reservation (
    chain_id     bigint      NOT NULL,
    address      text        COLLATE "C" NOT NULL,
    nonce        bigint      NOT NULL,
    state        text        NOT NULL,  -- reserved, signed, broadcast, mined, dropped, released
    resource     text,       -- the lease a reservation went under, if any
    holder       text,
    token        bigint,
    tx_hash      text,
    tx_hashes    text[],     -- every attempt (replacements) on this nonce
    reserved_at  timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL,
    CONSTRAINT caio_nonce_reservation_pkey PRIMARY KEY (chain_id, address, nonce)
) WITH (fillfactor = 80);

-- ANALYZE samples 300 rows per unit of statistics target (30,000 at the
-- default 100), and holds a snapshot while it reads them: no dead version
-- newer than that snapshot can be pruned anywhere in the database
-- meanwhile.  This table grows by one row per nonce, so autovacuum analyzes
-- it again and again, and under churn each of those holds let the hot rows
-- of caio_lease_state and caio_nonce_wallet fill their pages with dead
-- versions until an update moved a row to a new page: the tables grew in
-- steps, one per ANALYZE (doc/benchmark.md, the churn soak).  caio reads
-- this table by its keys; a sample of 3,000 rows (target 10) keeps the
-- planner's estimates and makes each hold a tenth as long.
ALTER TABLE caio_nonce_reservation
    ALTER COLUMN chain_id SET STATISTICS 10, ALTER COLUMN address SET STATISTICS 10,
    ALTER COLUMN nonce SET STATISTICS 10, ALTER COLUMN state SET STATISTICS 10,
    ALTER COLUMN resource SET STATISTICS 10, ALTER COLUMN holder SET STATISTICS 10,
    ALTER COLUMN token SET STATISTICS 10, ALTER COLUMN tx_hash SET STATISTICS 10,
    ALTER COLUMN tx_hashes SET STATISTICS 10, ALTER COLUMN reserved_at SET STATISTICS 10,
    ALTER COLUMN updated_at SET STATISTICS 10;

-- Finds a wallet's lowest released nonce without a scan.
CREATE INDEX caio_nonce_released ON caio_nonce_reservation (chain_id, address, nonce)
    WHERE state OPERATOR(pg_catalog.=) 'released';

-- Leases, tokens, their lineage and nonces survive pg_dump; the test clock
-- does not.
SELECT pg_catalog.pg_extension_config_dump('caio_lease_state', '');
SELECT pg_catalog.pg_extension_config_dump('caio_token_seq', '');
SELECT pg_catalog.pg_extension_config_dump('caio_token_epoch', '');
SELECT pg_catalog.pg_extension_config_dump('caio_nonce_wallet', '');
SELECT pg_catalog.pg_extension_config_dump('caio_nonce_reservation', '');

------------------------------------------------------------------------------
-- Time
------------------------------------------------------------------------------

-- The clock every caio function reads: clock_timestamp(), or the test clock.
CREATE FUNCTION caio_now() RETURNS timestamptz
    AS 'MODULE_PATHNAME', 'caio_now'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- Freeze the clock at a moment, for every session of this database.
CREATE FUNCTION caio_clock_set(frozen_at timestamptz) RETURNS timestamptz
    AS 'MODULE_PATHNAME', 'caio_clock_set'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- Move the clock forward (freezing it first if it runs).
CREATE FUNCTION caio_clock_advance(step interval) RETURNS timestamptz
    AS 'MODULE_PATHNAME', 'caio_clock_advance'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- Go back to the server clock.
CREATE FUNCTION caio_clock_reset() RETURNS timestamptz
    AS 'MODULE_PATHNAME', 'caio_clock_reset'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;

------------------------------------------------------------------------------
-- Tokens
------------------------------------------------------------------------------

-- Start a new token epoch by hand, for a copy of this database that nothing
-- marks as one (doc/guarantees.md); the next token is its first.  For
-- superusers: granted to nobody.  Returns the epoch.
CREATE FUNCTION caio_start_token_epoch() RETURNS bigint
    AS 'MODULE_PATHNAME', 'caio_start_token_epoch'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;

------------------------------------------------------------------------------
-- Leases
------------------------------------------------------------------------------

CREATE TYPE caio_lease AS (
    resource     text,
    holder       text,
    token        bigint,
    acquired_at  timestamptz,
    expires_at   timestamptz
);

-- The new lease, or NULL when another holder keeps a live one past `wait`.
CREATE FUNCTION caio_acquire(resource text, holder text, ttl interval,
                             wait interval DEFAULT '0')
    RETURNS caio_lease
    AS 'MODULE_PATHNAME', 'caio_acquire'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- The lease with a new expiry, or NULL when it was lost.
CREATE FUNCTION caio_renew(lease caio_lease, ttl interval) RETURNS caio_lease
    AS 'MODULE_PATHNAME', 'caio_renew'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- true when this call released a live lease, false when it was already lost.
CREATE FUNCTION caio_release(lease caio_lease) RETURNS boolean
    AS 'MODULE_PATHNAME', 'caio_release'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- The live lease of a resource, or NULL.
CREATE FUNCTION caio_lease_of(resource text) RETURNS caio_lease
    AS 'MODULE_PATHNAME', 'caio_lease_of'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- Housekeeping: delete the leases released or expired more than older_than
-- ago (by caio_now()), at most 1000 per call, skipping resources in use;
-- returns how many.  A write under a purged lease's token is refused, and a
-- new lease still gets a larger token.  Granted to nobody.
CREATE FUNCTION caio_lease_purge(older_than interval) RETURNS bigint
    AS 'MODULE_PATHNAME', 'caio_lease_purge'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- One row per live lease.  A security barrier: a function in the caller's
-- WHERE clause must not see the rows that the view hides.
CREATE VIEW caio_leases WITH (security_barrier) AS
    SELECT resource, holder, token, acquired_at, expires_at
      FROM caio_lease_state
     WHERE released_at IS NULL
       AND expires_at OPERATOR(pg_catalog.>) (SELECT caio_now());

------------------------------------------------------------------------------
-- Fencing where the data lives
------------------------------------------------------------------------------

-- From now on every INSERT, UPDATE and DELETE on tbl must name the newest
-- token of the row's resource (resource_prefix || resource_column): in
-- token_column, or with caio_use().  Installs the trigger caio_fence; run it
-- again to change the columns, DROP TRIGGER caio_fence ON tbl to stop.
CREATE FUNCTION caio_protect(tbl regclass, token_column name,
                             resource_column name, resource_prefix text DEFAULT '')
    RETURNS void
    AS 'MODULE_PATHNAME', 'caio_protect'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- Name a lease for the rest of the transaction: checked at once, it covers
-- the writes to its resource's rows and fills their token column in.
CREATE FUNCTION caio_use(lease caio_lease) RETURNS caio_lease
    AS 'MODULE_PATHNAME', 'caio_use'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- Optimistic concurrency: an UPDATE on tbl must set version_column to the
-- row's version + 1.  Installs the trigger caio_version.
CREATE FUNCTION caio_versioned(tbl regclass, version_column name) RETURNS void
    AS 'MODULE_PATHNAME', 'caio_versioned'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- The triggers the two functions above install.
CREATE FUNCTION caio_fence_trigger() RETURNS trigger
    AS 'MODULE_PATHNAME', 'caio_fence_trigger'
    LANGUAGE C;
CREATE FUNCTION caio_version_trigger() RETURNS trigger
    AS 'MODULE_PATHNAME', 'caio_version_trigger'
    LANGUAGE C;

------------------------------------------------------------------------------
-- Nonce reservation (EVM accounts)
------------------------------------------------------------------------------

-- The next nonce of a wallet, reserved inside the caller's transaction: a
-- rollback gives it back.  Concurrent callers on one wallet queue and get
-- consecutive nonces; the lowest released nonce is reused first.  Under a
-- lease, the lease must be current, and the reservation records it.
CREATE FUNCTION caio_nonce_reserve(chain_id bigint, address text,
                                   lease caio_lease DEFAULT NULL)
    RETURNS bigint
    AS 'MODULE_PATHNAME', 'caio_nonce_reserve'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- Hand an unused (never broadcast) nonce back; false if it was not reserved.
CREATE FUNCTION caio_nonce_release(chain_id bigint, address text, nonce bigint)
    RETURNS boolean
    AS 'MODULE_PATHNAME', 'caio_nonce_release'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- Take the chain's transaction count for the address (mined, "latest"),
-- settle what it proves, and return the nonce that reserve would hand out.
-- A wallet whose nonces went under a lease is synced under that lease, the
-- four-argument form (a superuser may sync without one).  Two functions,
-- not one with a default, so that the contract's three-argument signature
-- stays what it was.
CREATE FUNCTION caio_nonce_sync(chain_id bigint, address text, chain_count bigint)
    RETURNS bigint
    AS 'MODULE_PATHNAME', 'caio_nonce_sync'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;
CREATE FUNCTION caio_nonce_sync(chain_id bigint, address text, chain_count bigint,
                                lease caio_lease)
    RETURNS bigint
    AS 'MODULE_PATHNAME', 'caio_nonce_sync'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- Move a reservation forward: reserved -> signed -> broadcast -> mined or
-- dropped; released, for one never broadcast.
CREATE FUNCTION caio_nonce_mark(chain_id bigint, address text, nonce bigint, state text,
                                tx_hash text DEFAULT NULL, lease caio_lease DEFAULT NULL)
    RETURNS void
    AS 'MODULE_PATHNAME', 'caio_nonce_mark'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- The EIP-55 (checksummed) form of an address.
CREATE FUNCTION caio_address_checksum(address text) RETURNS text
    AS 'MODULE_PATHNAME', 'caio_address_checksum'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- One row per reservation.
CREATE VIEW caio_nonces AS
    SELECT chain_id, address, nonce, state, holder, token, tx_hash, reserved_at, updated_at
      FROM caio_nonce_reservation;

-- Every transaction hash recorded for a nonce, one row per attempt (a
-- replacement transaction is another attempt), numbered in the order they
-- were recorded.  A nonce handed back and reserved again starts afresh.
CREATE VIEW caio_nonce_attempts AS
    SELECT r.chain_id, r.address, r.nonce, a.attempt, a.tx_hash
      FROM caio_nonce_reservation r
     CROSS JOIN LATERAL pg_catalog.unnest(r.tx_hashes) WITH ORDINALITY AS a(tx_hash, attempt);

-- The holes of each wallet: nonces between the chain's count and the next
-- nonce that no pending transaction uses (never reserved, or released).
-- Every later transaction waits for them; a stuck wallet shows here.  A
-- security barrier, as caio_leases.
CREATE VIEW caio_nonce_holes WITH (security_barrier) AS
    SELECT w.chain_id, w.address, n.nonce, r.state
      FROM caio_nonce_wallet w
     CROSS JOIN LATERAL pg_catalog.generate_series(w.chain_count, w.next_nonce OPERATOR(pg_catalog.-) 1) AS n(nonce)
      LEFT JOIN caio_nonce_reservation r
        ON r.chain_id OPERATOR(pg_catalog.=) w.chain_id
       AND r.address OPERATOR(pg_catalog.=) w.address
       AND r.nonce OPERATOR(pg_catalog.=) n.nonce
     WHERE r.state IS NULL OR r.state OPERATOR(pg_catalog.=) 'released';

------------------------------------------------------------------------------
-- Work claims
------------------------------------------------------------------------------

-- Add (or check) claim_holder text, claim_token bigint and claim_expires_at
-- timestamptz, and install the trigger caio_claim: once a row has a claim
-- token, every UPDATE must set claim_token to it.
CREATE FUNCTION caio_claimable(tbl regclass) RETURNS void
    AS 'MODULE_PATHNAME', 'caio_claimable'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- Claim up to max_rows rows of the table that rowtype names (NULL::table)
-- that nobody holds a live claim on and that match filter (SQL, run with the
-- caller's privileges), the first ones in order_by (a sort list of the
-- table's columns) first, without waiting on rows others are claiming; each
-- gets a new token.  Returns the claimed rows.
CREATE FUNCTION caio_claim(rowtype anyelement, holder text, ttl interval,
                           max_rows int DEFAULT 1, filter text DEFAULT NULL,
                           order_by text DEFAULT NULL)
    RETURNS SETOF anyelement
    AS 'MODULE_PATHNAME', 'caio_claim'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION caio_claim_trigger() RETURNS trigger
    AS 'MODULE_PATHNAME', 'caio_claim_trigger'
    LANGUAGE C;

------------------------------------------------------------------------------
-- Guarded tables stay guarded
------------------------------------------------------------------------------

-- A row trigger does not fire for the rows of a table's inheritance
-- children, which a write through the table reaches: caio_protect,
-- caio_claimable and caio_versioned refuse a table that has children, and
-- this event trigger refuses a table made or altered into a child of one
-- that caio guards.  (Partitions are not such children: they get the
-- partitioned table's triggers.)  It also refuses a trigger that runs
-- caio's trigger functions with a WHEN clause or a column list (UPDATE OF):
-- such a trigger would let some writes through unchecked, and one with
-- UPDATE OF never fires for them.
CREATE FUNCTION caio_guard_inheritance() RETURNS event_trigger
    AS 'MODULE_PATHNAME', 'caio_guard_inheritance'
    LANGUAGE C;
CREATE EVENT TRIGGER caio_guard_inheritance ON ddl_command_end
    WHEN TAG IN ('CREATE TABLE', 'ALTER TABLE', 'CREATE FOREIGN TABLE', 'ALTER FOREIGN TABLE',
                 'CREATE TRIGGER')
    EXECUTE FUNCTION caio_guard_inheritance();

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

------------------------------------------------------------------------------
-- Privileges: nothing for PUBLIC.
------------------------------------------------------------------------------

REVOKE ALL ON TABLE caio_lease_state, caio_token_epoch, caio_clock, caio_leases, caio_nonce_wallet,
    caio_nonce_reservation, caio_nonces, caio_nonce_attempts, caio_nonce_holes, caio_stats FROM PUBLIC;
REVOKE ALL ON SEQUENCE caio_token_seq FROM PUBLIC;
-- The row types of caio's tables and views keep PostgreSQL's default USAGE
-- for PUBLIC: pg_dump cannot represent a REVOKE on a table's row type made
-- by an extension script, and would warn about each one on every dump.
-- USAGE on a row type reads nothing.
REVOKE ALL ON TYPE caio_lease FROM PUBLIC;
REVOKE ALL ON FUNCTION
    caio_now(),
    caio_start_token_epoch(),
    caio_clock_set(timestamptz),
    caio_clock_advance(interval),
    caio_clock_reset(),
    caio_acquire(text, text, interval, interval),
    caio_renew(caio_lease, interval),
    caio_release(caio_lease),
    caio_lease_of(text),
    caio_lease_purge(interval),
    caio_protect(regclass, name, name, text),
    caio_use(caio_lease),
    caio_versioned(regclass, name),
    caio_fence_trigger(),
    caio_version_trigger(),
    caio_nonce_reserve(bigint, text, caio_lease),
    caio_nonce_release(bigint, text, bigint),
    caio_nonce_sync(bigint, text, bigint),
    caio_nonce_sync(bigint, text, bigint, caio_lease),
    caio_nonce_mark(bigint, text, bigint, text, text, caio_lease),
    caio_address_checksum(text),
    caio_claimable(regclass),
    caio_claim(anyelement, text, interval, int, text, text),
    caio_claim_trigger(),
    caio_guard_inheritance(),
    caio_lock_key_trigger(),
    caio_stats(),
    caio_stats_reset()
  FROM PUBLIC;

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
COMMENT ON FUNCTION caio_lock_key_trigger() IS
    'The triggers on caio_lock_key: a rotation of the lock key secret waits for the transactions that use it, and every session reads the new one; rows that logical replication brings are skipped.';
COMMENT ON FUNCTION caio_nonce_reserve(bigint, text, caio_lease) IS
    'Hands out the wallet''s lowest free nonce inside the caller''s transaction (a rollback gives it back), fenced by the wallet''s lease when one is given.';
COMMENT ON FUNCTION caio_nonce_release(bigint, text, bigint) IS
    'Hands back a nonce reserved without a lease; the next reservation on the wallet gets it. False when it is not reserved.';
COMMENT ON FUNCTION caio_nonce_sync(bigint, text, bigint) IS
    'Tells caio the chain''s transaction count for the address: broadcast nonces below it become mined; returns the next nonce reserve hands out. A wallet whose nonces went under a lease needs that lease (the four-argument form) or a superuser (LK003).';
COMMENT ON FUNCTION caio_nonce_sync(bigint, text, bigint, caio_lease) IS
    'caio_nonce_sync under the wallet''s lease: the caller''s current lease on the resource its nonces went under (LK001, 42501); it may move the count down as well as up.';
COMMENT ON FUNCTION caio_nonce_mark(bigint, text, bigint, text, text, caio_lease) IS
    'Moves a reservation forward (signed, broadcast, mined, dropped, released), recording tx_hash; fenced by the lease (LK001).';
COMMENT ON FUNCTION caio_address_checksum(text) IS
    'The EIP-55 (checksummed) form of an EVM address.';
COMMENT ON FUNCTION caio_claimable(regclass) IS
    'Prepares a job table for claims: adds or checks claim_holder, claim_token and claim_expires_at, and installs the trigger caio_claim.';
COMMENT ON FUNCTION caio_claim(anyelement, text, interval, int, text, text) IS
    'Claims up to max_rows unclaimed or expired rows matching filter for ttl, the first in order_by first, skipping rows others are claiming; returns them, each with a new claim_token.';
COMMENT ON FUNCTION caio_claim_trigger() IS
    'The trigger function of caio_claimable; runs only as the trigger caio installs.';
COMMENT ON FUNCTION caio_guard_inheritance() IS
    'The event trigger that refuses a table made or altered into an inheritance child of a table caio guards, and a trigger of caio''s trigger functions with a WHEN clause or a column list.';
COMMENT ON FUNCTION caio_stats() IS
    'The current database''s counters (with caio in shared_preload_libraries); the view caio_stats reads it.';
COMMENT ON FUNCTION caio_stats_reset() IS
    'Sets the current database''s counters to zero.';
