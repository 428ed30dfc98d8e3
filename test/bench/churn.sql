-- Health under churn: snapshots of caio's tables, taken in the churn's own
-- database before the churn and after each of its steps; the report
-- (churn_report.sql) compares them.  Runs after CREATE EXTENSION caio.
CREATE TABLE churn_snapshot (
    step          int    NOT NULL,  -- 0 before the churn, then 1, 2, ...
    pct           int    NOT NULL,  -- the share of the churn done, in %
    cycles        bigint NOT NULL,  -- acquire/release cycles done so far
    reservations  bigint NOT NULL,  -- nonce reservations done so far
    tbl           text   NOT NULL,
    idx           text,             -- NULL for the table's own row
    rows          bigint,           -- count(*)
    live          bigint,           -- the statistics' n_live_tup, n_dead_tup, ...
    dead          bigint,
    ins           bigint,
    upd           bigint,
    hot           bigint,
    heap          bigint NOT NULL,  -- pg_relation_size (the index's own for an index)
    indexes       bigint,           -- pg_indexes_size
    total         bigint,           -- pg_total_relation_size
    autovacuums   bigint,
    autoanalyzes  bigint
);

CREATE FUNCTION churn_snap(step int, pct int, cycles bigint, reservations bigint) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    t text;
    n bigint;
BEGIN
    PERFORM pg_stat_clear_snapshot();
    FOREACH t IN ARRAY ARRAY['caio_lease_state', 'caio_nonce_wallet', 'caio_nonce_reservation'] LOOP
        EXECUTE format('SELECT count(*) FROM %I', t) INTO n;
        INSERT INTO churn_snapshot
        SELECT step, pct, cycles, reservations, t, NULL, n, s.n_live_tup, s.n_dead_tup, s.n_tup_ins,
               s.n_tup_upd, s.n_tup_hot_upd, pg_relation_size(s.relid), pg_indexes_size(s.relid),
               pg_total_relation_size(s.relid), s.autovacuum_count, s.autoanalyze_count
          FROM pg_stat_user_tables s
         WHERE s.relid = t::regclass;
        INSERT INTO churn_snapshot (step, pct, cycles, reservations, tbl, idx, heap)
        SELECT step, pct, cycles, reservations, t, i.indexrelid::regclass::text,
               pg_relation_size(i.indexrelid)
          FROM pg_index i
         WHERE i.indrelid = t::regclass;
    END LOOP;
END $$;

SELECT churn_snap(0, 0, 0, 0);
