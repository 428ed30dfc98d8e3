-- caio_versioned: optimistic concurrency.  An UPDATE must set the version
-- column to the row's version + 1; anything else is refused with LK002.
CREATE TABLE payments (id int PRIMARY KEY, state text NOT NULL, version bigint NOT NULL DEFAULT 1);
SELECT caio_versioned('payments', 'version');
INSERT INTO payments (id, state) VALUES (1, 'new'), (2, 'new');

-- A writer that read version 1 sets version 2: accepted.
UPDATE payments SET state = 'signed', version = 2 WHERE id = 1;
-- A second writer that also read version 1 sets version 2 again: refused.
UPDATE payments SET state = 'cancelled', version = 2 WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE
-- Skipping ahead, going back, NULL, or not setting the version: refused.
UPDATE payments SET state = 'x', version = 4 WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE
UPDATE payments SET state = 'x', version = 1 WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE
UPDATE payments SET state = 'x', version = NULL WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE
UPDATE payments SET state = 'x' WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE
-- One statement over many rows: every row must move up by exactly one.
UPDATE payments SET state = 'broadcast', version = 3 WHERE id IN (1, 2);
\echo :LAST_ERROR_SQLSTATE
-- INSERT and DELETE are not versioned.
INSERT INTO payments (id, state, version) VALUES (3, 'imported', 17);
DELETE FROM payments WHERE id = 2;
SELECT * FROM payments ORDER BY id;

-- Smaller integer types work too; a row with no version yet is at 0.
CREATE TABLE notes (id int PRIMARY KEY, body text, v smallint);
SELECT caio_versioned('notes', 'v');
INSERT INTO notes VALUES (1, 'draft', NULL);
UPDATE notes SET body = 'final', v = 1 WHERE id = 1 RETURNING *;
UPDATE notes SET body = 'again', v = 1 WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE

-- A row at the largest version cannot be advanced: the refusal says so
-- rather than asking for a version past it.
CREATE TABLE big_notes (id int PRIMARY KEY, v bigint);
SELECT caio_versioned('big_notes', 'v');
INSERT INTO big_notes VALUES (1, 9223372036854775807);
UPDATE big_notes SET v = v WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE

DROP TABLE payments, notes, big_notes;
