-- Before each claim+finish run: the run's queue back to 200,000 pending
-- rows (psql -v queue=<table>).  Each run of either side starts from the same
-- state; without this, a side's pick walks the rows it finished in earlier
-- runs (neither side orders its pick), so the faster side would pay more.
-- A 5-second run finishes some 20,000 rows; a claim that finds fewer than
-- 10 fails the run.
TRUNCATE :"queue";
INSERT INTO :"queue" (id) SELECT generate_series(1, 200000);
VACUUM ANALYZE :"queue";
