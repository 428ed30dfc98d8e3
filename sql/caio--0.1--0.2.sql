-- caio 0.1 to 0.2: token epochs, so that tokens keep growing after a
-- promoted standby, a point-in-time recovery or a restore into another
-- cluster.  The table starts empty: the first token drawn after the update
-- records the present system and timeline without moving the sequence.

\echo Use "ALTER EXTENSION caio UPDATE TO '0.2'" to load this file. \quit

CREATE TABLE caio_token_epoch (
    singleton          boolean     PRIMARY KEY DEFAULT true CHECK (singleton),
    system_identifier  numeric(20) NOT NULL,
    timeline_id        bigint      NOT NULL CHECK (timeline_id > 0),
    recorded_at        timestamptz NOT NULL
);
SELECT pg_catalog.pg_extension_config_dump('caio_token_epoch', '');
REVOKE ALL ON TABLE caio_token_epoch FROM PUBLIC;
