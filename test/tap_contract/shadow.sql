-- Shadows planted in public by caio_tap_mallory, a role that is not a
-- superuser but may create objects there (run.sh runs this file under SET
-- ROLE): functions and operators that would be a better match than
-- pg_catalog's for a call of caio_tap's that resolved names with the
-- caller's search_path, and overloads of caio_tap's and caio's own functions
-- beside them.  Each records that it ran, tries to make its owner a
-- superuser, and then does what the real one does, so that the tests'
-- results do not show a shadow that ran: only the record does.  run.sh runs
-- the caio_tap tests as a superuser with public on the search_path, and
-- checks that no shadow ran.

-- A story runs inside a subtransaction that it rolls back, which would take
-- a row in a table with it, but a sequence's nextval is never rolled back:
-- each shadow counts its calls in a sequence of its own (shadow.calls), and
-- a WARNING says so as it happens.
CREATE TABLE shadow (signature text PRIMARY KEY, calls regclass NOT NULL);
CREATE TABLE shadow_ran (signature text NOT NULL, ran_as name NOT NULL);

CREATE FUNCTION shadow_ran(signature text) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM nextval((SELECT s.calls FROM public.shadow s WHERE s.signature = shadow_ran.signature));
    INSERT INTO public.shadow_ran VALUES (signature, current_user);
    RAISE WARNING 'shadow % ran as %', signature, current_user;
    BEGIN
        ALTER ROLE caio_tap_mallory SUPERUSER;
    EXCEPTION WHEN insufficient_privilege THEN
        NULL;
    END;
END $$;

-- A shadow's sequence.
CREATE FUNCTION plant(signature text) RETURNS text
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    calls  text := format('public.shadow_%s', (SELECT count(*) + 1 FROM public.shadow));
BEGIN
    EXECUTE format('CREATE SEQUENCE %s', calls);
    INSERT INTO public.shadow VALUES (signature, calls::regclass);
    RETURN signature;
END $$;

-- Built-in functions and operators caio_tap calls.  Where caio_tap 0.2.0
-- passed an argument of another type than pg_catalog's parameter (a name to
-- text, a regclass to oid), or pg_catalog's is polymorphic or variadic, the
-- shadow is the better match even behind pg_catalog; the others (the same
-- signature as pg_catalog's) win when public comes before pg_catalog.
CREATE FUNCTION public.format(text, text) RETURNS text
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN PERFORM public.shadow_ran('format(text,text)'); RETURN pg_catalog.format($1, $2); END $$;
CREATE FUNCTION public.format(text, text, text) RETURNS text
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN PERFORM public.shadow_ran('format(text,text,text)'); RETURN pg_catalog.format($1, $2, $3); END $$;

CREATE FUNCTION public.shadow_string_agg(state text, value text, delimiter text) RETURNS text
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM public.shadow_ran('string_agg(text,text)');
    RETURN CASE WHEN state IS NULL THEN value ELSE state || delimiter || value END;
END $$;
CREATE AGGREGATE public.string_agg(text, text) (SFUNC = public.shadow_string_agg, STYPE = text);

CREATE FUNCTION public.unnest(text[]) RETURNS SETOF text
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN PERFORM public.shadow_ran('unnest(text[])'); RETURN QUERY SELECT pg_catalog.unnest($1); END $$;
CREATE FUNCTION public.unnest(name[]) RETURNS SETOF name
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN PERFORM public.shadow_ran('unnest(name[])'); RETURN QUERY SELECT pg_catalog.unnest($1); END $$;
CREATE FUNCTION public.jsonb_typeof(jsonb) RETURNS text
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN PERFORM public.shadow_ran('jsonb_typeof(jsonb)'); RETURN pg_catalog.jsonb_typeof($1); END $$;
CREATE FUNCTION public.jsonb_object_keys(jsonb) RETURNS SETOF text
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN PERFORM public.shadow_ran('jsonb_object_keys(jsonb)'); RETURN QUERY SELECT pg_catalog.jsonb_object_keys($1); END $$;
CREATE FUNCTION public.jsonb_build_object(name, bigint) RETURNS jsonb
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN PERFORM public.shadow_ran('jsonb_build_object(name,bigint)'); RETURN pg_catalog.jsonb_build_object($1, $2); END $$;
CREATE FUNCTION public.concat_ws(text, text, text) RETURNS text
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN PERFORM public.shadow_ran('concat_ws(text,text,text)'); RETURN pg_catalog.concat_ws($1, $2, $3); END $$;
CREATE FUNCTION public.concat_ws(text, text, text, text) RETURNS text
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN PERFORM public.shadow_ran('concat_ws(text,text,text,text)'); RETURN pg_catalog.concat_ws($1, $2, $3, $4); END $$;
CREATE FUNCTION public.quote_ident(text) RETURNS text
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN PERFORM public.shadow_ran('quote_ident(text)'); RETURN pg_catalog.quote_ident($1); END $$;
CREATE FUNCTION public.length(bytea) RETURNS integer
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN PERFORM public.shadow_ran('length(bytea)'); RETURN pg_catalog.length($1); END $$;
CREATE FUNCTION public.get_byte(bytea, integer) RETURNS integer
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN PERFORM public.shadow_ran('get_byte(bytea,integer)'); RETURN pg_catalog.get_byte($1, $2); END $$;
CREATE FUNCTION public.convert_from(bytea, text) RETURNS text
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN PERFORM public.shadow_ran('convert_from(bytea,text)'); RETURN pg_catalog.convert_from($1, $2::name); END $$;
CREATE FUNCTION public.substring(bytea, integer, integer) RETURNS bytea
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN PERFORM public.shadow_ran('substring(bytea,integer,integer)'); RETURN pg_catalog.substring($1, $2, $3); END $$;
CREATE FUNCTION public.current_setting(text) RETURNS text
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN PERFORM public.shadow_ran('current_setting(text)'); RETURN pg_catalog.current_setting($1); END $$;
CREATE FUNCTION public.cardinality(text[]) RETURNS integer
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN PERFORM public.shadow_ran('cardinality(text[])'); RETURN pg_catalog.cardinality($1); END $$;
CREATE FUNCTION public.cardinality(caio_tap_verdict[]) RETURNS integer
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN PERFORM public.shadow_ran('cardinality(caio_tap_verdict[])'); RETURN pg_catalog.cardinality($1); END $$;

CREATE FUNCTION public.shadow_oid_eq(oid, regclass) RETURNS boolean
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN PERFORM public.shadow_ran('=(oid,regclass)'); RETURN $1 OPERATOR(pg_catalog.=) $2::oid; END $$;
CREATE OPERATOR public.= (LEFTARG = oid, RIGHTARG = regclass, FUNCTION = public.shadow_oid_eq);
CREATE FUNCTION public.shadow_name_eq(name, text) RETURNS boolean
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN PERFORM public.shadow_ran('=(name,text)'); RETURN $1 OPERATOR(pg_catalog.=) $2; END $$;
CREATE OPERATOR public.= (LEFTARG = name, RIGHTARG = text, FUNCTION = public.shadow_name_eq);
CREATE FUNCTION public.shadow_has_key(jsonb, name) RETURNS boolean
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN PERFORM public.shadow_ran('?(jsonb,name)'); RETURN $1 OPERATOR(pg_catalog.?) $2::text; END $$;
CREATE OPERATOR public.? (LEFTARG = jsonb, RIGHTARG = name, FUNCTION = public.shadow_has_key);
CREATE FUNCTION public.shadow_text_append(text[], text) RETURNS text[]
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN PERFORM public.shadow_ran('||(text[],text)'); RETURN pg_catalog.array_append($1, $2); END $$;
CREATE OPERATOR public.|| (LEFTARG = text[], RIGHTARG = text, FUNCTION = public.shadow_text_append);
CREATE FUNCTION public.shadow_verdict_append(caio_tap_verdict[], caio_tap_verdict) RETURNS caio_tap_verdict[]
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN PERFORM public.shadow_ran('||(caio_tap_verdict[],caio_tap_verdict)'); RETURN pg_catalog.array_append($1, $2); END $$;
CREATE OPERATOR public.|| (LEFTARG = caio_tap_verdict[], RIGHTARG = caio_tap_verdict,
                           FUNCTION = public.shadow_verdict_append);

SELECT public.plant(s) FROM pg_catalog.unnest(ARRAY[
    'format(text,text)', 'format(text,text,text)', 'string_agg(text,text)', 'unnest(text[])',
    'unnest(name[])', 'jsonb_typeof(jsonb)', 'jsonb_object_keys(jsonb)',
    'jsonb_build_object(name,bigint)', 'concat_ws(text,text,text)',
    'concat_ws(text,text,text,text)', 'quote_ident(text)', 'length(bytea)',
    'get_byte(bytea,integer)', 'convert_from(bytea,text)', 'substring(bytea,integer,integer)',
    'current_setting(text)', 'cardinality(text[])', 'cardinality(caio_tap_verdict[])',
    '=(oid,regclass)', '=(name,text)', '?(jsonb,name)', '||(text[],text)',
    '||(caio_tap_verdict[],caio_tap_verdict)']::text[]) AS s;

-- caio_tap_all is variadic: a function of the same name with as many
-- plain parameters as a call passes would be preferred to it.
CREATE FUNCTION public.caio_tap_all(caio_tap_verdict, caio_tap_verdict, caio_tap_verdict)
RETURNS caio_tap_verdict
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM public.shadow_ran('caio_tap_all(caio_tap_verdict,caio_tap_verdict,caio_tap_verdict)');
    RETURN CASE WHEN NOT $1.passed THEN $1 WHEN NOT $2.passed THEN $2 WHEN NOT $3.passed THEN $3
                ELSE ROW(true, NULL)::public.caio_tap_verdict END;
END $$;
SELECT public.plant('caio_tap_all(caio_tap_verdict,caio_tap_verdict,caio_tap_verdict)');

-- Overloads of caio_tap's functions (but the three a test file calls: the
-- test file's own call is its own) and of caio's, beside them in public:
-- each with text for every parameter, and with text for every parameter of
-- type name, for as many arguments as a call may pass.  A literal passed
-- where caio_tap's or caio's parameter is not text, or a name passed for a
-- text, would call the overload.  caio_claim is left to run.sh: caio_tap
-- refuses to play a claim beside a planted one.
DO $$
DECLARE
    f          record;
    params     text[];
    signature  text;
BEGIN
    FOR f IN
        SELECT p.proname, p.pronargs, p.pronargdefaults, p.proargtypes::oid[] AS types,
               pg_catalog.pg_get_function_result(p.oid) AS result, p.proretset
          FROM pg_catalog.pg_proc p
          JOIN pg_catalog.pg_depend d ON d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::regclass
                                     AND d.objid OPERATOR(pg_catalog.=) p.oid
                                     AND d.deptype OPERATOR(pg_catalog.=) 'e'
          JOIN pg_catalog.pg_extension e ON e.oid OPERATOR(pg_catalog.=) d.refobjid
         WHERE e.extname::text IN ('caio', 'caio_tap') AND p.pronargs OPERATOR(pg_catalog.>) 0
           AND p.proname::text NOT IN ('caio_tap_fencing', 'caio_tap_versioned', 'caio_tap_claimable', 'caio_claim')
    LOOP
        FOR n IN GREATEST(f.pronargs - f.pronargdefaults, 1) .. f.pronargs LOOP
            FOREACH params SLICE 1 IN ARRAY ARRAY[
                (SELECT pg_catalog.array_agg('text'::text) FROM pg_catalog.generate_series(1, n)),
                (SELECT pg_catalog.array_agg(CASE WHEN t OPERATOR(pg_catalog.=) 'pg_catalog.name'::regtype::oid THEN 'text'
                                                  ELSE pg_catalog.format_type(t, NULL) END ORDER BY i)
                   FROM pg_catalog.unnest(f.types[0:n - 1]) WITH ORDINALITY AS a(t, i))]
            LOOP
                signature := pg_catalog.format('%I(%s)', f.proname, pg_catalog.array_to_string(params, ','));
                CONTINUE WHEN pg_catalog.to_regprocedure('public.' || signature) IS NOT NULL;
                BEGIN
                    EXECUTE pg_catalog.format(
                        'CREATE FUNCTION public.%s RETURNS %s LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp'
                        ' AS $body$BEGIN PERFORM public.shadow_ran(%L); RETURN%s; END$body$',
                        signature, f.result, signature,
                        CASE WHEN f.proretset OR f.result OPERATOR(pg_catalog.=) 'void' THEN '' ELSE ' NULL' END);
                EXCEPTION WHEN OTHERS THEN
                    RAISE NOTICE 'not planted: % (%)', signature, SQLERRM;
                    CONTINUE;
                END;
                PERFORM public.plant(signature);
            END LOOP;
        END LOOP;
    END LOOP;
END $$;
