-- Tables for the plain-SQL baselines.
CREATE SEQUENCE bench_tokens;
CREATE TABLE bench_locks (
    resource    text PRIMARY KEY,
    holder      text NOT NULL,
    token       bigint NOT NULL,
    expires_at  timestamptz NOT NULL,
    released    boolean NOT NULL DEFAULT false
) WITH (fillfactor = 70);
