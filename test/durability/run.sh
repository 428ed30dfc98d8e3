#!/usr/bin/env bash
# Every durability test, each on throwaway clusters of its own:
#   crash.sh on    SIGKILL mid-load, synchronous_commit on
#   crash.sh off   the same with synchronous_commit off
#   crash.sh off preload
#                  the same with caio in shared_preload_libraries, where a
#                  token's WAL is flushed lazily (src/token_flush.c)
#   crash.sh off preload walwriter
#                  the WAL writer stopped, 6000 tokens whose WAL a crash then
#                  takes back, a restart in the same postmaster
#   crash.sh off nonces
#                  the WAL writer stopped, 20 reservations that only caio's
#                  flush of their commits brings to disk before the crash
#   failover.sh    promote an asynchronous standby that missed the last commits
#   failover.sh preload   the same with caio in shared_preload_libraries
#   restore.sh     pg_dump / pg_restore into the same and into a new cluster
set -euo pipefail
here=$(dirname "$0")
for test in "crash.sh on" "crash.sh off" "crash.sh off preload" \
            "crash.sh off preload walwriter" "crash.sh off nonces" failover.sh "failover.sh preload" restore.sh; do
    echo "== durability: $test"
    bash "$here"/$test
done
