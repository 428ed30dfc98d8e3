/*
 * token_held.c
 *		The largest token that a database holds anywhere caio can see, for
 *		caio_start_token_epoch().
 *
 * After a logical cutover (blue/green through logical replication) the new
 * primary holds rows that the old one wrote: leases, nonce reservations and
 * guarded rows whose tokens this database never issued, in whatever epoch
 * the old cluster reached, while its own sequence, which does not
 * replicate, may be far below them.  A token issued below such a row's
 * would let a stale holder's write through, and refuse the new holder's.
 * So the new epoch must be above the largest token in
 *
 * - caio's own tables: caio_lease_state.token and
 *   caio_nonce_reservation.token (caio_token_epoch's epochs are read with
 *   the lineage, token.c);
 * - every table that caio guards, known by its triggers: the token column
 *   that caio_fence's first argument names, and claim_token of a table with
 *   caio_claim.
 *
 * Each is a max() over the column: an index whose first column it is makes
 * that a descent to the index's end (a partitioned table's, one per
 * partition); without one it is a sequential scan of the table.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/indexing.h"
#include "catalog/pg_language.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_trigger.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "caio.h"
#include "catalog.h"
#include "guard.h"
#include "token.h"

static CaioPlan own_tokens_read = CAIO_PLAN_NO_ARGS(
	"SELECT pg_catalog.max(token) FROM ("
	"  SELECT pg_catalog.max(token) AS token FROM @extschema@.caio_lease_state"
	"  UNION ALL"
	"  SELECT pg_catalog.max(token) FROM @extschema@.caio_nonce_reservation) t");

/* A guarded table's token column, as one of caio's triggers names it. */
typedef struct TokenColumn
{
	Oid			relid;
	char	   *column;
	const char *trigger;
} TokenColumn;

/* A bigint from the first column of SPI's first row; 0 for NULL. */
static int64
first_bigint(void)
{
	bool		isnull;
	Datum		value = caio_spi_value(0, 1, &isnull);

	return isnull ? 0 : DatumGetInt64(value);
}

/* Whether a function is written in C (caio's trigger functions are). */
static bool
function_is_c(Oid funcoid)
{
	HeapTuple	tuple = SearchSysCache1(PROCOID, ObjectIdGetDatum(funcoid));
	bool		is_c;

	if (!HeapTupleIsValid(tuple))
		return false;
	is_c = ((Form_pg_proc) GETSTRUCT(tuple))->prolang == ClanguageId;
	ReleaseSysCache(tuple);
	return is_c;
}

/*
 * The token column of the table that trigger guards with caio's fence or
 * claim trigger, or NULL for any other trigger.  A clone of a partitioned
 * table's trigger on a partition is skipped: the partitioned table's scan
 * covers the partition.  Only C functions are looked at, so that no
 * procedural language is loaded to tell.
 */
static char *
trigger_token_column(Form_pg_trigger trigger, HeapTuple tuple, Relation pg_trigger)
{
	const char *installer;

	if (OidIsValid(trigger->tgparentid) || !function_is_c(trigger->tgfoid))
		return NULL;
	installer = caio_guard_installer(trigger->tgfoid);
	if (installer != NULL && strcmp(installer, "caio_claimable") == 0)
		return pstrdup("claim_token");
	if (installer != NULL && strcmp(installer, "caio_protect") == 0 && trigger->tgnargs > 0)
	{
		bool		isnull;
		Datum		args = heap_getattr(tuple, Anum_pg_trigger_tgargs,
										RelationGetDescr(pg_trigger), &isnull);

		/* tgargs holds the arguments one after the other, each ending in \0. */
		if (!isnull)
			return pstrdup(VARDATA_ANY(DatumGetByteaPP(args)));
	}
	return NULL;
}

/* Every table caio guards with a token, with the column that holds it. */
static List *
token_columns(void)
{
	Relation	pg_trigger = table_open(TriggerRelationId, AccessShareLock);
	SysScanDesc scan = systable_beginscan(pg_trigger, InvalidOid, false, NULL, 0, NULL);
	HeapTuple	tuple;
	List	   *columns = NIL;

	while (HeapTupleIsValid(tuple = systable_getnext(scan)))
	{
		Form_pg_trigger trigger = (Form_pg_trigger) GETSTRUCT(tuple);
		char	   *column = trigger_token_column(trigger, tuple, pg_trigger);
		TokenColumn *entry;

		if (column == NULL)
			continue;
		entry = palloc(sizeof(TokenColumn));
		entry->relid = trigger->tgrelid;
		entry->column = column;
		entry->trigger = pstrdup(NameStr(trigger->tgname));
		columns = lappend(columns, entry);
	}
	systable_endscan(scan);
	table_close(pg_trigger, AccessShareLock);
	return columns;
}

/*
 * SELECT max(column) FROM the table, with the names as the catalog has them,
 * quoted.  The column is checked as the trigger checks it when it fires: a
 * column renamed, dropped or retyped since is refused, since caio could not
 * tell which tokens the table holds.
 */
static char *
token_column_sql(const TokenColumn *entry)
{
	Relation	rel = table_open(entry->relid, AccessShareLock);
	static const Oid token_type[] = {INT8OID};
	int			attnum = caio_trigger_column(rel, entry->column, "token column",
											 token_type, lengthof(token_type));
	char	   *sql;

	sql = psprintf("SELECT pg_catalog.max(%s) FROM %s",
				   quote_identifier(NameStr(TupleDescAttr(RelationGetDescr(rel), attnum - 1)->attname)),
				   quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
											  RelationGetRelationName(rel)));
	table_close(rel, NoLock);
	return sql;
}

/*
 * The largest token in one guarded table's column, as the newest committed
 * state has it (rows the apply worker wrote after this transaction began
 * count too).  Its SQL differs per table, and this runs once per table per
 * call of a rare function: it is prepared, run and freed, not kept.
 */
static int64
token_column_max(const TokenColumn *entry)
{
	SPIPlanPtr	plan = SPI_prepare(token_column_sql(entry), 0, NULL);
	int			rc;
	int64		max;

	if (plan == NULL)
		elog(ERROR, "caio could not prepare the scan of table %u: %s",
			 entry->relid, SPI_result_code_string(SPI_result));
	CommandCounterIncrement();
	rc = SPI_execute_snapshot(plan, NULL, NULL, GetLatestSnapshot(),
							  InvalidSnapshot, true, false, 1);
	if (rc < 0)
		elog(ERROR, "caio could not scan table %u: %s", entry->relid,
			 SPI_result_code_string(rc));
	max = first_bigint();
	SPI_freeplan(plan);
	return max;
}

/*
 * The largest token in caio's tables and in every table it guards; 0 when
 * there is none.  Runs inside caio_spi_begin, as the extension owner, with
 * row security off: a policy that hid rows from the owner would hide their
 * tokens, so it makes the scan fail instead (42501).
 */
int64
caio_token_max_held(void)
{
	int64		max;
	ListCell   *lc;

	(void) set_config_option("row_security", "off", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	caio_spi_run(&own_tokens_read, NULL, NULL, true);
	max = first_bigint();
	foreach(lc, token_columns())
		max = Max(max, token_column_max((const TokenColumn *) lfirst(lc)));
	return max;
}
