# A Citus cluster for caio's cluster tests: a coordinator and workers, each a
# PostgreSQL::Test::Cluster node with citus preloaded, the workers added to
# the coordinator's metadata, caio created on the coordinator (Citus creates
# it on the workers).
package CaioCitus;

use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Exporter 'import';
our @EXPORT = qw(citus_node citus_cluster refused);

# A node with citus preloaded, started, with citus created in "postgres".
sub citus_node
{
	my ($name, %params) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init(allows_streaming => $params{allows_streaming} // 0);
	$node->append_conf('postgresql.conf', <<'CONF');
shared_preload_libraries = 'citus'
citus.node_conninfo = 'sslmode=disable'
max_connections = 60
max_prepared_transactions = 20
log_statement = none
citus.shard_replication_factor = 1
wal_level = logical
CONF
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION citus');
	return $node;
}

# (coordinator, worker...) with caio created through the coordinator, at
# caio_version if given (else the default version).
sub citus_cluster
{
	my ($workers, $caio_version) = @_;
	my $coordinator = citus_node('coordinator');
	$coordinator->safe_psql('postgres',
		"SELECT citus_set_coordinator_host('" . $coordinator->host . "', " . $coordinator->port . ')');
	my @workers;
	for my $i (1 .. $workers)
	{
		my $worker = citus_node("worker$i");
		$coordinator->safe_psql('postgres',
			"SELECT citus_add_node('" . $worker->host . "', " . $worker->port . ')');
		push @workers, $worker;
	}
	$coordinator->safe_psql('postgres', 'CREATE EXTENSION caio'
		  . (defined $caio_version ? " VERSION '$caio_version'" : ''));
	return ($coordinator, @workers);
}

# Runs sql on node and passes if it fails with sqlstate and a message that
# matches message_re (psql in verbose mode prints "ERROR:  SQLSTATE: ...").
sub refused
{
	my ($node, $sql, $sqlstate, $message_re, $name) = @_;
	my ($rc, $stdout, $stderr) =
	  $node->psql('postgres', "\\set VERBOSITY verbose\n$sql");
	Test::More::like($stderr, qr/ERROR:  $sqlstate: $message_re/, $name)
	  or Test::More::diag("exit code $rc, stdout: $stdout");
}

1;
