#!/usr/bin/perl
# One client of the durability tests.  In a loop: acquire a lease (its own
# transaction); unless KIND is "lease", write a row of the protected table
# under it and reserve a nonce, in one transaction; release.  Prints what
# the server confirmed, once it confirmed it:
#   PHASE lease TOKEN \N NAME        caio_acquire returned TOKEN
#   PHASE commit TOKEN NONCE NAME    the write under TOKEN with NONCE committed
# where NAME is the lease's holder, and its resource is 'dur:' || NAME.
# Stops after SECONDS.  When LOSE is 1 the server is meant to go away under
# it, and losing it ends the client quietly; any other error fails it.
#   client.pl SOCKET_DIR DB PHASE WORKER SECONDS KIND LOSE
use strict;
use warnings;
use DBI;

my ($socket_dir, $db, $phase, $worker, $seconds, $kind, $lose) = @ARGV;
my $address = '0xde709f2102306220921060314715629080e2fb77';
my $name = "${phase}w$worker";
my $resource = "dur:$name";
$| = 1;

sub write_under_lease {
    my ($dbh, $token) = @_;
    $dbh->begin_work;
    $dbh->selectrow_array("SELECT caio_use(caio_lease_of(?))", undef, $resource);
    my ($nonce) = $dbh->selectrow_array(
        "INSERT INTO ledger (worker, nonce) VALUES (?, caio_nonce_reserve(1, ?)) RETURNING nonce",
        undef, $name, $address);
    $dbh->commit;
    print "$phase commit $token $nonce $name\n";
}

my $dbh;
my $end = time + $seconds;
eval {
    $dbh = DBI->connect("dbi:Pg:dbname=$db;host=$socket_dir;port=5432", 'postgres', '',
                        { AutoCommit => 1, RaiseError => 1, PrintError => 0 });
    while (time < $end) {
        my ($token) = $dbh->selectrow_array(
            "SELECT token FROM caio_acquire(?, ?, '1 minute')", undef, $resource, $name);
        die "caio_acquire returned no lease\n" unless defined $token;
        print "$phase lease $token \\N $name\n";
        write_under_lease($dbh, $token) unless $kind eq 'lease';
        $dbh->selectrow_array("SELECT caio_release(caio_lease_of(?))", undef, $resource);
    }
};
# A lost server may be the point of the test; anything else is a failure.
if ($@ && !($lose && $dbh && !$dbh->ping)) {
    print STDERR "client $name: $@";
    exit 1;
}
exit 0;
