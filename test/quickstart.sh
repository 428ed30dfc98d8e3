#!/usr/bin/env bash
# The README's quick start, run verbatim: every SQL block marked
# <!-- quickstart sql --> is run, in order, in one psql session in a fresh
# database on the server the PG* variables name (as its superuser), and
# what psql prints for each must be exactly the block marked
# <!-- quickstart output --> that follows it.  Errors are compared like any
# other output, so a statement that fails where the README shows none (or
# the other way round) fails the test.  psql names the input file and line
# before an error ("psql:FILE:LINE: ERROR: ..."), which a user typing into
# psql does not see: that prefix alone is removed before comparing.
#   test/quickstart.sh [README.md]
set -euo pipefail
cd "$(dirname "$0")/.."
. test/common.sh
readme=${1:-README.md}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Blocks: $work/N.sql and $work/N.out, N = 1, 2, ...; each marked SQL block
# must be followed by a marked output block.
perl -e '
    my ($readme, $dir) = @ARGV;
    open my $in, "<", $readme or die "$readme: $!\n";
    my ($want, $file, $n, $last) = ("", undef, 0, "out");
    while (my $line = <$in>) {
        if ($file) {
            if ($line =~ /^```\s*$/) { close $file; undef $file; next }
            print $file $line;
        } elsif ($line =~ /^<!-- quickstart (sql|output) -->\s*$/) {
            $want = $1;
            die "$readme:$.: two quick-start SQL blocks without an output block between them\n"
                if $want eq "sql" && $last eq "sql";
            die "$readme:$.: a quick-start output block without an SQL block before it\n"
                if $want eq "output" && $last eq "out";
        } elsif ($want && $line =~ /^```/) {
            $n++ if $want eq "sql";
            open $file, ">", "$dir/$n." . ($want eq "sql" ? "sql" : "out") or die "$!\n";
            $last = $want eq "sql" ? "sql" : "out";
            $want = "";
        }
    }
    die "$readme: no quick-start blocks (<!-- quickstart sql -->)\n" unless $n;
    die "$readme: the last quick-start SQL block has no output block\n" if $last eq "sql";
    print "$n\n";' "$readme" "$work" >"$work/count"
blocks=$(cat "$work/count")

: >"$work/input.sql"
for i in $(seq 1 "$blocks"); do
    cat "$work/$i.sql" >>"$work/input.sql"
    echo "\\echo '@@ end of quick-start block $i @@'" >>"$work/input.sql"
done

fresh_db caio_quickstart
LC_ALL=C psql -X -q -d caio_quickstart -f "$work/input.sql" >"$work/actual" 2>&1 || true
sed -i -E 's/^psql:[^:]*:[0-9]+: //' "$work/actual"

failed=0
start=1
for i in $(seq 1 "$blocks"); do
    end=$(grep -n -x "@@ end of quick-start block $i @@" "$work/actual" | cut -d: -f1 || true)
    if [ -z "$end" ]; then
        echo "quick start: psql stopped before the end of block $i:"
        sed -n "$start,\$p" "$work/actual"
        exit 1
    fi
    sed -n "$start,$((end - 1))p" "$work/actual" >"$work/$i.actual"
    if ! diff -u --label "README: output of quick-start block $i" --label "psql" \
            "$work/$i.out" "$work/$i.actual"; then
        failed=$((failed + 1))
    fi
    start=$((end + 1))
done
psql -X -q -d postgres -c "DROP DATABASE caio_quickstart"
if [ "$failed" -ne 0 ]; then
    echo "quick start: $failed of $blocks blocks printed other than $readme shows"
    exit 1
fi
echo "quick start: $blocks blocks of $readme ran, and printed what it shows"
