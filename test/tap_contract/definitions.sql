-- Everything of caio_tap's that an upgrade must leave as a fresh install
-- leaves it: its version, its members, every function's definition (its
-- SET search_path among them), privileges and comment, and every type's
-- attributes and privileges.  One object per line.
SELECT 'version ' || extversion FROM pg_extension WHERE extname = 'caio_tap';

SELECT 'member ' || pg_describe_object(d.classid, d.objid, d.objsubid)
  FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid
 WHERE e.extname = 'caio_tap' AND d.deptype = 'e'
 ORDER BY 1;

SELECT 'function ' || p.oid::regprocedure::text
       || E'\n  config ' || coalesce(p.proconfig::text, '-')
       || E'\n  acl ' || coalesce(p.proacl::text, '-')
       || E'\n  comment ' || coalesce(obj_description(p.oid, 'pg_proc'), '-')
       || E'\n' || pg_get_functiondef(p.oid)
  FROM pg_proc p
  JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
  JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'caio_tap'
 ORDER BY p.oid::regprocedure::text;

SELECT 'type ' || t.oid::regtype::text || ' acl ' || coalesce(t.typacl::text, '-') || ' ('
       || (SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod), ', ' ORDER BY a.attnum)
             FROM pg_attribute a WHERE a.attrelid = t.typrelid AND a.attnum > 0) || ')'
  FROM pg_type t
  JOIN pg_depend d ON d.classid = 'pg_type'::regclass AND d.objid = t.oid AND d.deptype = 'e'
  JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'caio_tap'
 ORDER BY 1;
