-- After failover.sh, on the promoted standby: what the clients of both
-- primaries saw (table seen) against what the new primary has.  Any
-- violation raises an error.
\set ON_ERROR_STOP on
SELECT phase, kind, count(*) AS lines, min(token) AS min_token, max(token) AS max_token
  FROM seen GROUP BY phase, kind ORDER BY phase DESC, kind;
SELECT timeline_id, token_epoch
  FROM caio_token_epoch, LATERAL (SELECT last_value >> 47 AS token_epoch FROM caio_token_seq) s;

DO $$
DECLARE
    n bigint;
BEGIN
    -- The failover lost transactions, or the test proves nothing.
    SELECT count(*) INTO n FROM seen s
     WHERE phase = 'before' AND kind = 'commit'
       AND NOT EXISTS (SELECT 1 FROM ledger l WHERE l.fence_token = s.token);
    IF n = 0 THEN RAISE EXCEPTION 'the standby lost no transaction: the test proves nothing'; END IF;
    RAISE NOTICE 'the promoted standby never received % writes that the old primary committed', n;
    SELECT count(*) INTO n FROM seen WHERE phase = 'after' AND kind = 'commit';
    IF n < 5 THEN RAISE EXCEPTION 'only % commits on the new primary', n; END IF;

    -- No token of the old primary comes again: every token on the new
    -- primary is above every token any client of the old one saw.
    SELECT count(*) INTO n FROM seen
     WHERE phase = 'after' AND token <= (SELECT max(token) FROM seen WHERE phase = 'before');
    IF n <> 0 THEN RAISE EXCEPTION '% tokens on the new primary are not above the old primary''s', n; END IF;
    SELECT count(*) - count(DISTINCT token) INTO n FROM seen WHERE kind = 'lease';
    IF n <> 0 THEN RAISE EXCEPTION '% tokens were handed out twice', n; END IF;

    -- The old primary never failed over: its tokens are 1, 2, 3, ...; the
    -- new one starts epoch 1.
    SELECT count(*) INTO n FROM seen WHERE phase = 'before' AND token >= (1::bigint << 47);
    IF n <> 0 THEN RAISE EXCEPTION 'the old primary left epoch 0'; END IF;
    SELECT count(*) INTO n FROM seen WHERE phase = 'after' AND token >> 47 <> 1;
    IF n <> 0 THEN RAISE EXCEPTION '% tokens on the new primary are not in epoch 1', n; END IF;

    RAISE NOTICE 'failover invariants hold';
END $$;

-- For the record: nonces are not fenced by epochs.  A reservation that the
-- standby never received is handed out again by the new primary; run
-- caio_nonce_sync with the chain's count after a failover (doc/failover.md).
SELECT count(*) AS nonces_handed_out_again
  FROM seen a JOIN seen b ON a.nonce = b.nonce
 WHERE a.phase = 'before' AND b.phase = 'after' AND a.kind = 'commit' AND b.kind = 'commit';
