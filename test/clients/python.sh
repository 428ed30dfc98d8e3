#!/usr/bin/env bash
# The Python client's suite (clients/python, package caio over psycopg 3)
# against the server the PG* variables name (a superuser; caio installed):
# installs Debian's python3-psycopg and what a venv, pip and mypy need (through
# test/setup.sh: one apt-get update, only when something is missing;
# test/check.sh installs them with the rest), installs the package into a
# venv of Debian's /usr/bin/python3 made with --system-site-packages (so it
# sees python3-psycopg; the python3 first on PATH may be another one), from a
# copy of clients/python (nothing is written into the checkout), checks that
# its version is caio.control's, checks it
# with mypy --strict, and runs its tests (python3 -m unittest, through
# tests/run.py), which make databases of their own (caio_python_*) and run
# the Python programs of doc/payments.md and doc/clients.md as shown.
set -euo pipefail
cd "$(dirname "$0")/../.."
test/setup.sh --no-build python3-psycopg python3-venv python3-pip python3-setuptools python3-wheel python3-mypy

# The package is versioned with caio.
version=$(sed -n "s/^default_version *= *'\(.*\)'/\1/p" caio.control)
package_version=$(sed -n 's/^version = "\(.*\)"/\1/p' clients/python/pyproject.toml)
if [ "$package_version" != "$version" ]; then
    echo "clients/python/pyproject.toml: version $package_version, but caio.control's is $version" >&2
    exit 1
fi

work=$(mktemp -d /tmp/caio-python.XXXXXX)
trap 'rm -rf "$work"' EXIT
cp -r clients/python "$work/python"
mkdir "$work/doc"
cp doc/payments.md doc/clients.md "$work/doc"
chmod -R a+rX "$work"

echo "== Python client: a venv of /usr/bin/python3 with Debian's psycopg, the package installed offline"
# Debian's pip installs into the venv (--python): quicker than a pip of the
# venv's own (ensurepip).
/usr/bin/python3 -m venv --without-pip --system-site-packages "$work/venv"
/usr/bin/python3 -m pip --python "$work/venv/bin/python" install -q --no-index --no-build-isolation \
    "$work/python" >"$work/pip.log" 2>&1 || { cat "$work/pip.log"; exit 1; }

# Never from the checkout's root, where caio.so would be imported as "caio".
cd "$work"
export PYTHONDONTWRITEBYTECODE=1
imported=$("$work/venv/bin/python" -c 'import caio; print(caio.__version__)')
if [ "$imported" != "$version" ]; then
    echo "caio.__version__ is $imported, but caio.control's version is $version" >&2
    exit 1
fi
echo "== Python client: mypy --strict (package, tests, bench.py)"
"$work/venv/bin/python" -m mypy --strict --cache-dir "$work/mypy-cache" \
    python/src/caio python/tests python/bench.py
echo "== Python client: tests against the server"
CAIO_DOCS=$work/doc "$work/venv/bin/python" python/tests/run.py
