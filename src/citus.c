/*
 * citus.c
 *		caio on a Citus cluster, failing closed.
 *
 * Citus creates caio on every worker when it is created on the coordinator,
 * so each node has a lease table, a token sequence and nonce tables of its
 * own.  Served from a worker, a lease would be invisible to the coordinator
 * and to the other workers, and its token unrelated to theirs: one resource
 * could have a live lease on each node.  So caio keeps its state on the
 * coordinator alone and refuses, on a worker, every call that reads or
 * writes it (LK004), and a fencing or claim trigger that fires there: that
 * is a shard of a table whose writes it cannot check against the
 * coordinator's leases.
 *
 * A Citus table (distributed, reference, or managed by Citus on the
 * coordinator) has its rows in shards on the workers, which a trigger that
 * caio installs on the coordinator's table never sees: caio_protect,
 * caio_claimable and caio_versioned refuse such a table, and a shard.
 *
 * caio finds Citus through its GUCs (present only where citus is preloaded,
 * and then for the backend's life), then through the citus extension of
 * the database and Citus's catalogs, read in SQL: caio has no Citus headers
 * and no link to it.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "storage/proc.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"

#include "caio.h"
#include "catalog.h"
#include "citus.h"

static const Oid extension_arg[] = {OIDOID};
static CaioPlan placement_plan = CAIO_PLAN(
	"SELECT (SELECT groupid FROM pg_catalog.pg_dist_local_group),"
	"       EXISTS (SELECT FROM pg_catalog.pg_dist_partition p"
	"                 JOIN pg_catalog.pg_depend d"
	"                   ON d.objid OPERATOR(pg_catalog.=) p.logicalrelid"
	"                WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass"
	"                  AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass"
	"                  AND d.refobjid OPERATOR(pg_catalog.=) $1"
	"                  AND d.deptype OPERATOR(pg_catalog.=) 'e')",
	extension_arg);
static const Oid relid_arg[] = {OIDOID};
static CaioPlan citus_table_plan = CAIO_PLAN(
	"SELECT EXISTS (SELECT FROM pg_catalog.pg_dist_partition"
	"                WHERE logicalrelid OPERATOR(pg_catalog.=) $1::pg_catalog.regclass),"
	"       pg_catalog.relation_is_a_known_shard($1::pg_catalog.regclass)",
	relid_arg);

/* Whether citus is loaded: its GUCs exist from the postmaster's start on. */
static bool
citus_loaded(void)
{
	static int	loaded = -1;

	if (loaded < 0)
		loaded = GetConfigOption("citus.node_conninfo", true, false) != NULL;
	return loaded == 1;
}

/*
 * Whether this database has the citus extension: looked up once per
 * transaction, since a fencing trigger asks for every row.
 */
static bool
citus_in_database(void)
{
	static LocalTransactionId looked_up_in = InvalidLocalTransactionId;
	static bool in_database = false;

	if (!citus_loaded())
		return false;
	if (looked_up_in != CAIO_MY_LXID || looked_up_in == InvalidLocalTransactionId)
	{
		in_database = OidIsValid(get_extension_oid("citus", true));
		looked_up_in = CAIO_MY_LXID;
	}
	return in_database;
}

/* Where caio's state is, as Citus's metadata says. */
typedef struct CitusPlacement
{
	int32		group;			/* this node's group: the coordinator's is 0 */
	bool		caio_tables_distributed;	/* one of caio's own is a Citus table */
} CitusPlacement;

/*
 * Read once per transaction: neither can change under a transaction that
 * uses caio's tables (distributing one takes a lock that conflicts).
 */
static CitusPlacement
citus_placement(void)
{
	static LocalTransactionId read_in = InvalidLocalTransactionId;
	static CitusPlacement placement;
	CaioSpi		spi;
	Datum		arg = ObjectIdGetDatum(caio_catalog()->extension);
	bool		isnull;
	Datum		group;

	if (read_in == CAIO_MY_LXID && read_in != InvalidLocalTransactionId)
		return placement;
	caio_spi_begin(&spi);
	caio_spi_run(&placement_plan, &arg, NULL, true);
	group = caio_spi_value(0, 1, &isnull);
	placement.group = isnull ? 0 : DatumGetInt32(group);
	placement.caio_tables_distributed = DatumGetBool(caio_spi_value(0, 2, &isnull));
	caio_spi_end(&spi);
	read_in = CAIO_MY_LXID;
	return placement;
}

/*
 * Refuse what would read or write caio's state on a node where it does not
 * live (what: "leases", "nonces", ...): a Citus worker, or any node once
 * one of caio's tables was made a Citus table by hand (caio would then read
 * and write a shell table's storage, which Citus's queries never see).
 */
void
caio_citus_serve_here(const char *what)
{
	CitusPlacement placement;

	if (!citus_in_database())
		return;
	placement = citus_placement();
	if (placement.group != 0)
		ereport(ERROR,
				(errcode(ERRCODE_CAIO_NOT_HERE),
				 errmsg("caio does not serve %s on this node", what),
				 errdetail("This server is a Citus worker (group %d); caio's leases, tokens and nonces live on the coordinator, and a worker's copy of them is never used.",
						   placement.group),
				 errhint("Call caio's functions on the coordinator.")));
	if (placement.caio_tables_distributed)
		ereport(ERROR,
				(errcode(ERRCODE_CAIO_NOT_HERE),
				 errmsg("caio does not serve %s on this node", what),
				 errdetail("One of caio's own tables was made a Citus table, so its rows no longer live in the table that caio reads and writes."),
				 errhint("Drop the extension and create it again: Citus cannot undistribute a table that belongs to an extension.")));
}

/* Refuse a Citus table, or a shard of one, for caio_protect and its like. */
void
caio_citus_refuse_table(Oid relid, const char *installer)
{
	CaioSpi		spi;
	Datum		arg = ObjectIdGetDatum(relid);
	bool		isnull;
	bool		citus_table;
	bool		shard;

	if (!citus_in_database())
		return;
	caio_citus_serve_here("guarded tables");
	caio_spi_begin(&spi);
	caio_spi_run(&citus_table_plan, &arg, NULL, true);
	citus_table = DatumGetBool(caio_spi_value(0, 1, &isnull));
	shard = DatumGetBool(caio_spi_value(0, 2, &isnull));
	caio_spi_end(&spi);
	if (citus_table || shard)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s cannot guard \"%s\": it is %s", installer,
						get_rel_name(relid),
						shard ? "a shard of a Citus table" : "a Citus table"),
				 errdetail("Its rows live in shards that caio's trigger on this table would never see, so they would go unfenced."),
				 errhint("caio guards tables local to the coordinator; see caio's doc/citus.md.")));
}
