-- Tokens: on disk before they are handed out, and in epochs that a copy of
-- the database moves past (src/token.c; the crash, failover and restore
-- tests in test/durability run the real thing).
SELECT setval('caio_token_seq', 9500);

-- This database is its tokens' lineage, recorded by CREATE EXTENSION.
SELECT count(*) AS rows, max(epoch) AS epoch,
       bool_and(database_oid = (SELECT oid FROM pg_database WHERE datname = current_database())
                AND system_identifier = (SELECT system_identifier FROM pg_control_system())
                AND timeline_id > 0) AS this_database
  FROM caio_token_epoch;

-- Every token's WAL is flushed before caio returns it, even under
-- synchronous_commit = off and before the transaction commits: a crash
-- cannot take back a token somebody holds.  (This suite's server does not
-- preload caio; with shared memory the flush is lazier, and
-- test/durability/crash.sh off preload walwriter checks that instead.)
CREATE EXTENSION pageinspect;
SET synchronous_commit = off;
BEGIN;
SELECT count(*) AS tokens, count(*) FILTER (WHERE NOT flushed) AS tokens_not_on_disk
  FROM generate_series(1, 100) i,
       LATERAL (SELECT token FROM caio_acquire('tokens:' || i, 'worker-a', '1 minute')) l,
       LATERAL (SELECT (page_header(get_raw_page('caio_token_seq', 0))).lsn
                       <= pg_current_wal_flush_lsn() AS flushed
                 WHERE l.token IS NOT NULL) f;
COMMIT;
RESET synchronous_commit;
DROP EXTENSION pageinspect;

-- A copy that nothing marks as one starts a new epoch by hand; the next
-- token is its first.
SELECT caio_start_token_epoch() AS epoch;
SELECT token >> 47 AS epoch, token & ((1::bigint << 47) - 1) AS n
  FROM caio_acquire('tokens:after', 'worker-a', '1 minute');
SELECT count(*) AS rows, max(epoch) AS epoch FROM caio_token_epoch;
-- A row of another lineage beside this one (as a restore brings): the next
-- session's first token starts a lineage above everything it knows of.
INSERT INTO caio_token_epoch VALUES (1, 1, 1, 7, now());
\c -
SELECT token >> 47 AS epoch, token & ((1::bigint << 47) - 1) AS n
  FROM caio_acquire('tokens:copy', 'worker-a', '1 minute');
SELECT count(*) AS rows, max(epoch) AS epoch FROM caio_token_epoch;

-- The epochs end at 65535, with a clear error rather than a wrapped token.
SELECT setval('caio_token_seq', 65535::bigint << 47);
SELECT caio_start_token_epoch();
\echo :LAST_ERROR_SQLSTATE

-- A token sequence altered by hand is refused until it is put back.
ALTER SEQUENCE caio_token_seq CACHE 10;
\c -
SELECT token FROM caio_acquire('tokens:cached', 'worker-a', '1 minute');
\echo :LAST_ERROR_SQLSTATE
ALTER SEQUENCE caio_token_seq CACHE 1;
-- So is one that could hand out tokens of 0 or below (0 reads as "never
-- claimed", and caio's tables carry no CHECK on tokens).
ALTER SEQUENCE caio_token_seq MINVALUE -10;
\c -
SELECT token FROM caio_acquire('tokens:cached', 'worker-a', '1 minute');
\echo :LAST_ERROR_SQLSTATE
ALTER SEQUENCE caio_token_seq MINVALUE 1;
\c -
SELECT token >> 47 AS epoch FROM caio_acquire('tokens:cached', 'worker-a', '1 minute');
