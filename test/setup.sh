#!/usr/bin/env bash
# Prepares a Debian machine for caio and builds it: installs the packages it
# needs (apt-get update once, only when something is missing), builds with
# -Wall -Wextra -Werror, and installs the extension into PostgreSQL 15.
# Run as root, or as a user who may sudo.
#   test/setup.sh [--no-build] [package ...]
# Extra Debian packages named on the command line are installed with caio's
# own, by the same single apt-get update (the benchmark adds gnuplot-nox).
# --no-build installs the packages only and leaves the installed caio as it is.
set -euo pipefail
cd "$(dirname "$0")/.."

build=1
if [ "${1:-}" = "--no-build" ]; then build=0; shift; fi

PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config
PACKAGES="make gcc postgresql-15 postgresql-server-dev-15 postgresql-15-pgtap
          libtap-parser-sourcehandler-pgtap-perl libdbd-pg-perl pgbouncer
          postgresql-15-auto-failover libipc-run-perl $*"

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

missing=""
for package in $PACKAGES; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" \
        || missing="$missing $package"
done
if [ -n "$missing" ]; then
    echo "== installing:$missing"
    echo "   (apt-get update, then the packages and what they need: a few minutes on a fresh machine)"
    as_root apt-get update -qq
    # One line per package as it is set up, so that a long install shows
    # that it is moving.
    as_root env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -q --no-install-recommends $missing |
        sed -un 's/^Setting up \([^ ]*\).*/   set up \1/p'
fi

[ "$build" -eq 1 ] || exit 0
echo "== building caio for PostgreSQL 15 (-Wall -Wextra -Werror)"
make -s PG_CONFIG="$PG_CONFIG"
echo "== installing caio into PostgreSQL 15"
as_root make -s PG_CONFIG="$PG_CONFIG" install >/dev/null
