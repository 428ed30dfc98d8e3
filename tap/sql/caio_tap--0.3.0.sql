-- caio_tap: pgTAP tests of caio's contract on your own tables.
--
-- This file is the source of the install script sql/caio_tap--<version>.sql
-- that `make` builds, and of the upgrade script from the previous version
-- (the functions, from "-- The functions." on; see the Makefile).  The three
-- functions a test file calls are at the end: caio_tap_fencing,
-- caio_tap_versioned and caio_tap_claimable.  Each plays a story of two
-- workers against the user's table inside a subtransaction that it rolls
-- back, and then returns pgTAP's lines, one test per step.
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

-- The functions.  Each is CREATE OR REPLACE, so that the upgrade script can
-- be this part of the file again (a function replaced keeps its grants).

------------------------------------------------------------------------------
-- Search path
------------------------------------------------------------------------------

-- A role that may create objects in a schema on the caller's search_path
-- (often public, where caio_tap itself may live) could plant there a
-- function or operator that is a better match than pg_catalog's for one that
-- caio_tap calls, and it would run as whoever runs the tests, often a
-- superuser.  So every function runs with search_path = pg_catalog, pg_temp
-- and calls caio_tap's, caio's and pgTAP's functions through their schemas,
-- each argument of its parameter's own type (or a literal for a text
-- parameter): an overload planted beside them is never the better match
-- either.  The three functions a test file calls only pass the caller's
-- search_path on.
--
-- While the tests run, caio_tap.search_path holds the caller's search_path:
-- a story's statements run in it (caio_tap_attempt), so that the user's
-- table, its defaults and its other triggers see the names they always see,
-- and the table is named as the caller names it (caio_tap_label).  Returns
-- the setting's previous value, for caio_tap_leave.
CREATE OR REPLACE FUNCTION caio_tap_enter(caller text) RETURNS text
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    previous  text := current_setting('caio_tap.search_path', true);
BEGIN
    PERFORM set_config('caio_tap.search_path', caller, true);
    RETURN previous;
END $$;

-- (Its argument keeps 0.2.0's name, which an upgrade cannot change.)
CREATE OR REPLACE FUNCTION caio_tap_leave(caller text) RETURNS void
LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
    SELECT set_config('caio_tap.search_path', coalesce(caller, ''), true);
$$;

-- The table's name as the caller writes it: with its schema only when the
-- caller's search_path does not find it without.
CREATE OR REPLACE FUNCTION caio_tap_label(tbl regclass) RETURNS text
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM set_config('search_path', current_setting('caio_tap.search_path'), true);
    RETURN tbl::pg_catalog.text;
END $$;

-- The table's name in a statement: with its schema, whatever the path.
CREATE OR REPLACE FUNCTION caio_tap_table(tbl regclass) RETURNS text
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT format('%I.%I', n.nspname, c.relname)
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE c.oid = tbl;
$$;

-- The schema of caio or pgTAP, quoted for a statement (PostgreSQL 15 has no
-- @extschema:caio@).
CREATE OR REPLACE FUNCTION caio_tap_schema(extension text) RETURNS text
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT quote_ident(n.nspname)
      FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
     WHERE e.extname = extension;
$$;

------------------------------------------------------------------------------
-- Arguments and caio's triggers
------------------------------------------------------------------------------

-- The sample row is a json object of column values that the table accepts
-- in an INSERT; the story adds the columns caio needs.
CREATE OR REPLACE FUNCTION caio_tap_check_sample(tbl regclass, sample jsonb) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
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
     WHERE NOT @extschema@.caio_tap_has_column(tbl, k) LIMIT 1;
    IF unknown IS NOT NULL THEN
        RAISE EXCEPTION 'column "%" of the sample row does not exist in table %',
                        unknown, @extschema@.caio_tap_label(tbl)
            USING ERRCODE = '42703';
    END IF;
END $$;

CREATE OR REPLACE FUNCTION caio_tap_has_column(tbl regclass, col text) RETURNS boolean
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT EXISTS (SELECT FROM pg_attribute
                    WHERE attrelid = tbl AND attname = col AND attnum > 0 AND NOT attisdropped);
$$;

-- The first of the columns a story needs that the table does not have (a
-- wrong name given, or one that caio's trigger still names after a rename).
CREATE OR REPLACE FUNCTION caio_tap_missing_column(tbl regclass, cols name[]) RETURNS name
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT c FROM unnest(cols) WITH ORDINALITY AS u(c, i)
     WHERE NOT @extschema@.caio_tap_has_column(tbl, c::text) ORDER BY i LIMIT 1;
$$;

-- The text of a column of the sample row, as the table's type writes it (the
-- form caio's trigger puts after the resource prefix); NULL when absent.
CREATE OR REPLACE FUNCTION caio_tap_sample_text(tbl regclass, sample jsonb, col name) RETURNS text
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    value  text;
BEGIN
    EXECUTE format('SELECT CASE WHEN r.%1$I IS NOT NULL THEN pg_catalog.format(''%%s'', r.%1$I) END'
                   ' FROM pg_catalog.jsonb_populate_record(NULL::%2$s, $1) AS r',
                   col, @extschema@.caio_tap_table(tbl))
       INTO value USING sample;
    RETURN value;
END $$;

-- tgargs holds a trigger's arguments, each ended by a zero byte.
CREATE OR REPLACE FUNCTION caio_tap_trigger_args(tgargs bytea) RETURNS text[]
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
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
CREATE OR REPLACE FUNCTION caio_tap_triggers(tbl regclass, fn name)
RETURNS TABLE (name name, enabled "char", events int2, args text[])
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT t.tgname, t.tgenabled, t.tgtype, @extschema@.caio_tap_trigger_args(t.tgargs)
      FROM pg_trigger t
      JOIN pg_proc p ON p.oid = t.tgfoid
      JOIN pg_extension e ON e.extname = 'caio' AND e.extnamespace = p.pronamespace
     WHERE t.tgrelid = tbl AND p.proname = fn
     ORDER BY t.tgname;
$$;

-- The first test of every story: caio's trigger fn is on tbl as installer
-- puts it there (BEFORE, FOR EACH ROW, on the events given as pg_trigger's
-- tgtype bits), it fires in an ordinary session (enabled in origin or always
-- mode), and the table is still one it guards (caio_tap_table_verdict).
CREATE OR REPLACE FUNCTION caio_tap_trigger_verdict(tbl regclass, fn name, installer text,
                                                    events int2, column_args int)
RETURNS caio_tap_verdict
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    label  text := @extschema@.caio_tap_label(tbl);
    t      record;
BEGIN
    FOR t IN SELECT * FROM @extschema@.caio_tap_triggers(tbl, fn) LOOP
        IF t.enabled IN ('O', 'A') AND t.events & events = events THEN
            RETURN @extschema@.caio_tap_table_verdict(tbl, t.name, t.args[1:column_args], installer);
        END IF;
    END LOOP;
    IF NOT FOUND THEN
        RETURN ROW(false, format('%s has no trigger calling caio''s %s(): %s was never run on it, or its trigger was dropped.',
                                 label, fn, installer))::@extschema@.caio_tap_verdict;
    ELSIF t.enabled = 'D' THEN
        RETURN ROW(false, format('caio''s trigger %I on %s is disabled: nothing checks the writes (ALTER TABLE %s ENABLE TRIGGER %I).',
                                 t.name, label, label, t.name))::@extschema@.caio_tap_verdict;
    ELSIF t.enabled = 'R' THEN
        RETURN ROW(false, format('caio''s trigger %I on %s is enabled in replica mode: it fires only when session_replication_role = replica, so ordinary writes are not checked; caio''s triggers must be enabled in origin or always mode (ALTER TABLE %s ENABLE TRIGGER %I).',
                                 t.name, label, label, t.name))::@extschema@.caio_tap_verdict;
    END IF;
    RETURN ROW(false, format('caio''s trigger %I on %s does not fire BEFORE each row on the events %s checks; run %s again.',
                             t.name, label, installer, installer))::@extschema@.caio_tap_verdict;
END $$;

-- With caio's trigger in place: the columns that its arguments name (cols)
-- are still plain columns of the table, and no table inherits from it.
CREATE OR REPLACE FUNCTION caio_tap_table_verdict(tbl regclass, trigger_name name, cols text[],
                                                  installer text)
RETURNS caio_tap_verdict
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    label     text := @extschema@.caio_tap_label(tbl);
    problem   text := @extschema@.caio_tap_column_problem(tbl, cols, installer);
    children  text := @extschema@.caio_tap_children(tbl);
BEGIN
    IF problem IS NOT NULL THEN
        RETURN ROW(false, format('caio''s trigger %I on %s %s', trigger_name, label, problem))::@extschema@.caio_tap_verdict;
    ELSIF children IS NOT NULL THEN
        RETURN ROW(false, format('%s has inheritance children (%s): row triggers on a table do not fire for its children''s rows, so caio''s trigger %I does not check their writes (use declarative partitioning, or run %s on each table).',
                                 label, children, trigger_name, installer))::@extschema@.caio_tap_verdict;
    END IF;
    RETURN ROW(true, NULL)::@extschema@.caio_tap_verdict;
END $$;

-- What is wrong with the first of the columns that a trigger names, as the
-- end of a sentence, or NULL: it is gone (renamed since the trigger was
-- installed), or it is now generated (dropped and added again as GENERATED
-- ... STORED): a BEFORE trigger runs before generated columns are computed.
CREATE OR REPLACE FUNCTION caio_tap_column_problem(tbl regclass, cols text[], installer text)
RETURNS text
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT CASE
        WHEN a.attname IS NULL
            THEN format('names column %I, which the table no longer has: every write fails with 42703 (after renaming a column, run %s again).',
                        u.c, installer)
        ELSE format('names column %I, which is now a generated column: the trigger runs before generated columns are computed, so it does not check the value the row gets (%s refuses a generated column).',
                    u.c, installer)
    END
      FROM unnest(cols) WITH ORDINALITY AS u(c, i)
      LEFT JOIN pg_attribute a
        ON a.attrelid = tbl AND a.attname = u.c AND a.attnum > 0 AND NOT a.attisdropped
     WHERE a.attname IS NULL OR a.attgenerated <> ''
     ORDER BY u.i LIMIT 1;
$$;

-- The tables that inherit from tbl, or NULL.  A partitioned table's
-- partitions are not among them: each has caio's trigger too.
CREATE OR REPLACE FUNCTION caio_tap_children(tbl regclass) RETURNS text
LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
    SELECT string_agg(@extschema@.caio_tap_label(i.inhrelid::regclass), ', ' ORDER BY i.inhrelid)
      FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhparent
     WHERE i.inhparent = tbl AND c.relkind = 'r';
$$;

------------------------------------------------------------------------------
-- Running a story's statements
------------------------------------------------------------------------------

-- Run one statement in a subtransaction of its own, in the caller's
-- search_path, and say how it ended; an accepted statement's changes stay,
-- for the rest of the story.  Every name in the statements caio_tap writes
-- is qualified: only the user's own code sees the caller's path.
CREATE OR REPLACE FUNCTION caio_tap_attempt(sql text) RETURNS caio_tap_outcome
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    o  @extschema@.caio_tap_outcome;
BEGIN
    PERFORM set_config('search_path', current_setting('caio_tap.search_path'), true);
    EXECUTE sql INTO o.result;
    GET DIAGNOSTICS o.row_count = ROW_COUNT;
    PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
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
CREATE OR REPLACE FUNCTION caio_tap_locator_sql() RETURNS text
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT $q$pg_catalog.format('tableoid OPERATOR(pg_catalog.=) %s::pg_catalog.oid AND ctid OPERATOR(pg_catalog.=) %L::pg_catalog.tid', tableoid, ctid)$q$;
$$;

CREATE OR REPLACE FUNCTION caio_tap_insert_sql(tbl regclass, row_values jsonb) RETURNS text
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT format('INSERT INTO %s (%s) SELECT %s FROM pg_catalog.jsonb_populate_record(NULL::%s, %L::pg_catalog.jsonb) AS caio_tap_row RETURNING %s',
                  t, cols, cols, t, row_values, @extschema@.caio_tap_locator_sql())
      FROM (SELECT @extschema@.caio_tap_table(tbl) AS t,
                   string_agg(quote_ident(k), ', ' ORDER BY k) AS cols
              FROM jsonb_object_keys(row_values) AS k) AS c;
$$;

CREATE OR REPLACE FUNCTION caio_tap_update_sql(tbl regclass, set_list text, row_at text) RETURNS text
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT format('UPDATE %s SET %s WHERE %s RETURNING %s', @extschema@.caio_tap_table(tbl),
                  set_list, row_at, @extschema@.caio_tap_locator_sql());
$$;

CREATE OR REPLACE FUNCTION caio_tap_delete_sql(tbl regclass, row_at text) RETURNS text
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT format('DELETE FROM %s WHERE %s RETURNING %s', @extschema@.caio_tap_table(tbl),
                  row_at, @extschema@.caio_tap_locator_sql());
$$;

-- Where the row is after a statement: it moved if an UPDATE wrote it.
CREATE OR REPLACE FUNCTION caio_tap_row_after(o caio_tap_outcome, row_at text) RETURNS text
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT CASE WHEN o.sqlstate = '00000' AND o.row_count = 1 THEN o.result ELSE row_at END;
$$;

------------------------------------------------------------------------------
-- Verdicts
------------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION caio_tap_describe(o caio_tap_outcome) RETURNS text
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT CASE
        WHEN o.sqlstate IS NULL THEN 'not run: ' || o.message
        WHEN o.sqlstate = '00000'
            THEN format('accepted (%s row%s)', o.row_count, CASE WHEN o.row_count = 1 THEN '' ELSE 's' END)
        ELSE format('refused with %s: %s', o.sqlstate, o.message)
             || coalesce(E'\n          ' || NULLIF(o.detail, ''), '')
    END;
$$;

CREATE OR REPLACE FUNCTION caio_tap_failed(expected text, o caio_tap_outcome, meaning text) RETURNS caio_tap_verdict
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT ROW(false, concat_ws(E'\n', 'expected: ' || expected,
                                '     got: ' || @extschema@.caio_tap_describe(o), meaning))::@extschema@.caio_tap_verdict;
$$;

-- A statement that must be refused with the SQLSTATE expected; if_accepted
-- says what it means when it was not.
CREATE OR REPLACE FUNCTION caio_tap_refused(o caio_tap_outcome, expected text, if_accepted text)
RETURNS caio_tap_verdict
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT CASE
        WHEN o.sqlstate = expected THEN ROW(true, NULL)::@extschema@.caio_tap_verdict
        ELSE @extschema@.caio_tap_failed('refused with ' || expected, o,
                                         CASE WHEN o.sqlstate = '00000' THEN if_accepted END)
    END;
$$;

-- A statement that must be accepted and write (or return) exactly one row;
-- meaning says what a failure means.
CREATE OR REPLACE FUNCTION caio_tap_accepted(o caio_tap_outcome, what text, meaning text)
RETURNS caio_tap_verdict
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT CASE
        WHEN o.sqlstate = '00000' AND o.row_count = 1 THEN ROW(true, NULL)::@extschema@.caio_tap_verdict
        ELSE @extschema@.caio_tap_failed(what || ' accepted (1 row)', o, meaning)
    END;
$$;

-- The first of several verdicts that failed, or a pass.
CREATE OR REPLACE FUNCTION caio_tap_all(VARIADIC verdicts caio_tap_verdict[]) RETURNS caio_tap_verdict
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v  @extschema@.caio_tap_verdict;
BEGIN
    FOREACH v IN ARRAY verdicts LOOP
        IF NOT v.passed THEN
            RETURN v;
        END IF;
    END LOOP;
    RETURN ROW(true, NULL)::@extschema@.caio_tap_verdict;
END $$;

-- Tests that a story could not reach: the first says why.
CREATE OR REPLACE FUNCTION caio_tap_not_run(tests int, reason text) RETURNS caio_tap_verdict[]
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT array_agg(ROW(false, CASE WHEN i = 1 THEN 'not run: ' || reason
                                     ELSE 'not run, for the reason above' END)::@extschema@.caio_tap_verdict
                     ORDER BY i)
      FROM generate_series(1, tests) AS i;
$$;

-- The verdicts so far, and the rest of a story's tests as not run.
CREATE OR REPLACE FUNCTION caio_tap_stop(v caio_tap_verdict[], tests int, reason text) RETURNS caio_tap_verdict[]
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT v || @extschema@.caio_tap_not_run(tests - coalesce(cardinality(v), 0), reason);
$$;

-- A takeover: the statement returned a token above the older one.
CREATE OR REPLACE FUNCTION caio_tap_newer(o caio_tap_outcome, older bigint, expected text, meaning text)
RETURNS caio_tap_verdict
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT CASE
        WHEN o.sqlstate = '00000' AND o.result::bigint > older THEN ROW(true, NULL)::@extschema@.caio_tap_verdict
        ELSE @extschema@.caio_tap_failed(expected, o, meaning || ' It returned ' || coalesce(o.result, 'NULL') || '.')
    END;
$$;

-- Move caio's test clock; NULL when it moved, else why it could not.
CREATE OR REPLACE FUNCTION caio_tap_move_clock(sql text) RETURNS text
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    o  @extschema@.caio_tap_outcome := @extschema@.caio_tap_attempt(sql);
BEGIN
    IF o.sqlstate = '00000' THEN
        RETURN NULL;
    END IF;
    RETURN format('could not move caio''s test clock (%s); the role running the test needs EXECUTE on caio_clock_set and caio_clock_advance.',
                  o.message);
END $$;

-- The TAP lines: a test per verdict.
CREATE OR REPLACE FUNCTION caio_tap_emit(descriptions text[], verdicts caio_tap_verdict[]) RETURNS SETOF text
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v  @extschema@.caio_tap_verdict;
BEGIN
    FOR i IN 1 .. cardinality(descriptions) LOOP
        v := coalesce(verdicts[i], ROW(false, 'not run')::@extschema@.caio_tap_verdict);
        RETURN NEXT @extschema@.caio_tap_ok(coalesce(v.passed, false), descriptions[i], v.diag);
    END LOOP;
END $$;

-- pgTAP's ok(), and its diag() under a failure.  pgTAP's functions find each
-- other through the search_path, so they run with pgTAP's schema on it
-- (after pg_catalog), in a statement of their own, written before.
CREATE OR REPLACE FUNCTION caio_tap_ok(passed boolean, description text, diag text) RETURNS text
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    pgtap  CONSTANT text := @extschema@.caio_tap_schema('pgtap');
    sql    CONSTANT text := format('SELECT %1$s.ok($1, $2), %1$s.diag($3)', pgtap);
    line   text;
    note   text;
BEGIN
    PERFORM set_config('search_path', 'pg_catalog, ' || pgtap, true);
    EXECUTE sql INTO line, note USING passed, description, diag;
    PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
    RETURN line || CASE WHEN passed THEN '' ELSE E'\n' || note END;
END $$;

------------------------------------------------------------------------------
-- The fencing story (caio_protect)
------------------------------------------------------------------------------

-- The columns and prefix the story runs with (those given, else those of
-- caio's trigger), and the verdict of the first test: the trigger is there,
-- fires, and fences what was given.
CREATE OR REPLACE FUNCTION caio_tap_fence_spec(tbl regclass, token_column name, resource_column name,
                                               resource_prefix text,
                                               OUT verdict caio_tap_verdict, OUT token_col name,
                                               OUT resource_col name, OUT prefix text)
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    args  text[];
BEGIN
    verdict := @extschema@.caio_tap_trigger_verdict(tbl, 'caio_fence_trigger'::name, 'caio_protect', 31::int2, 2);
    SELECT t.args INTO args FROM @extschema@.caio_tap_triggers(tbl, 'caio_fence_trigger'::name) AS t LIMIT 1;
    token_col := coalesce(token_column, args[1]);
    resource_col := coalesce(resource_column, args[2]);
    prefix := coalesce(resource_prefix, args[3], '');
    IF verdict.passed AND ARRAY[token_col, resource_col, prefix]::text[] IS DISTINCT FROM args THEN
        verdict := ROW(false, format('caio''s trigger on %s fences token column %I and resource %L || %I, not the %I and %L || %I given.',
                                     @extschema@.caio_tap_label(tbl), args[1], args[3], args[2],
                                     token_col, prefix, resource_col))::@extschema@.caio_tap_verdict;
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
CREATE OR REPLACE FUNCTION caio_tap_fencing_story(tbl regclass, sample jsonb, token_col name,
                                                  resource_col name, resource text)
RETURNS caio_tap_verdict[]
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    tests    CONSTANT int := 7;
    caio     CONSTANT text := @extschema@.caio_tap_schema('caio');
    v        @extschema@.caio_tap_verdict[] := '{}';
    o        @extschema@.caio_tap_outcome;
    use_a    @extschema@.caio_tap_outcome;
    use_b    @extschema@.caio_tap_outcome;
    del_b    @extschema@.caio_tap_outcome;
    a        bigint;
    b        bigint;
    row_at   text;
    failure  text;
    unfenced text := format('%s is not fenced: is caio''s trigger on it installed and enabled (caio_protect)?',
                            @extschema@.caio_tap_label(tbl));
BEGIN
    -- Start where no lease on the resource is live, whoever holds one.
    failure := @extschema@.caio_tap_move_clock(
        format('SELECT %1$s.caio_clock_set(greatest(%1$s.caio_now(), (%1$s.caio_lease_of(%2$L::pg_catalog.text)).expires_at))',
               caio, resource));
    IF failure IS NOT NULL THEN
        RETURN @extschema@.caio_tap_stop(v, tests, failure);
    END IF;
    o := @extschema@.caio_tap_attempt(@extschema@.caio_tap_acquire_sql(resource, 'caio_tap-a'));
    a := o.result::bigint;
    IF a IS NULL THEN
        RETURN @extschema@.caio_tap_stop(v, tests, format('worker A could not acquire %L: %s', resource,
                                                          coalesce(o.message, 'another transaction holds the resource''s lock')));
    END IF;

    o := @extschema@.caio_tap_attempt(@extschema@.caio_tap_insert_sql(tbl, sample || jsonb_build_object(token_col, a)));
    v := v || @extschema@.caio_tap_accepted(o, format('A''s INSERT under its lease (token %s)', a),
                                            'The sample row must be one the table accepts, under a live lease.');
    IF NOT (v[1]).passed THEN
        RETURN @extschema@.caio_tap_stop(v, tests, 'A''s first INSERT failed.');
    END IF;
    row_at := o.result;

    o := @extschema@.caio_tap_attempt(@extschema@.caio_tap_update_sql(tbl, format('%1$I = %1$I', resource_col), row_at));
    v := v || @extschema@.caio_tap_refused(o, 'LK003', format('An UPDATE that did not set %I, with no caio_use, was accepted: %s', token_col, unfenced));
    row_at := @extschema@.caio_tap_row_after(o, row_at);

    -- A names its lease for the transaction, and pauses past it; B takes over.
    use_a := @extschema@.caio_tap_attempt(@extschema@.caio_tap_use_sql(resource, 'caio_tap-a', a));
    failure := @extschema@.caio_tap_move_clock(format('SELECT %s.caio_clock_advance(''11 seconds''::pg_catalog.interval)', caio));
    IF failure IS NOT NULL THEN
        RETURN @extschema@.caio_tap_stop(v, tests, failure);
    END IF;
    o := @extschema@.caio_tap_attempt(@extschema@.caio_tap_acquire_sql(resource, 'caio_tap-b'));
    b := o.result::bigint;
    v := v || @extschema@.caio_tap_newer(o, a, format('B acquires %L with a token above A''s %s', resource, a),
                                         'caio_acquire must grant a resource whose lease expired.');
    IF NOT (v[3]).passed THEN
        RETURN @extschema@.caio_tap_stop(v, tests, 'B did not take the resource over.');
    END IF;

    o := @extschema@.caio_tap_attempt(@extschema@.caio_tap_update_sql(tbl, format('%I = %s', token_col, a), row_at));
    v := v || @extschema@.caio_tap_refused(o, 'LK001', format('A''s stale UPDATE (token %s; B holds %s) was accepted: %s', a, b, unfenced));
    row_at := @extschema@.caio_tap_row_after(o, row_at);

    o := @extschema@.caio_tap_attempt(@extschema@.caio_tap_delete_sql(tbl, row_at));
    v := v || @extschema@.caio_tap_refused(o, 'LK001',
                                           format('A''s stale DELETE (under caio_use of token %s: %s; B holds %s) was accepted: %s',
                                                  a, @extschema@.caio_tap_describe(use_a), b, unfenced));

    -- B deletes the row, and A tries to put it back.
    use_b := @extschema@.caio_tap_attempt(@extschema@.caio_tap_use_sql(resource, 'caio_tap-b', b));
    del_b := @extschema@.caio_tap_attempt(@extschema@.caio_tap_delete_sql(tbl, row_at));
    o := @extschema@.caio_tap_attempt(@extschema@.caio_tap_insert_sql(tbl, sample || jsonb_build_object(token_col, a)));
    v := v || @extschema@.caio_tap_refused(o, 'LK001', format('A''s stale INSERT (token %s; B holds %s) was accepted: %s', a, b, unfenced));

    o := @extschema@.caio_tap_attempt(@extschema@.caio_tap_insert_sql(tbl, sample || jsonb_build_object(token_col, b)));
    RETURN v || @extschema@.caio_tap_all(VARIADIC ARRAY[
        @extschema@.caio_tap_accepted(use_b, 'B''s caio_use', NULL),
        @extschema@.caio_tap_accepted(del_b, 'B''s DELETE',
                                      CASE WHEN del_b.row_count = 0 THEN 'An earlier stale write had removed the row.' END),
        @extschema@.caio_tap_accepted(o, format('B''s INSERT (token %s)', b),
                                      'A write under the newest token must land.')]);
END $$;

-- caio's calls in a story, with the lease a worker holds for 10 seconds (and
-- caio_acquire's wait of 0 given, so that every argument is caio's type).
CREATE OR REPLACE FUNCTION caio_tap_acquire_sql(resource text, holder text) RETURNS text
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT format('SELECT (%s.caio_acquire(%L::pg_catalog.text, %L::pg_catalog.text, ''10 seconds''::pg_catalog.interval, ''0''::pg_catalog.interval)).token',
                  @extschema@.caio_tap_schema('caio'), resource, holder);
$$;

CREATE OR REPLACE FUNCTION caio_tap_use_sql(resource text, holder text, token bigint) RETURNS text
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT format('SELECT %1$s.caio_use(ROW(%2$L, %3$L, %4$s, NULL, NULL)::%1$s.caio_lease)',
                  @extschema@.caio_tap_schema('caio'), resource, holder, token);
$$;

------------------------------------------------------------------------------
-- The versioned story (caio_versioned)
------------------------------------------------------------------------------

-- Two writers read the row at version n; the first sets n + 1 and lands, the
-- second sets n + 1 too and is refused (LK002); so are an UPDATE that keeps
-- the version and one that leaves it out.  Returns tests 2 to 5's verdicts.
CREATE OR REPLACE FUNCTION caio_tap_versioned_story(tbl regclass, sample jsonb, version_col name)
RETURNS caio_tap_verdict[]
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    tests   CONSTANT int := 4;
    v       @extschema@.caio_tap_verdict[] := '{}';
    o       @extschema@.caio_tap_outcome;
    n       bigint;
    other   name := @extschema@.caio_tap_other_column(tbl, sample, version_col);
    row_at  text;
    lost    text := format('%s does not check versions: is caio''s trigger on it installed and enabled (caio_versioned)?',
                           @extschema@.caio_tap_label(tbl));
BEGIN
    o := @extschema@.caio_tap_attempt(@extschema@.caio_tap_insert_sql(tbl, sample));
    IF o.sqlstate IS DISTINCT FROM '00000' THEN
        RETURN @extschema@.caio_tap_stop(v, tests, 'the sample row could not be inserted: ' || @extschema@.caio_tap_describe(o));
    END IF;
    row_at := o.result;
    n := (@extschema@.caio_tap_attempt(format('SELECT coalesce(%I, 0) FROM %s WHERE %s', version_col,
                                              @extschema@.caio_tap_table(tbl), row_at))).result::bigint;

    o := @extschema@.caio_tap_attempt(@extschema@.caio_tap_update_sql(tbl, format('%I = %s', version_col, n + 1), row_at));
    v := v || @extschema@.caio_tap_accepted(o, format('the first writer''s UPDATE to version %s', n + 1),
                                            'An UPDATE setting the row''s version + 1 must land.');
    row_at := @extschema@.caio_tap_row_after(o, row_at);

    o := @extschema@.caio_tap_attempt(@extschema@.caio_tap_update_sql(tbl, format('%I = %s', version_col, n + 1), row_at));
    v := v || @extschema@.caio_tap_refused(o, 'LK002', format('The second writer, who also read version %s, overwrote the first (a lost update): %s', n, lost));
    row_at := @extschema@.caio_tap_row_after(o, row_at);

    o := @extschema@.caio_tap_attempt(@extschema@.caio_tap_update_sql(tbl, format('%1$I = %1$I', version_col), row_at));
    v := v || @extschema@.caio_tap_refused(o, 'LK002', format('An UPDATE keeping the version was accepted: %s', lost));
    row_at := @extschema@.caio_tap_row_after(o, row_at);

    o := @extschema@.caio_tap_attempt(@extschema@.caio_tap_update_sql(tbl, format('%1$I = %1$I', other), row_at));
    RETURN v || @extschema@.caio_tap_refused(o, 'LK002', format('An UPDATE that did not set %I was accepted: %s', version_col, lost));
END $$;

-- A column that an UPDATE can set to itself without setting the version:
-- one of the sample's, else any the table lets an UPDATE set.
CREATE OR REPLACE FUNCTION caio_tap_other_column(tbl regclass, sample jsonb, version_col name) RETURNS name
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT coalesce(
        (SELECT attname FROM pg_attribute
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
CREATE OR REPLACE FUNCTION caio_tap_claimable_story(tbl regclass, sample jsonb)
RETURNS caio_tap_verdict[]
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    tests    CONSTANT int := 5;
    caio     CONSTANT text := @extschema@.caio_tap_schema('caio');
    v        @extschema@.caio_tap_verdict[] := '{}';
    o        @extschema@.caio_tap_outcome;
    a        bigint;
    b        bigint;
    row_at   text;
    failure  text;
    planted  text := @extschema@.caio_tap_planted_claim();
    finish   CONSTANT text := 'claim_holder = NULL, claim_expires_at = NULL, claim_token = %s';
    unfenced text := format('%s does not fence its claims: is caio''s trigger on it installed and enabled (caio_claimable)?',
                            @extschema@.caio_tap_label(tbl));
BEGIN
    IF planted IS NOT NULL THEN
        RETURN @extschema@.caio_tap_stop(v, tests, format('%s is in caio''s schema but is not caio''s: caio_tap does not call caio_claim while another function of that name could be called instead.',
                                                          planted));
    END IF;
    failure := @extschema@.caio_tap_move_clock(format('SELECT %1$s.caio_clock_set(%1$s.caio_now())', caio));
    IF failure IS NOT NULL THEN
        RETURN @extschema@.caio_tap_stop(v, tests, failure);
    END IF;
    o := @extschema@.caio_tap_attempt(@extschema@.caio_tap_insert_sql(tbl, sample - ARRAY['claim_holder', 'claim_token', 'claim_expires_at']));
    IF o.sqlstate IS DISTINCT FROM '00000' THEN
        RETURN @extschema@.caio_tap_stop(v, tests, 'the sample row could not be inserted: ' || @extschema@.caio_tap_describe(o));
    END IF;

    o := @extschema@.caio_tap_attempt(@extschema@.caio_tap_claim_sql(tbl, 'caio_tap-a', o.result));
    a := o.result::bigint;
    v := v || @extschema@.caio_tap_accepted(o, 'A''s claim on the sample row', 'caio_claim must hand out the unclaimed row.');
    IF NOT (v[1]).passed THEN
        RETURN @extschema@.caio_tap_stop(v, tests, 'A could not claim the row.');
    END IF;

    failure := @extschema@.caio_tap_move_clock(format('SELECT %s.caio_clock_advance(''11 seconds''::pg_catalog.interval)', caio));
    IF failure IS NOT NULL THEN
        RETURN @extschema@.caio_tap_stop(v, tests, failure);
    END IF;
    o := @extschema@.caio_tap_attempt(@extschema@.caio_tap_claim_sql(tbl, 'caio_tap-b', format('claim_token OPERATOR(pg_catalog.=) %s', a)));
    b := o.result::bigint;
    v := v || @extschema@.caio_tap_newer(o, a, format('B claims the row over with a token above A''s %s', a),
                                         'caio_claim must take over a row whose claim expired.');
    IF NOT (v[2]).passed THEN
        RETURN @extschema@.caio_tap_stop(v, tests, 'B did not take the row over.');
    END IF;
    row_at := format('claim_token OPERATOR(pg_catalog.=) %s', b);

    o := @extschema@.caio_tap_attempt(@extschema@.caio_tap_update_sql(tbl, format(finish, a), row_at));
    v := v || @extschema@.caio_tap_refused(o, 'LK001', format('A''s stale finish (claim token %s; B holds %s) was accepted: %s', a, b, unfenced));
    row_at := @extschema@.caio_tap_row_after(o, row_at);

    o := @extschema@.caio_tap_attempt(@extschema@.caio_tap_update_sql(tbl, 'claim_holder = claim_holder', row_at));
    v := v || @extschema@.caio_tap_refused(o, 'LK003', format('An UPDATE that did not set claim_token was accepted: %s', unfenced));
    row_at := @extschema@.caio_tap_row_after(o, row_at);

    o := @extschema@.caio_tap_attempt(@extschema@.caio_tap_update_sql(tbl, format(finish, b), row_at));
    RETURN v || @extschema@.caio_tap_accepted(o, format('B''s finish (claim token %s)', b),
                                              'A finish under the row''s claim token must land.');
END $$;

-- A worker's claim, for 10 seconds, on the row that filter picks; returns
-- the claim token.
CREATE OR REPLACE FUNCTION caio_tap_claim_sql(tbl regclass, holder text, filter text) RETURNS text
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT format('SELECT claim_token FROM %s.caio_claim(NULL::%s, %L::pg_catalog.text, ''10 seconds''::pg_catalog.interval, 1, %L::pg_catalog.text)',
                  @extschema@.caio_tap_schema('caio'), @extschema@.caio_tap_table(tbl), holder, filter);
$$;

-- A function named caio_claim in caio's schema that is not caio's, or NULL.
-- caio_claim's first argument is polymorphic, so an overload planted beside
-- it for the table's row type would be a better match than caio's own.
CREATE OR REPLACE FUNCTION caio_tap_planted_claim() RETURNS text
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT p.oid::regprocedure::text
      FROM pg_extension e
      JOIN pg_proc p ON p.pronamespace = e.extnamespace AND p.proname = 'caio_claim'
     WHERE e.extname = 'caio'
       AND NOT EXISTS (SELECT FROM pg_depend d
                        WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid
                          AND d.refclassid = 'pg_extension'::regclass AND d.refobjid = e.oid
                          AND d.deptype = 'e')
     ORDER BY p.oid LIMIT 1;
$$;

------------------------------------------------------------------------------
-- What a test file calls
------------------------------------------------------------------------------

-- The story, rolled back.  The private SQLSTATE LKTAP rolls back the
-- function's own subtransaction, after the verdicts were kept in a variable.
CREATE OR REPLACE FUNCTION caio_tap_fencing_run(tbl regclass, sample jsonb, token_col name,
                                                resource_col name, resource text)
RETURNS caio_tap_verdict[]
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    tests     CONSTANT int := 7;
    missing   name := @extschema@.caio_tap_missing_column(tbl, ARRAY[token_col, resource_col]);
    verdicts  @extschema@.caio_tap_verdict[];
BEGIN
    IF token_col IS NULL OR resource_col IS NULL THEN
        RETURN @extschema@.caio_tap_not_run(tests, format('%s has no caio trigger to read the columns from; pass token_column and resource_column to run the story anyway.',
                                                          @extschema@.caio_tap_label(tbl)));
    ELSIF missing IS NOT NULL THEN
        RETURN @extschema@.caio_tap_not_run(tests, format('%s has no column %I; after renaming a column, run caio_protect again.',
                                                          @extschema@.caio_tap_label(tbl), missing));
    END IF;
    verdicts := @extschema@.caio_tap_fencing_story(tbl, sample, token_col, resource_col, resource);
    RAISE EXCEPTION USING ERRCODE = 'LKTAP';
EXCEPTION
    WHEN SQLSTATE 'LKTAP' THEN RETURN verdicts;
    WHEN OTHERS THEN RETURN @extschema@.caio_tap_not_run(tests, 'the story stopped: ' || SQLERRM);
END $$;

-- The sample row's resource: prefix || the resource column's value.  NULL
-- when the column is not known; the sample must give a value for it.
CREATE OR REPLACE FUNCTION caio_tap_resource(tbl regclass, sample jsonb, resource_col name, prefix text)
RETURNS text
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    value  text;
BEGIN
    IF resource_col IS NULL OR NOT @extschema@.caio_tap_has_column(tbl, resource_col::text) THEN
        RETURN NULL;
    END IF;
    value := @extschema@.caio_tap_sample_text(tbl, sample, resource_col);
    IF value IS NULL THEN
        RAISE EXCEPTION 'the sample row must give a value for the resource column "%"', resource_col
            USING ERRCODE = '22023';
    END IF;
    RETURN prefix || value;
END $$;

CREATE OR REPLACE FUNCTION caio_tap_versioned_run(tbl regclass, sample jsonb, version_col name)
RETURNS caio_tap_verdict[]
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    tests     CONSTANT int := 4;
    verdicts  @extschema@.caio_tap_verdict[];
BEGIN
    IF version_col IS NULL THEN
        RETURN @extschema@.caio_tap_not_run(tests, format('%s has no caio trigger to read the version column from; pass version_column to run the story anyway.',
                                                          @extschema@.caio_tap_label(tbl)));
    ELSIF NOT @extschema@.caio_tap_has_column(tbl, version_col::text) THEN
        RETURN @extschema@.caio_tap_not_run(tests, format('%s has no column %I; after renaming a column, run caio_versioned again.',
                                                          @extschema@.caio_tap_label(tbl), version_col));
    END IF;
    verdicts := @extschema@.caio_tap_versioned_story(tbl, sample, version_col);
    RAISE EXCEPTION USING ERRCODE = 'LKTAP';
EXCEPTION
    WHEN SQLSTATE 'LKTAP' THEN RETURN verdicts;
    WHEN OTHERS THEN RETURN @extschema@.caio_tap_not_run(tests, 'the story stopped: ' || SQLERRM);
END $$;

CREATE OR REPLACE FUNCTION caio_tap_claimable_run(tbl regclass, sample jsonb)
RETURNS caio_tap_verdict[]
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    verdicts  @extschema@.caio_tap_verdict[];
BEGIN
    verdicts := @extschema@.caio_tap_claimable_story(tbl, sample);
    RAISE EXCEPTION USING ERRCODE = 'LKTAP';
EXCEPTION
    WHEN SQLSTATE 'LKTAP' THEN RETURN verdicts;
    WHEN OTHERS THEN RETURN @extschema@.caio_tap_not_run(5, 'the story stopped: ' || SQLERRM);
END $$;

-- The tests of each function a test file calls, given the caller's
-- search_path.
CREATE OR REPLACE FUNCTION caio_tap_fencing_tests(caller text, tbl regclass, sample jsonb,
                                                  token_column name, resource_column name,
                                                  resource_prefix text)
RETURNS SETOF text
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    previous  text := @extschema@.caio_tap_enter(caller);
    label     text := @extschema@.caio_tap_label(tbl);
    spec      record;
    resource  text;
BEGIN
    PERFORM @extschema@.caio_tap_check_sample(tbl, sample);
    spec := @extschema@.caio_tap_fence_spec(tbl, token_column, resource_column, resource_prefix);
    resource := @extschema@.caio_tap_resource(tbl, sample, spec.resource_col, spec.prefix);
    RETURN QUERY SELECT * FROM @extschema@.caio_tap_emit(ARRAY[
        format('%s is fenced by caio''s trigger', label),
        format('%s: A''s INSERT under its lease on %s is accepted', label, coalesce(quote_literal(resource), 'its resource')),
        format('%s: a write naming no token is refused with LK003', label),
        format('%s: B takes the resource over after A''s lease expired', label),
        format('%s: A''s stale UPDATE is refused with LK001', label),
        format('%s: A''s stale DELETE is refused with LK001', label),
        format('%s: A''s stale INSERT is refused with LK001', label),
        format('%s: B''s DELETE and INSERT under the new lease are accepted', label)],
        spec.verdict || @extschema@.caio_tap_fencing_run(tbl, sample, spec.token_col, spec.resource_col, resource));
    PERFORM @extschema@.caio_tap_leave(previous);
END $$;

CREATE OR REPLACE FUNCTION caio_tap_versioned_tests(caller text, tbl regclass, sample jsonb,
                                                    version_column name)
RETURNS SETOF text
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    previous  text := @extschema@.caio_tap_enter(caller);
    label     text := @extschema@.caio_tap_label(tbl);
    col       name;
BEGIN
    PERFORM @extschema@.caio_tap_check_sample(tbl, sample);
    SELECT t.args[1] INTO col FROM @extschema@.caio_tap_triggers(tbl, 'caio_version_trigger'::name) AS t LIMIT 1;
    col := coalesce(version_column, col);
    RETURN QUERY SELECT * FROM @extschema@.caio_tap_emit(ARRAY[
        format('%s checks versions with caio''s trigger', label),
        format('%s: the first writer''s UPDATE to the next version is accepted', label),
        format('%s: the second writer on the same version is refused with LK002', label),
        format('%s: an UPDATE keeping the version is refused with LK002', label),
        format('%s: an UPDATE leaving the version out is refused with LK002', label)],
        @extschema@.caio_tap_trigger_verdict(tbl, 'caio_version_trigger'::name, 'caio_versioned', 19::int2, 1)
        || @extschema@.caio_tap_versioned_run(tbl, sample, col));
    PERFORM @extschema@.caio_tap_leave(previous);
END $$;

CREATE OR REPLACE FUNCTION caio_tap_claimable_tests(caller text, tbl regclass, sample jsonb)
RETURNS SETOF text
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    previous  text := @extschema@.caio_tap_enter(caller);
    label     text := @extschema@.caio_tap_label(tbl);
BEGIN
    PERFORM @extschema@.caio_tap_check_sample(tbl, sample);
    RETURN QUERY SELECT * FROM @extschema@.caio_tap_emit(ARRAY[
        format('%s fences claims with caio''s trigger', label),
        format('%s: A''s claim on the sample row is granted', label),
        format('%s: B claims the row over after A''s claim expired', label),
        format('%s: A''s stale finish is refused with LK001', label),
        format('%s: a write naming no claim token is refused with LK003', label),
        format('%s: B''s finish is accepted', label)],
        @extschema@.caio_tap_trigger_verdict(tbl, 'caio_claim_trigger'::name, 'caio_claimable', 31::int2, 0)
        || @extschema@.caio_tap_claimable_run(tbl, sample));
    PERFORM @extschema@.caio_tap_leave(previous);
END $$;

-- The stale-writer story on a table protected with caio_protect: 8 tests.
-- sample is a row the table accepts (json, column => value), with a value
-- for the resource column; the story fills the token column in.  The token
-- column, resource column and prefix default to those of caio's trigger;
-- give them to test a table whose trigger is missing.
--
-- These three read the caller's search_path, so they are the functions that
-- run in it: one statement each, every name in it qualified.
CREATE OR REPLACE FUNCTION caio_tap_fencing(tbl regclass, sample jsonb,
                                            token_column name DEFAULT NULL,
                                            resource_column name DEFAULT NULL,
                                            resource_prefix text DEFAULT NULL)
RETURNS SETOF text
LANGUAGE sql AS $$
    SELECT @extschema@.caio_tap_fencing_tests(pg_catalog.current_setting('search_path'), tbl, sample,
                                              token_column, resource_column, resource_prefix);
$$;

-- Two writers on one version, on a table set up with caio_versioned: 5
-- tests.  sample is a row the table accepts; its version is the one given,
-- or the column's default.  The version column defaults to the trigger's.
CREATE OR REPLACE FUNCTION caio_tap_versioned(tbl regclass, sample jsonb,
                                              version_column name DEFAULT NULL)
RETURNS SETOF text
LANGUAGE sql AS $$
    SELECT @extschema@.caio_tap_versioned_tests(pg_catalog.current_setting('search_path'), tbl, sample,
                                                version_column);
$$;

-- The stale worker's finish, on a table set up with caio_claimable: 6
-- tests.  sample is a row the table accepts (its claim columns are left
-- out: the row starts unclaimed).
CREATE OR REPLACE FUNCTION caio_tap_claimable(tbl regclass, sample jsonb)
RETURNS SETOF text
LANGUAGE sql AS $$
    SELECT @extschema@.caio_tap_claimable_tests(pg_catalog.current_setting('search_path'), tbl, sample);
$$;

------------------------------------------------------------------------------
-- Privileges: nothing for PUBLIC.
------------------------------------------------------------------------------

REVOKE ALL ON TYPE caio_tap_outcome, caio_tap_verdict FROM PUBLIC;
REVOKE ALL ON FUNCTION
    caio_tap_enter(text),
    caio_tap_leave(text),
    caio_tap_label(regclass),
    caio_tap_table(regclass),
    caio_tap_schema(text),
    caio_tap_check_sample(regclass, jsonb),
    caio_tap_has_column(regclass, text),
    caio_tap_missing_column(regclass, name[]),
    caio_tap_resource(regclass, jsonb, name, text),
    caio_tap_sample_text(regclass, jsonb, name),
    caio_tap_trigger_args(bytea),
    caio_tap_triggers(regclass, name),
    caio_tap_trigger_verdict(regclass, name, text, int2, int),
    caio_tap_table_verdict(regclass, name, text[], text),
    caio_tap_column_problem(regclass, text[], text),
    caio_tap_children(regclass),
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
    caio_tap_planted_claim(),
    caio_tap_emit(text[], caio_tap_verdict[]),
    caio_tap_ok(boolean, text, text),
    caio_tap_fence_spec(regclass, name, name, text),
    caio_tap_fencing_story(regclass, jsonb, name, name, text),
    caio_tap_versioned_story(regclass, jsonb, name),
    caio_tap_other_column(regclass, jsonb, name),
    caio_tap_claimable_story(regclass, jsonb),
    caio_tap_fencing_run(regclass, jsonb, name, name, text),
    caio_tap_versioned_run(regclass, jsonb, name),
    caio_tap_claimable_run(regclass, jsonb),
    caio_tap_fencing_tests(text, regclass, jsonb, name, name, text),
    caio_tap_versioned_tests(text, regclass, jsonb, name),
    caio_tap_claimable_tests(text, regclass, jsonb),
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
