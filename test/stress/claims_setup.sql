-- The claims stress run: 20000 pending operations, each with a priority
-- (0 to 9); half the claims take them by priority (order_by).  Every claim is logged
-- by the statement that made it, and every finish that lands by the
-- transaction that made it; both draw from one sequence, so for each row
-- stress_claim_log.seq is the order in which its claims and finish happened.
SELECT caio_clock_reset();
CREATE TABLE stress_ops (id int PRIMARY KEY, priority int NOT NULL,
                         state text NOT NULL DEFAULT 'pending', done_by text);
INSERT INTO stress_ops (id, priority) SELECT i, (i * 7919) % 10 FROM generate_series(1, 20000) i;
SELECT caio_claimable('stress_ops');
CREATE INDEX ON stress_ops (id) WHERE state = 'pending';
CREATE INDEX ON stress_ops (priority DESC, id) WHERE state = 'pending';
CREATE SEQUENCE stress_claim_order;
CREATE TABLE stress_claim_log (
    seq        bigint PRIMARY KEY DEFAULT nextval('stress_claim_order'),
    kind       text NOT NULL,          -- claim, finish, refused
    id         int NOT NULL,
    token      bigint NOT NULL,
    holder     text NOT NULL,
    at         timestamptz NOT NULL DEFAULT caio_now(),
    expires_at timestamptz,
    -- of a claim: the claim it was part of (its first_seq), whether it was
    -- ordered, the row's place in the claim's result, the row's priority
    claim_run  bigint,
    ordered    boolean,
    pos        int,
    priority   int
);

-- Finish the rows this worker claimed in this cycle, each under its own
-- token; a refusal (the claim was taken over) is caught and logged.
CREATE FUNCTION stress_finish(worker text, first_seq bigint) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
    c record;
    landed int := 0;
BEGIN
    FOR c IN SELECT id, token FROM stress_claim_log
              WHERE kind = 'claim' AND holder = worker AND seq >= first_seq LOOP
        BEGIN
            UPDATE stress_ops SET state = 'done', done_by = worker, claim_holder = NULL,
                   claim_expires_at = NULL, claim_token = c.token
             WHERE id = c.id;
            INSERT INTO stress_claim_log (kind, id, token, holder) VALUES ('finish', c.id, c.token, worker);
            landed := landed + 1;
        EXCEPTION WHEN SQLSTATE 'LK001' THEN
            INSERT INTO stress_claim_log (kind, id, token, holder) VALUES ('refused', c.id, c.token, worker);
        END;
    END LOOP;
    RETURN landed;
END $$;
