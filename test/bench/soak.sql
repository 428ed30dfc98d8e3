-- The churn soak (test/bench/soak.sh): samples of caio's tables taken every
-- BENCH_SOAK_SAMPLE seconds while leases and nonces churn, and a record of
-- every session seen holding a snapshot back.  Runs after CREATE EXTENSION
-- caio and CREATE EXTENSION pgstattuple.
CREATE TABLE soak_sample (
    t             int    NOT NULL,  -- seconds since the churn began
    tbl           text   NOT NULL,
    cycles        bigint,           -- acquire/release cycles and reservations so far
    reservations  bigint,
    heap          bigint NOT NULL,  -- pg_relation_size
    indexes       bigint NOT NULL,  -- pg_indexes_size
    live          bigint,           -- n_live_tup, n_dead_tup
    dead          bigint,
    upd           bigint,           -- n_tup_upd, n_tup_hot_upd (cumulative)
    hot           bigint,
    ins           bigint,
    scanned_dead  bigint,           -- pgstattuple: dead (unpruned) versions on the
    free_pct      numeric,          -- pages now, and the heap's free space
    autovacuums   bigint,
    autoanalyzes  bigint,
    last_autovacuum  timestamptz,
    last_autoanalyze timestamptz
);

-- Sessions that hold a snapshot (backend_xmin) for longer than 0.2 s,
-- polled every second: what keeps dead versions from being pruned.  An
-- autovacuum worker's phase tells which: a lazy VACUUM's snapshot holds
-- nothing back (PostgreSQL 14 on leave it out of the horizon), an
-- ANALYZE's does, and a worker's query reads "VACUUM ANALYZE" in both.
CREATE TABLE soak_hold (
    t             int         NOT NULL,
    pid           int         NOT NULL,
    backend_type  text,
    query         text,
    phase         text,             -- an autovacuum worker's: 'analyze' or 'vacuum'
    xact_start    timestamptz,
    held_s        numeric
);

CREATE FUNCTION soak_snap(t int, cycles bigint, reservations bigint) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    r text;
BEGIN
    PERFORM pg_stat_clear_snapshot();
    FOREACH r IN ARRAY ARRAY['caio_lease_state', 'caio_nonce_wallet', 'caio_nonce_reservation'] LOOP
        INSERT INTO soak_sample
        SELECT t, r, cycles, reservations, pg_relation_size(s.relid), pg_indexes_size(s.relid),
               s.n_live_tup, s.n_dead_tup, s.n_tup_upd, s.n_tup_hot_upd, s.n_tup_ins,
               CASE WHEN r <> 'caio_nonce_reservation' THEN p.dead_tuple_count END,
               CASE WHEN r <> 'caio_nonce_reservation' THEN p.free_percent END,
               s.autovacuum_count, s.autoanalyze_count, s.last_autovacuum, s.last_autoanalyze
          FROM pg_stat_user_tables s
          LEFT JOIN LATERAL (SELECT * FROM pgstattuple(s.relid)
                              WHERE r <> 'caio_nonce_reservation') p ON true
         WHERE s.relid = r::regclass;
    END LOOP;
END $$;

CREATE FUNCTION soak_poll(t int) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO soak_hold
    SELECT t, a.pid, a.backend_type, left(a.query, 80),
           CASE WHEN EXISTS (SELECT FROM pg_stat_progress_analyze p WHERE p.pid = a.pid) THEN 'analyze'
                WHEN EXISTS (SELECT FROM pg_stat_progress_vacuum p WHERE p.pid = a.pid) THEN 'vacuum'
           END,
           a.xact_start, round(extract(epoch FROM clock_timestamp() - a.xact_start)::numeric, 1)
      FROM pg_stat_activity a
     WHERE a.backend_xmin IS NOT NULL AND a.pid <> pg_backend_pid()
       AND a.xact_start < clock_timestamp() - interval '200 milliseconds';
$$;
