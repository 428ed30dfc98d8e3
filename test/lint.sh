#!/usr/bin/env bash
# Static analysis of caio's C: cppcheck and clang-tidy on src/*.c, compiled
# against PostgreSQL's server headers as the Makefile compiles them.  Exits
# non-zero on any finding.  Configuration: .clang-tidy (the checks, each one
# turned off with its reason) and test/cppcheck-suppressions.xml; a single
# false positive is suppressed inline (see CONTRIBUTING.md, "Tests").
#
# Installs nothing, except that as root it apt-get installs cppcheck and
# clang-tidy if either is missing (not in test/setup.sh, which the demo and
# the benchmark share and which need neither).  PG_CONFIG picks the
# PostgreSQL (default: 15's, else pg_config on PATH).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${PG_CONFIG:-}" ]; then
    PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config
    [ -x "$PG_CONFIG" ] || PG_CONFIG=pg_config
fi

if ! command -v cppcheck >/dev/null || ! command -v clang-tidy >/dev/null; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "lint: cppcheck and clang-tidy are needed (apt-get install cppcheck clang-tidy)" >&2
        exit 1
    fi
    echo "== installing: cppcheck clang-tidy"
    # test/setup.sh updates apt's lists only when it installs something.
    apt-cache show cppcheck clang-tidy >/dev/null 2>&1 || apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        cppcheck clang-tidy >/dev/null
fi

server_include=$("$PG_CONFIG" --includedir-server)
version=$(sed -n "s/^default_version *= *'\(.*\)'/\1/p" caio.control)

# The compile flags of the Makefile (PGXS): CAIO_VERSION, and PostgreSQL's
# own -D and -I flags.  Left out: _FORTIFY_SOURCE, which wants an optimising
# build and only swaps in glibc's checked wrappers.  No -std: the build uses
# the compiler's default (gnu17), as clang-tidy does.
cflags=(-DCAIO_VERSION="\"$version\"" -I. -I./src)
for flag in $("$PG_CONFIG" --cppflags); do
    case $flag in
        -D_FORTIFY_SOURCE*) ;;
        -D*|-I*) cflags+=("$flag") ;;
    esac
done

# cppcheck does not know the compiler, and PostgreSQL's headers choose their
# code by its predefined macros (s_lock.h stops with #error without them):
# pass those of the compiler PostgreSQL was built with.
cc=$("$PG_CONFIG" --cc | cut -d' ' -f1)
cppcheck_defines=()
while read -r _ name value; do
    cppcheck_defines+=("-D$name=$value")
done < <("$cc" -dM -E -x c /dev/null |
         grep -E '^#define (__GNUC__|__GNUC_MINOR__|__x86_64__|__i386__|__aarch64__|__arm__|__powerpc64__|__powerpc__|__s390x__|__riscv|__loongarch64|__mips__|__linux__|__FreeBSD__|__APPLE__) ')

sources=(src/*.c)
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

run_cppcheck() {
    # One process per file: cppcheck 2.10 drops symbolName suppressions
    # under -j.  Findings in PostgreSQL's headers are not ours.
    cppcheck -q --std=c11 --error-exitcode=1 --inline-suppr \
        --enable=warning,style,performance,portability \
        --suppress-xml=test/cppcheck-suppressions.xml \
        --suppress="*:$server_include/*" \
        --template='{file}:{line}:{column}: {severity}: {message} [{id}]\n{code}' \
        "${cppcheck_defines[@]}" "${cflags[@]}" -I"$server_include" "$1"
}

# PostgreSQL's headers are system headers, as in the Makefile: clang-tidy
# then reports what is written in caio's files, not what PostgreSQL's macros
# (DatumGetPointer, ALLOCSET_SMALL_SIZES) expand to inside them.
run_clang_tidy() {
    clang-tidy --quiet "$1" -- "${cflags[@]}" -isystem "$server_include"
}

# Both tools on every file, as many jobs at a time as there are cores.
echo "== lint: cppcheck and clang-tidy on ${sources[*]}"
max_jobs=$(nproc 2>/dev/null || echo 2)
for source in "${sources[@]}"; do
    for tool in cppcheck clang_tidy; do
        while [ "$(jobs -rp | wc -l)" -ge "$max_jobs" ]; do wait -n || true; done
        log="$logs/$(basename "$source").$tool"
        ( "run_$tool" "$source" >"$log" 2>&1 || echo $? >"$log.failed" ) &
    done
done
wait

failed=0
for source in "${sources[@]}"; do
    for tool in cppcheck clang_tidy; do
        log="$logs/$(basename "$source").$tool"
        # A failure, or a finding that a changed setting let through.
        if [ -e "$log.failed" ] || grep -qE ': (warning|error|style|performance|portability|information):' "$log"; then
            failed=1
            echo "-- ${tool/_/-} $source:"
            # clang-tidy's count lines say nothing the findings do not.
            grep -vE '^[0-9]+ warnings? (generated|treated as errors?)\.$' "$log" || true
        fi
    done
done
if [ "$failed" -ne 0 ]; then
    echo "== lint: findings above (suppressing a false positive: CONTRIBUTING.md, \"Tests\")" >&2
    exit 1
fi
echo "== lint: clean"
