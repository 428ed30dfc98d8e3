-- Invariants after the claims stress run; any violation raises an error.
\set ON_ERROR_STOP on
SELECT count(*) FILTER (WHERE kind = 'claim') AS claims,
       count(*) FILTER (WHERE kind = 'claim' AND ordered) AS ordered_claims,
       count(*) FILTER (WHERE kind = 'finish') AS finishes,
       count(*) FILTER (WHERE kind = 'refused') AS refused_finishes,
       (SELECT count(*) FROM (SELECT id FROM stress_claim_log WHERE kind = 'claim'
                              GROUP BY id HAVING count(*) > 1) t) AS rows_taken_over
  FROM stress_claim_log;

CREATE TEMP VIEW claim_history AS
SELECT id, seq, kind, token, at, expires_at,
       lag(kind) OVER w AS prev_kind, lag(token) OVER w AS prev_token,
       lag(expires_at) OVER w AS prev_expires_at
  FROM stress_claim_log
 WHERE kind IN ('claim', 'finish')
WINDOW w AS (PARTITION BY id ORDER BY seq);

DO $$
DECLARE
    n bigint;
BEGIN
    -- No row was held by two live claims at once: a row is claimed again
    -- only after the claim before it expired.
    SELECT count(*) INTO n FROM claim_history
     WHERE kind = 'claim' AND prev_kind = 'claim' AND at < prev_expires_at;
    IF n <> 0 THEN RAISE EXCEPTION '% claims overlapped a live claim', n; END IF;
    SELECT count(*) INTO n FROM claim_history WHERE kind = 'claim' AND prev_kind = 'finish';
    IF n <> 0 THEN RAISE EXCEPTION '% finished rows were claimed again', n; END IF;

    -- Every finish that landed came under the row's newest claim token, and
    -- a row was finished at most once.
    SELECT count(*) INTO n FROM claim_history
     WHERE kind = 'finish' AND (prev_kind IS DISTINCT FROM 'claim' OR token <> prev_token);
    IF n <> 0 THEN RAISE EXCEPTION '% finishes landed under a superseded token', n; END IF;
    SELECT count(*) INTO n FROM (SELECT id FROM stress_claim_log WHERE kind = 'finish'
                                  GROUP BY id HAVING count(*) > 1) t;
    IF n <> 0 THEN RAISE EXCEPTION '% rows were finished twice', n; END IF;

    -- The table agrees with the log.
    SELECT count(*) INTO n FROM stress_ops o
      JOIN stress_claim_log f ON f.id = o.id AND f.kind = 'finish'
     WHERE o.state <> 'done' OR o.done_by <> f.holder OR o.claim_token <> f.token;
    IF n <> 0 THEN RAISE EXCEPTION '% finished rows disagree with the log', n; END IF;
    SELECT count(*) - count(DISTINCT token) INTO n FROM stress_claim_log WHERE kind = 'claim';
    IF n <> 0 THEN RAISE EXCEPTION '% claim tokens were handed out twice', n; END IF;

    -- Each ordered claim handed its rows out in its order (priority DESC,
    -- id), the first of the order first, with tokens that rise along it.
    SELECT count(*) INTO n FROM (
        SELECT priority, id, token,
               lag(priority) OVER w AS prev_priority, lag(id) OVER w AS prev_id,
               lag(token) OVER w AS prev_token
          FROM stress_claim_log
         WHERE kind = 'claim' AND ordered
        WINDOW w AS (PARTITION BY claim_run ORDER BY pos)) t
     WHERE prev_id IS NOT NULL
       AND (priority > prev_priority OR (priority = prev_priority AND id < prev_id)
            OR token < prev_token);
    IF n <> 0 THEN RAISE EXCEPTION '% rows of ordered claims came out of order', n; END IF;
    SELECT count(*) INTO n FROM stress_claim_log WHERE kind = 'claim' AND ordered;
    IF n = 0 THEN RAISE EXCEPTION 'no ordered claim was made: the run proves nothing about order'; END IF;

    -- The run must have exercised takeovers and refusals.
    SELECT count(*) INTO n FROM stress_claim_log WHERE kind = 'refused';
    IF n = 0 THEN RAISE EXCEPTION 'no stale finish was attempted: the run proves nothing'; END IF;
    SELECT count(*) INTO n FROM stress_claim_log WHERE kind = 'finish';
    IF n < 200 THEN RAISE EXCEPTION 'only % finishes: the run was too small', n; END IF;

    RAISE NOTICE 'claims stress invariants hold';
END $$;
