-- The churn report: one block per caio table, a line per snapshot (before
-- the churn, then after each step; "done" counts the acquire/release cycles
-- or the nonce reservations so far), the sizes of its indexes at the end,
-- and a verdict per table.  Inserts, updates and the HOT share are those of
-- the step alone; dead rows are the statistics' estimate (n_dead_tup).
\pset format unaligned
\pset tuples_only on
\pset footer off
WITH o (tbl, ord, what) AS (
    VALUES ('caio_lease_state', 1, 'one row per resource'),
           ('caio_nonce_wallet', 2, 'one row per wallet'),
           ('caio_nonce_reservation', 3, 'one row per nonce handed out')
), s AS (
    SELECT c.*, o.ord, o.what,
           CASE c.tbl WHEN 'caio_lease_state' THEN c.cycles ELSE c.reservations END AS done,
           c.ins - lag(c.ins) OVER w AS step_ins, c.upd - lag(c.upd) OVER w AS step_upd,
           c.hot - lag(c.hot) OVER w AS step_hot
      FROM churn_snapshot c JOIN o USING (tbl)
     WHERE c.idx IS NULL
    WINDOW w AS (PARTITION BY c.tbl ORDER BY c.step)
), lines (ord, line, text) AS (
    SELECT ord, -2, format('%s (%s)', tbl, what) FROM s WHERE step = 0
    UNION ALL
    SELECT ord, -1, format('  %-7s %9s %8s %7s %8s %9s %6s %11s %11s %11s %6s %8s',
                           'after', 'done', 'rows', 'dead', 'inserts', 'updates', 'HOT',
                           'heap', 'indexes', 'total', 'B/row', 'autovac')
      FROM s WHERE step = 0
    UNION ALL
    SELECT ord, step,
           format('  %-7s %9s %8s %7s %8s %9s %6s %11s %11s %11s %6s %8s',
                  CASE WHEN step = 0 THEN 'before' ELSE pct || ' %' END, done, rows, dead,
                  coalesce(step_ins::text, '-'), coalesce(step_upd::text, '-'),
                  CASE WHEN coalesce(step_upd, 0) = 0 THEN '-'
                       ELSE round(100.0 * step_hot / step_upd, 1) || '%' END,
                  pg_size_pretty(heap), pg_size_pretty(indexes), pg_size_pretty(total),
                  CASE WHEN rows > 0 THEN round(total::numeric / rows)::text ELSE '-' END,
                  autovacuums || ', ' || autoanalyzes)
      FROM s
    UNION ALL
    SELECT o.ord, 1000, '  indexes at the end: '
                        || string_agg(c.idx || ' ' || pg_size_pretty(c.heap), ', ' ORDER BY c.idx)
      FROM churn_snapshot c JOIN o USING (tbl)
     WHERE c.idx IS NOT NULL AND c.step = (SELECT max(step) FROM churn_snapshot)
     GROUP BY o.ord
    UNION ALL
    SELECT ord, 1001, '' FROM s WHERE step = 0
)
SELECT rtrim(text) FROM lines ORDER BY ord, line;

-- Verdicts, on the second half of the churn: from the snapshot at 50 % to the
-- one at 100 %, the work done doubles, and a table that grows with it doubles
-- too.  The lease state (one row per resource) and the wallets (one row per
-- wallet) have a fixed number of rows: they are bounded when that second
-- half grows their heap and their indexes by at most 25 % (plus 64 kB), and
-- they end at most half a page, 4 kB, per row (plus 64 kB).  The first
-- steps may grow them more: the rows are inserted amid updates of those
-- already there, an update that finds no room on its page moves the row to
-- another, and when several sessions extend the table at once PostgreSQL 15
-- adds up to 20 pages per waiting session; that is a size reached, not
-- growth.  Reservations grow by design, one row per nonce: they must have
-- exactly one row per reservation, their bytes per reservation must not
-- grow by more than 25 % over the second half, and the index of released
-- nonces (none of them is) must stay small.
WITH last AS (
    SELECT * FROM churn_snapshot WHERE idx IS NULL AND step = (SELECT max(step) FROM churn_snapshot)
), half AS (
    SELECT * FROM churn_snapshot WHERE idx IS NULL AND pct = 50
), t AS (
    SELECT l.tbl, l.rows, l.heap, l.indexes, l.total, l.reservations,
           h.rows AS rows_h, h.heap AS heap_h, h.indexes AS indexes_h, h.total AS total_h,
           CASE l.tbl WHEN 'caio_lease_state' THEN l.cycles ELSE l.reservations END AS done,
           CASE l.tbl WHEN 'caio_lease_state' THEN h.cycles ELSE h.reservations END AS done_h,
           CASE l.tbl WHEN 'caio_lease_state' THEN 'cycles' ELSE 'reservations' END AS unit,
           (SELECT c.heap FROM churn_snapshot c
             WHERE c.step = l.step AND c.idx = 'caio_nonce_released') AS released
      FROM last l JOIN half h USING (tbl)
)
SELECT CASE WHEN tbl <> 'caio_nonce_reservation' THEN
           format('%s: %s live rows, %s heap, %s indexes after %s %s; from %s to %s %s, heap ×%s, indexes ×%s — %s',
                  tbl, rows, pg_size_pretty(heap), pg_size_pretty(indexes), done, unit,
                  done_h, done, unit,
                  round(heap::numeric / greatest(heap_h, 1), 2),
                  round(indexes::numeric / greatest(indexes_h, 1), 2),
                  CASE WHEN heap <= 1.25 * heap_h + 65536 AND indexes <= 1.25 * indexes_h + 65536
                        AND heap <= 4096 * rows + 65536 AND indexes <= 4096 * rows + 65536
                       THEN 'bounded' ELSE 'NOT BOUNDED' END)
       ELSE
           format('%s: %s rows for %s reservations (one per nonce: grows by design), %s bytes per reservation (heap %s, indexes %s), %s after %s; index caio_nonce_released %s — %s',
                  tbl, rows, reservations, round(total::numeric / greatest(rows, 1)),
                  round(heap::numeric / greatest(rows, 1)), round(indexes::numeric / greatest(rows, 1)),
                  round(total_h::numeric / greatest(rows_h, 1)), done_h,
                  pg_size_pretty(released),
                  CASE WHEN rows = reservations
                        AND total::numeric / greatest(rows, 1) <= 1.25 * total_h / greatest(rows_h, 1)
                        AND released <= 65536
                       THEN 'steady per reservation' ELSE 'NOT STEADY' END)
       END
  FROM t
 ORDER BY array_position(ARRAY['caio_lease_state', 'caio_nonce_wallet', 'caio_nonce_reservation'], tbl);
