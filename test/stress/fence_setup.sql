-- The fencing stress run: three wallets, four accounts each, in a protected
-- table.  Every grant (logged by the acquiring statement, under the
-- resource's exclusive lock) and every write that lands (logged by an AFTER
-- trigger, under its shared lock) draws from one sequence, so for each
-- resource stress_events.seq is the order in which grants and writes
-- really happened.  backend_pid is the server process that logged the event
-- (under PgBouncer, the proof that a lease's grant and its writes ran on
-- different server connections: test/pgbouncer/run.sh).
SELECT caio_clock_reset();
CREATE SEQUENCE stress_order;
CREATE TABLE stress_events (
    seq         bigint PRIMARY KEY DEFAULT nextval('stress_order'),
    kind        text NOT NULL,     -- grant, INSERT, UPDATE, DELETE, refused
    resource    text NOT NULL,
    row_id      int,
    token       bigint,
    backend_pid int NOT NULL DEFAULT pg_backend_pid()
);
CREATE SEQUENCE stress_account_ids START 100;
CREATE TABLE stress_accounts (
    id          int PRIMARY KEY,
    wallet      int NOT NULL,
    balance     int NOT NULL DEFAULT 0,
    fence_token bigint
);
INSERT INTO stress_accounts (id, wallet) SELECT w * 10 + a, w FROM generate_series(1, 3) w, generate_series(1, 4) a;
SELECT caio_protect('stress_accounts', 'fence_token', 'wallet', 'fence:');

CREATE FUNCTION stress_log_write() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO stress_events (kind, resource, row_id, token)
    SELECT TG_OP, 'fence:' || r.wallet, r.id, r.fence_token
      FROM (SELECT (CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END).*) r;
    RETURN NULL;
END $$;
CREATE TRIGGER stress_log AFTER INSERT OR UPDATE OR DELETE ON stress_accounts
    FOR EACH ROW EXECUTE FUNCTION stress_log_write();

-- One worker's write under its lease: naming the token in the SET list, or
-- through caio_use (then also adding and removing an account).  A refusal
-- is caught, logged, and leaves nothing behind.
CREATE FUNCTION stress_write(w int, tok bigint, holder text, through_use boolean)
RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    IF through_use THEN
        PERFORM caio_use(ROW('fence:' || w, holder, tok, NULL, NULL)::caio_lease);
        UPDATE stress_accounts SET balance = balance + 1 WHERE wallet = w;
        INSERT INTO stress_accounts (id, wallet) VALUES (nextval('stress_account_ids'), w);
        DELETE FROM stress_accounts WHERE id = (SELECT min(id) FROM stress_accounts WHERE wallet = w AND id >= 100);
    ELSE
        UPDATE stress_accounts SET balance = balance + 1, fence_token = tok WHERE wallet = w;
    END IF;
    RETURN 'landed';
EXCEPTION WHEN SQLSTATE 'LK001' THEN
    INSERT INTO stress_events (kind, resource, token) VALUES ('refused', 'fence:' || w, tok);
    RETURN 'refused';
END $$;
