-- The churn soak's report (test/bench/soak.sh): a line per sample of each
-- of caio's tables, the longest snapshot holds seen, and a verdict per
-- table of a fixed number of rows.
\pset format unaligned
\pset tuples_only on
\pset footer off
WITH s AS (
    SELECT *, CASE tbl WHEN 'caio_lease_state' THEN 1 WHEN 'caio_nonce_wallet' THEN 2 ELSE 3 END AS ord,
           upd - lag(upd) OVER w AS d_upd, hot - lag(hot) OVER w AS d_hot
      FROM soak_sample
    WINDOW w AS (PARTITION BY tbl ORDER BY t)
), lines (ord, t, text) AS (
    SELECT DISTINCT ord, -2, tbl FROM s
    UNION ALL
    SELECT DISTINCT ord, -1, format('  %6s %9s %9s %8s %7s %6s %10s %10s %8s %6s %8s',
                                    'at (s)', 'cycles', 'reserv.', 'live', 'dead', 'HOT',
                                    'heap', 'indexes', 'unpruned', 'free', 'autovac')
      FROM s
    UNION ALL
    SELECT ord, t, format('  %6s %9s %9s %8s %7s %6s %10s %10s %8s %6s %8s',
                          t, cycles, reservations, live, dead,
                          CASE WHEN coalesce(d_upd, 0) = 0 THEN '-'
                               ELSE round(100.0 * d_hot / d_upd, 1) || '%' END,
                          pg_size_pretty(heap), pg_size_pretty(indexes),
                          coalesce(scanned_dead::text, '-'),
                          coalesce(round(free_pct) || '%', '-'),
                          autovacuums || ', ' || autoanalyzes)
      FROM s
    UNION ALL
    SELECT DISTINCT ord, 1000000, '' FROM s
)
SELECT rtrim(text) FROM lines ORDER BY ord, t;

-- The longest snapshot holds: each session's longest transaction seen by
-- the once-a-second poll, the ten longest.
SELECT 'longest snapshot holds (sessions holding a snapshot for more than 0.2 s, polled each second):';
SELECT format('  %6s s  %-20s %s (at %s s%s)', held, backend_type, query, t,
              coalesce(', in its ' || phase || ' phase', ''))
  FROM (SELECT DISTINCT ON (pid, xact_start) pid, xact_start, held_s AS held, backend_type, query, phase, t
          FROM soak_hold ORDER BY pid, xact_start, held_s DESC) h
 ORDER BY held DESC LIMIT 10;
-- A lazy VACUUM's snapshot holds nothing back; an ANALYZE's (autovacuum's
-- "VACUUM ANALYZE" too, in its analyze phase) and a client's do.
SELECT format('  in all: %s holds over 0.2 s, the longest %s s; in an ANALYZE %s (the longest %s s), in a lazy VACUUM (which holds nothing back) %s, by client backends %s',
              count(*), coalesce(max(held), 0),
              count(*) FILTER (WHERE phase = 'analyze'),
              coalesce(max(held) FILTER (WHERE phase = 'analyze'), 0),
              count(*) FILTER (WHERE phase = 'vacuum'),
              count(*) FILTER (WHERE backend_type = 'client backend'))
  FROM (SELECT DISTINCT ON (pid, xact_start) held_s AS held, backend_type, query, phase
          FROM soak_hold ORDER BY pid, xact_start, held_s DESC) h;
SELECT '';

-- Verdicts: a table of fixed rows is BOUNDED when, over the second half of
-- the soak, its heap and its indexes stay within 10 % (plus 64 kB) of their
-- size at half time; then the size it reached is its plateau, and the
-- report says when it was last reached.
WITH last AS (
    SELECT DISTINCT ON (tbl) * FROM soak_sample ORDER BY tbl, t DESC
), half AS (
    SELECT DISTINCT ON (s.tbl) s.* FROM soak_sample s JOIN last l USING (tbl)
     WHERE s.t <= l.t / 2 ORDER BY s.tbl, s.t DESC
), peak AS (
    SELECT tbl, max(heap) AS heap_max, max(indexes) AS indexes_max FROM soak_sample GROUP BY tbl
), reached AS (
    SELECT s.tbl, min(s.t) AS t FROM soak_sample s JOIN last l USING (tbl)
     WHERE s.heap >= l.heap AND s.indexes >= l.indexes GROUP BY s.tbl
)
SELECT format('%s: %s rows; heap %s at %s s, %s at the end (%s s), peak %s; indexes %s, %s, peak %s; heap ×%s over the second half — %s',
              l.tbl, l.live, pg_size_pretty(h.heap), h.t, pg_size_pretty(l.heap), l.t, pg_size_pretty(p.heap_max),
              pg_size_pretty(h.indexes), pg_size_pretty(l.indexes), pg_size_pretty(p.indexes_max),
              round(l.heap::numeric / greatest(h.heap, 1), 2),
              CASE WHEN p.heap_max <= 1.10 * h.heap + 65536 AND p.indexes_max <= 1.10 * h.indexes + 65536
                   THEN format('BOUNDED (its size at the end first reached at %s s)', r.t)
                   ELSE 'NOT BOUNDED (grew over the second half)' END)
  FROM last l JOIN half h USING (tbl) JOIN peak p USING (tbl) JOIN reached r USING (tbl)
 WHERE l.tbl <> 'caio_nonce_reservation'
 ORDER BY l.tbl;
SELECT format('caio_nonce_reservation: %s rows, %s bytes per row (heap and indexes) at half time, %s at the end: one row per nonce handed out, grows by design',
              l.live, round((h.heap + h.indexes)::numeric / greatest(h.reservations, 1)),
              round((l.heap + l.indexes)::numeric / greatest(l.reservations, 1)))
  FROM soak_sample l, soak_sample h
 WHERE l.tbl = 'caio_nonce_reservation' AND h.tbl = l.tbl
   AND l.t = (SELECT max(t) FROM soak_sample)
   AND h.t = (SELECT max(t) FROM soak_sample WHERE t <= (SELECT max(t) FROM soak_sample) / 2);
