#!/usr/bin/env bash
# Readies caio's Node client (clients/node) for its tests and the benchmark:
# node and npm (Debian's nodejs and npm through test/setup.sh, the one
# apt-get update, when either is missing), the npm packages of its
# package-lock.json (pg, typescript, @types/node, @types/pg) installed with
# npm ci from the npm registry, cached in NPM_CACHE (default
# /var/cache/caio/npm, so that later runs need the registry no more), and
# the TypeScript compiled: dist/esm and dist/cjs (the package), dist/test.
#   test/clients/node_build.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    test/setup.sh --no-build nodejs npm
fi
major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 18 ]; then
    echo "caio's Node client needs Node 18 or later (Node 20 is what it is written for); this is $(node --version)" >&2
    exit 1
fi
cache=${NPM_CACHE:-/var/cache/caio/npm}
mkdir -p "$cache"
cd clients/node
echo "== Node client: node $(node --version), npm $(npm --version), npm ci (cache $cache)"
npm ci --cache "$cache" --prefer-offline --no-audit --no-fund --loglevel=error >/dev/null
rm -rf dist
node_modules/.bin/tsc -p tsconfig.json
node_modules/.bin/tsc -p tsconfig.cjs.json
node scripts/cjs-package.mjs
node_modules/.bin/tsc -p tsconfig.test.json
