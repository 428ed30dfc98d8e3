-- Invariants after the lease stress run; any violation raises an error.
\set ON_ERROR_STOP on
SELECT count(*) AS grants,
       count(*) FILTER (WHERE released_at IS NOT NULL) AS released,
       sum(renewals) AS renewals,
       count(DISTINCT resource) AS resources
  FROM stress_grants;

-- How each grant followed the one before it on its resource.
CREATE TEMP VIEW successions AS
SELECT resource, token, acquired_at,
       lag(token) OVER w AS prev_token,
       lag(expires_at) OVER w AS prev_expires_at,
       lag(released_at) OVER w AS prev_released_at
  FROM stress_grants
WINDOW w AS (PARTITION BY resource ORDER BY grant_order);

SELECT count(*) FILTER (WHERE prev_released_at IS NOT NULL) AS after_release,
       count(*) FILTER (WHERE prev_released_at IS NULL AND prev_token IS NOT NULL) AS after_expiry
  FROM successions;

DO $$
DECLARE
    n bigint;
BEGIN
    SELECT count(*) - count(DISTINCT token) INTO n FROM stress_grants;
    IF n <> 0 THEN RAISE EXCEPTION '% tokens were granted twice', n; END IF;

    SELECT count(*) INTO n FROM successions WHERE token <= prev_token;
    IF n <> 0 THEN RAISE EXCEPTION '% grants came with a token not larger than the previous grant''s', n; END IF;

    -- A new holder only after the previous lease was released or had expired.
    SELECT count(*) INTO n FROM successions
     WHERE prev_token IS NOT NULL
       AND acquired_at < coalesce(least(prev_released_at, prev_expires_at), prev_expires_at);
    IF n <> 0 THEN RAISE EXCEPTION '% grants overlapped a live lease', n; END IF;

    -- The lease table holds each resource's newest grant.
    SELECT count(*) INTO n
      FROM caio_lease_state s
      JOIN (SELECT resource, max(token) AS token FROM stress_grants GROUP BY resource) g USING (resource)
     WHERE s.token <> g.token;
    IF n <> 0 THEN RAISE EXCEPTION '% resources hold a token other than their newest grant', n; END IF;

    -- The run must have exercised what it claims to.
    SELECT count(*) INTO n FROM stress_grants;
    IF n < 200 THEN RAISE EXCEPTION 'only % grants: the run was too small to prove anything', n; END IF;
    SELECT count(*) INTO n FROM successions WHERE prev_released_at IS NULL AND prev_token IS NOT NULL;
    IF n = 0 THEN RAISE EXCEPTION 'no takeover after expiry happened'; END IF;
    SELECT count(*) INTO n FROM successions WHERE prev_released_at IS NOT NULL;
    IF n = 0 THEN RAISE EXCEPTION 'no grant after a release happened'; END IF;
    SELECT sum(renewals) INTO n FROM stress_grants;
    IF n = 0 THEN RAISE EXCEPTION 'no renewal happened'; END IF;

    RAISE NOTICE 'lease stress invariants hold';
END $$;
