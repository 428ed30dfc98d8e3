/*
 * claims.c
 *		Expiring work claims with fencing tokens.
 *
 * A claimable table has three columns, claim_holder, claim_token and
 * claim_expires_at, and caio's trigger.  caio_claim picks rows that nobody
 * holds a live claim on (FOR UPDATE SKIP LOCKED, so it never waits on rows
 * that others are claiming) and gives each a new token from the same
 * sequence as leases.  From then on the row's claim_token is the newest
 * token for the row: a write to the row must set claim_token to it (LK003
 * when it sets nothing, LK001 when it names another), so a worker whose
 * claim was taken over cannot finish the row.
 *
 * The claim runs as the caller: its filter is the caller's SQL, with the
 * caller's privileges.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/pg_trigger.h"
#include "catalog/pg_type.h"
#include "commands/tablecmds.h"
#include "commands/trigger.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "parser/parse_type.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/typcache.h"

#include "caio.h"

PG_FUNCTION_INFO_V1(caio_claimable);
PG_FUNCTION_INFO_V1(caio_claim);
PG_FUNCTION_INFO_V1(caio_claim_trigger);

#define CLAIM_TRIGGER_NAME	"caio_claim"
#define CLAIM_MAX_ROWS		10000

/* The claim columns: their names and types are the contract's. */
typedef struct ClaimColumn
{
	const char *name;
	Oid			type;
} ClaimColumn;

enum
{
	CLAIM_HOLDER,
	CLAIM_TOKEN,
	CLAIM_EXPIRES_AT,
	CLAIM_NCOLUMNS
};

static const ClaimColumn claim_columns[CLAIM_NCOLUMNS] = {
	{"claim_holder", TEXTOID},
	{"claim_token", INT8OID},
	{"claim_expires_at", TIMESTAMPTZOID}
};

/* The tokens caio_claim is writing right now, which the trigger lets through. */
static int64 *claim_tokens = NULL;
static int	claim_token_count = 0;

static bool
claim_in_progress(int64 token)
{
	for (int i = 0; i < claim_token_count; i++)
		if (claim_tokens[i] == token)
			return true;
	return false;
}

/* ----------------------------------------------------------------
 * caio_claimable
 * ----------------------------------------------------------------
 */

/* Add the claim columns that are missing; check the types of the others. */
static void
claimable_columns(Relation rel)
{
	List	   *missing = NIL;

	for (int i = 0; i < CLAIM_NCOLUMNS; i++)
	{
		AttrNumber	attnum = get_attnum(RelationGetRelid(rel), claim_columns[i].name);

		if (attnum == InvalidAttrNumber)
		{
			AlterTableCmd *cmd = makeNode(AlterTableCmd);

			cmd->subtype = AT_AddColumn;
			cmd->def = (Node *) makeColumnDef(claim_columns[i].name,
											  claim_columns[i].type, -1,
											  InvalidOid);
			missing = lappend(missing, cmd);
		}
		else
			(void) caio_trigger_column(rel, claim_columns[i].name, "claim column",
									   &claim_columns[i].type, 1);
	}
	if (missing != NIL)
	{
		AlterTableInternal(RelationGetRelid(rel), missing, true);
		CommandCounterIncrement();
	}
}

Datum
caio_claimable(PG_FUNCTION_ARGS)
{
	Relation	rel = caio_table_open(fcinfo, 0);

	claimable_columns(rel);
	caio_table_install_trigger(rel, CLAIM_TRIGGER_NAME, "caio_claim_trigger", NIL,
							   TRIGGER_TYPE_INSERT | TRIGGER_TYPE_UPDATE |
							   TRIGGER_TYPE_DELETE);
	table_close(rel, NoLock);
	PG_RETURN_VOID();
}

/* ----------------------------------------------------------------
 * The trigger
 * ----------------------------------------------------------------
 */

static const char *claim_hint =
"Name the token your claim returned; if the row's token is newer, the claim was taken over: stop working on the row.";

static void refuse_claim_write(Relation rel, int64 named, int64 current) pg_attribute_noreturn();
static void refuse_claim_missing(Relation rel, int64 current, const char *what,
								 const char *hint) pg_attribute_noreturn();

static void
refuse_claim_write(Relation rel, int64 named, int64 current)
{
	ereport(ERROR,
			(errcode(ERRCODE_CAIO_FENCING),
			 errmsg("stale claim token for a row of table \"%s\"",
					RelationGetRelationName(rel)),
			 current == 0
			 ? errdetail("The write named claim token " INT64_FORMAT ", but the row was never claimed; claim tokens come from caio_claim() only.",
						 named)
			 : errdetail("The write named claim token " INT64_FORMAT ", but the row's claim token is " INT64_FORMAT ".",
						 named, current),
			 errhint("%s", claim_hint), errtable(rel)));
}

static void
refuse_claim_missing(Relation rel, int64 current, const char *what,
					 const char *hint)
{
	ereport(ERROR,
			(errcode(ERRCODE_CAIO_FENCING_MISSING),
			 errmsg("missing claim token for a row of table \"%s\"",
					RelationGetRelationName(rel)),
			 errdetail("The row is claimed under token " INT64_FORMAT "; %s.", current, what),
			 errhint("%s", hint),
			 errtable(rel)));
}

/* A row's claim token, or 0 when it has none. */
static int64
row_token(HeapTuple row, TupleDesc desc, int attnum)
{
	bool		isnull;
	Datum		value = SPI_getbinval(row, desc, attnum, &isnull);

	return isnull ? 0 : DatumGetInt64(value);
}

/* Whether a row's claim is live: held, and not expired by caio's clock. */
static bool
row_claim_live(HeapTuple row, TupleDesc desc, const int *att)
{
	bool		holder_null;
	bool		expires_null;
	Datum		expires;

	(void) SPI_getbinval(row, desc, att[CLAIM_HOLDER], &holder_null);
	expires = SPI_getbinval(row, desc, att[CLAIM_EXPIRES_AT], &expires_null);
	return !holder_null && !expires_null &&
		DatumGetTimestampTz(expires) > caio_clock_now(NULL);
}

/*
 * Once a row has a claim token, every UPDATE must set claim_token to it;
 * nobody but caio_claim may give a row a new one; a row under a live claim
 * cannot be deleted (a DELETE cannot name a token).
 */
Datum
caio_claim_trigger(PG_FUNCTION_ARGS)
{
	TriggerData *td = caio_trigger_data(fcinfo, "caio_claimable", 0);
	Relation	rel = td->tg_relation;
	TupleDesc	desc = RelationGetDescr(rel);
	int			att[CLAIM_NCOLUMNS];
	int64		old_token = 0;
	int64		new_token;

	for (int i = 0; i < CLAIM_NCOLUMNS; i++)
		att[i] = caio_trigger_column(rel, claim_columns[i].name, "claim column",
									 &claim_columns[i].type, 1);

	if (TRIGGER_FIRED_BY_DELETE(td->tg_event))
	{
		if (row_claim_live(td->tg_trigtuple, desc, att))
			refuse_claim_missing(rel, row_token(td->tg_trigtuple, desc, att[CLAIM_TOKEN]),
								 "a DELETE cannot name it",
								 "Release the claim first (an UPDATE that sets claim_holder and claim_expires_at to NULL and names the token), or let it expire.");
		return PointerGetDatum(td->tg_trigtuple);
	}

	if (TRIGGER_FIRED_BY_UPDATE(td->tg_event))
		old_token = row_token(td->tg_trigtuple, desc, att[CLAIM_TOKEN]);
	new_token = row_token(td->tg_newtuple ? td->tg_newtuple : td->tg_trigtuple,
						  desc, att[CLAIM_TOKEN]);

	if (new_token != 0 && claim_in_progress(new_token))
		;						/* caio_claim giving the row its new token */
	else if (old_token == 0)
	{
		if (new_token != 0)
			refuse_claim_write(rel, new_token, 0);
	}
	else if (!bms_is_member(att[CLAIM_TOKEN] - FirstLowInvalidHeapAttributeNumber,
							td->tg_updatedcols))
		refuse_claim_missing(rel, old_token, "the write did not set claim_token",
							 "Set claim_token to the token your claim returned.");
	else if (new_token == 0)
		refuse_claim_missing(rel, old_token, "the write set claim_token to NULL",
							 "Set claim_token to the token your claim returned.");
	else if (new_token != old_token)
		refuse_claim_write(rel, new_token, old_token);

	return PointerGetDatum(td->tg_newtuple ? td->tg_newtuple : td->tg_trigtuple);
}

/* ----------------------------------------------------------------
 * caio_claim
 * ----------------------------------------------------------------
 */

/*
 * The statements for one table and filter, prepared once and kept.  They
 * name the table by its qualified name; a table renamed since gets new ones.
 */
typedef struct ClaimPlans
{
	Oid			relid;
	char	   *table_sql;
	char	   *filter;			/* NULL for none */
	SPIPlanPtr	pick;
	SPIPlanPtr	take;
} ClaimPlans;

#define CLAIM_PLAN_SLOTS 16
static ClaimPlans claim_plans[CLAIM_PLAN_SLOTS];
static int	claim_plans_next = 0;

static SPIPlanPtr
claim_prepare(const char *sql, int nargs, Oid *argtypes, bool single)
{
	SPIPlanPtr	plan = SPI_prepare_cursor(sql, nargs, argtypes,
										  CURSOR_OPT_GENERIC_PLAN);

	if (plan == NULL)
		elog(ERROR, "caio could not prepare its claim: %s",
			 SPI_result_code_string(SPI_result));
	if (single && list_length(SPI_plan_get_plan_sources(plan)) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("filter must be a single boolean expression")));
	SPI_keepplan(plan);
	return plan;
}

static ClaimPlans *
claim_plans_for(Oid relid, const char *filter)
{
	char	   *table_sql = quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
													   get_rel_name(relid));
	ClaimPlans *slot;
	char	   *sql;
	Oid			pick_args[2] = {TIMESTAMPTZOID, INT4OID};
	Oid			take_args[5] = {TEXTOID, TIMESTAMPTZOID, OIDARRAYOID, TIDARRAYOID,
	INT8ARRAYOID};

	for (int i = 0; i < CLAIM_PLAN_SLOTS; i++)
	{
		slot = &claim_plans[i];
		if (slot->pick != NULL && slot->relid == relid &&
			strcmp(slot->table_sql, table_sql) == 0 &&
			(slot->filter == NULL ? filter == NULL :
			 filter != NULL && strcmp(slot->filter, filter) == 0))
			return slot;
	}

	slot = &claim_plans[claim_plans_next];
	claim_plans_next = (claim_plans_next + 1) % CLAIM_PLAN_SLOTS;
	if (slot->pick != NULL)
	{
		SPI_freeplan(slot->pick);
		SPI_freeplan(slot->take);
		pfree(slot->table_sql);
		if (slot->filter)
			pfree(slot->filter);
		slot->pick = NULL;
	}

	sql = psprintf("SELECT tableoid, ctid FROM %s"
				   " WHERE (claim_expires_at IS NULL"
				   "        OR claim_expires_at OPERATOR(pg_catalog.<=) $1)"
				   "   AND (%s)"
				   " LIMIT $2 FOR UPDATE SKIP LOCKED",
				   table_sql, filter ? filter : "true");
	slot->pick = claim_prepare(sql, 2, pick_args, true);
	sql = psprintf("UPDATE %s AS t"
				   "   SET claim_holder = $1, claim_token = v.token, claim_expires_at = $2"
				   "  FROM ROWS FROM (pg_catalog.unnest($3), pg_catalog.unnest($4),"
				   "                 pg_catalog.unnest($5)) AS v(reloid, tid, token)"
				   " WHERE t.tableoid OPERATOR(pg_catalog.=) v.reloid"
				   "   AND t.ctid OPERATOR(pg_catalog.=) v.tid"
				   " RETURNING t", table_sql);
	slot->take = claim_prepare(sql, 5, take_args, false);

	slot->relid = relid;
	slot->table_sql = MemoryContextStrdup(TopMemoryContext, table_sql);
	slot->filter = filter ? MemoryContextStrdup(TopMemoryContext, filter) : NULL;
	return slot;
}

/* The claimable table that a NULL::table argument names. */
static Oid
claim_table_of(FunctionCallInfo fcinfo)
{
	Oid			type = get_fn_expr_argtype(fcinfo->flinfo, 0);
	Oid			relid = OidIsValid(type) ? typeidTypeRelid(type) : InvalidOid;

	if (!OidIsValid(relid) || get_rel_relkind(relid) == RELKIND_VIEW ||
		get_rel_relkind(relid) == RELKIND_COMPOSITE_TYPE)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("rowtype must name a table, as NULL::table_name"),
				 errdetail("The rowtype given is of type %s.",
						   OidIsValid(type) ? format_type_be(type) : "unknown")));
	if (!OidIsValid(get_trigger_oid(relid, CLAIM_TRIGGER_NAME, true)))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("table \"%s\" is not claimable", get_rel_name(relid)),
				 errhint("Run caio_claimable('%s') first.", get_rel_name(relid))));
	return relid;
}

static int32
claim_arg_max_rows(FunctionCallInfo fcinfo)
{
	int32		max_rows;

	caio_arg_required(fcinfo, 3, "max_rows", NULL);
	max_rows = PG_GETARG_INT32(3);
	if (max_rows < 1 || max_rows > CLAIM_MAX_ROWS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_rows must be between 1 and %d", CLAIM_MAX_ROWS),
				 errdetail("The max_rows given was %d.", max_rows)));
	return max_rows;
}

static char *
claim_arg_filter(FunctionCallInfo fcinfo)
{
	char	   *filter;

	if (PG_ARGISNULL(4))
		return NULL;
	filter = text_to_cstring(PG_GETARG_TEXT_PP(4));
	if (filter[strspn(filter, " \t\r\n")] == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("filter must not be empty"),
				 errhint("Pass NULL to claim any unclaimed row.")));
	return filter;
}

/* Set up the tuplestore that caio_claim fills with the claimed rows. */
static Tuplestorestate *
claim_result(FunctionCallInfo fcinfo, Oid relid)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemoryContext old;
	Tuplestorestate *store;

	if (rsinfo == NULL || !IsA(rsinfo, ReturnSetInfo) ||
		!(rsinfo->allowedModes & SFRM_Materialize))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("caio_claim() must be called where a set of rows is expected"),
				 errhint("Use SELECT * FROM caio_claim(...).")));

	old = MemoryContextSwitchTo(rsinfo->econtext->ecxt_per_query_memory);
	store = tuplestore_begin_heap(true, false, work_mem);
	rsinfo->returnMode = SFRM_Materialize;
	rsinfo->setResult = store;
	rsinfo->setDesc = lookup_rowtype_tupdesc_copy(get_rel_type_id(relid), -1);
	MemoryContextSwitchTo(old);
	return store;
}

/*
 * Give the picked rows their claims, in one statement, each with a new
 * token drawn now that the rows are locked; add them to the result.
 */
static void
claim_take(ClaimPlans *plans, SPITupleTable *picked, uint64 count,
		   const char *holder, TimestampTz expires_at, Tuplestorestate *store)
{
	Datum	   *reloids = palloc(count * sizeof(Datum));
	Datum	   *tids = palloc(count * sizeof(Datum));
	Datum	   *tokens = palloc(count * sizeof(Datum));
	int64	   *drawn = palloc(count * sizeof(int64));
	Datum		values[5];
	bool		isnull;
	uint64		taken;

	for (uint64 i = 0; i < count; i++)
	{
		reloids[i] = SPI_getbinval(picked->vals[i], picked->tupdesc, 1, &isnull);
		tids[i] = SPI_getbinval(picked->vals[i], picked->tupdesc, 2, &isnull);
		drawn[i] = caio_token_next();
		tokens[i] = Int64GetDatum(drawn[i]);
	}
	values[0] = CStringGetTextDatum(holder);
	values[1] = TimestampTzGetDatum(expires_at);
	values[2] = PointerGetDatum(construct_array(reloids, (int) count, OIDOID,
												sizeof(Oid), true, TYPALIGN_INT));
	values[3] = PointerGetDatum(construct_array(tids, (int) count, TIDOID,
												sizeof(ItemPointerData), false,
												TYPALIGN_SHORT));
	values[4] = PointerGetDatum(construct_array(tokens, (int) count, INT8OID,
												sizeof(int64), FLOAT8PASSBYVAL,
												TYPALIGN_DOUBLE));

	claim_tokens = drawn;
	claim_token_count = (int) count;
	PG_TRY();
	{
		if (SPI_execute_plan(plans->take, values, NULL, false, 0) != SPI_OK_UPDATE_RETURNING)
			elog(ERROR, "caio could not take the picked rows");
	}
	PG_FINALLY();
	{
		claim_tokens = NULL;
		claim_token_count = 0;
	}
	PG_END_TRY();

	taken = SPI_processed;
	if (taken != count)
		elog(ERROR, "caio's claim took " UINT64_FORMAT " of " UINT64_FORMAT " picked rows",
			 taken, count);
	for (uint64 i = 0; i < taken; i++)
	{
		HeapTupleHeader row = DatumGetHeapTupleHeader(SPI_getbinval(SPI_tuptable->vals[i],
																	SPI_tuptable->tupdesc,
																	1, &isnull));
		HeapTupleData tuple;

		tuple.t_len = HeapTupleHeaderGetDatumLength(row);
		ItemPointerSetInvalid(&tuple.t_self);
		tuple.t_tableOid = InvalidOid;
		tuple.t_data = row;
		tuplestore_puttuple(store, &tuple);
	}
}

Datum
caio_claim(PG_FUNCTION_ARGS)
{
	Oid			relid = claim_table_of(fcinfo);
	char	   *holder = caio_arg_name(fcinfo, 1, "holder");
	Interval   *ttl = caio_arg_ttl(fcinfo, 2);
	int32		max_rows = claim_arg_max_rows(fcinfo);
	char	   *filter = claim_arg_filter(fcinfo);
	Tuplestorestate *store = claim_result(fcinfo, relid);
	TimestampTz now = caio_clock_now(NULL);
	TimestampTz expires_at = caio_expiry(now, ttl);
	ClaimPlans *plans;
	Datum		values[2];
	SPITupleTable *picked;
	uint64		count;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	plans = claim_plans_for(relid, filter);

	values[0] = TimestampTzGetDatum(now);
	values[1] = Int32GetDatum(max_rows);
	if (SPI_execute_plan(plans->pick, values, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "caio could not pick rows to claim");
	picked = SPI_tuptable;
	count = SPI_processed;
	if (count > 0)
		claim_take(plans, picked, count, holder, expires_at, store);
	SPI_finish();

	return (Datum) 0;
}
