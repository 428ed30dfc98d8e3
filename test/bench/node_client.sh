#!/usr/bin/env bash
# The Node client's overhead: withLease + a fenced write through caio's Node
# client beside the same job written by hand with pg, ops/s at 1 and 8
# workers, printed side by side in one run (clients/node/bench/lease_write.mjs
# says what each does).  Builds and installs caio for PostgreSQL 15 and
# readies the client (test/clients/node_build.sh), then runs in a throwaway
# server of test/pgenv.sh's (fsync off, as in the test command).
#   test/bench/node_client.sh
#   BENCH_SECONDS (per run, default 4), BENCH_ROUNDS (default 3),
#   BENCH_WORKERS (default "1 8")
set -euo pipefail
cd "$(dirname "$0")/../.."
pg_config=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
if [ -z "${CAIO_BENCH_INSIDE:-}" ]; then
    test/setup.sh --no-build >/dev/null
    make -s PG_CONFIG="$pg_config" >/dev/null
    make -s PG_CONFIG="$pg_config" install >/dev/null
    test/clients/node_build.sh >/dev/null
    CAIO_BENCH_INSIDE=1 exec test/pgenv.sh "$pg_config" "$0" "$@"
fi
. test/common.sh
fresh_db caio_node_bench caio
cd clients/node
PGDATABASE=caio_node_bench node bench/lease_write.mjs
