-- After a fault, on the new primary: what the clients were told (their
-- logs, loaded into the temporary table seen) against what the new primary
-- has.  run.sh has loaded the clients' logs into the temporary table seen
-- (ms, port, kind, token, n, a, holder: see client.pl).  Variables (psql
-- -v): fault (its name), t0 (the fault's time, client clock ms), port (the
-- new primary's), sync (on: the formation replicates synchronously, so
-- nothing acknowledged may be lost), stale_token (the lease taken on the old primary
-- just before the fault, resource 'dur:stale-' || fault).  Prints one line:
--   FAULT recovery=MS grants=N tokens_twice=N not_above=N writes_lost=N
--         nonces_twice=N nonces_missing=N marks_lost=N claims_overlap=N stale=SQLSTATE
-- and fails if a check fails: with sync on, every count must be 0 (except
-- the grants made since the fault, which must not be); with sync off, only
-- tokens_twice and not_above, and the stale writer's refusal, must hold,
-- and the other counts are what the asynchronous failover lost.
\set ON_ERROR_STOP on
\set QUIET on
SET client_min_messages = warning;
SET ha.t0 = :'t0';
SET ha.port = :'port';
SET ha.sync = :'sync';
SET ha.stale_token = :'stale_token';
SET ha.fault = :'fault';
-- What the new primary did since the fault (after) and everything else
-- the clients were told, by the old primary before the fault or by any
-- node that was not the new primary after it (before).
CREATE TEMP TABLE after AS
    SELECT * FROM seen WHERE port = current_setting('ha.port')::int
                         AND ms > current_setting('ha.t0')::bigint;
CREATE TEMP TABLE before AS SELECT * FROM seen EXCEPT ALL SELECT * FROM after;

-- A writer that took its lease on the old primary just before the fault,
-- once another holder has taken the resource over on the new one.
CREATE TEMP TABLE stale AS SELECT NULL::text AS sqlstate;
DO $$
DECLARE
    resource text := 'dur:stale-' || current_setting('ha.fault');
    old_token bigint := current_setting('ha.stale_token')::bigint;
    taken caio_lease;
BEGIN
    taken := caio_acquire(resource, 'taker', '1 minute', '30 seconds');
    IF taken IS NULL THEN RAISE EXCEPTION 'the stale lease on % was not taken over', resource; END IF;
    IF taken.token <= old_token THEN
        RAISE EXCEPTION 'the takeover of % got token %, not above the stale %', resource, taken.token, old_token;
    END IF;
    BEGIN
        INSERT INTO ledger (worker, nonce, fence_token)
        VALUES ('stale-' || current_setting('ha.fault'), -1, old_token);
        UPDATE stale SET sqlstate = 'none';
    EXCEPTION WHEN SQLSTATE 'LK001' THEN
        UPDATE stale SET sqlstate = 'LK001';
    END;
END $$;

-- Every acknowledged claim: its start (its expiry less the 20 s ttl) and
-- how long it stayed live.  A claim that was finished (acknowledged, or
-- found in job_runs: the acknowledgement of a committed finish can be lost
-- in a failover) ended before any later claim of its job: that one could
-- lock the row only after the finish committed (its start may still read a
-- millisecond earlier: caio reads the clock before it locks).  Any other
-- claim was live until its expiry.  An overlap is a claim taken while an
-- earlier claim of the same job was live.
ANALYZE seen;
CREATE TEMP TABLE claims AS
SELECT c.n AS job, c.token, c.port, c.a - 20000 AS claimed,
       CASE WHEN f.token IS NULL AND j.token IS NULL THEN c.a END AS ended
  FROM seen c
  LEFT JOIN seen f ON f.kind = 'finish' AND f.token = c.token
  LEFT JOIN job_runs j ON j.token = c.token
 WHERE c.kind = 'claim';
CREATE TEMP VIEW claim_overlaps AS
SELECT * FROM (SELECT *, max(ended) OVER (PARTITION BY job ORDER BY token
                                          ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS live_until
                 FROM claims) c
 WHERE claimed < live_until;

CREATE TEMP TABLE result AS
SELECT
    (SELECT min(ms) FROM after WHERE kind = 'commit') - current_setting('ha.t0')::bigint AS recovery,
    (SELECT count(DISTINCT token) FROM after WHERE kind IN ('lease', 'claim')
      AND (token, kind, holder) NOT IN (SELECT token, kind, holder FROM before)) AS grants,
    -- A token is one grant: one holder's lease (a retry of a live lease by
    -- its holder gets its token back) or one claim.
    (SELECT count(*) FROM (SELECT token FROM seen WHERE kind IN ('lease', 'claim')
                            GROUP BY token HAVING count(DISTINCT (kind, holder, n)) > 1) d) AS tokens_twice,
    -- New grants: not a holder's retry of a lease it had before.
    (SELECT count(*) FROM after WHERE kind IN ('lease', 'claim')
      AND (token, kind, holder) NOT IN (SELECT token, kind, holder FROM before)
      AND token <= (SELECT max(token) FROM before)) AS not_above,
    (SELECT count(*) FROM seen s WHERE kind = 'commit'
      AND NOT EXISTS (SELECT 1 FROM ledger l
                       WHERE l.fence_token = s.token AND l.nonce = s.n AND l.worker = s.holder)) AS writes_lost,
    (SELECT count(*) - count(DISTINCT n) FROM seen WHERE kind = 'commit') AS nonces_twice,
    (SELECT count(*) FROM caio_nonce_holes) AS nonces_missing,
    (SELECT count(*) FROM seen s WHERE kind = 'mark'
      AND NOT EXISTS (SELECT 1 FROM caio_nonce_reservation r
                       WHERE r.nonce = s.n AND r.state IN ('broadcast', 'mined'))) AS marks_lost,
    (SELECT count(*) FROM claim_overlaps) AS claims_overlap,
    (SELECT sqlstate FROM stale) AS stale;

SELECT format('%-12s recovery=%sms grants=%s tokens_twice=%s not_above=%s writes_lost=%s nonces_twice=%s nonces_missing=%s marks_lost=%s claims_overlap=%s stale=%s',
              current_setting('ha.fault'), recovery, grants, tokens_twice, not_above, writes_lost,
              nonces_twice, nonces_missing, marks_lost, claims_overlap, stale) AS line
  FROM result \gset
\echo :line

-- On failure, the evidence: the overlapping claims, with their nodes.
SELECT format('claims of job %s: token %s (node %s, claimed %s) while an earlier claim was live until %s',
              job, token, port, claimed, live_until)
  FROM claim_overlaps LIMIT 5;

DO $$
DECLARE
    r result;
BEGIN
    SELECT * INTO r FROM result;
    IF r.recovery IS NULL OR r.grants = 0 THEN
        RAISE EXCEPTION 'no write or grant on the new primary since the fault: the test proves nothing';
    END IF;
    IF r.tokens_twice <> 0 OR r.not_above <> 0 OR r.stale IS DISTINCT FROM 'LK001' THEN
        RAISE EXCEPTION 'tokens: a check failed';
    END IF;
    IF current_setting('ha.sync')::boolean
       AND (r.writes_lost <> 0 OR r.nonces_twice <> 0 OR r.nonces_missing <> 0
            OR r.marks_lost <> 0 OR r.claims_overlap <> 0) THEN
        RAISE EXCEPTION 'synchronous replication lost something acknowledged';
    END IF;
END $$;
