#!/usr/bin/perl
# One client of the failover-manager test (test/ha/run.sh).  Unlike the
# durability tests' client.pl, which ends when its server goes away, this
# one connects the way an application behind a failover manager does (a
# multi-host connection string with target_session_attrs=read-write),
# reconnects when it loses the primary, and runs until the file STOP exists.
# Each round: acquire a lease, renew it, write a row of the protected table
# under it with a nonce reserved under it (one transaction), mark the nonce
# broadcast, release the lease; then claim a job row and finish it.  Prints
# what the server confirmed, once it confirmed it, one line each:
#   MS PORT KIND TOKEN N A HOLDER
# MS is the client's wall clock in milliseconds when the confirmation came
# back, PORT the server's port (which node), and KIND one of
#   lease   TOKEN granted                         N, A: \N
#   renew   TOKEN renewed                         N, A: \N
#   commit  the write under TOKEN with nonce N    A: \N
#   mark    nonce N marked broadcast under TOKEN  A: \N
#   claim   job N claimed with TOKEN              A: the claim's expiry (server ms)
#   finish  job N finished under TOKEN           A: the finish (server ms)
# Connection trouble (any error after which the session is gone, or a
# server that went read-only under it) makes it reconnect and start the
# round again; it fails if no primary takes it for 120 s, or on any other
# error.
#   client.pl CONNINFO WORKER STOP
use strict;
use warnings;
use DBI;
use Time::HiRes qw(time sleep);

my ($conninfo, $worker, $stop) = @ARGV;
my $address = '0xde709f2102306220921060314715629080e2fb77';
my $name = "haw$worker";
my $resource = "dur:$name";
my $hash = sprintf('0x%064x', $worker);
$| = 1;

sub now_ms { return int(time * 1000); }

# DBD::Pg takes key=value pairs, not the URI that pg_autoctl show uri
# prints: postgres://HOST:PORT,HOST:PORT/DB?KEY=VALUE&KEY=VALUE.
if ($conninfo =~ m{^postgres(?:ql)?://([^/]*)/([^?]*)(?:\?(.*))?$}) {
    my ($hosts, $db, $query) = ($1, $2, $3 // '');
    my @hostports = map { [split /:/] } split /,/, $hosts;
    $conninfo = join(';', 'host=' . join(',', map { $_->[0] } @hostports),
                     'port=' . join(',', map { $_->[1] // 5432 } @hostports),
                     "dbname=$db", grep { length } split /&/, $query);
}

my ($dbh, $port);
sub say_ok { print join(' ', now_ms(), $port, map { defined $_ ? $_ : '\N' } @_), "\n"; }

# connect_primary: (re)connect, for up to 120 s.
sub connect_primary {
    my $deadline = time + 120;
    $dbh->{InactiveDestroy} = 1 if $dbh;
    undef $dbh;
    while (time < $deadline) {
        $dbh = eval {
            DBI->connect("dbi:Pg:$conninfo", 'postgres', '',
                         { AutoCommit => 1, RaiseError => 1, PrintError => 0 });
        };
        if ($dbh) {
            ($port) = $dbh->selectrow_array("SELECT inet_server_port()");
            return;
        }
        sleep 0.2;
    }
    die "client $name: no primary took a connection for 120 s\n";
}

# A lost or demoted server, or a session that a failover manager ended:
# reconnect.  40001 and 40P01 cannot happen here; anything else is a bug.
sub transient {
    my ($err) = @_;
    return 1 if !$dbh || !$dbh->ping;
    my $state = $dbh->state // '';
    return $state =~ /^(25006|57P01|57P02|57P03|08...)$/;
}

sub round {
    my ($token) = $dbh->selectrow_array(
        "SELECT token FROM caio_acquire(?, ?, '1 minute')", undef, $resource, $name);
    die "caio_acquire returned no lease\n" unless defined $token;
    say_ok('lease', $token, undef, undef, $name);
    my ($renewed) = $dbh->selectrow_array(
        "SELECT token FROM caio_renew(caio_lease_of(?), '1 minute')", undef, $resource);
    die "caio_renew lost the lease\n" unless defined $renewed && $renewed == $token;
    say_ok('renew', $token, undef, undef, $name);

    $dbh->begin_work;
    $dbh->selectrow_array("SELECT caio_use(caio_lease_of(?))", undef, $resource);
    my ($nonce) = $dbh->selectrow_array(
        "INSERT INTO ledger (worker, nonce) VALUES (?, caio_nonce_reserve(1, ?, caio_lease_of(?)))
         RETURNING nonce", undef, $name, $address, $resource);
    $dbh->commit;
    say_ok('commit', $token, $nonce, undef, $name);
    $dbh->selectrow_array("SELECT caio_nonce_mark(1, ?, ?, 'broadcast', ?, caio_lease_of(?))",
                          undef, $address, $nonce, $hash, $resource);
    say_ok('mark', $token, $nonce, undef, $name);
    $dbh->selectrow_array("SELECT caio_release(caio_lease_of(?))", undef, $resource);

    my ($job, $claim, $expires) = $dbh->selectrow_array(
        "SELECT id, claim_token, (extract(epoch FROM claim_expires_at) * 1000)::bigint
           FROM caio_claim(NULL::jobs, ?, '20 seconds')", undef, $name);
    return unless defined $job;
    say_ok('claim', $claim, $job, $expires, $name);
    # The finish leaves its token and time in job_runs: a finish whose
    # acknowledgement a failover swallowed may still have ended the claim.
    my ($done) = $dbh->selectrow_array(
        "WITH f AS (UPDATE jobs SET runs = runs + 1, claim_holder = NULL, claim_expires_at = NULL,
                           claim_token = ? WHERE id = ? RETURNING id, claim_token)
         INSERT INTO job_runs (job, token, finished_ms)
         SELECT id, claim_token, (extract(epoch FROM caio_now()) * 1000)::bigint FROM f
         RETURNING finished_ms", undef, $claim, $job);
    say_ok('finish', $claim, $job, $done, $name);
}

connect_primary();
while (!-e $stop) {
    next if eval { round(); 1 };
    my $err = $@;
    if (transient($err)) {
        print STDERR now_ms() . " client $name: reconnecting after: $err";
        connect_primary();
    } else {
        print STDERR now_ms() . " client $name: $err";
        exit 1;
    }
}
exit 0;
