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
