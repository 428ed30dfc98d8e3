#!/usr/bin/perl
# A META.json against the PGXN Meta Spec 1.0.0 (https://pgxn.org/meta/spec.txt),
# written from the spec's text: what it says a META.json must hold, each
# field's type, and its formats (Term, Tag, Version, Version Range, URI,
# License String, relative unix paths).  Prints every violation, one a line,
# as "path: what is wrong", and exits 1 if there is any.
#   test/meta_spec.pl META.json
# Perl's core JSON::PP only: it keeps a JSON string apart from a number.
use v5.36;
use B ();
use JSON::PP ();

my $file = shift // die "usage: $0 META.json\n";
my @errors;
sub error ($path, $message) { push @errors, "$path: $message"; return 0 }

# A decoded JSON value's type: map, list, string, number, boolean or null.
# It is asked of each value before anything else uses it: using a string
# as a number would make it look like one.
sub kind ($v) {
    return 'null' unless defined $v;
    return { HASH => 'map', ARRAY => 'list' }->{ ref $v } // 'boolean' if ref $v;
    return B::svref_2object(\$v)->FLAGS & (B::SVp_IOK | B::SVp_NOK) ? 'number' : 'string';
}

# Each check takes a value and its path, reports what is wrong with it, and
# returns false if the value is not of its type.
sub string ($v, $path) {    # String: a non-zero length sequence of characters
    my $k = kind($v);
    return error($path, "must be a string, not a $k") if $k ne 'string';
    return error($path, 'must not be empty') if $v eq '';
    return 1;
}
sub term ($v, $path) {      # Term: 2 characters or more, no / \ control or space
    return 0 unless string($v, $path);
    return error($path, "'$v' is shorter than 2 characters, as a Term must not be") if length $v < 2;
    return error($path, "'$v' holds a slash, backslash, control or space character, which a Term must not hold")
        if $v =~ m{[/\\\p{Cc}\s]};
    return 1;
}
sub tag ($v, $path) {       # Tag: fewer than 256 characters, no / \ or control
    return 0 unless string($v, $path);
    return error($path, 'is 256 characters or longer, as a Tag must not be') if length $v >= 256;
    return error($path, "'$v' holds a slash, backslash or control character, which a Tag must not hold")
        if $v =~ m{[/\\\p{Cc}]};
    return 1;
}
# Version: a Semantic Versioning 2.0.0 version, MAJOR.MINOR.PATCH with no
# leading zeros, then optionally -PRERELEASE and +BUILD.
my $number = qr/(?:0|[1-9][0-9]*)/;
my $prerelease = qr/(?:$number|[0-9]*[A-Za-z-][0-9A-Za-z-]*)/;
my $semver = qr/$number\.$number\.$number(?:-$prerelease(?:\.$prerelease)*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?/;
sub version ($v, $path) {
    return 0 unless string($v, $path);
    return error($path, "'$v' is not a semantic version (MAJOR.MINOR.PATCH, as 1.0.0)")
        if $v !~ /\A$semver\z/;
    return 1;
}
# Version Range: 0 (any version), or a version, or comma-separated versions
# each after one of < <= > >= == !=.
sub version_range ($v, $path) {
    my $k = kind($v);
    return 1 if $k eq 'number' && $v eq '0';
    return error($path, "must be a version range string or 0, not the number $v") if $k eq 'number';
    return 0 unless string($v, $path);
    return 1 if $v =~ /\A\s*0\s*\z/;
    for my $clause (split /,/, $v, -1) {
        next if $clause =~ /\A\s*(?:(?:[<>]=?|==|!=)\s*)?$semver\s*\z/;
        return error($path, "'$v' is not a version range" . ($clause eq $v ? '' : " (its part '$clause')")
            . ': 0, or semantic versions each after one of < <= > >= == != or none, joined by commas');
    }
    return 1;
}
sub uri ($v, $path) {       # URI: a scheme, a colon, and no space
    return 0 unless string($v, $path);
    return error($path, "'$v' is not a URI") if $v !~ /\A[A-Za-z][A-Za-z0-9+.-]*:\S+\z/;
    return 1;
}
sub unix_path ($v, $path) { # a relative path, with unix conventions
    return 0 unless string($v, $path);
    return error($path, "'$v' is not a relative unix path (it must not begin with / or a drive, nor hold a backslash)")
        if $v =~ m{\A/|\A[A-Za-z]:|\\};
    return 1;
}
# List: a String is taken as a List of one, as the spec tells consumers to.
sub list ($v, $path, $element, $min = 0) {
    my $k = kind($v);
    return $element->($v, $path) if $k eq 'string';
    return error($path, "must be a list, not a $k") if $k ne 'list';
    return error($path, "must hold at least $min element" . ($min > 1 ? 's' : '')) if @$v < $min;
    $element->($v->[$_], "${path}[$_]") for 0 .. $#$v;
    return 1;
}
# Map: its keys are non-empty strings; given the spec's keys for it, any
# other must be a custom key, beginning with x_ or X_ (whose value is free).
sub map_of ($v, $path, $known = undef) {
    my $k = kind($v);
    return error($path, "must be a map, not a $k") if $k ne 'map';
    error($path, 'holds an empty key') if exists $v->{''};
    for my $key (sort keys %$v) {
        next if !$known || $known->{$key} || $key =~ /\Ax_/i || $key eq '';
        error($path, "unknown key '$key' (the spec's are " . join(', ', sort keys %$known)
            . '; custom keys must begin with x_ or X_)');
    }
    return 1;
}
sub known (@keys) { return { map { $_ => 1 } @keys } }

# Each key of a map the spec describes, with its check and whether it is
# required.
sub fields ($v, $path, %fields) {
    my $prefix = $path eq '' ? '' : "$path.";
    return 0 unless map_of($v, $path eq '' ? '(top level)' : $path, known(keys %fields));
    for my $key (sort keys %fields) {
        my ($required, $check) = @{ $fields{$key} };
        if (exists $v->{$key}) { $check->($v->{$key}, "$prefix$key") }
        elsif ($required)      { error("$prefix$key", 'required key is missing') }
    }
    return 1;
}
sub required ($check) { return [1, $check] }
sub optional ($check) { return [0, $check] }

my @licenses = qw(agpl_3 apache_1_1 apache_2_0 artistic_1 artistic_2 bsd freebsd
    gfdl_1_2 gfdl_1_3 gpl_1 gpl_2 gpl_3 lgpl_2_1 lgpl_3_0 mit mozilla_1_0
    mozilla_1_1 openssl perl_5 postgresql qpl_1_0 ssleay sun zlib
    open_source restricted unrestricted unknown);
my %license = map { $_ => 1 } @licenses;
sub license_string ($v, $path) {
    return 0 unless string($v, $path);
    return error($path, "'$v' is not one of the spec's License Strings (" . join(' ', @licenses) . ')')
        unless $license{$v};
    return 1;
}
# license: one or more License Strings, or a map of license names to URIs.
sub license ($v, $path) {
    return list($v, $path, \&license_string, 1) if kind($v) ne 'map';
    map_of($v, $path);
    error($path, 'must name at least one license') unless %$v;
    uri($v->{$_}, "$path.$_") for sort keys %$v;
}
# provides: extension names (Terms) to a file, a version, and optionally an
# abstract and a docfile.
sub provides ($v, $path) {
    return unless map_of($v, $path);
    for my $extension (sort keys %$v) {
        term($extension, "$path key '$extension'");
        fields($v->{$extension}, "$path.$extension",
            file => required(\&unix_path), version => required(\&version),
            abstract => optional(\&string), docfile => optional(\&unix_path));
    }
}
# prereqs: phases, to relationships, to extension names and version ranges.
sub prereqs ($v, $path) {
    my %relationships = map { $_ => optional(\&prereq_set) } qw(requires recommends suggests conflicts);
    fields($v, $path, map { $_ => optional(sub ($w, $p) { fields($w, $p, %relationships) }) }
        qw(configure build test runtime develop));
}
sub prereq_set ($v, $path) {
    return unless map_of($v, $path);
    version_range($v->{$_}, "$path.$_") for sort keys %$v;
}
sub release_status ($v, $path) {
    return unless string($v, $path);
    error($path, "'$v' is none of stable, testing, unstable") if $v !~ /\A(?:stable|testing|unstable)\z/;
}
sub resources ($v, $path) {
    fields($v, $path,
        homepage => optional(\&uri),
        bugtracker => optional(sub ($w, $p) {
            fields($w, $p, web => optional(\&uri), mailto => optional(\&email)) }),
        repository => optional(sub ($w, $p) {
            fields($w, $p, url => optional(\&uri), web => optional(\&uri), type => optional(\&vcs_type)) }));
}
sub email ($v, $path) {
    return unless string($v, $path);
    error($path, "'$v' is not an email address") if $v !~ /\A[^\s@]+@[^\s@]+\z/;
}
sub vcs_type ($v, $path) {
    return unless string($v, $path);
    error($path, "'$v' is not lowercase") if $v ne lc $v;
}

# meta-spec: a version, 1.0.0 (the one this checks), and a URI.
sub meta_spec ($v, $path) {
    return unless fields($v, $path, version => required(\&string), url => optional(\&uri));
    my $version = $v->{version} // return;
    error("$path.version", "'$version' is not 1.0.0, the version of the spec this checks against")
        if kind($version) eq 'string' && $version ne '' && $version ne '1.0.0';
}

open my $fh, '<:raw', $file or die "$file: $!\n";
my $meta = eval { JSON::PP->new->utf8->decode(do { local $/; <$fh> }) };
if (!defined $meta && $@) { (my $e = $@) =~ s/\s+at \S+ line \d+\.\s*\z//; error('(file)', "not valid JSON in UTF-8: $e") }
elsif (kind($meta) ne 'map') { error('(top level)', 'must be a map, not a ' . kind($meta)) }
else {
    # meta-spec first: the spec tells a consumer to stop there if it does
    # not know the version.
    if (exists $meta->{'meta-spec'}) { meta_spec($meta->{'meta-spec'}, 'meta-spec') }
    else                             { error('meta-spec', 'required key is missing') }
    fields($meta, '',
        abstract => required(\&string),
        maintainer => required(sub ($v, $p) { list($v, $p, \&string, 1) }),
        license => required(\&license),
        provides => required(\&provides),
        'meta-spec' => optional(sub { 1 }),    # checked above
        name => required(\&term),
        version => required(\&version),
        description => optional(\&string),
        generated_by => optional(\&string),
        tags => optional(sub ($v, $p) { list($v, $p, \&tag) }),
        no_index => optional(sub ($v, $p) {
            fields($v, $p, map { $_ => optional(sub ($w, $q) { list($w, $q, \&unix_path) }) } qw(file directory)) }),
        prereqs => optional(\&prereqs),
        release_status => optional(\&release_status),
        resources => optional(\&resources))
        unless @errors;
}

if (@errors) {
    print STDERR "$file is invalid under the PGXN Meta Spec 1.0.0:\n", map { "  $_\n" } @errors;
    exit 1;
}
print "$file: valid under the PGXN Meta Spec 1.0.0\n";
