#!/usr/bin/env bash
# The Node client's suite (clients/node/test, node's own test runner) on the
# server the PG* variables name, as its superuser: each test file makes a
# database of its own with caio in it.  test/suites.sh runs it inside
# test/pgenv.sh's server, with caio installed; by hand:
#   test/pgenv.sh /usr/lib/postgresql/15/bin/pg_config test/clients/node.sh
# Readies node, the npm packages and the build first (test/clients/node_build.sh).
# The examples of doc/payments.md and doc/clients.md are run too
# (doc_examples.test.mjs), and their printed output compared.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
"$here/node_build.sh"
cd "$here/../../clients/node"
# The tests run as whoever runs this (root in the test command) and reach the
# server through its socket, as the PG* variables say; the checkout may be
# unreadable to the server's own user, which needs none of it.
export PGDATABASE=${PGDATABASE:-postgres}
concurrency=()
if node --help | grep -q -- --test-concurrency; then concurrency=(--test-concurrency=1); fi
echo "== Node client: node --test"
node --test "${concurrency[@]}" test/*.test.mjs test/*.test.cjs dist/test/*.test.js
