#!/usr/bin/env bash
# The test command.  On a fresh Debian 12 machine, as root: installs what
# caio needs, builds it with -Wall -Wextra -Werror, runs the static analysis
# (test/lint.sh), checks META.json against the PGXN Meta Spec and the
# control files (test/meta.sh, with our own checker of the spec,
# test/meta_spec.pl, and its self-test), and then, for each supported
# PostgreSQL version, builds and installs caio against it and runs every
# suite (test/suites.sh) in a throwaway cluster of that version:
#   15  Debian 12's own packages
#   17  Debian trixie's packages, 18 Debian sid's, assembled by
#       test/pgtree.sh (kept in /var/cache/caio/pg)
# each in a throwaway server of its own that test/pgenv.sh starts
# then a smoke run of the benchmark.  Prints a line per version with what
# passed (after a failed version's last lines and error lines, again), and
# fails if any version failed.
#   test/check.sh [VERSION...]      (default: 15 17 18)
set -euo pipefail
cd "$(dirname "$0")/.."
versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(15 17 18)

# gnuplot-nox is the benchmark's, whose smoke run ends the test command;
# the python3 packages are the Python client's suite's
# (test/clients/python.sh): installing them here keeps to one apt-get update.
test/setup.sh --no-build gnuplot-nox python3-psycopg python3-venv python3-pip python3-setuptools \
    python3-wheel python3-mypy
# Static analysis needs no server: it runs, and fails fast, before one starts.
test/lint.sh
# META.json: valid under the PGXN Meta Spec (test/meta_spec.pl, which must
# also reject broken copies of it), its versions the control files'.
test/meta.sh
# The throwaway clusters must not inherit a connection meant for another one.
unset PGHOST PGPORT PGUSER PGPASSWORD PGDATABASE PGSERVICE PGOPTIONS

results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT

# test_version MAJOR: build, install and run every suite on that version.
test_version() {
    local major=$1 pg_config
    if [ "$major" = 15 ]; then
        pg_config=/usr/lib/postgresql/15/bin/pg_config
    else
        pg_config=$(test/pgtree.sh "$major")
    fi
    echo "== PostgreSQL $major: building caio with -Wall -Wextra -Werror"
    make -s clean >/dev/null
    make -s PG_CONFIG="$pg_config" >/dev/null
    make -s PG_CONFIG="$pg_config" install >/dev/null
    echo "build (-Werror)" >>"$CAIO_PASSED"
    # A server of its own in a new temporary directory, for every version:
    # pg_virtualenv names its cluster "regress" whatever runs beside it,
    # and refuses to start when another pg_virtualenv has one.
    test/pgenv.sh "$pg_config" test/suites.sh
    "$pg_config" --version >"$results/$major.version"
}

failed=0
for major in "${versions[@]}"; do
    export CAIO_PASSED=$results/$major.passed
    : >"$CAIO_PASSED"
    start=$SECONDS
    echo "==== PostgreSQL $major"
    # In a subshell of its own, not an if's condition, so that set -e
    # still stops it at the first failure.
    set +e
    (set -e; test_version "$major") 2>&1 | tee "$results/$major.log"
    status=${PIPESTATUS[0]}
    set -e
    if [ "$status" -eq 0 ]; then status=passed; else status=FAILED; failed=$((failed + 1)); fi
    echo "$status $((SECONDS - start))" >"$results/$major.status"
done
unset CAIO_PASSED

# The build left in the checkout is the last version's: make the 15 one
# again for what comes after (the benchmark, the demo).
if [[ " ${versions[*]} " == *" 15 "* ]]; then
    make -s clean >/dev/null
    test/setup.sh >/dev/null
    # The benchmark command works from this checkout (every workload for 1 s,
    # a small churn, its table, CSV and chart); its numbers are not checked.
    echo "== benchmark smoke run (make bench-smoke; numbers not checked)"
    # A failure is reported after the summary, which must still come last.
    BENCH_SMOKE=1 BENCH_NO_BUILD=1 BENCH_RESULTS="$(mktemp -d)" test/bench/run.sh || bench_failed=1
fi

# A failed version's cause, once more just above the summary: a CI log that
# keeps only its end still shows why.
for major in "${versions[@]}"; do
    read -r status _ <"$results/$major.status"
    [ "$status" = FAILED ] || continue
    echo
    echo "==== PostgreSQL $major failed; the last lines it printed, then its last error lines"
    tail -n 8 "$results/$major.log"
    echo "..."
    grep -E 'ERROR|FATAL|PANIC|[Ff]ailed|FAIL|not ok|[Ee]rror:|No such' "$results/$major.log" | tail -n 6 || true
done

echo
echo "==== caio on each PostgreSQL version"
for major in "${versions[@]}"; do
    read -r status seconds <"$results/$major.status"
    version=$(cat "$results/$major.version" 2>/dev/null || echo "PostgreSQL $major")
    printf '%-8s %-45s %4ss  %s\n' "$status" "$version" "$seconds" \
        "$(paste -sd, "$results/$major.passed" | sed 's/,/, /g')"
done
echo "versions: $((${#versions[@]} - failed)) passed, $failed failed"
[ -z "${bench_failed:-}" ] || echo "the benchmark smoke run failed (its output is above the summary)"
[ "$failed" -eq 0 ] && [ -z "${bench_failed:-}" ]
