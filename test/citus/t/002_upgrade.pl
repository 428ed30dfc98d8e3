# A Citus table that an earlier caio guarded has caio's trigger where Citus's
# writes do not look for it: ALTER EXTENSION caio UPDATE names it.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin . '/..';
use CaioCitus;
use PostgreSQL::Test::Utils;
use Test::More;

my ($coordinator, $worker1) = citus_cluster(1, '0.5.0');

# Protected while local (as 0.5.0 allowed it), then distributed with
# Citus's unsafe triggers; and a local table, guarded as it should be.
$coordinator->safe_psql('postgres', q{
	CREATE TABLE payouts (wallet text COLLATE "C" PRIMARY KEY, amount int, fence_token bigint);
	SELECT caio_protect('payouts', 'fence_token', 'wallet', '');
	SET citus.enable_unsafe_triggers = on;
	SELECT create_distributed_table('payouts', 'wallet');
	CREATE TABLE wallets (address text PRIMARY KEY, fence_token bigint);
	SELECT caio_protect('wallets', 'fence_token', 'address', '');
});

my ($rc, $stdout, $stderr) = $coordinator->psql('postgres', 'ALTER EXTENSION caio UPDATE');
is($rc, 0, 'the update succeeds');
like($stderr, qr/WARNING:  caio has never fenced the shards of "payouts"/,
	'and names the Citus table that caio guarded');
unlike($stderr, qr/"wallets"/, 'but not the local one');
is($coordinator->safe_psql('postgres',
		"SELECT extversion FROM pg_extension WHERE extname = 'caio'"),
	$worker1->safe_psql('postgres',
		"SELECT extversion FROM pg_extension WHERE extname = 'caio'"),
	'the worker was updated with the coordinator');

done_testing();
