#!/usr/bin/env bash
# shellcheck disable=SC2016 # the variants' changes below are Perl, kept from the shell
# META.json against the PGXN Meta Spec 1.0.0, with our own checker
# (test/meta_spec.pl, written from the spec's text; Perl and its core JSON::PP
# only); then the checker itself, on broken copies of META.json made here,
# each of which it must reject with the message expected (and on a few
# valid ones, which it must accept); then META.json's versions against the
# control files: the distribution and caio carry caio.control's
# default_version, caio_tap tap/caio_tap.control's, and the files that
# provides names exist.
#   test/meta.sh [META.json]
set -euo pipefail
cd "$(dirname "$0")/.."
meta=${1:-META.json}

perl test/meta_spec.pl "$meta"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# variant EXPECTED CHANGE: META.json changed by CHANGE (Perl, on $m), which
# the checker must reject with a line holding EXPECTED, or, with EXPECTED
# "valid", accept.
variant() {
    local expected=$1 change=$2 out status=0
    perl -MJSON::PP -e '
        local $/; my $m = JSON::PP->new->decode(<STDIN>);
        eval "$ARGV[0]; 1" or die $@;
        print JSON::PP->new->pretty->canonical->encode($m)' "$change" <"$meta" >"$tmp/META.json"
    out=$(perl test/meta_spec.pl "$tmp/META.json" 2>&1) || status=$?
    if [ "$expected" = valid ]; then
        if [ "$status" -eq 0 ]; then echo "  accepted, as it must be: $change"; return; fi
        echo "the checker rejects a valid META.json ($change):" >&2
    elif [ "$status" -eq 1 ] && grep -qF -- "$expected" <<<"$out"; then
        echo "  rejected, as it must be: $change"
        grep -F -- "$expected" <<<"$out" | sed 's/^ */      /'
        return
    else
        echo "the checker does not reject $change with \"$expected\" (exit $status):" >&2
    fi
    printf '%s\n' "$out" | sed 's/^/    /' >&2
    exit 1
}
echo "the checker on variants of $meta:"
variant "version: required key is missing" 'delete $m->{version}'
variant "version: '0.6' is not a semantic version" '$m->{version} = "0.6"'
variant "provides.caio.version: '1.0.0.1' is not a semantic version" '$m->{provides}{caio}{version} = "1.0.0.1"'
variant "license: 'gpl' is not one of the spec's License Strings" '$m->{license} = "gpl"'
variant "(top level): unknown key 'homepage'" '$m->{homepage} = "https://example.com/"'
variant "provides.caio.file: required key is missing" 'delete $m->{provides}{caio}{file}'
variant "prereqs.runtime.requires.PostgreSQL: '>= 15' is not a version range" \
    '$m->{prereqs}{runtime}{requires}{PostgreSQL} = ">= 15"'
variant "prereqs: unknown key 'install'" '$m->{prereqs}{install} = {requires => {pgtap => 0}}'
variant "meta-spec.version: '2.0.0' is not 1.0.0" '$m->{"meta-spec"}{version} = "2.0.0"'
variant "name: 'ca io' holds a slash, backslash, control or space character" '$m->{name} = "ca io"'
variant "tags[0]: 'a/b' holds a slash" '$m->{tags} = ["a/b"]'
variant "maintainer: must be a list, not a map" '$m->{maintainer} = {name => "caio developers"}'
variant valid '$m->{x_notes} = {anything => 1}; $m->{provides}{caio}{X_more} = 1'
variant valid '$m->{license} = {PostgreSQL => "https://www.postgresql.org/about/licence"}'
variant valid '$m->{maintainer} = "caio developers"; $m->{prereqs}{test}{requires}{pgtap} = 0'

control_version() { sed -n "s/^default_version *= *'\(.*\)'/\1/p" "$1"; }
caio=$(control_version caio.control)
tap=$(control_version tap/caio_tap.control)
perl -MJSON::PP -e '
    local $/; open my $f, "<", $ARGV[0] or die "$ARGV[0]: $!\n";
    my $m = JSON::PP->new->utf8->decode(<$f>);
    my ($caio, $tap) = @ARGV[1, 2];
    my @bad;
    push @bad, "version is $m->{version}, caio.control says $caio"
        if $m->{version} ne $caio;
    push @bad, "provides.caio.version is $m->{provides}{caio}{version}, caio.control says $caio"
        if $m->{provides}{caio}{version} ne $caio;
    push @bad, "provides.caio_tap.version is $m->{provides}{caio_tap}{version}, tap/caio_tap.control says $tap"
        if $m->{provides}{caio_tap}{version} ne $tap;
    for my $ext (sort keys %{ $m->{provides} }) {
        for my $key (qw(file docfile)) {
            my $path = $m->{provides}{$ext}{$key};
            push @bad, "provides.$ext.$key names $path, which does not exist"
                if defined $path && !-e $path;
        }
    }
    if (@bad) { print STDERR "$ARGV[0] does not match the repository:\n  ", join("\n  ", @bad), "\n"; exit 1 }
    print "$ARGV[0]: versions match the control files ($caio, caio_tap $tap)\n";' \
    "$meta" "$caio" "$tap"
