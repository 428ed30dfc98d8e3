-- caio_use under transaction pooling: a protected table of one wallet, a
-- log of what each transaction saw and on which server backend, and a
-- write that names no token and must be refused with LK003.
\set ON_ERROR_STOP on
CREATE TABLE use_accounts (
    id          int PRIMARY KEY,
    wallet      text NOT NULL,
    balance     int NOT NULL DEFAULT 0,
    fence_token bigint
);
INSERT INTO use_accounts (id, wallet) VALUES (1, 'w'), (2, 'w');
SELECT caio_protect('use_accounts', 'fence_token', 'wallet', 'use:') \g /dev/null
CREATE TABLE use_log (
    seq         serial PRIMARY KEY,
    client      text NOT NULL,
    step        text NOT NULL,
    backend_pid int NOT NULL DEFAULT pg_backend_pid()
);

CREATE FUNCTION use_write_refused(client text, step text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE use_accounts SET balance = balance + 1 WHERE wallet = 'w';
    RAISE EXCEPTION 'client %, %: a write naming no token landed', client, step;
EXCEPTION WHEN SQLSTATE 'LK003' THEN
    INSERT INTO use_log (client, step) VALUES (client, step || ': refused LK003');
END $$;
