-- Tables for caio_tap's own tests, committed before pg_prove runs, so that
-- run.sh can check afterwards, from another session, that the stories left
-- nothing behind.  Each kind of table exists kept and broken.

-- Kept: protected, versioned, claimable.
CREATE TABLE transfers (
    id          bigint PRIMARY KEY,
    wallet      text NOT NULL,
    amount      numeric NOT NULL,
    state       text NOT NULL DEFAULT 'new',
    fence_token bigint
);
SELECT caio_protect('transfers', 'fence_token', 'wallet', 'send:');

-- Names that need quoting, another schema, a numeric resource column and an
-- identity key the sample row leaves to its default.
CREATE SCHEMA "app data";
CREATE TABLE "app data"."Ledger Entries" (
    id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    "Account" integer NOT NULL,
    delta     numeric NOT NULL,
    "Fence"   bigint
);
SELECT caio_protect('"app data"."Ledger Entries"', 'Fence', 'Account', 'acct:');
-- And a trigger of the user's own that calls a function of "app data"
-- without its schema, as code written for the application's search_path
-- does: good.sql plays this table's story with "app data" on the
-- search_path, and the story's statements must run in it.
ALTER TABLE "app data"."Ledger Entries" ADD COLUMN note text;
CREATE FUNCTION "app data".ledger_note() RETURNS text LANGUAGE sql AS $$ SELECT 'posted' $$;
CREATE FUNCTION "app data".note_entry() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.note := ledger_note();
    RETURN NEW;
END $$;
CREATE TRIGGER note_entry BEFORE INSERT OR UPDATE ON "app data"."Ledger Entries"
    FOR EACH ROW EXECUTE FUNCTION "app data".note_entry();

CREATE TABLE payments (
    id       bigint PRIMARY KEY,
    state    text NOT NULL,
    version  integer NOT NULL DEFAULT 1
);
SELECT caio_versioned('payments', 'version');

CREATE TABLE operations (
    id     bigint PRIMARY KEY,
    state  text NOT NULL DEFAULT 'pending'
);
SELECT caio_claimable('operations');

-- Partitioned, claimable: the trigger reaches every partition.
CREATE TABLE jobs (
    id     bigint NOT NULL,
    queue  text NOT NULL,
    PRIMARY KEY (queue, id)
) PARTITION BY LIST (queue);
CREATE TABLE jobs_mail PARTITION OF jobs FOR VALUES IN ('mail');
CREATE TABLE jobs_other PARTITION OF jobs DEFAULT;
SELECT caio_claimable('jobs');

-- Broken: the protection was dropped, or switched off.
CREATE TABLE transfers_unprotected (LIKE transfers INCLUDING ALL);
SELECT caio_protect('transfers_unprotected', 'fence_token', 'wallet', 'send:');
DROP TRIGGER caio_fence ON transfers_unprotected;

CREATE TABLE transfers_disabled (LIKE transfers INCLUDING ALL);
SELECT caio_protect('transfers_disabled', 'fence_token', 'wallet', 'send:');
ALTER TABLE transfers_disabled DISABLE TRIGGER caio_fence;

-- A column renamed after caio_protect: the trigger names what is gone.
CREATE TABLE transfers_renamed (LIKE transfers INCLUDING ALL);
SELECT caio_protect('transfers_renamed', 'fence_token', 'wallet', 'send:');
ALTER TABLE transfers_renamed RENAME COLUMN wallet TO account;

CREATE TABLE payments_unversioned (LIKE payments INCLUDING ALL);
SELECT caio_versioned('payments_unversioned', 'version');
DROP TRIGGER caio_version ON payments_unversioned;

CREATE TABLE operations_disabled (LIKE operations INCLUDING ALL);
SELECT caio_claimable('operations_disabled');
ALTER TABLE operations_disabled DISABLE TRIGGER caio_claim;

-- caio's triggers enabled in replica mode only: they fire only when
-- session_replication_role = replica.
CREATE TABLE transfers_replica (LIKE transfers INCLUDING ALL);
SELECT caio_protect('transfers_replica', 'fence_token', 'wallet', 'send:');
ALTER TABLE transfers_replica ENABLE REPLICA TRIGGER caio_fence;

CREATE TABLE operations_replica (LIKE operations INCLUDING ALL);
SELECT caio_claimable('operations_replica');
ALTER TABLE operations_replica ENABLE REPLICA TRIGGER caio_claim;

-- The resource column, and the token column, dropped and added again as
-- generated columns after caio_protect: the trigger still names them.
CREATE TABLE transfers_generated (LIKE transfers INCLUDING ALL);
SELECT caio_protect('transfers_generated', 'fence_token', 'wallet', 'send:');
ALTER TABLE transfers_generated DROP COLUMN wallet;
ALTER TABLE transfers_generated ADD COLUMN wallet text GENERATED ALWAYS AS ('0xabc') STORED;

CREATE TABLE transfers_generated_token (LIKE transfers INCLUDING ALL);
SELECT caio_protect('transfers_generated_token', 'fence_token', 'wallet', 'send:');
ALTER TABLE transfers_generated_token DROP COLUMN fence_token;
ALTER TABLE transfers_generated_token ADD COLUMN fence_token bigint GENERATED ALWAYS AS (id) STORED;

-- Inheritance children added after caio guarded the parent: the parent's row
-- triggers do not fire for their rows.  (caio's event trigger refuses such
-- a child, but not with session_replication_role = replica, in which event
-- triggers do not fire: a superuser, or a restore, gets around it.)
CREATE TABLE transfers_inherited (LIKE transfers INCLUDING ALL);
SELECT caio_protect('transfers_inherited', 'fence_token', 'wallet', 'send:');
CREATE TABLE payments_inherited (LIKE payments INCLUDING ALL);
SELECT caio_versioned('payments_inherited', 'version');
CREATE TABLE operations_inherited (LIKE operations INCLUDING ALL);
SELECT caio_claimable('operations_inherited');
SET session_replication_role = replica;
CREATE TABLE transfers_inherited_child () INHERITS (transfers_inherited);
CREATE TABLE payments_inherited_child () INHERITS (payments_inherited);
CREATE TABLE operations_inherited_child () INHERITS (operations_inherited);
RESET session_replication_role;

-- Rows and a live lease that were there before: the stories use the same
-- wallet, and must leave the row, the lease and its holder as they were.
INSERT INTO transfers (id, wallet, amount, state, fence_token)
SELECT 1, '0xabc', 10, 'sent', token FROM caio_acquire('send:0xabc', 'app-worker', '1 hour');
INSERT INTO payments VALUES (1, 'sent', 3);
INSERT INTO operations VALUES (1, 'pending');
INSERT INTO transfers_disabled VALUES (1, '0xabc', 10, 'sent', NULL);

-- Everything a story could leave behind, as one digest: the rows of every
-- table above, caio's lease state and its test clock.  (Tokens drawn from
-- caio's sequence are spent, by design, and not part of it.)  Its calls are
-- qualified: shadow.sh plants a string_agg(text, text) in public.
CREATE FUNCTION contract_state() RETURNS text LANGUAGE sql AS $$
    SELECT pg_catalog.md5(pg_catalog.string_agg(line, E'\n' ORDER BY line))
      FROM (SELECT 'transfers ' || t::text FROM transfers t
            UNION ALL SELECT 'ledger ' || l::text FROM "app data"."Ledger Entries" l
            UNION ALL SELECT 'payments ' || p::text FROM payments p
            UNION ALL SELECT 'operations ' || o::text FROM operations o
            UNION ALL SELECT 'jobs ' || j::text FROM jobs j
            UNION ALL SELECT 'unprotected ' || t::text FROM transfers_unprotected t
            UNION ALL SELECT 'disabled ' || t::text FROM transfers_disabled t
            UNION ALL SELECT 'renamed ' || t::text FROM transfers_renamed t
            UNION ALL SELECT 'unversioned ' || p::text FROM payments_unversioned p
            UNION ALL SELECT 'operations_disabled ' || o::text FROM operations_disabled o
            UNION ALL SELECT 'transfers_replica ' || t::text FROM transfers_replica t
            UNION ALL SELECT 'operations_replica ' || o::text FROM operations_replica o
            UNION ALL SELECT 'transfers_generated ' || t::text FROM transfers_generated t
            UNION ALL SELECT 'transfers_generated_token ' || t::text FROM transfers_generated_token t
            UNION ALL SELECT 'transfers_inherited ' || t::text FROM transfers_inherited t
            UNION ALL SELECT 'payments_inherited ' || p::text FROM payments_inherited p
            UNION ALL SELECT 'operations_inherited ' || o::text FROM operations_inherited o
            UNION ALL SELECT 'lease ' || s::text FROM caio_lease_state s
            UNION ALL SELECT 'clock ' || c::text FROM caio_clock c) AS everything(line);
$$;
CREATE TABLE contract_before AS SELECT contract_state() AS digest;
