-- The churn report: one block per caio table, a column per snapshot (before
-- the churn, then after each step), and a verdict per table.  The steps are
-- cumulative: "after N" is after N acquire/release cycles and N nonce
-- reservations in all.  The updates, inserts and HOT share are those of the
-- step alone.
\pset format unaligned
\pset tuples_only on
\pset footer off
WITH o (tbl, ord, unit) AS (
    VALUES ('caio_lease_state', 1, 'cycles'), ('caio_nonce_wallet', 2, 'reservations'),
           ('caio_nonce_reservation', 3, 'reservations')
), s AS (
    SELECT c.*, o.ord, CASE o.unit WHEN 'cycles' THEN c.cycles ELSE c.reservations END AS done,
           lag(ins) OVER w AS ins0, lag(upd) OVER w AS upd0, lag(hot) OVER w AS hot0
      FROM churn_snapshot c JOIN o USING (tbl)
     WHERE c.idx IS NULL
    WINDOW w AS (PARTITION BY c.tbl ORDER BY c.step)
), cells (ord, line, label, step, val) AS (
    SELECT ord, 0, tbl, step, CASE WHEN step = 0 THEN 'before' ELSE 'after ' || done END FROM s
    UNION ALL
    SELECT ord, 1, '  rows: live, dead', step, rows || ', ' || dead FROM s
    UNION ALL
    SELECT ord, 2, '  inserts in the step', step, CASE WHEN step = 0 THEN '-' ELSE (ins - ins0)::text END
      FROM s
    UNION ALL
    SELECT ord, 3, '  updates in the step (HOT)', step,
           CASE WHEN step = 0 THEN '-'
                WHEN upd = upd0 THEN '0'
                ELSE (upd - upd0) || ' (' || round(100.0 * (hot - hot0) / (upd - upd0), 1) || '%)' END
      FROM s
    UNION ALL
    SELECT ord, 4, '  heap', step, pg_size_pretty(heap) FROM s
    UNION ALL
    SELECT ord, 5, '  indexes', step, pg_size_pretty(indexes) FROM s
    UNION ALL
    SELECT ord, 6, '  total (with FSM, VM, TOAST)', step, pg_size_pretty(total) FROM s
    UNION ALL
    SELECT ord, 7, '  total bytes per row', step,
           CASE WHEN rows > 0 THEN round(total::numeric / rows)::text ELSE '-' END FROM s
    UNION ALL
    SELECT ord, 8, '  autovacuums, autoanalyzes', step, autovacuums || ', ' || autoanalyzes FROM s
    UNION ALL
    SELECT o.ord, 9, '  index ' || c.idx, c.step, pg_size_pretty(c.heap)
      FROM churn_snapshot c JOIN o USING (tbl)
     WHERE c.idx IS NOT NULL
    UNION ALL
    SELECT ord, 10, '', step, '' FROM s
)
SELECT rtrim(format('%-32s', label) || string_agg(format('%19s', val), '' ORDER BY step))
  FROM cells
 GROUP BY ord, line, label
 ORDER BY ord, line, label;

-- Verdicts.  The lease state (one row per resource) and the wallets (one row
-- per wallet) have a fixed number of rows: they are bounded when the heap and
-- the indexes after the whole churn are at most twice (plus 64 kB) their size
-- after the first step, a tenth of it (growth with the work done would have
-- made them ten times larger), and at most half a page, 4 kB, per row (plus
-- 64 kB).  The first step inserts the rows amid updates of those already
-- there, which can leave the heap at a few times its packed size for good
-- (the free space map learns of pruned space only from a vacuum): that is a
-- size reached once, not growth.
-- Reservations grow by design, one row per nonce handed out: their cost per
-- row must stay steady (at most 1.25 times that after the first step), and
-- the index of released nonces, which none of them is, must stay small.
WITH last AS (SELECT max(step) AS step FROM churn_snapshot),
t AS (
    SELECT f.tbl, f.rows, f.heap, f.indexes, f.total, a.heap AS heap1, a.indexes AS indexes1,
           a.total AS total1, a.rows AS rows1,
           CASE f.tbl WHEN 'caio_lease_state' THEN f.cycles ELSE f.reservations END AS done,
           CASE f.tbl WHEN 'caio_lease_state' THEN a.cycles ELSE a.reservations END AS done1,
           CASE f.tbl WHEN 'caio_lease_state' THEN 'cycles' ELSE 'reservations' END AS unit,
           f.reservations
      FROM churn_snapshot f JOIN last USING (step)
      JOIN churn_snapshot a ON a.tbl = f.tbl AND a.idx IS NULL AND a.step = 1
     WHERE f.idx IS NULL
)
SELECT CASE WHEN tbl <> 'caio_nonce_reservation' THEN
           format('%s: %s live rows, %s heap, %s indexes after %s %s (heap %s×, indexes %s× their size after %s) — %s',
                  tbl, rows, pg_size_pretty(heap), pg_size_pretty(indexes), done, unit,
                  round(heap::numeric / greatest(heap1, 1), 2), round(indexes::numeric / greatest(indexes1, 1), 2),
                  done1,
                  CASE WHEN heap <= 2 * heap1 + 65536 AND indexes <= 2 * indexes1 + 65536
                        AND heap <= 4096 * rows + 65536 AND indexes <= 4096 * rows + 65536
                       THEN 'bounded' ELSE 'NOT BOUNDED' END)
       ELSE
           format('%s: %s rows for %s reservations (one per nonce: grows by design), %s bytes per reservation (heap %s, indexes %s), %s after %s; index caio_nonce_released %s — %s',
                  tbl, rows, reservations, round(total::numeric / greatest(rows, 1)),
                  round(heap::numeric / greatest(rows, 1)), round(indexes::numeric / greatest(rows, 1)),
                  round(total1::numeric / greatest(rows1, 1)), done1,
                  pg_size_pretty(released.size),
                  CASE WHEN rows = reservations
                        AND total::numeric / greatest(rows, 1) <= 1.25 * total1 / greatest(rows1, 1)
                        AND released.size <= 65536
                       THEN 'steady per reservation' ELSE 'NOT STEADY' END)
       END
  FROM t
  LEFT JOIN LATERAL (SELECT c.heap AS size FROM churn_snapshot c, last
                      WHERE c.step = last.step AND c.idx = 'caio_nonce_released') released ON true
 ORDER BY array_position(ARRAY['caio_lease_state', 'caio_nonce_wallet', 'caio_nonce_reservation'], tbl);
