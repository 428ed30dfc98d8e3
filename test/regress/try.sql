-- try(call) runs SELECT <call> in a subtransaction and returns the SQLSTATE
-- and message of its error.  A call that does not fail is rolled back all
-- the same (so that it cannot spoil the calls after it) and reported with
-- a NULL SQLSTATE.  Shared by the suites bad_input and versions, which
-- include it (pg_regress runs psql in the checkout) and drop it at the end.
CREATE FUNCTION try(call text, OUT state text, OUT msg text) LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE 'SELECT ' || call;
    RAISE SQLSTATE 'NOERR';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
    IF state = 'NOERR' THEN
        state := NULL;
        msg := 'no error';
    END IF;
END $$;
