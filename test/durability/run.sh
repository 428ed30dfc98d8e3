#!/usr/bin/env bash
# Every durability test, each on throwaway clusters of its own:
#   crash.sh on    SIGKILL mid-load, synchronous_commit on
#   crash.sh off   the same with synchronous_commit off
#   failover.sh    promote an asynchronous standby that missed the last commits
#   restore.sh     pg_dump / pg_restore into the same and into a new cluster
set -euo pipefail
here=$(dirname "$0")
for test in "crash.sh on" "crash.sh off" failover.sh restore.sh; do
    echo "== durability: $test"
    bash "$here"/$test
done
