/*
 * caio.c
 *		Module set-up, and the plumbing every other file relies on: where the
 *		extension's objects live, SPI statements prepared once, the switch to
 *		the extension owner around them, and argument checks.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/tableam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/dependency.h"
#include "catalog/indexing.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_trigger.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "commands/trigger.h"
#include "nodes/makefuncs.h"
#include "parser/parse_func.h"
#include "utils/acl.h"
#include "utils/datum.h"
#include "utils/rel.h"
#include "commands/sequence.h"
#include "common/int.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "caio.h"

CAIO_MODULE_MAGIC;

void		_PG_init(void);

static CaioCatalog catalog;

/* The catalog is good while no invalidation arrived since it was loaded. */
static uint64 catalog_invalidations = 1;
static uint64 catalog_loaded_at = 0;

/*
 * Any relcache invalidation of one of our relations or indexes (DROP
 * EXTENSION, VACUUM, REINDEX CONCURRENTLY, a clock change) or a full reset
 * makes us look the catalog up again; the lookup is cheap and plans survive
 * it unless an OID really changed.
 */
static void
caio_relcache_callback(Datum arg pg_attribute_unused(), Oid relid)
{
	const Oid	cached[] = {catalog.lease_state, catalog.lease_state_pkey,
		catalog.nonce_wallet, catalog.nonce_wallet_pkey,
		catalog.nonce_reservation, catalog.nonce_reservation_pkey,
	catalog.nonce_released, catalog.clock, catalog.token_seq,
	catalog.token_epoch};

	if (relid == InvalidOid || relid == catalog.clock)
		caio_clock_forget();
	for (int i = 0; i < (int) lengthof(cached); i++)
		if (relid == InvalidOid || relid == cached[i])
			catalog_invalidations++;
}

void
_PG_init(void)
{
	CacheRegisterRelcacheCallback(caio_relcache_callback, (Datum) 0);
	caio_resource_lock_init();
	caio_fencing_init();
	caio_nonce_init();
	caio_stats_init();
	MarkGUCPrefixReserved("caio");
}

static Oid
caio_relation(const char *name)
{
	Oid			relid = get_relname_relid(name, catalog.schema);

	if (!OidIsValid(relid))
		elog(ERROR, "caio's relation \"%s\" is missing", name);
	return relid;
}

static void
catalog_load(void)
{
	Relation	rel;
	SysScanDesc scan;
	ScanKeyData key;
	HeapTuple	tuple;
	Form_pg_extension ext;
	Oid			old_schema = catalog.schema;
	Oid			old_lease_state = catalog.lease_state;

	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_extension_extname, BTEqualStrategyNumber,
				F_NAMEEQ, CStringGetDatum("caio"));
	scan = systable_beginscan(rel, ExtensionNameIndexId, true, NULL, 1, &key);
	tuple = systable_getnext(scan);
	if (!HeapTupleIsValid(tuple))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("extension \"caio\" is not installed in this database"),
				 errhint("Run CREATE EXTENSION caio.")));
	ext = (Form_pg_extension) GETSTRUCT(tuple);
	catalog.schema = ext->extnamespace;
	catalog.owner = ext->extowner;
	systable_endscan(scan);
	table_close(rel, AccessShareLock);

	catalog.lease_state = caio_relation("caio_lease_state");
	catalog.lease_state_pkey = caio_relation("caio_lease_state_pkey");
	catalog.nonce_wallet = caio_relation("caio_nonce_wallet");
	catalog.nonce_wallet_pkey = caio_relation("caio_nonce_wallet_pkey");
	catalog.nonce_reservation = caio_relation("caio_nonce_reservation");
	catalog.nonce_reservation_pkey = caio_relation("caio_nonce_reservation_pkey");
	catalog.nonce_released = caio_relation("caio_nonce_released");
	catalog.clock = caio_relation("caio_clock");
	catalog.token_seq = caio_relation("caio_token_seq");
	/* Missing until ALTER EXTENSION caio UPDATE from 0.1. */
	catalog.token_epoch = get_relname_relid("caio_token_epoch", catalog.schema);

	if (catalog.schema != old_schema || catalog.lease_state != old_lease_state)
		catalog.generation++;
	if (catalog.schema != old_schema)
	{
		char	   *name = get_namespace_name(catalog.schema);

		catalog.schema_sql = MemoryContextStrdup(TopMemoryContext,
												 quote_identifier(name));
	}
}

const CaioCatalog *
caio_catalog(void)
{
	/* An invalidation during the lookup, or a failed lookup: look again. */
	while (catalog_loaded_at != catalog_invalidations)
	{
		uint64		seen = catalog_invalidations;

		catalog_load();
		catalog_loaded_at = seen;
	}
	return &catalog;
}

static SPIPlanPtr
caio_plan(CaioPlan *p)
{
	const CaioCatalog *cat = caio_catalog();
	StringInfoData sql;
	const char *at;
	const char *mark = "@extschema@";

	if (p->plan != NULL && p->generation == cat->generation)
		return p->plan;

	if (p->plan != NULL)
		SPI_freeplan(p->plan);
	p->plan = NULL;

	initStringInfo(&sql);
	for (at = p->sql; *at; at++)
	{
		if (strncmp(at, mark, strlen(mark)) == 0)
		{
			appendStringInfoString(&sql, cat->schema_sql);
			at += strlen(mark) - 1;
		}
		else
			appendStringInfoChar(&sql, *at);
	}

	/* A generic plan: re-planning every call would cost more than it saves. */
	p->plan = SPI_prepare_cursor(sql.data, p->nargs, (Oid *) p->argtypes,
								 CURSOR_OPT_GENERIC_PLAN);
	if (p->plan == NULL)
		elog(ERROR, "caio could not prepare \"%s\": %s",
			 sql.data, SPI_result_code_string(SPI_result));
	SPI_keepplan(p->plan);
	p->generation = cat->generation;
	pfree(sql.data);
	return p->plan;
}

/*
 * Callers hold no privileges on caio's tables; the functions act for them as
 * the extension owner, in a security-restricted context, much as a SECURITY
 * DEFINER function would, but without losing sight of who called.  An error
 * anywhere restores the user: transaction abort resets it.
 */
void
caio_spi_begin(CaioSpi *spi)
{
	const CaioCatalog *cat = caio_catalog();

	spi->caller = GetUserId();
	GetUserIdAndSecContext(&spi->saved_user, &spi->saved_context);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	SetUserIdAndSecContext(cat->owner,
						   spi->saved_context |
						   SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
}

void
caio_spi_end(CaioSpi *spi)
{
	SetUserIdAndSecContext(spi->saved_user, spi->saved_context);
	if (SPI_finish() != SPI_OK_FINISH)
		elog(ERROR, "SPI_finish failed");
}

/*
 * Run a statement on caio's tables.  They are the authority on leases, so we
 * read the newest committed state (and our own changes) whatever the isolation
 * level, as PostgreSQL's own foreign-key checks do under REPEATABLE READ; the
 * per-resource lock that callers hold keeps that state from moving under us.
 */
uint64
caio_spi_run(CaioPlan *p, Datum *values, const char *nulls, bool read_only)
{
	SPIPlanPtr	plan = caio_plan(p);
	int			rc;

	CommandCounterIncrement();
	rc = SPI_execute_snapshot(plan, values, nulls, GetLatestSnapshot(),
							  InvalidSnapshot, read_only, true, 0);
	if (rc < 0)
		elog(ERROR, "caio statement failed: %s", SPI_result_code_string(rc));
	return SPI_processed;
}

Datum
caio_spi_value(int row, int column, bool *isnull)
{
	return SPI_getbinval(SPI_tuptable->vals[row], SPI_tuptable->tupdesc,
						 column, isnull);
}

/*
 * Hand the rows that an index scan with these keys finds, in the index's
 * order, to a callback until it returns false; false when there was none.
 * Read straight through the index: the hot paths use this instead of SPI.
 * Like caio_spi_run it sees the newest committed state and this
 * transaction's own changes.  The callback gets the slot with every column
 * deformed; the values are valid until it returns.
 */
bool
caio_index_scan(Oid heap_oid, Oid index_oid, ScanKey keys, int nkeys,
				int ncolumns, CaioRowCallback callback, void *arg)
{
	Relation	heap = table_open(heap_oid, AccessShareLock);
	Relation	index = index_open(index_oid, AccessShareLock);
	TupleTableSlot *slot = table_slot_create(heap, NULL);
	Snapshot	snapshot;
	IndexScanDesc scan;
	bool		found = false;

	if (RelationGetDescr(heap)->natts > ncolumns)
		elog(ERROR, "caio's table \"%s\" has %d columns, not %d",
			 RelationGetRelationName(heap), RelationGetDescr(heap)->natts, ncolumns);
	for (int i = 0; i < nkeys; i++)
		keys[i].sk_collation = index->rd_indcollation[keys[i].sk_attno - 1];

	CommandCounterIncrement();
	snapshot = RegisterSnapshot(GetLatestSnapshot());
	scan = caio_index_beginscan(heap, index, snapshot, nkeys, 0);
	index_rescan(scan, keys, nkeys, NULL, 0);
	while (index_getnext_slot(scan, ForwardScanDirection, slot))
	{
		found = true;
		slot_getallattrs(slot);
		if (!callback(slot, arg))
			break;
	}

	index_endscan(scan);
	UnregisterSnapshot(snapshot);
	ExecDropSingleTupleTableSlot(slot);
	index_close(index, AccessShareLock);
	table_close(heap, AccessShareLock);
	return found;
}

typedef struct RowCopy
{
	Datum	   *values;
	bool	   *isnull;
} RowCopy;

static bool
row_copy(TupleTableSlot *slot, void *arg)
{
	RowCopy    *copy = (RowCopy *) arg;
	TupleDesc	desc = slot->tts_tupleDescriptor;

	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute attr = TupleDescAttr(desc, i);

		copy->isnull[i] = slot->tts_isnull[i];
		copy->values[i] = copy->isnull[i] ? (Datum) 0 :
			datumCopy(slot->tts_values[i], attr->attbyval, attr->attlen);
	}
	return false;
}

/*
 * The first row that an index scan with these keys finds in a table; its
 * columns are copied into values and isnull.
 */
bool
caio_index_first(Oid heap_oid, Oid index_oid, ScanKey keys, int nkeys,
				 Datum *values, bool *isnull, int ncolumns)
{
	RowCopy		copy;

	copy.values = values;
	copy.isnull = isnull;
	return caio_index_scan(heap_oid, index_oid, keys, nkeys, ncolumns,
						   row_copy, &copy);
}

/* ----------------------------------------------------------------
 * Argument checks
 * ----------------------------------------------------------------
 */

/* Every argument is required: NULL is refused, never mistaken for "busy". */
void
caio_arg_required(FunctionCallInfo fcinfo, int argno, const char *what,
				  const char *hint)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must not be null", what),
				 hint ? errhint("%s", hint) : 0));
}

void
caio_check_name(const char *value, const char *what)
{
	size_t		len = strlen(value);

	if (len == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must not be empty", what)));
	if (len > CAIO_NAME_MAX_BYTES)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s is too long", what),
				 errdetail("A %s is at most %d bytes; this one is %zu bytes.",
						   what, CAIO_NAME_MAX_BYTES, len)));
}

/* A resource or holder name: not NULL, 1 to 255 bytes. */
char *
caio_arg_name(FunctionCallInfo fcinfo, int argno, const char *what)
{
	char	   *value;

	caio_arg_required(fcinfo, argno, what, NULL);
	value = text_to_cstring(PG_GETARG_TEXT_PP(argno));
	caio_check_name(value, what);
	return value;
}

/* An interval's length with months counted as 30 days, as comparisons do. */
static double
interval_usecs(const Interval *span)
{
	return (double) span->month * DAYS_PER_MONTH * USECS_PER_DAY +
		(double) span->day * USECS_PER_DAY + (double) span->time;
}

static char *
interval_text(Interval *span)
{
	return DatumGetCString(DirectFunctionCall1(interval_out,
											   IntervalPGetDatum(span)));
}

Interval *
caio_arg_ttl(FunctionCallInfo fcinfo, int argno)
{
	Interval   *ttl;
	double		usecs;

	caio_arg_required(fcinfo, argno, "ttl", NULL);
	ttl = PG_GETARG_INTERVAL_P(argno);
	caio_check_finite(ttl, "ttl");
	usecs = interval_usecs(ttl);
	if (usecs <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("ttl must be positive"),
				 errdetail("The ttl given was %s.", interval_text(ttl))));
	if (usecs > (double) CAIO_TTL_MAX_DAYS * USECS_PER_DAY)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("ttl must be at most %d days", CAIO_TTL_MAX_DAYS),
				 errdetail("The ttl given was %s.", interval_text(ttl)),
				 errhint("Hold a lease for a shorter time and renew it.")));
	return ttl;
}

/*
 * Infinite intervals exist from PostgreSQL 17 on; no ttl, wait or clock step
 * can be one.
 */
void
caio_check_finite(const Interval *span, const char *what)
{
	if (!CAIO_INTERVAL_IS_FINITE(span))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be finite", what)));
}

/* `wait` is a real duration, whatever the test clock says. */
int64
caio_arg_wait_usecs(FunctionCallInfo fcinfo, int argno)
{
	Interval   *wait;
	double		usecs;

	caio_arg_required(fcinfo, argno, "wait",
					  "Pass interval '0' to try once without waiting.");
	wait = PG_GETARG_INTERVAL_P(argno);
	caio_check_finite(wait, "wait");
	usecs = interval_usecs(wait);
	if (usecs < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("wait must not be negative"),
				 errdetail("The wait given was %s.", interval_text(wait))));
	if (usecs > (double) CAIO_WAIT_MAX_DAYS * USECS_PER_DAY)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("wait must be at most %d day", CAIO_WAIT_MAX_DAYS),
				 errdetail("The wait given was %s.", interval_text(wait))));
	return (int64) usecs;
}

/*
 * Whether an expiry is at most CAIO_TTL_MAX_DAYS after now, by the calendar:
 * the limit on every lease and claim, whether caio_acquire, caio_renew,
 * caio_claim or a claim's renewal through an UPDATE set it.  -infinity has
 * ended already; infinity, and a span too large to compute, are over it.
 */
bool
caio_expiry_within_limit(TimestampTz now, TimestampTz expires_at)
{
	int64		ahead;

	if (TIMESTAMP_IS_NOBEGIN(expires_at))
		return true;
	return !TIMESTAMP_IS_NOEND(expires_at) &&
		!pg_sub_s64_overflow(expires_at, now, &ahead) &&
		ahead <= (int64) CAIO_TTL_MAX_DAYS * USECS_PER_DAY;
}

/*
 * now + ttl, refused when the calendar makes it no later than now, or more
 * than CAIO_TTL_MAX_DAYS later.  caio_arg_ttl counts a month as 30 days, so
 * months and days of opposite signs ('1000 mons -29634 days') pass it while
 * the calendar makes the lease far longer: the span is what is limited.
 */
TimestampTz
caio_expiry(TimestampTz now, Interval *ttl)
{
	TimestampTz expires_at;

	expires_at = DatumGetTimestampTz(DirectFunctionCall2(timestamptz_pl_interval,
														 TimestampTzGetDatum(now),
														 IntervalPGetDatum(ttl)));
	if (expires_at <= now)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("ttl must be positive"),
				 errdetail("The ttl given was %s, which ends no later than it starts.",
						   interval_text(ttl))));
	if (!caio_expiry_within_limit(now, expires_at))
	{
		Interval   *span = DatumGetIntervalP(DirectFunctionCall2(timestamp_mi,
																 TimestampTzGetDatum(expires_at),
																 TimestampTzGetDatum(now)));

		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("ttl must be at most %d days", CAIO_TTL_MAX_DAYS),
				 errdetail("The ttl given was %s, which would make the lease last %s.",
						   interval_text(ttl), interval_text(span)),
				 errhint("Hold a lease for a shorter time and renew it.")));
	}
	return expires_at;
}

/*
 * now - span, for an argument that says how long ago: refused when it is
 * negative, or when the calendar puts it later than now (months and days of
 * opposite signs).  The first test comes first, so that a huge negative span
 * is called negative rather than out of range.
 */
TimestampTz
caio_ago(TimestampTz now, Interval *span, const char *what)
{
	TimestampTz then = now;

	caio_check_finite(span, what);
	if (interval_usecs(span) >= 0)
		then = DatumGetTimestampTz(DirectFunctionCall2(timestamptz_mi_interval,
													   TimestampTzGetDatum(now),
													   IntervalPGetDatum(span)));
	if (interval_usecs(span) < 0 || then > now)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must not be negative", what),
				 errdetail("The %s given was %s.", what, interval_text(span))));
	return then;
}

/* ----------------------------------------------------------------
 * Tables that caio guards with its triggers
 * ----------------------------------------------------------------
 */

/*
 * Open the table an argument names, for its owner only.  Ownership and kind
 * are checked before the lock is taken, so that a caller cannot queue a
 * strong lock on a table that is not theirs.  caio's own tables are refused
 * even to their owner: a trigger or claim columns on them would break every
 * caio function.  A table with inheritance children is refused: row triggers
 * on a parent do not fire for its children's rows, so they would go
 * unguarded (partitions are fine: they get the trigger too).
 */
Relation
caio_table_open(FunctionCallInfo fcinfo, int argno, LOCKMODE mode)
{
	Oid			relid;
	char		relkind;
	Relation	rel;

	caio_arg_required(fcinfo, argno, "tbl", NULL);
	relid = PG_GETARG_OID(argno);
	relkind = get_rel_relkind(relid);
	if (relkind == '\0')		/* a regclass is any OID, not only a table's */
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	if (relkind != RELKIND_RELATION && relkind != RELKIND_PARTITIONED_TABLE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a table", get_rel_name(relid)),
				 errdetail("caio guards ordinary and partitioned tables only.")));
	if (getExtensionOfObject(RelationRelationId, relid) ==
		get_extension_oid("caio", false))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied: \"%s\" is one of caio's own tables",
						get_rel_name(relid)),
				 errdetail("caio's tables change only through caio's functions.")));
	if (!caio_rel_ownercheck(relid, GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_TABLE, get_rel_name(relid));
	rel = table_open(relid, mode);
	if (relkind == RELKIND_RELATION && has_subclass(relid))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("table \"%s\" has inheritance children", get_rel_name(relid)),
				 errdetail("Row triggers on a table do not fire for the rows of its children, so caio could not guard them."),
				 errhint("Use declarative partitioning, or guard each table on its own.")));
	return rel;
}

/* Whether a type, or the base type of a domain over it, is one of types. */
bool
caio_type_is_one_of(Oid typid, const Oid *types, int ntypes)
{
	for (int i = 0; i < ntypes; i++)
		if (typid == types[i])
			return true;
	typid = getBaseType(typid);
	for (int i = 0; i < ntypes; i++)
		if (typid == types[i])
			return true;
	return false;
}

void
caio_column_type_error(Relation rel, const char *column, const char *what,
					   Oid actual, const Oid *types, int ntypes)
{
	StringInfoData allowed;

	initStringInfo(&allowed);
	for (int i = 0; i < ntypes; i++)
		appendStringInfo(&allowed, "%s%s",
						 i == 0 ? "" : i == ntypes - 1 ? " or " : ", ",
						 format_type_be(types[i]));
	ereport(ERROR,
			(errcode(ERRCODE_DATATYPE_MISMATCH),
			 errmsg("column \"%s\" of relation \"%s\" cannot be the %s",
					column, RelationGetRelationName(rel), what),
			 errdetail("The %s must be of type %s; this column is of type %s.",
					   what, allowed.data, format_type_be(actual))));
}

/*
 * A column named by an argument, checked against the table (never pasted
 * into SQL): it must exist, be a plain stored column, and have one of the
 * given types.
 */
AttrNumber
caio_table_column(Relation rel, FunctionCallInfo fcinfo, int argno,
				  const char *what, const Oid *types, int ntypes)
{
	const char *column;
	AttrNumber	attnum;
	Form_pg_attribute attr;

	caio_arg_required(fcinfo, argno, what, NULL);
	column = NameStr(*PG_GETARG_NAME(argno));
	attnum = get_attnum(RelationGetRelid(rel), column);
	if (attnum <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"%s\" of relation \"%s\" does not exist",
						column, RelationGetRelationName(rel)),
				 errdetail("It was given as the %s.", what)));
	attr = TupleDescAttr(RelationGetDescr(rel), attnum - 1);
	if (attr->attgenerated)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("column \"%s\" of relation \"%s\" is a generated column",
						column, RelationGetRelationName(rel)),
				 errdetail("caio reads and sets the %s before generated columns are computed.",
						   what)));
	if (!caio_type_is_one_of(attr->atttypid, types, ntypes))
		caio_column_type_error(rel, column, what, attr->atttypid, types, ntypes);
	return attnum;
}

/*
 * The attribute number of a column that a trigger argument names, checked
 * again each time the trigger fires: the table may have changed since the
 * trigger was installed.
 */
int
caio_trigger_column(Relation rel, const char *column, const char *what,
					const Oid *types, int ntypes)
{
	int			attnum = SPI_fnumber(RelationGetDescr(rel), column);
	Oid			typid;

	if (attnum <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"%s\" of table \"%s\" does not exist",
						column, RelationGetRelationName(rel)),
				 errdetail("caio's trigger on the table names it as the %s.", what),
				 errhint("Install the trigger again after renaming or dropping a column it names.")));
	typid = TupleDescAttr(RelationGetDescr(rel), attnum - 1)->atttypid;
	if (!caio_type_is_one_of(typid, types, ntypes))
		caio_column_type_error(rel, column, what, typid, types, ntypes);
	return attnum;
}

/* A column caio writes must be a plain one: not generated, not an identity. */
void
caio_check_writable_column(Relation rel, int attnum, const char *what)
{
	Form_pg_attribute attr = TupleDescAttr(RelationGetDescr(rel), attnum - 1);

	if (attr->attgenerated || attr->attidentity)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("column \"%s\" of relation \"%s\" cannot be the %s",
						NameStr(attr->attname), RelationGetRelationName(rel), what),
				 errdetail("caio writes the %s, so it cannot be a generated or identity column.",
						   what)));
}

/*
 * The TriggerData of a call to one of caio's trigger functions, refused when
 * the function was not installed the way its installer installs it.
 */
TriggerData *
caio_trigger_data(FunctionCallInfo fcinfo, const char *installer, int nargs)
{
	TriggerData *td = (TriggerData *) fcinfo->context;

	if (!CALLED_AS_TRIGGER(fcinfo) ||
		!TRIGGER_FIRED_BEFORE(td->tg_event) ||
		!TRIGGER_FIRED_FOR_ROW(td->tg_event) ||
		td->tg_trigger->tgnargs != nargs)
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("%s() must be installed by %s()",
						get_func_name(fcinfo->flinfo->fn_oid), installer)));
	return td;
}

/*
 * (Re)install one of caio's BEFORE ROW triggers.  The caller owns the table
 * (caio_table_open checked); the trigger is created as the extension owner,
 * so that table owners need no EXECUTE grant on caio's trigger functions.
 * Arguments travel as trigger arguments, never as SQL text.
 */
void
caio_table_install_trigger(Relation rel, const char *trigger_name,
						   const char *function_name, List *args, int16 events)
{
	const CaioCatalog *cat = caio_catalog();
	Oid			relid = RelationGetRelid(rel);
	Oid			old_trigger = get_trigger_oid(relid, trigger_name, true);
	CreateTrigStmt *stmt = makeNode(CreateTrigStmt);
	Oid			saved_user;
	int			saved_context;

	if (OidIsValid(old_trigger))
	{
		ObjectAddress old = {TriggerRelationId, old_trigger, 0};

		performDeletion(&old, DROP_RESTRICT, 0);
		CommandCounterIncrement();
	}

	stmt->trigname = (char *) trigger_name;
	stmt->relation = makeRangeVar(get_namespace_name(RelationGetNamespace(rel)),
								  RelationGetRelationName(rel), -1);
	/* cppcheck-suppress unknownEvaluationOrder ; list_make2's cells are independent */
	stmt->funcname = list_make2(makeString(get_namespace_name(cat->schema)),
								makeString((char *) function_name));
	stmt->args = args;
	stmt->row = true;
	stmt->timing = TRIGGER_TYPE_BEFORE;
	stmt->events = events;

	GetUserIdAndSecContext(&saved_user, &saved_context);
	SetUserIdAndSecContext(cat->owner,
						   saved_context | SECURITY_LOCAL_USERID_CHANGE);
	CreateTrigger(stmt, NULL, relid, InvalidOid, InvalidOid, InvalidOid,
				  InvalidOid, InvalidOid, NULL, false, false);
	SetUserIdAndSecContext(saved_user, saved_context);
	CommandCounterIncrement();
}
