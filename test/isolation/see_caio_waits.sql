-- isolationtester decides that a step is blocked by asking
-- pg_catalog.pg_isolation_test_session_is_blocked($1, '{pids}'), which only
-- recognises heavyweight-lock waits.  caio_acquire(..., wait) sleeps on its
-- latch instead, so the tester would wait for the step to end before running
-- the step that should wake it.  For this throwaway database only, an
-- overload taking the pid list as text (which the tester's untyped literal
-- resolves to) also counts a backend in an Extension wait as blocked.
CREATE FUNCTION pg_catalog.pg_isolation_test_session_is_blocked(blocked integer, interesting text)
    RETURNS boolean LANGUAGE sql VOLATILE AS $$
    SELECT pg_catalog.pg_isolation_test_session_is_blocked(blocked, interesting::integer[])
        OR EXISTS (SELECT FROM pg_catalog.pg_stat_activity
                    WHERE pid = blocked AND wait_event_type = 'Extension')
$$;
