-- Invariants after the fencing stress run; any violation raises an error.
\set ON_ERROR_STOP on
SELECT count(*) FILTER (WHERE kind = 'grant') AS grants,
       count(*) FILTER (WHERE kind IN ('INSERT', 'UPDATE', 'DELETE')) AS landed_writes,
       count(*) FILTER (WHERE kind = 'refused') AS refused_writes
  FROM stress_events;

-- Each landed write, beside the newest grant on its resource before it.
CREATE TEMP VIEW writes AS
SELECT w.seq, w.kind, w.resource, w.row_id, w.token,
       (SELECT g.token FROM stress_events g
         WHERE g.kind = 'grant' AND g.resource = w.resource AND g.seq < w.seq
         ORDER BY g.seq DESC LIMIT 1) AS newest_grant
  FROM stress_events w
 WHERE w.kind IN ('INSERT', 'UPDATE', 'DELETE');

DO $$
DECLARE
    n bigint;
BEGIN
    -- No write under a superseded token landed.
    SELECT count(*) INTO n FROM writes WHERE token IS DISTINCT FROM newest_grant;
    IF n <> 0 THEN RAISE EXCEPTION '% writes landed under a token that was not the newest', n; END IF;

    -- Every row's token only went forward.
    SELECT count(*) INTO n FROM (
        SELECT token, lag(token) OVER (PARTITION BY row_id ORDER BY seq) AS previous
          FROM stress_events WHERE kind IN ('INSERT', 'UPDATE')) h
     WHERE token < previous;
    IF n <> 0 THEN RAISE EXCEPTION '% row writes moved a token backwards', n; END IF;

    -- The table agrees with the log: each row carries its last logged token.
    SELECT count(*) INTO n FROM stress_accounts a
     WHERE a.fence_token IS DISTINCT FROM
           (SELECT token FROM stress_events e WHERE e.row_id = a.id ORDER BY seq DESC LIMIT 1);
    IF n <> 0 THEN RAISE EXCEPTION '% rows disagree with the write log', n; END IF;

    -- The run must have exercised both outcomes.
    SELECT count(*) INTO n FROM stress_events WHERE kind = 'refused';
    IF n = 0 THEN RAISE EXCEPTION 'no stale write was attempted: the run proves nothing'; END IF;
    SELECT count(*) INTO n FROM writes;
    IF n < 200 THEN RAISE EXCEPTION 'only % writes landed: the run was too small', n; END IF;

    RAISE NOTICE 'fencing stress invariants hold';
END $$;
