-- caio_protect and caio_versioned check every argument against the table:
-- a clear error with its SQLSTATE, and no trigger is left behind.
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

DROP TABLE guarded CASCADE;
DROP OWNED BY regress_caio_stranger;
DROP ROLE regress_caio_stranger;
