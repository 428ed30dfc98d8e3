-- caio_tap: pgTAP tests of caio's contract on your own tables.
--
-- This file is the source of the install script sql/caio_tap--<version>.sql
-- that `make` builds.  The three functions a test file calls are at the end:
-- caio_tap_fencing, caio_tap_versioned and caio_tap_claimable.  Each plays a
-- story of two workers against the user's table inside a subtransaction that
-- it rolls back, and then returns pgTAP's lines, one test per step.
--
-- Why the results are written only after the rollback: pgTAP keeps its test
-- counter and results in temporary tables, which a rolled-back
-- subtransaction would take with it.  So a story records what happened in
-- PL/pgSQL variables (which survive the rollback), and pgTAP's ok() and
-- diag() are called once the story is gone.  Nothing is granted to PUBLIC.

\echo Use "CREATE EXTENSION caio_tap" to load this file. \quit

------------------------------------------------------------------------------
-- What a story records
------------------------------------------------------------------------------

-- How one statement ended.  sqlstate is '00000' when it was accepted and NULL
-- when it was not run (message then says why); result is the first column of
-- the first row it returned.
CREATE TYPE caio_tap_outcome AS (
    sqlstate   text,
    message    text,
    detail     text,
    row_count  bigint,
    result     text
);

-- One test's result, decided inside the story, written as TAP after it.
CREATE TYPE caio_tap_verdict AS (
    passed  boolean,
    diag    text
);

------------------------------------------------------------------------------
-- Search path
------------------------------------------------------------------------------

-- A story runs in the caller's search_path, with the schemas of caio_tap,
-- caio and pgTAP added at its end: the user's table, its defaults and its
-- other triggers see the names they always see, and caio's and pgTAP's
-- functions are found wherever they were installed (PostgreSQL 15 has no
-- @extschema:caio@).  Returns the caller's path, for caio_tap_leave.
CREATE FUNCTION caio_tap_enter() RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    caller  text := pg_catalog.current_setting('search_path');
    added   text;
BEGIN
    SELECT pg_catalog.string_agg(pg_catalog.quote_ident(n.nspname), ', ' ORDER BY w.ord)
      INTO added
      FROM pg_catalog.unnest(ARRAY['caio_tap', 'caio', 'pgtap']) WITH ORDINALITY AS w(name, ord)
      JOIN pg_catalog.pg_extension e ON e.extname OPERATOR(pg_catalog.=) w.name
      JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) e.extnamespace;
    PERFORM pg_catalog.set_config('search_path',
                                  pg_catalog.concat_ws(', ', NULLIF(caller, ''), added), true);
    RETURN caller;
END $$;

CREATE FUNCTION caio_tap_leave(caller text) RETURNS void
LANGUAGE sql AS $$
    SELECT pg_catalog.set_config('search_path', caller, true);
$$;

------------------------------------------------------------------------------
-- Arguments and caio's triggers
------------------------------------------------------------------------------

-- The sample row is a json object of column values that the table accepts
-- in an INSERT; the story adds the columns caio needs.
CREATE FUNCTION caio_tap_check_sample(tbl regclass, sample jsonb) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    unknown  text;
BEGIN
    IF tbl IS NULL THEN
        RAISE EXCEPTION 'tbl must not be null' USING ERRCODE = '22023';
    END IF;
    IF sample IS NULL OR jsonb_typeof(sample) <> 'object' THEN
        RAISE EXCEPTION 'sample must be a json object of column values'
            USING ERRCODE = '22023',
                  HINT = 'Give a row the table accepts, such as ''{"id": 1, "wallet": "0xabc"}''.';
    END IF;
    SELECT k INTO unknown FROM jsonb_object_keys(sample) AS k
     WHERE NOT caio_tap_has_column(tbl, k) LIMIT 1;
    IF unknown IS NOT NULL THEN
        RAISE EXCEPTION 'column "%" of the sample row does not exist in table %', unknown, tbl
            USING ERRCODE = '42703';
    END IF;
END $$;

CREATE FUNCTION caio_tap_has_column(tbl regclass, col text) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT EXISTS (SELECT FROM pg_catalog.pg_attribute
                    WHERE attrelid = tbl AND attname = col AND attnum > 0 AND NOT attisdropped);
$$;

-- The first of the columns a story needs that the table does not have (a
-- wrong name given, or one that caio's trigger still names after a rename).
CREATE FUNCTION caio_tap_missing_column(tbl regclass, cols name[]) RETURNS name
LANGUAGE sql STABLE AS $$
    SELECT c FROM unnest(cols) WITH ORDINALITY AS u(c, i)
     WHERE NOT caio_tap_has_column(tbl, c) ORDER BY i LIMIT 1;
$$;

-- The text of a column of the sample row, as the table's type writes it (the
-- form caio's trigger puts after the resource prefix); NULL when absent.
CREATE FUNCTION caio_tap_sample_text(tbl regclass, sample jsonb, col name) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    value  text;
BEGIN
    EXECUTE format('SELECT CASE WHEN r.%1$I IS NOT NULL THEN pg_catalog.format(''%%s'', r.%1$I) END'
                   ' FROM pg_catalog.jsonb_populate_record(NULL::%2$s, $1) AS r', col, tbl)
       INTO value USING sample;
    RETURN value;
END $$;

-- tgargs holds a trigger's arguments, each ended by a zero byte.
CREATE FUNCTION caio_tap_trigger_args(tgargs bytea) RETURNS text[]
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    args   text[] := '{}';
    start  int := 0;
BEGIN
    FOR i IN 0 .. length(tgargs) - 1 LOOP
        IF get_byte(tgargs, i) = 0 THEN
            args := args || convert_from(substring(tgargs FROM start + 1 FOR i - start),
                                         current_setting('server_encoding'));
            start := i + 1;
        END IF;
    END LOOP;
    RETURN args;
END $$;

-- The triggers on tbl that call caio's function fn.  caio names its
-- triggers (caio_fence, caio_version, caio_claim), but they are found by the
-- function they call, whatever they are named now.
CREATE FUNCTION caio_tap_triggers(tbl regclass, fn name)
RETURNS TABLE (name name, enabled "char", events int2, args text[])
LANGUAGE sql STABLE AS $$
    SELECT t.tgname, t.tgenabled, t.tgtype, caio_tap_trigger_args(t.tgargs)
      FROM pg_catalog.pg_trigger t
      JOIN pg_catalog.pg_proc p ON p.oid = t.tgfoid
      JOIN pg_catalog.pg_extension e ON e.extname = 'caio' AND e.extnamespace = p.pronamespace
     WHERE t.tgrelid = tbl AND p.proname = fn
     ORDER BY t.tgname;
$$;

-- The first test of every story: caio's trigger fn is on tbl as installer
-- puts it there (BEFORE, FOR EACH ROW, on the events given as pg_trigger's
-- tgtype bits), it fires in an ordinary session, and the columns that its
-- first column_args arguments name are still the table's.
CREATE FUNCTION caio_tap_trigger_verdict(tbl regclass, fn name, installer text,
                                         events int2, column_args int)
RETURNS caio_tap_verdict
LANGUAGE plpgsql STABLE AS $$
DECLARE
    t        record;
    missing  name;
BEGIN
    FOR t IN SELECT * FROM caio_tap_triggers(tbl, fn) LOOP
        IF t.enabled IN ('O', 'A') AND t.events & events = events THEN
            missing := caio_tap_missing_column(tbl, t.args[1:column_args]);
            IF missing IS NULL THEN
                RETURN ROW(true, NULL)::caio_tap_verdict;
            END IF;
            RETURN ROW(false, format('caio''s trigger %I on %s names column %I, which the table no longer has: every write fails with 42703 (after renaming a column, run %s again).',
                                     t.name, tbl, missing, installer))::caio_tap_verdict;
        END IF;
    END LOOP;
    IF NOT FOUND THEN
        RETURN ROW(false, format('%s has no trigger calling caio''s %s(): %s was never run on it, or its trigger was dropped.',
                                 tbl, fn, installer))::caio_tap_verdict;
    ELSIF t.enabled = 'D' THEN
        RETURN ROW(false, format('caio''s trigger %I on %s is disabled: nothing checks the writes (ALTER TABLE %s ENABLE TRIGGER %I).',
                                 t.name, tbl, tbl, t.name))::caio_tap_verdict;
    ELSIF t.enabled = 'R' THEN
        RETURN ROW(false, format('caio''s trigger %I on %s fires only when session_replication_role = replica: ordinary writes are not checked.',
                                 t.name, tbl))::caio_tap_verdict;
    END IF;
    RETURN ROW(false, format('caio''s trigger %I on %s does not fire BEFORE each row on the events %s checks; run %s again.',
                             t.name, tbl, installer, installer))::caio_tap_verdict;
END $$;

------------------------------------------------------------------------------
-- Running a story's statements
------------------------------------------------------------------------------

-- Run one statement in a subtransaction of its own and say how it ended; an
-- accepted statement's changes stay, for the rest of the story.
CREATE FUNCTION caio_tap_attempt(sql text) RETURNS caio_tap_outcome
LANGUAGE plpgsql AS $$
DECLARE
    o  caio_tap_outcome;
BEGIN
    EXECUTE sql INTO o.result;
    GET DIAGNOSTICS o.row_count = ROW_COUNT;
    o.sqlstate := '00000';
    RETURN o;
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS o.sqlstate = RETURNED_SQLSTATE,
                            o.message = MESSAGE_TEXT,
                            o.detail = PG_EXCEPTION_DETAIL;
    RETURN o;
END $$;

-- Statements on the user's table.  A row is found by its tableoid and ctid
-- (the "locator"), which every statement returns for the row it wrote: the
-- story needs no key of the user's, and follows the row when it moves.
CREATE FUNCTION caio_tap_locator_sql() RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT $q$pg_catalog.format('tableoid = %s AND ctid = %L', tableoid, ctid)$q$;
$$;

CREATE FUNCTION caio_tap_insert_sql(tbl regclass, row_values jsonb) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT format('INSERT INTO %s (%s) SELECT %s FROM pg_catalog.jsonb_populate_record(NULL::%s, %L::pg_catalog.jsonb) AS caio_tap_row RETURNING %s',
                  tbl, cols, cols, tbl, row_values, caio_tap_locator_sql())
      FROM (SELECT string_agg(quote_ident(k), ', ' ORDER BY k) AS cols
              FROM jsonb_object_keys(row_values) AS k) AS c;
$$;

CREATE FUNCTION caio_tap_update_sql(tbl regclass, set_list text, row_at text) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT format('UPDATE %s SET %s WHERE %s RETURNING %s', tbl, set_list, row_at, caio_tap_locator_sql());
$$;

CREATE FUNCTION caio_tap_delete_sql(tbl regclass, row_at text) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT format('DELETE FROM %s WHERE %s RETURNING %s', tbl, row_at, caio_tap_locator_sql());
$$;

-- Where the row is after a statement: it moved if an UPDATE wrote it.
CREATE FUNCTION caio_tap_row_after(o caio_tap_outcome, row_at text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN o.sqlstate = '00000' AND o.row_count = 1 THEN o.result ELSE row_at END;
$$;

------------------------------------------------------------------------------
-- Verdicts
------------------------------------------------------------------------------

CREATE FUNCTION caio_tap_describe(o caio_tap_outcome) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE
        WHEN o.sqlstate IS NULL THEN 'not run: ' || o.message
        WHEN o.sqlstate = '00000'
            THEN format('accepted (%s row%s)', o.row_count, CASE WHEN o.row_count = 1 THEN '' ELSE 's' END)
        ELSE format('refused with %s: %s', o.sqlstate, o.message)
             || coalesce(E'\n          ' || NULLIF(o.detail, ''), '')
    END;
$$;

CREATE FUNCTION caio_tap_failed(expected text, o caio_tap_outcome, meaning text) RETURNS caio_tap_verdict
LANGUAGE sql IMMUTABLE AS $$
    SELECT ROW(false, concat_ws(E'\n', 'expected: ' || expected,
                                '     got: ' || caio_tap_describe(o), meaning))::caio_tap_verdict;
$$;

-- A statement that must be refused with the SQLSTATE expected; if_accepted
-- says what it means when it was not.
CREATE FUNCTION caio_tap_refused(o caio_tap_outcome, expected text, if_accepted text)
RETURNS caio_tap_verdict
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE
        WHEN o.sqlstate = expected THEN ROW(true, NULL)::caio_tap_verdict
        ELSE caio_tap_failed('refused with ' || expected, o,
                             CASE WHEN o.sqlstate = '00000' THEN if_accepted END)
    END;
$$;

-- A statement that must be accepted and write (or return) exactly one row;
-- meaning says what a failure means.
CREATE FUNCTION caio_tap_accepted(o caio_tap_outcome, what text, meaning text)
RETURNS caio_tap_verdict
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE
        WHEN o.sqlstate = '00000' AND o.row_count = 1 THEN ROW(true, NULL)::caio_tap_verdict
        ELSE caio_tap_failed(what || ' accepted (1 row)', o, meaning)
    END;
$$;

-- The first of several verdicts that failed, or a pass.
CREATE FUNCTION caio_tap_all(VARIADIC verdicts caio_tap_verdict[]) RETURNS caio_tap_verdict
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    v  caio_tap_verdict;
BEGIN
    FOREACH v IN ARRAY verdicts LOOP
        IF NOT v.passed THEN
            RETURN v;
        END IF;
    END LOOP;
    RETURN ROW(true, NULL)::caio_tap_verdict;
END $$;

-- Tests that a story could not reach: the first says why.
CREATE FUNCTION caio_tap_not_run(tests int, reason text) RETURNS caio_tap_verdict[]
LANGUAGE sql IMMUTABLE AS $$
    SELECT array_agg(ROW(false, CASE WHEN i = 1 THEN 'not run: ' || reason
                                     ELSE 'not run, for the reason above' END)::caio_tap_verdict
                     ORDER BY i)
      FROM generate_series(1, tests) AS i;
$$;

-- The verdicts so far, and the rest of a story's tests as not run.
CREATE FUNCTION caio_tap_stop(v caio_tap_verdict[], tests int, reason text) RETURNS caio_tap_verdict[]
LANGUAGE sql IMMUTABLE AS $$
    SELECT v || caio_tap_not_run(tests - coalesce(cardinality(v), 0), reason);
$$;

-- A takeover: the statement returned a token above the older one.
CREATE FUNCTION caio_tap_newer(o caio_tap_outcome, older bigint, expected text, meaning text)
RETURNS caio_tap_verdict
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE
        WHEN o.sqlstate = '00000' AND o.result::bigint > older THEN ROW(true, NULL)::caio_tap_verdict
        ELSE caio_tap_failed(expected, o, meaning || ' It returned ' || coalesce(o.result, 'NULL') || '.')
    END;
$$;

-- Move caio's test clock; NULL when it moved, else why it could not.
CREATE FUNCTION caio_tap_move_clock(sql text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    o  caio_tap_outcome := caio_tap_attempt(sql);
BEGIN
    IF o.sqlstate = '00000' THEN
        RETURN NULL;
    END IF;
    RETURN format('could not move caio''s test clock (%s); the role running the test needs EXECUTE on caio_clock_set and caio_clock_advance.',
                  o.message);
END $$;

-- The TAP lines: pgTAP's ok() per test, and diag() under a failure.
CREATE FUNCTION caio_tap_emit(descriptions text[], verdicts caio_tap_verdict[]) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
    v  caio_tap_verdict;
BEGIN
    FOR i IN 1 .. cardinality(descriptions) LOOP
        v := coalesce(verdicts[i], ROW(false, 'not run')::caio_tap_verdict);
        RETURN NEXT ok(coalesce(v.passed, false), descriptions[i])
                    || CASE WHEN v.passed THEN '' ELSE E'\n' || diag(v.diag) END;
    END LOOP;
END $$;

------------------------------------------------------------------------------
-- The fencing story (caio_protect)
------------------------------------------------------------------------------

-- The columns and prefix the story runs with (those given, else those of
-- caio's trigger), and the verdict of the first test: the trigger is there,
-- fires, and fences what was given.
CREATE FUNCTION caio_tap_fence_spec(tbl regclass, token_column name, resource_column name,
                                    resource_prefix text,
                                    OUT verdict caio_tap_verdict, OUT token_col name,
                                    OUT resource_col name, OUT prefix text)
LANGUAGE plpgsql AS $$
DECLARE
    args  text[];
BEGIN
    verdict := caio_tap_trigger_verdict(tbl, 'caio_fence_trigger', 'caio_protect', 31::int2, 2);
    SELECT t.args INTO args FROM caio_tap_triggers(tbl, 'caio_fence_trigger') AS t LIMIT 1;
    token_col := coalesce(token_column, args[1]);
    resource_col := coalesce(resource_column, args[2]);
    prefix := coalesce(resource_prefix, args[3], '');
    IF verdict.passed AND ARRAY[token_col, resource_col, prefix]::text[] IS DISTINCT FROM args THEN
        verdict := ROW(false, format('caio''s trigger on %s fences token column %I and resource %L || %I, not the %I and %L || %I given.',
                                     tbl, args[1], args[3], args[2], token_col, prefix, resource_col))::caio_tap_verdict;
    END IF;
END $$;

-- Worker A acquires the resource and writes; pauses past its lease; B takes
-- over.  A's UPDATE, DELETE and INSERT are then refused with LK001, and B's
-- writes land.  Returns the verdicts of tests 2 to 8 of caio_tap_fencing.
--
-- A names its lease with caio_use before its pause, as a transaction that
-- deletes must: in production B's takeover then waits for A's transaction,
-- but here A and B share one session, whose locks never conflict with each
-- other, so the stale DELETE does reach the trigger.
CREATE FUNCTION caio_tap_fencing_story(tbl regclass, sample jsonb, token_col name,
                                       resource_col name, resource text)
RETURNS caio_tap_verdict[]
LANGUAGE plpgsql AS $$
DECLARE
    tests    CONSTANT int := 7;
    v        caio_tap_verdict[] := '{}';
    o        caio_tap_outcome;
    use_a    caio_tap_outcome;
    use_b    caio_tap_outcome;
    del_b    caio_tap_outcome;
    a        bigint;
    b        bigint;
    row_at   text;
    failure  text;
    unfenced text := format('%s is not fenced: is caio''s trigger on it installed and enabled (caio_protect)?', tbl);
BEGIN
    -- Start where no lease on the resource is live, whoever holds one.
    failure := caio_tap_move_clock(format('SELECT caio_clock_set(greatest(caio_now(), (caio_lease_of(%L)).expires_at))', resource));
    IF failure IS NOT NULL THEN
        RETURN caio_tap_stop(v, tests, failure);
    END IF;
    o := caio_tap_attempt(caio_tap_acquire_sql(resource, 'caio_tap-a'));
    a := o.result::bigint;
    IF a IS NULL THEN
        RETURN caio_tap_stop(v, tests, format('worker A could not acquire %L: %s', resource,
                                              coalesce(o.message, 'another transaction holds the resource''s lock')));
    END IF;

    o := caio_tap_attempt(caio_tap_insert_sql(tbl, sample || jsonb_build_object(token_col, a)));
    v := v || caio_tap_accepted(o, format('A''s INSERT under its lease (token %s)', a),
                                'The sample row must be one the table accepts, under a live lease.');
    IF NOT (v[1]).passed THEN
        RETURN caio_tap_stop(v, tests, 'A''s first INSERT failed.');
    END IF;
    row_at := o.result;

    o := caio_tap_attempt(caio_tap_update_sql(tbl, format('%1$I = %1$I', resource_col), row_at));
    v := v || caio_tap_refused(o, 'LK003', format('An UPDATE that did not set %I, with no caio_use, was accepted: %s', token_col, unfenced));
    row_at := caio_tap_row_after(o, row_at);

    -- A names its lease for the transaction, and pauses past it; B takes over.
    use_a := caio_tap_attempt(caio_tap_use_sql(resource, 'caio_tap-a', a));
    failure := caio_tap_move_clock('SELECT caio_clock_advance(''11 seconds'')');
    IF failure IS NOT NULL THEN
        RETURN caio_tap_stop(v, tests, failure);
    END IF;
    o := caio_tap_attempt(caio_tap_acquire_sql(resource, 'caio_tap-b'));
    b := o.result::bigint;
    v := v || caio_tap_newer(o, a, format('B acquires %L with a token above A''s %s', resource, a),
                             'caio_acquire must grant a resource whose lease expired.');
    IF NOT (v[3]).passed THEN
        RETURN caio_tap_stop(v, tests, 'B did not take the resource over.');
    END IF;

    o := caio_tap_attempt(caio_tap_update_sql(tbl, format('%I = %s', token_col, a), row_at));
    v := v || caio_tap_refused(o, 'LK001', format('A''s stale UPDATE (token %s; B holds %s) was accepted: %s', a, b, unfenced));
    row_at := caio_tap_row_after(o, row_at);

    o := caio_tap_attempt(caio_tap_delete_sql(tbl, row_at));
    v := v || caio_tap_refused(o, 'LK001',
                               format('A''s stale DELETE (under caio_use of token %s: %s; B holds %s) was accepted: %s',
                                      a, caio_tap_describe(use_a), b, unfenced));

    -- B deletes the row, and A tries to put it back.
    use_b := caio_tap_attempt(caio_tap_use_sql(resource, 'caio_tap-b', b));
    del_b := caio_tap_attempt(caio_tap_delete_sql(tbl, row_at));
    o := caio_tap_attempt(caio_tap_insert_sql(tbl, sample || jsonb_build_object(token_col, a)));
    v := v || caio_tap_refused(o, 'LK001', format('A''s stale INSERT (token %s; B holds %s) was accepted: %s', a, b, unfenced));

    o := caio_tap_attempt(caio_tap_insert_sql(tbl, sample || jsonb_build_object(token_col, b)));
    RETURN v || caio_tap_all(
        caio_tap_accepted(use_b, 'B''s caio_use', NULL),
        caio_tap_accepted(del_b, 'B''s DELETE',
                          CASE WHEN del_b.row_count = 0 THEN 'An earlier stale write had removed the row.' END),
        caio_tap_accepted(o, format('B''s INSERT (token %s)', b),
                          'A write under the newest token must land.'));
END $$;

-- caio's calls in a story, with the lease a worker holds for 10 seconds.
CREATE FUNCTION caio_tap_acquire_sql(resource text, holder text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT format('SELECT (caio_acquire(%L, %L, ''10 seconds'')).token', resource, holder);
$$;

CREATE FUNCTION caio_tap_use_sql(resource text, holder text, token bigint) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT format('SELECT caio_use(ROW(%L, %L, %s, NULL, NULL)::caio_lease)', resource, holder, token);
$$;

------------------------------------------------------------------------------
-- The versioned story (caio_versioned)
------------------------------------------------------------------------------

-- Two writers read the row at version n; the first sets n + 1 and lands, the
-- second sets n + 1 too and is refused (LK002); so are an UPDATE that keeps
-- the version and one that leaves it out.  Returns tests 2 to 5's verdicts.
CREATE FUNCTION caio_tap_versioned_story(tbl regclass, sample jsonb, version_col name)
RETURNS caio_tap_verdict[]
LANGUAGE plpgsql AS $$
DECLARE
    tests   CONSTANT int := 4;
    v       caio_tap_verdict[] := '{}';
    o       caio_tap_outcome;
    n       bigint;
    other   name := caio_tap_other_column(tbl, sample, version_col);
    row_at  text;
    lost    text := format('%s does not check versions: is caio''s trigger on it installed and enabled (caio_versioned)?', tbl);
BEGIN
    o := caio_tap_attempt(caio_tap_insert_sql(tbl, sample));
    IF o.sqlstate IS DISTINCT FROM '00000' THEN
        RETURN caio_tap_stop(v, tests, 'the sample row could not be inserted: ' || caio_tap_describe(o));
    END IF;
    row_at := o.result;
    n := (caio_tap_attempt(format('SELECT coalesce(%I, 0) FROM %s WHERE %s', version_col, tbl, row_at))).result::bigint;

    o := caio_tap_attempt(caio_tap_update_sql(tbl, format('%I = %s', version_col, n + 1), row_at));
    v := v || caio_tap_accepted(o, format('the first writer''s UPDATE to version %s', n + 1),
                                'An UPDATE setting the row''s version + 1 must land.');
    row_at := caio_tap_row_after(o, row_at);

    o := caio_tap_attempt(caio_tap_update_sql(tbl, format('%I = %s', version_col, n + 1), row_at));
    v := v || caio_tap_refused(o, 'LK002', format('The second writer, who also read version %s, overwrote the first (a lost update): %s', n, lost));
    row_at := caio_tap_row_after(o, row_at);

    o := caio_tap_attempt(caio_tap_update_sql(tbl, format('%1$I = %1$I', version_col), row_at));
    v := v || caio_tap_refused(o, 'LK002', format('An UPDATE keeping the version was accepted: %s', lost));
    row_at := caio_tap_row_after(o, row_at);

    o := caio_tap_attempt(caio_tap_update_sql(tbl, format('%1$I = %1$I', other), row_at));
    RETURN v || caio_tap_refused(o, 'LK002', format('An UPDATE that did not set %I was accepted: %s', version_col, lost));
END $$;

-- A column that an UPDATE can set to itself without setting the version:
-- one of the sample's, else any the table lets an UPDATE set.
CREATE FUNCTION caio_tap_other_column(tbl regclass, sample jsonb, version_col name) RETURNS name
LANGUAGE sql STABLE AS $$
    SELECT coalesce(
        (SELECT attname FROM pg_catalog.pg_attribute
          WHERE attrelid = tbl AND attnum > 0 AND NOT attisdropped
            AND attname <> version_col AND attgenerated = '' AND attidentity <> 'a'
          ORDER BY sample ? attname DESC, attnum LIMIT 1),
        version_col);
$$;

------------------------------------------------------------------------------
-- The claims story (caio_claimable)
------------------------------------------------------------------------------

-- Worker A claims the sample row, pauses past its claim, B claims it over;
-- A's finish is refused (LK001), so is a write naming no claim token
-- (LK003), and B's finish lands.  Returns tests 2 to 6's verdicts.
CREATE FUNCTION caio_tap_claimable_story(tbl regclass, sample jsonb)
RETURNS caio_tap_verdict[]
LANGUAGE plpgsql AS $$
DECLARE
    tests    CONSTANT int := 5;
    v        caio_tap_verdict[] := '{}';
    o        caio_tap_outcome;
    a        bigint;
    b        bigint;
    row_at   text;
    failure  text;
    finish   CONSTANT text := 'claim_holder = NULL, claim_expires_at = NULL, claim_token = %s';
    unfenced text := format('%s does not fence its claims: is caio''s trigger on it installed and enabled (caio_claimable)?', tbl);
BEGIN
    failure := caio_tap_move_clock('SELECT caio_clock_set(caio_now())');
    IF failure IS NOT NULL THEN
        RETURN caio_tap_stop(v, tests, failure);
    END IF;
    o := caio_tap_attempt(caio_tap_insert_sql(tbl, sample - ARRAY['claim_holder', 'claim_token', 'claim_expires_at']));
    IF o.sqlstate IS DISTINCT FROM '00000' THEN
        RETURN caio_tap_stop(v, tests, 'the sample row could not be inserted: ' || caio_tap_describe(o));
    END IF;

    o := caio_tap_attempt(caio_tap_claim_sql(tbl, 'caio_tap-a', o.result));
    a := o.result::bigint;
    v := v || caio_tap_accepted(o, 'A''s claim on the sample row', 'caio_claim must hand out the unclaimed row.');
    IF NOT (v[1]).passed THEN
        RETURN caio_tap_stop(v, tests, 'A could not claim the row.');
    END IF;

    failure := caio_tap_move_clock('SELECT caio_clock_advance(''11 seconds'')');
    IF failure IS NOT NULL THEN
        RETURN caio_tap_stop(v, tests, failure);
    END IF;
    o := caio_tap_attempt(caio_tap_claim_sql(tbl, 'caio_tap-b', format('claim_token = %s', a)));
    b := o.result::bigint;
    v := v || caio_tap_newer(o, a, format('B claims the row over with a token above A''s %s', a),
                             'caio_claim must take over a row whose claim expired.');
    IF NOT (v[2]).passed THEN
        RETURN caio_tap_stop(v, tests, 'B did not take the row over.');
    END IF;
    row_at := format('claim_token = %s', b);

    o := caio_tap_attempt(caio_tap_update_sql(tbl, format(finish, a), row_at));
    v := v || caio_tap_refused(o, 'LK001', format('A''s stale finish (claim token %s; B holds %s) was accepted: %s', a, b, unfenced));
    row_at := caio_tap_row_after(o, row_at);

    o := caio_tap_attempt(caio_tap_update_sql(tbl, 'claim_holder = claim_holder', row_at));
    v := v || caio_tap_refused(o, 'LK003', format('An UPDATE that did not set claim_token was accepted: %s', unfenced));
    row_at := caio_tap_row_after(o, row_at);

    o := caio_tap_attempt(caio_tap_update_sql(tbl, format(finish, b), row_at));
    RETURN v || caio_tap_accepted(o, format('B''s finish (claim token %s)', b),
                                  'A finish under the row''s claim token must land.');
END $$;

-- A worker's claim, for 10 seconds, on the row that filter picks; returns
-- the claim token.
CREATE FUNCTION caio_tap_claim_sql(tbl regclass, holder text, filter text) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT format('SELECT claim_token FROM caio_claim(NULL::%s, %L, ''10 seconds'', 1, %L)', tbl, holder, filter);
$$;

------------------------------------------------------------------------------
-- What a test file calls
------------------------------------------------------------------------------

-- The story, rolled back.  The private SQLSTATE LKTAP rolls back the
-- function's own subtransaction, after the verdicts were kept in a variable.
CREATE FUNCTION caio_tap_fencing_run(tbl regclass, sample jsonb, token_col name,
                                     resource_col name, resource text)
RETURNS caio_tap_verdict[]
LANGUAGE plpgsql AS $$
DECLARE
    tests     CONSTANT int := 7;
    missing   name := caio_tap_missing_column(tbl, ARRAY[token_col, resource_col]);
    verdicts  caio_tap_verdict[];
BEGIN
    IF token_col IS NULL OR resource_col IS NULL THEN
        RETURN caio_tap_not_run(tests, format('%s has no caio trigger to read the columns from; pass token_column and resource_column to run the story anyway.', tbl));
    ELSIF missing IS NOT NULL THEN
        RETURN caio_tap_not_run(tests, format('%s has no column %I; after renaming a column, run caio_protect again.', tbl, missing));
    END IF;
    verdicts := caio_tap_fencing_story(tbl, sample, token_col, resource_col, resource);
    RAISE EXCEPTION USING ERRCODE = 'LKTAP';
EXCEPTION
    WHEN SQLSTATE 'LKTAP' THEN RETURN verdicts;
    WHEN OTHERS THEN RETURN caio_tap_not_run(tests, 'the story stopped: ' || SQLERRM);
END $$;

-- The sample row's resource: prefix || the resource column's value.  NULL
-- when the column is not known; the sample must give a value for it.
CREATE FUNCTION caio_tap_resource(tbl regclass, sample jsonb, resource_col name, prefix text)
RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    value  text;
BEGIN
    IF resource_col IS NULL OR NOT caio_tap_has_column(tbl, resource_col) THEN
        RETURN NULL;
    END IF;
    value := caio_tap_sample_text(tbl, sample, resource_col);
    IF value IS NULL THEN
        RAISE EXCEPTION 'the sample row must give a value for the resource column "%"', resource_col
            USING ERRCODE = '22023';
    END IF;
    RETURN prefix || value;
END $$;

CREATE FUNCTION caio_tap_versioned_run(tbl regclass, sample jsonb, version_col name)
RETURNS caio_tap_verdict[]
LANGUAGE plpgsql AS $$
DECLARE
    tests     CONSTANT int := 4;
    verdicts  caio_tap_verdict[];
BEGIN
    IF version_col IS NULL THEN
        RETURN caio_tap_not_run(tests, format('%s has no caio trigger to read the version column from; pass version_column to run the story anyway.', tbl));
    ELSIF NOT caio_tap_has_column(tbl, version_col) THEN
        RETURN caio_tap_not_run(tests, format('%s has no column %I; after renaming a column, run caio_versioned again.', tbl, version_col));
    END IF;
    verdicts := caio_tap_versioned_story(tbl, sample, version_col);
    RAISE EXCEPTION USING ERRCODE = 'LKTAP';
EXCEPTION
    WHEN SQLSTATE 'LKTAP' THEN RETURN verdicts;
    WHEN OTHERS THEN RETURN caio_tap_not_run(tests, 'the story stopped: ' || SQLERRM);
END $$;

CREATE FUNCTION caio_tap_claimable_run(tbl regclass, sample jsonb)
RETURNS caio_tap_verdict[]
LANGUAGE plpgsql AS $$
DECLARE
    verdicts  caio_tap_verdict[];
BEGIN
    verdicts := caio_tap_claimable_story(tbl, sample);
    RAISE EXCEPTION USING ERRCODE = 'LKTAP';
EXCEPTION
    WHEN SQLSTATE 'LKTAP' THEN RETURN verdicts;
    WHEN OTHERS THEN RETURN caio_tap_not_run(5, 'the story stopped: ' || SQLERRM);
END $$;

-- The stale-writer story on a table protected with caio_protect: 8 tests.
-- sample is a row the table accepts (json, column => value), with a value
-- for the resource column; the story fills the token column in.  The token
-- column, resource column and prefix default to those of caio's trigger;
-- give them to test a table whose trigger is missing.
CREATE FUNCTION caio_tap_fencing(tbl regclass, sample jsonb,
                                 token_column name DEFAULT NULL,
                                 resource_column name DEFAULT NULL,
                                 resource_prefix text DEFAULT NULL)
RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
    caller    text := @extschema@.caio_tap_enter();
    spec      record;
    resource  text;
BEGIN
    PERFORM caio_tap_check_sample(tbl, sample);
    spec := caio_tap_fence_spec(tbl, token_column, resource_column, resource_prefix);
    resource := caio_tap_resource(tbl, sample, spec.resource_col, spec.prefix);
    RETURN QUERY SELECT * FROM caio_tap_emit(ARRAY[
        format('%s is fenced by caio''s trigger', tbl),
        format('%s: A''s INSERT under its lease on %s is accepted', tbl, coalesce(quote_literal(resource), 'its resource')),
        format('%s: a write naming no token is refused with LK003', tbl),
        format('%s: B takes the resource over after A''s lease expired', tbl),
        format('%s: A''s stale UPDATE is refused with LK001', tbl),
        format('%s: A''s stale DELETE is refused with LK001', tbl),
        format('%s: A''s stale INSERT is refused with LK001', tbl),
        format('%s: B''s DELETE and INSERT under the new lease are accepted', tbl)],
        spec.verdict || caio_tap_fencing_run(tbl, sample, spec.token_col, spec.resource_col, resource));
    PERFORM caio_tap_leave(caller);
END $$;

-- Two writers on one version, on a table set up with caio_versioned: 5
-- tests.  sample is a row the table accepts; its version is the one given,
-- or the column's default.  The version column defaults to the trigger's.
CREATE FUNCTION caio_tap_versioned(tbl regclass, sample jsonb,
                                   version_column name DEFAULT NULL)
RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
    caller   text := @extschema@.caio_tap_enter();
    col      name;
BEGIN
    PERFORM caio_tap_check_sample(tbl, sample);
    SELECT t.args[1] INTO col FROM caio_tap_triggers(tbl, 'caio_version_trigger') AS t LIMIT 1;
    col := coalesce(version_column, col);
    RETURN QUERY SELECT * FROM caio_tap_emit(ARRAY[
        format('%s checks versions with caio''s trigger', tbl),
        format('%s: the first writer''s UPDATE to the next version is accepted', tbl),
        format('%s: the second writer on the same version is refused with LK002', tbl),
        format('%s: an UPDATE keeping the version is refused with LK002', tbl),
        format('%s: an UPDATE leaving the version out is refused with LK002', tbl)],
        caio_tap_trigger_verdict(tbl, 'caio_version_trigger', 'caio_versioned', 19::int2, 1)
        || caio_tap_versioned_run(tbl, sample, col));
    PERFORM caio_tap_leave(caller);
END $$;

-- The stale worker's finish, on a table set up with caio_claimable: 6
-- tests.  sample is a row the table accepts (its claim columns are left
-- out: the row starts unclaimed).
CREATE FUNCTION caio_tap_claimable(tbl regclass, sample jsonb)
RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
    caller  text := @extschema@.caio_tap_enter();
BEGIN
    PERFORM caio_tap_check_sample(tbl, sample);
    RETURN QUERY SELECT * FROM caio_tap_emit(ARRAY[
        format('%s fences claims with caio''s trigger', tbl),
        format('%s: A''s claim on the sample row is granted', tbl),
        format('%s: B claims the row over after A''s claim expired', tbl),
        format('%s: A''s stale finish is refused with LK001', tbl),
        format('%s: a write naming no claim token is refused with LK003', tbl),
        format('%s: B''s finish is accepted', tbl)],
        caio_tap_trigger_verdict(tbl, 'caio_claim_trigger', 'caio_claimable', 31::int2, 0)
        || caio_tap_claimable_run(tbl, sample));
    PERFORM caio_tap_leave(caller);
END $$;

------------------------------------------------------------------------------
-- Privileges: nothing for PUBLIC.
------------------------------------------------------------------------------

REVOKE ALL ON TYPE caio_tap_outcome, caio_tap_verdict FROM PUBLIC;
REVOKE ALL ON FUNCTION
    caio_tap_enter(),
    caio_tap_leave(text),
    caio_tap_check_sample(regclass, jsonb),
    caio_tap_has_column(regclass, text),
    caio_tap_missing_column(regclass, name[]),
    caio_tap_resource(regclass, jsonb, name, text),
    caio_tap_sample_text(regclass, jsonb, name),
    caio_tap_trigger_args(bytea),
    caio_tap_triggers(regclass, name),
    caio_tap_trigger_verdict(regclass, name, text, int2, int),
    caio_tap_attempt(text),
    caio_tap_locator_sql(),
    caio_tap_insert_sql(regclass, jsonb),
    caio_tap_update_sql(regclass, text, text),
    caio_tap_delete_sql(regclass, text),
    caio_tap_row_after(caio_tap_outcome, text),
    caio_tap_describe(caio_tap_outcome),
    caio_tap_failed(text, caio_tap_outcome, text),
    caio_tap_refused(caio_tap_outcome, text, text),
    caio_tap_accepted(caio_tap_outcome, text, text),
    caio_tap_all(caio_tap_verdict[]),
    caio_tap_not_run(int, text),
    caio_tap_stop(caio_tap_verdict[], int, text),
    caio_tap_newer(caio_tap_outcome, bigint, text, text),
    caio_tap_move_clock(text),
    caio_tap_acquire_sql(text, text),
    caio_tap_use_sql(text, text, bigint),
    caio_tap_claim_sql(regclass, text, text),
    caio_tap_emit(text[], caio_tap_verdict[]),
    caio_tap_fence_spec(regclass, name, name, text),
    caio_tap_fencing_story(regclass, jsonb, name, name, text),
    caio_tap_versioned_story(regclass, jsonb, name),
    caio_tap_other_column(regclass, jsonb, name),
    caio_tap_claimable_story(regclass, jsonb),
    caio_tap_fencing_run(regclass, jsonb, name, name, text),
    caio_tap_versioned_run(regclass, jsonb, name),
    caio_tap_claimable_run(regclass, jsonb),
    caio_tap_fencing(regclass, jsonb, name, name, text),
    caio_tap_versioned(regclass, jsonb, name),
    caio_tap_claimable(regclass, jsonb)
  FROM PUBLIC;

-- What \df+ and \dd show for the three functions a test file calls.
COMMENT ON FUNCTION caio_tap_fencing(regclass, jsonb, name, name, text) IS
    'pgTAP: plays a lease takeover against a table protected with caio_protect and returns 8 TAP lines (the stale writer refused with LK001, a write naming no token with LK003); rolled back. Doc: doc/caio_tap.md.';
COMMENT ON FUNCTION caio_tap_versioned(regclass, jsonb, name) IS
    'pgTAP: plays two writers on one version against a table set up with caio_versioned and returns 5 TAP lines (LK002 for the lost update); rolled back. Doc: doc/caio_tap.md.';
COMMENT ON FUNCTION caio_tap_claimable(regclass, jsonb) IS
    'pgTAP: plays a claim takeover against a table set up with caio_claimable and returns 6 TAP lines (the stale finish refused with LK001); rolled back. Doc: doc/caio_tap.md.';
