-- caio_protect and caio_versioned check every argument against the table:
-- a clear error with its SQLSTATE, and no trigger is left behind.
-- Tokens from here on are 5001, 5002, ... whatever earlier suites drew.
SELECT setval('caio_token_seq', 5000);
CREATE TABLE guarded (id int PRIMARY KEY, wallet text, n int, tok bigint, version int,
                      small_tok int, total int GENERATED ALWAYS AS (n * 2) STORED);
CREATE VIEW guarded_view AS SELECT * FROM guarded;

SELECT caio_protect(NULL, 'tok', 'wallet');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_protect('no_such_table', 'tok', 'wallet');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_protect('guarded_view', 'tok', 'wallet');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_protect('guarded', NULL, 'wallet');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_protect('guarded', 'no_such_column', 'wallet');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_protect('guarded', 'tok', 'no_such_column');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_protect('guarded', 'ctid', 'wallet');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_protect('guarded', 'small_tok', 'wallet');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_protect('guarded', 'wallet', 'id');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_protect('guarded', 'tok', 'tok');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_protect('guarded', 'tok', 'total');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_protect('guarded', 'tok', 'wallet', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT caio_protect('guarded', 'tok', 'wallet', repeat('p', 255));
\echo :LAST_ERROR_SQLSTATE
-- A resource column whose text form follows session settings (DateStyle,
-- TimeZone, ...) could name one row's resource differently in two sessions.
CREATE TABLE dated (day date, tok bigint);
SELECT caio_protect('dated', 'tok', 'day');
\echo :LAST_ERROR_SQLSTATE
DROP TABLE dated;
-- A domain over an accepted type is accepted.
CREATE DOMAIN wallet_address AS text CHECK (VALUE ~ '^0x');
CREATE TABLE by_domain (wallet wallet_address, tok bigint);
SELECT caio_protect('by_domain', 'tok', 'wallet');
DROP TABLE by_domain;
DROP DOMAIN wallet_address;
-- A column name is a name, never SQL: this one simply does not exist.
SELECT caio_protect('guarded', 'tok"; DROP TABLE guarded; --', 'wallet');
\echo :LAST_ERROR_SQLSTATE

SELECT caio_versioned(NULL, 'version');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_versioned('guarded', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT caio_versioned('guarded', 'no_such_column');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_versioned('guarded', 'wallet');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_versioned('guarded_view', 'version');
\echo :LAST_ERROR_SQLSTATE

-- Only the table's owner may protect it.
CREATE ROLE regress_caio_stranger;
GRANT EXECUTE ON FUNCTION caio_protect(regclass, name, name, text),
                          caio_versioned(regclass, name) TO regress_caio_stranger;
GRANT ALL ON guarded TO regress_caio_stranger;
SET ROLE regress_caio_stranger;
SELECT caio_protect('guarded', 'tok', 'wallet');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_versioned('guarded', 'version');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;

-- None of the above left a trigger behind.
SELECT count(*) AS triggers FROM pg_trigger WHERE tgrelid = 'guarded'::regclass;

-- The trigger functions refuse to run anywhere but where caio installed them.
CREATE TRIGGER handmade BEFORE INSERT ON guarded FOR EACH ROW EXECUTE FUNCTION caio_fence_trigger('tok');
INSERT INTO guarded (id) VALUES (1);
\echo :LAST_ERROR_SQLSTATE
DROP TRIGGER handmade ON guarded;
CREATE TRIGGER handmade AFTER UPDATE ON guarded FOR EACH ROW EXECUTE FUNCTION caio_version_trigger('version');
INSERT INTO guarded (id) VALUES (1);
UPDATE guarded SET n = 1;
\echo :LAST_ERROR_SQLSTATE
DROP TRIGGER handmade ON guarded;
SELECT caio_fence_trigger();
\echo :LAST_ERROR_SQLSTATE

-- A column that caio_protect named and that was later renamed is reported.
SELECT caio_protect('guarded', 'tok', 'wallet');
ALTER TABLE guarded RENAME COLUMN tok TO fence_token;
UPDATE guarded SET n = 2;
\echo :LAST_ERROR_SQLSTATE

ALTER TABLE guarded RENAME COLUMN fence_token TO tok;
DROP VIEW guarded_view;

-- A token column whose type changed after caio_protect is refused when the
-- trigger fires, before anything is written into it.
SELECT token AS guarded_token FROM caio_acquire('0xg', 'worker-a', '1 minute') \gset
ALTER TABLE guarded ALTER COLUMN tok TYPE numeric;
BEGIN;
SELECT caio_use(caio_lease_of('0xg')) IS NOT NULL AS used;
INSERT INTO guarded (id, wallet) VALUES (2, '0xg');
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
SELECT caio_release(caio_lease_of('0xg'));

-- The same for a version column.
CREATE TABLE notes (id int, v int);
SELECT caio_versioned('notes', 'v');
INSERT INTO notes VALUES (1, 1);
ALTER TABLE notes ALTER COLUMN v TYPE numeric;
UPDATE notes SET v = 2;
\echo :LAST_ERROR_SQLSTATE

-- A table with inheritance children is refused: the trigger on the parent
-- would not guard the children's rows.
CREATE TABLE journal (id int, wallet text, tok bigint, version int);
CREATE TABLE journal_2026 () INHERITS (journal);
SELECT caio_protect('journal', 'tok', 'wallet');
\echo :LAST_ERROR_SQLSTATE
SELECT caio_versioned('journal', 'version');
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS triggers_installed FROM pg_trigger WHERE tgrelid = 'journal'::regclass;

-- A token that caio_use fills in passes the token column's domain, as one
-- the write names does: refused with the domain's own error (23514), and
-- nothing stored.
CREATE DOMAIN small_token AS bigint CONSTRAINT small CHECK (VALUE < 3);
CREATE TABLE capped (id int, wallet text, tok small_token);
SELECT caio_protect('capped', 'tok', 'wallet');
SELECT token AS capped_token FROM caio_acquire('0xcap', 'worker-a', '1 minute') \gset
INSERT INTO capped VALUES (1, '0xcap', :capped_token);
\echo :LAST_ERROR_SQLSTATE
BEGIN;
SELECT caio_use(caio_lease_of('0xcap')) IS NOT NULL AS used;
INSERT INTO capped (id, wallet) VALUES (1, '0xcap');
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
SELECT count(*) AS stored FROM capped;
-- A token the domain allows is filled in; the check follows a change of
-- the domain made after the trigger first filled a token.
ALTER DOMAIN small_token DROP CONSTRAINT small;
BEGIN;
SELECT caio_use(caio_lease_of('0xcap')) IS NOT NULL AS used;
INSERT INTO capped (id, wallet) VALUES (1, '0xcap');
SELECT tok = :capped_token AS filled FROM capped;
ALTER DOMAIN small_token ADD CONSTRAINT small CHECK (VALUE < 3) NOT VALID;
UPDATE capped SET id = 2;
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
SELECT caio_release(caio_lease_of('0xcap'));
DROP TABLE capped;
DROP DOMAIN small_token;

DROP TABLE guarded, notes, journal, journal_2026;
DROP OWNED BY regress_caio_stranger;
DROP ROLE regress_caio_stranger;
