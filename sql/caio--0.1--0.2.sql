-- caio 0.1 to 0.2: token epochs, so that tokens keep growing after a
-- promoted standby, a point-in-time recovery, a restore or a copy (see
-- src/token.c).  A database updated in place is recorded as the lineage of
-- its tokens, in epoch 0, where 0.1 drew every token.

\echo Use "ALTER EXTENSION caio UPDATE TO '0.2'" to load this file. \quit

CREATE TABLE caio_token_epoch (
    system_identifier  numeric(20) NOT NULL,
    database_oid       oid         NOT NULL,
    timeline_id        bigint      NOT NULL CHECK (timeline_id OPERATOR(pg_catalog.>) 0),
    epoch              bigint      NOT NULL CHECK (epoch OPERATOR(pg_catalog.>=) 0 AND epoch OPERATOR(pg_catalog.<=) 65535),
    recorded_at        timestamptz NOT NULL
);
-- This database as the lineage, in epoch 0.  The checkpoint's timeline may
-- lag a promotion that just happened; the first token then moves to the
-- next epoch, which is only cautious.
INSERT INTO caio_token_epoch (system_identifier, database_oid, timeline_id, epoch, recorded_at)
SELECT s.system_identifier, d.oid, c.timeline_id, 0, pg_catalog.clock_timestamp()
  FROM pg_catalog.pg_control_system() s, pg_catalog.pg_control_checkpoint() c,
       pg_catalog.pg_database d
 WHERE d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database();
SELECT pg_catalog.pg_extension_config_dump('caio_token_epoch', '');
REVOKE ALL ON TABLE caio_token_epoch FROM PUBLIC;

-- Start a new token epoch by hand, for a copy of this database that nothing
-- marks as one (README, Guarantees); the next token is its first.  For
-- superusers: granted to nobody.  Returns the epoch.
CREATE FUNCTION caio_start_token_epoch() RETURNS bigint
    AS 'MODULE_PATHNAME', 'caio_start_token_epoch'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION caio_start_token_epoch() FROM PUBLIC;
