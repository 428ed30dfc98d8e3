-- The stress run's log of grants.  Each grant is logged by the statement that
-- acquired it, in the same transaction and under the resource's lock, so
-- grant_order is the order in which a resource's leases were granted;
-- backend_pid is the server process that granted it (under PgBouncer, the
-- proof that clients shared server connections: test/pgbouncer/run.sh).
CREATE SEQUENCE stress_grant_order;
CREATE TABLE stress_grants (
    grant_order  bigint PRIMARY KEY DEFAULT nextval('stress_grant_order'),
    resource     text        NOT NULL,
    holder       text        NOT NULL,
    token        bigint      NOT NULL,
    acquired_at  timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL,
    released_at  timestamptz,
    renewals     int         NOT NULL DEFAULT 0,
    backend_pid  int         NOT NULL DEFAULT pg_backend_pid()
);
SELECT caio_clock_reset();
