# Helpers the test scripts share.  Sourced, not run.

# as_pg COMMAND...: run a command as the postgres user when we are root
# (initdb, the server and PgBouncer refuse to run as root), else as we are.
as_pg() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

# fresh_db NAME EXTENSION...: a new database with those extensions, on the
# server the PG* variables name; an old one of that name is dropped first,
# with any sessions still in it (a pooler's server connections, say).
fresh_db() {
    local db=$1; shift
    PGOPTIONS="-c client_min_messages=warning" psql -X -q -v ON_ERROR_STOP=1 -d postgres \
        -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "CREATE DATABASE $db"
    for extension in "$@"; do
        psql -X -q -v ON_ERROR_STOP=1 -d "$db" -c "CREATE EXTENSION $extension"
    done
}

# installcheck [MAKE-ARGUMENT...]: caio's pg_regress suites and isolation
# specs (make installcheck) against the server the PG* variables name, with
# the PostgreSQL that PG_CONFIG names; the diffs are shown when they fail.
# Sets INSTALLCHECK_PASSED to the number of tests that passed.
installcheck() {
    local log status=0
    # acquire_prepared has an expected output for a server without prepared
    # transactions (make installcheck on a stock one); here the real one runs.
    if [ "$(psql -X -At -d postgres -c 'SHOW max_prepared_transactions')" -eq 0 ]; then
        echo "installcheck: the server has max_prepared_transactions = 0; acquire_prepared would not prepare"
        return 1
    fi
    log=$(mktemp)
    make -s PG_CONFIG="$PG_CONFIG" installcheck "$@" 2>&1 | tee "$log" || status=$?
    # pg_regress says "test NAME ... ok" up to 15, "ok N - NAME" from 16 on.
    INSTALLCHECK_PASSED=$(grep -cE '^ok [0-9]|\.\.\. ok ' "$log" || true)
    rm -f "$log"
    if [ "$status" -ne 0 ]; then
        cat regression.diffs output_iso/regression.diffs 2>/dev/null || true
        return 1
    fi
}

# stress_runs [WHERE]: the four pgbench stress runs with their invariant
# checks, each in a fresh database on the server the PG* variables name.
stress_runs() {
    local stress
    for stress in lease fence nonce claims; do
        echo "== $stress stress (pgbench)${1:+, $1}"
        fresh_db caio_stress caio
        PGDATABASE=caio_stress test/stress/run.sh "$stress"
    done
}
