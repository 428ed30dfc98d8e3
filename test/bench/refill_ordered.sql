-- Before each ordered claim+finish run: the run's queue back to its
-- finished rows (ids 1 to :done, psql -v done=<n>) and :pending (200,000) pending
-- ones
-- after them, with priorities 0 to 9 and run_at rising with the id (psql
-- -v queue=<table>).  The finished rows stay as they are, so that only the
-- pending ones are written again; the index on the pending rows in the
-- order is what a claim reads.
DELETE FROM :"queue" WHERE id > :done;
INSERT INTO :"queue" (id, priority, run_at)
SELECT i, (i::bigint * 7919 % 10)::int, '2030-01-01'::timestamptz + i * interval '1 second'
  FROM generate_series(:done + 1, :done + :pending) i;
VACUUM ANALYZE :"queue";
