#!/usr/bin/env bash
# META.json against the PGXN Meta Spec, with PGXN's own validator
# (PGXN::Meta::Validator, vendored in test/vendor; it needs Debian's
# libsemver-perl and libjson-perl, which test/setup.sh installs), and its
# versions against the control files: the distribution and caio carry
# caio.control's default_version, caio_tap tap/caio_tap.control's.
#   test/meta.sh [META.json]
set -euo pipefail
cd "$(dirname "$0")/.."
meta=${1:-META.json}

perl -Itest/vendor -MPGXN::Meta::Validator -e '
    my $v = PGXN::Meta::Validator->load_file($ARGV[0]);
    if ($v->is_valid) { print "$ARGV[0]: valid under the PGXN Meta Spec\n"; exit 0 }
    print STDERR "$ARGV[0] is invalid under the PGXN Meta Spec:\n  ",
        join("\n  ", $v->errors), "\n";
    exit 1' "$meta"

control_version() { sed -n "s/^default_version *= *'\(.*\)'/\1/p" "$1"; }
caio=$(control_version caio.control)
tap=$(control_version tap/caio_tap.control)
perl -MJSON -e '
    local $/; open my $f, "<", $ARGV[0] or die "$ARGV[0]: $!\n";
    my $m = decode_json(<$f>);
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
