#!/usr/bin/env bash
# PostgreSQL NN (17 or 18) for the test command on Debian 12, which ships only
# 15.  Prints the path of the assembled tree's pg_config.
#   test/pgtree.sh NN
#
# The server, client, headers and pgTAP of that version, and the shared
# libraries they need, come from one newer Debian suite (headers and server
# must be the same minor release), fetched with apt-get download through an
# apt configuration of its own (the machine's apt state is not touched) and
# unpacked with dpkg-deb -x into $CAIO_PG_CACHE/NN.  Nothing is installed.
# Those binaries want their suite's glibc, so each one is replaced by a small
# script that starts it through the tree's own dynamic loader with the
# tree's libraries; a relocated pg_config then reports the tree's paths, and
# `make PG_CONFIG=...` builds and installs into it.  The tree is kept, with
# the versions of its packages in VERSIONS, and reused by later runs; remove
# the directory to fetch again.  Run as root (as the test command is).
set -euo pipefail

major=${1:?usage: test/pgtree.sh MAJOR}
case $major in
    17) suite=trixie ;;
    18) suite=sid ;;
    *) echo "pgtree: no Debian suite for PostgreSQL $major here" >&2; exit 2 ;;
esac
cache=${CAIO_PG_CACHE:-/var/cache/caio/pg}
tree=$cache/$major
bindir=$tree/usr/lib/postgresql/$major/bin

if [ -f "$tree/VERSIONS" ]; then
    echo "$bindir/pg_config"
    exit 0
fi

arch=$(dpkg --print-architecture)
# The machine's own Debian mirror, as its apt sources name it.
mirror=$(apt-get indextargets --format '$(REPO_URI)' 'Created-By: Packages' 2>/dev/null |
         grep -v -- '-security' | grep -m1 '/debian' || true)
if [ -z "$mirror" ]; then
    # Before the machine's first apt-get update: its sources, in either format.
    mirror=$( (sed -n 's/^URIs: *\([^ ]*\).*/\1/p' /etc/apt/sources.list.d/*.sources
               sed -n 's/^deb \(\[[^]]*\] \)\?\([^ ]*\) .*/\2/p' /etc/apt/sources.list \
                   /etc/apt/sources.list.d/*.list) 2>/dev/null |
             grep -v -- '-security' | grep -m1 '/debian' || true)
fi
[ -n "$mirror" ] || { echo "pgtree: no Debian mirror in this machine's apt sources" >&2; exit 1; }
mirror=${mirror%/}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/debs" "$work/sources.d"
: >"$work/status"
cat >"$work/sources.d/$suite.sources" <<SOURCES
Types: deb
URIs: $mirror
Suites: $suite
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
apt_private=(-o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts="$work/sources.d"
             -o Dir::State::Lists="$work/lists" -o Dir::State::status="$work/status"
             -o Dir::Cache="$work/cache" -o APT::Architecture="$arch"
             -o Debug::NoLocking=1 -o APT::Sandbox::User=root)

echo "== PostgreSQL $major: fetching Debian $suite's packages into $tree" >&2
apt-get "${apt_private[@]}" -qq update >&2

# The server and client, and the shared libraries they need, followed
# transitively; of the rest (postgresql-common, perl, debconf, ...) the tree
# needs nothing, nor LLVM (JIT only; the servers run with jit = off).  The
# headers, PGXS and pgTAP are taken without their dependencies (a compiler
# and its libraries, which this machine has).
runtime="postgresql-$major postgresql-client-$major libpq5"
packages=$(apt-cache "${apt_private[@]}" depends --recurse --no-recommends --no-suggests \
               --no-conflicts --no-breaks --no-replaces --no-enhances $runtime |
           grep -v '^ ' | grep -v '^<' | sort -u |
           grep -E "^(lib|postgresql-(client-)?$major\$)" |
           grep -vE '^(libllvm|libz3|libclang|libpam-|libc-bin|libperl|libdebconf|libtext-|liblocale-|libfile-|libio-|libjson-|libtimedate|libdpkg|libipc-)')
packages="$packages postgresql-server-dev-$major libpq-dev postgresql-$major-pgtap"
(cd "$work/debs" && apt-get "${apt_private[@]}" -qq download $packages >&2)

rm -rf "$tree.new"
mkdir -p "$tree.new"
for deb in "$work"/debs/*.deb; do dpkg-deb -x "$deb" "$tree.new"; done

loader=$(find "$tree.new" -name 'ld-linux-*.so.*' \( -type f -o -type l \) | grep -m1 /usr/lib/ ||
         find "$tree.new" -name 'ld-linux-*.so.*' | head -1)
[ -n "$loader" ] || { echo "pgtree: no dynamic loader among the packages" >&2; exit 1; }
multiarch=$(basename "$(dirname "$loader")")
libs="$tree/usr/lib/$multiarch:$tree/lib/$multiarch"
loader=$tree${loader#"$tree.new"}

# Every ELF program of the version: the server and its tools, pg_regress,
# pg_isolation_regress and isolationtester.  Each becomes NAME.bin beside a
# script NAME that runs it through the tree's loader, under its own name so
# that it finds the tree's share/ and lib/ from where it stands.
pgdir=$tree.new/usr/lib/postgresql/$major
find "$pgdir/bin" "$pgdir/lib/pgxs/src/test" -type f -perm -u+x | while read -r program; do
    head -c 4 "$program" | grep -q 'ELF' || continue
    mv "$program" "$program.bin"
    real=$tree${program#"$tree.new"}
    cat >"$program" <<WRAPPER
#!/bin/sh
exec "$loader" --library-path "$libs" --argv0 "$real" "$real.bin" "\$@"
WRAPPER
    chmod 755 "$program"
done

# PGXS as this machine's gcc 12 can use it: no bitcode for the JIT (no clang
# here; the servers run with jit = off), and no warning flags gcc 12 lacks.
global=$pgdir/lib/pgxs/src/Makefile.global
sed -i -e 's/^with_llvm[[:space:]]*=.*/with_llvm = no/' \
       -e 's/ -Wmissing-variable-declarations//g' "$global"

(cd "$work/debs" && ls *.deb) | sed 's/\.deb$//' >"$tree.new/VERSIONS"
chmod -R a+rX "$tree.new"
rm -rf "$tree"
mv "$tree.new" "$tree"
echo "== PostgreSQL $major: $(grep -c . "$tree/VERSIONS") packages, $(du -sh "$tree" | cut -f1)" >&2
echo "$bindir/pg_config"
