-- After crash.sh: what the clients saw (table seen) against what the
-- restarted server has.  Any violation raises an error.
\set ON_ERROR_STOP on
SELECT phase, kind, count(*) AS lines, min(token) AS min_token, max(token) AS max_token
  FROM seen GROUP BY phase, kind ORDER BY phase DESC, kind;

DO $$
DECLARE
    n bigint;
BEGIN
    -- The load ran on both sides of the crash.
    SELECT count(*) INTO n FROM seen WHERE phase = 'before' AND kind = 'commit';
    IF n < 20 THEN RAISE EXCEPTION 'only % commits before the crash: the test proves nothing', n; END IF;
    SELECT count(*) INTO n FROM seen WHERE phase = 'after' AND kind = 'commit';
    IF n < 5 THEN RAISE EXCEPTION 'only % commits after the restart', n; END IF;

    -- No token was handed out twice, and every token after the restart is
    -- larger than every token any client saw before it.
    SELECT count(*) - count(DISTINCT token) INTO n FROM seen WHERE kind = 'lease';
    IF n <> 0 THEN RAISE EXCEPTION '% tokens were handed out twice', n; END IF;
    SELECT count(*) INTO n FROM seen
     WHERE phase = 'after' AND token <= (SELECT max(token) FROM seen WHERE phase = 'before');
    IF n <> 0 THEN RAISE EXCEPTION '% tokens after the restart are not above every token seen before it', n; END IF;
    -- The eight sessions that asked at once right after the restart got
    -- eight tokens, all above every token seen before the crash.
    SELECT count(DISTINCT token) INTO n FROM first_tokens;
    IF n <> 8 THEN RAISE EXCEPTION 'the eight first sessions after the restart got % distinct tokens', n; END IF;
    SELECT count(*) INTO n FROM first_tokens
     WHERE token <= (SELECT max(token) FROM seen WHERE phase = 'before');
    IF n <> 0 THEN RAISE EXCEPTION '% first tokens after the restart are not above every token seen before it', n; END IF;
    -- A crash is not a failover: the tokens stay in epoch 0.
    SELECT count(*) INTO n FROM seen WHERE token >= (1::bigint << 47);
    IF n <> 0 THEN RAISE EXCEPTION 'a crash moved tokens to a new epoch'; END IF;

    -- No nonce was handed out twice, across the crash.
    SELECT count(*) - count(DISTINCT nonce) INTO n FROM seen WHERE kind = 'commit';
    IF n <> 0 THEN RAISE EXCEPTION '% nonces were handed out twice', n; END IF;

    -- Nothing whose commit a client saw is lost: its row, under its token,
    -- and its nonce's reservation.
    SELECT count(*) INTO n FROM seen s
     WHERE kind = 'commit'
       AND NOT EXISTS (SELECT 1 FROM ledger l WHERE l.fence_token = s.token AND l.nonce = s.nonce);
    IF n <> 0 THEN RAISE EXCEPTION '% committed writes are lost', n; END IF;
    SELECT count(*) INTO n FROM seen s
     WHERE kind = 'commit'
       AND NOT EXISTS (SELECT 1 FROM caio_nonce_reservation r WHERE r.chain_id = 1 AND r.nonce = s.nonce);
    IF n <> 0 THEN RAISE EXCEPTION '% committed nonce reservations are lost', n; END IF;

    RAISE NOTICE 'crash invariants hold';
END $$;

-- For the record: lease grants that a client saw but the crash took away
-- (with synchronous_commit off a grant commits asynchronously; its token is
-- still never handed out again).
SELECT count(*) AS lease_grants_lost_in_crash
  FROM (SELECT holder, max(token) AS seen_token FROM seen
         WHERE phase = 'before' AND kind = 'lease' GROUP BY holder) s
  LEFT JOIN caio_lease_state l ON l.resource = 'dur:' || s.holder
 WHERE l.token IS DISTINCT FROM s.seen_token;
