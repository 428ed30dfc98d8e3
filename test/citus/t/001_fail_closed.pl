# caio on a Citus cluster fails closed: it never installs a trigger that
# would leave shards unfenced, and it never serves leases, tokens or nonces
# from a copy of its state that the rest of the cluster does not see.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin . '/..';
use CaioCitus;
use PostgreSQL::Test::Utils;
use Test::More;

my ($coordinator, $worker1, $worker2) = citus_cluster(2);

# caio reaches the workers with the extension, as Citus propagates it.
for my $node ($worker1, $worker2)
{
	is($node->safe_psql('postgres',
			"SELECT extversion FROM pg_extension WHERE extname = 'caio'"),
		$coordinator->safe_psql('postgres',
			"SELECT extversion FROM pg_extension WHERE extname = 'caio'"),
		$node->name . ' has caio, created through the coordinator');
}

$coordinator->safe_psql('postgres', q{
	CREATE TABLE transfers (id bigint, wallet text COLLATE "C" NOT NULL,
	                        amount int, fence_token bigint,
	                        claim_holder text, claim_token bigint,
	                        claim_expires_at timestamptz, version bigint,
	                        PRIMARY KEY (wallet, id));
	SELECT create_distributed_table('transfers', 'wallet');
	CREATE TABLE currencies (code text PRIMARY KEY, fence_token bigint, version bigint);
	SELECT create_reference_table('currencies');
	INSERT INTO transfers (id, wallet, amount) VALUES (1, 'w1', 10), (2, 'w2', 20);
});

# Every trigger caio could install on a Citus table would fire for no shard.
refused($coordinator,
	q{SELECT caio_protect('transfers', 'fence_token', 'wallet', '')},
	'0A000', 'caio_protect cannot guard "transfers": it is a Citus table',
	'caio_protect refuses a distributed table');
refused($coordinator,
	q{SELECT caio_protect('transfers', 'fence_token', 'wallet', 'send:')},
	'0A000', 'caio_protect cannot guard "transfers": it is a Citus table',
	'... with a resource prefix too');
refused($coordinator, q{SELECT caio_claimable('transfers')},
	'0A000', 'caio_claimable cannot guard "transfers": it is a Citus table',
	'caio_claimable refuses a distributed table');
refused($coordinator, q{SELECT caio_versioned('transfers', 'version')},
	'0A000', 'caio_versioned cannot guard "transfers": it is a Citus table',
	'caio_versioned refuses a distributed table');
refused($coordinator,
	q{SELECT caio_protect('currencies', 'fence_token', 'code', '')},
	'0A000', 'caio_protect cannot guard "currencies": it is a Citus table',
	'caio_protect refuses a reference table');
is($coordinator->safe_psql('postgres', q{
	SELECT count(*) FROM pg_trigger
	 WHERE tgrelid IN ('transfers'::regclass, 'currencies'::regclass)
	   AND NOT tgisinternal}),
	'0', 'no trigger was left on the coordinator\'s tables');
is($coordinator->safe_psql('postgres', q{
	SELECT sum(result::int) FROM run_command_on_shards('transfers',
	  $$SELECT count(*) FROM pg_trigger WHERE tgrelid = '%s'::regclass AND NOT tgisinternal$$)}),
	'0', 'nor on any shard');
is($coordinator->safe_psql('postgres', q{
	SELECT count(*) FROM information_schema.columns
	 WHERE table_name = 'transfers' AND column_name LIKE 'claim_%'}),
	'3', 'caio_claimable left the table as it was');

# On the coordinator, a local table is fenced as on one server.
$coordinator->safe_psql('postgres', q{
	CREATE TABLE wallets (address text PRIMARY KEY, balance int, fence_token bigint);
	SELECT caio_protect('wallets', 'fence_token', 'address', 'send:');
	INSERT INTO wallets VALUES ('0xa', 1, (caio_acquire('send:0xa', 'worker-a', '1 min')).token);
});
refused($coordinator,
	q{UPDATE wallets SET balance = 2, fence_token = 0 WHERE address = '0xa'},
	'LK001', 'stale fencing token for resource "send:0xa" on table "wallets"',
	'a local table on the coordinator is fenced');

# A worker's copy of caio's state is never used.
for my $node ($worker1, $worker2)
{
	my $name = $node->name;
	refused($node, q{SELECT caio_acquire('send:0xa', 'worker-b', '1 min')},
		'LK004', 'caio does not serve leases on this node',
		"$name refuses caio_acquire");
	refused($node, q{SELECT caio_lease_of('send:0xa')},
		'LK004', 'caio does not serve leases on this node',
		"$name refuses caio_lease_of");
	refused($node, q{SELECT caio_nonce_reserve(1, '0x00000000000000000000000000000000000000aa')},
		'LK004', 'caio does not serve nonces on this node',
		"$name refuses caio_nonce_reserve");
	refused($node, q{SELECT caio_lease_purge('1 day')},
		'LK004', 'caio does not serve leases on this node',
		"$name refuses caio_lease_purge");
	refused($node, q{CREATE TABLE local_w (k text PRIMARY KEY, t bigint);
		SELECT caio_protect('local_w', 't', 'k', '')},
		'LK004', 'caio does not serve guarded tables on this node',
		"$name refuses caio_protect");
}
is($worker1->safe_psql('postgres', 'SELECT count(*) FROM caio_lease_state'),
	'0', 'worker1\'s lease table is still empty');

# A table protected on the coordinator and then distributed: Citus refuses
# a table with triggers, unless told to propagate them; then each shard's
# trigger fires on a worker, which refuses the write rather than check it
# against a lease table that holds nothing.
$coordinator->safe_psql('postgres', q{
	CREATE TABLE payouts (wallet text COLLATE "C" PRIMARY KEY, amount int, fence_token bigint);
	SELECT caio_protect('payouts', 'fence_token', 'wallet', '');
});
refused($coordinator, q{SELECT create_distributed_table('payouts', 'wallet')},
	'[0-9A-Z]{5}', 'cannot distribute relation "payouts" because it has triggers',
	'Citus refuses to distribute a protected table');
$coordinator->safe_psql('postgres', q{
	SET citus.enable_unsafe_triggers = on;
	SELECT create_distributed_table('payouts', 'wallet');
});
my $token = $coordinator->safe_psql('postgres',
	q{SELECT token FROM caio_acquire('p1', 'worker-a', '1 min')});
refused($coordinator,
	qq{INSERT INTO payouts VALUES ('p1', 5, $token)},
	'LK004', 'caio does not serve fenced writes on this node',
	'a shard\'s trigger refuses on its worker, and the SQLSTATE reaches the client');
refused($coordinator, q{INSERT INTO payouts VALUES ('p2', 5, NULL)},
	'LK004', 'caio does not serve fenced writes on this node',
	'... with no token too');
is($coordinator->safe_psql('postgres', 'SELECT count(*) FROM payouts'),
	'0', 'no row was written');

# caio's own lease table made a Citus table by hand: caio would write the
# coordinator's shell, which Citus's queries never read; it refuses instead.
$coordinator->safe_psql('postgres', q{
	SELECT create_distributed_table('caio_lease_state', 'resource', colocate_with := 'transfers');
});
refused($coordinator, q{SELECT caio_acquire('w1', 'worker-a', '1 min')},
	'LK004', 'caio does not serve leases on this node',
	'the coordinator refuses leases once caio_lease_state is distributed');
refused($coordinator, q{SELECT caio_nonce_reserve(1, '0x00000000000000000000000000000000000000aa')},
	'LK004', 'caio does not serve nonces on this node', '... and nonces');
is($coordinator->safe_psql('postgres',
	q{SELECT count(*) FROM caio_lease_state WHERE resource = 'w1'}),
	'0', 'and no lease was written where Citus would not see it');

done_testing();
