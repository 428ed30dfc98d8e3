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
 * caller's privileges.  Its order is not SQL that caio runs: it is a list
 * of the table's columns, which caio checks and writes into its statement
 * itself.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/relation.h"
#include "access/table.h"
#include "catalog/partition.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_trigger.h"
#include "catalog/pg_type.h"
#include "commands/event_trigger.h"
#include "commands/tablecmds.h"
#include "commands/trigger.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "parser/parser.h"
#include "parser/parse_type.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/typcache.h"

#include "caio.h"
#include "args.h"
#include "catalog.h"
#include "citus.h"
#include "clock.h"
#include "guard.h"
#include "merge.h"
#include "refusal.h"
#include "stats.h"
#include "token.h"
#include "search_path.h"

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

/*
 * The claims running in this backend, innermost first (a claim can run in a
 * trigger that another claim fired).  Each names its table, and once it
 * gives its rows their new tokens, the rows (table and tuple) and the
 * tokens, which the trigger lets through: each entry that one write and no
 * other.
 */
typedef struct ClaimRun
{
	Relation	rel;
	int			count;
	const Oid  *reloids;
	const ItemPointerData *tids;
	const int64 *tokens;
	const struct ClaimRun *outer;
} ClaimRun;

static const ClaimRun *claims_running = NULL;

static bool
claim_in_progress(Oid relid, ItemPointer tid, int64 token)
{
	for (const ClaimRun *run = claims_running; run != NULL; run = run->outer)
		for (int i = 0; i < run->count; i++)
			if (run->tokens[i] == token && run->reloids[i] == relid &&
				ItemPointerEquals((ItemPointer) &run->tids[i], tid))
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
		{
			caio_check_writable_column(rel, attnum, "claim column");
			(void) caio_trigger_column(rel, claim_columns[i].name, "claim column",
									   &claim_columns[i].type, 1);
		}
	}
	if (missing != NIL)
	{
		/*
		 * Event triggers collect what an ALTER TABLE command does; this one
		 * runs inside whatever statement called caio_claimable (a SELECT, a
		 * CREATE TABLE AS), which has no ALTER TABLE command to add to.
		 */
		EventTriggerInhibitCommandCollection();
		AlterTableInternal(RelationGetRelid(rel), missing, true);
		EventTriggerUndoInhibitCommandCollection();
		CommandCounterIncrement();
	}
}

Datum
caio_claimable(PG_FUNCTION_ARGS)
{
	Relation	rel;

	caio_require_trusted_search_path("caio_claimable");
	/* The strongest lock at once: adding columns would otherwise upgrade it. */
	rel = caio_table_open(fcinfo, 0, AccessExclusiveLock);

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

/* A row's claim columns, as the trigger reads them. */
typedef struct ClaimState
{
	int64		token;			/* 0 when it has none */
	bool		holder_null;
	bool		expires_null;
	Datum		holder;
	TimestampTz expires_at;
} ClaimState;

static void
claim_state(HeapTuple row, TupleDesc desc, const int *att, ClaimState *state)
{
	bool		isnull;
	Datum		token = SPI_getbinval(row, desc, att[CLAIM_TOKEN], &isnull);

	state->token = isnull ? 0 : DatumGetInt64(token);
	state->holder = SPI_getbinval(row, desc, att[CLAIM_HOLDER], &state->holder_null);
	state->expires_at = DatumGetTimestampTz(SPI_getbinval(row, desc, att[CLAIM_EXPIRES_AT],
														  &state->expires_null));
}

/*
 * Whether a row is held: it has a token, a holder and an expiry.  A row
 * whose holder or expiry was cleared under its token was released, and its
 * token will never be the token of a claim again.
 */
static bool
claim_held(const ClaimState *state)
{
	return state->token != 0 && !state->holder_null && !state->expires_null;
}

/* Whether a row's claim is live: held, and not expired by caio's clock. */
static bool
claim_live(const ClaimState *state)
{
	return claim_held(state) && state->expires_at > caio_clock_now(NULL);
}

/*
 * The holder's own write to its row (the token is right, the claim held):
 * it may renew, release, or leave the claim as it is, but a release clears
 * both columns (a row half released would hide from caio_claim, or be taken
 * over while it names a holder), and a renew keeps to caio_claim's ttl limit.
 */
static void
claim_check_holder_write(Relation rel, const ClaimState *old, const ClaimState *new)
{
	TimestampTz now;
	char	   *asked;

	if (new->holder_null != new->expires_null)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a claim is released by clearing both claim_holder and claim_expires_at"),
				 errdetail("The write to a row of table \"%s\" set %s to NULL but not %s.",
						   RelationGetRelationName(rel),
						   new->holder_null ? "claim_holder" : "claim_expires_at",
						   new->holder_null ? "claim_expires_at" : "claim_holder"),
				 errhint("Set both to NULL to release the claim, or neither to keep it."),
				 errtable(rel)));
	if (new->expires_null || new->expires_at == old->expires_at)
		return;

	now = caio_clock_now(NULL);
	if (caio_expiry_within_limit(now, new->expires_at))
		return;
	/* timestamptz_to_str's result lives until its next call. */
	asked = pstrdup(timestamptz_to_str(new->expires_at));
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("a claim may be renewed for at most %d days", CAIO_TTL_MAX_DAYS),
			 errdetail("The write set claim_expires_at to %s, and caio_now() is %s.",
					   asked, timestamptz_to_str(now)),
			 errhint("Renew for a shorter time (caio_claim's ttl has the same limit), and renew again before it ends."),
			 errtable(rel)));
}

/*
 * Whether a write gives a column of a row a value the row did not have: a
 * non-NULL value, on an INSERT (old is NULL) or where the old row's was NULL
 * or another one.
 */
static bool
claim_gives_holder(const ClaimState *old, const ClaimState *new)
{
	text	   *before;
	text	   *after;

	if (new->holder_null)
		return false;
	if (old == NULL || old->holder_null)
		return true;
	before = DatumGetTextPP(old->holder);
	after = DatumGetTextPP(new->holder);
	return VARSIZE_ANY_EXHDR(before) != VARSIZE_ANY_EXHDR(after) ||
		memcmp(VARDATA_ANY(before), VARDATA_ANY(after), VARSIZE_ANY_EXHDR(after)) != 0;
}

static bool
claim_gives_expiry(const ClaimState *old, const ClaimState *new)
{
	if (new->expires_null)
		return false;
	return old == NULL || old->expires_null || old->expires_at != new->expires_at;
}

/*
 * A write to a row without a claim token (old is NULL for an INSERT): it
 * holds nothing, and no write may make it look held, by giving it a
 * claim_holder or a claim_expires_at.  Only caio_claim claims a row, and
 * it gives the row its token with them.  (Without this, a role that may
 * update the claim columns could set an unclaimed row's expiry far ahead;
 * caio_claim takes a row without a token whatever its expiry, but the row
 * would look held to anyone reading it.)  A row written so before caio
 * refused it keeps its values through writes that leave them as they are,
 * so that such rows do not stop the application's own writes; clearing
 * them is always allowed.
 */
static void
claim_check_unclaimed_write(Relation rel, const ClaimState *old, const ClaimState *new)
{
	bool		holder = claim_gives_holder(old, new);
	bool		expiry = claim_gives_expiry(old, new);

	if (!holder && !expiry)
		return;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("a claim is granted by caio_claim only"),
			 errdetail("The write to a row of table \"%s\" set %s, but the row has no claim token: it is not claimed.",
					   RelationGetRelationName(rel),
					   holder && expiry ? "claim_holder and claim_expires_at" :
					   holder ? "claim_holder" : "claim_expires_at"),
			 errhint("Leave claim_holder and claim_expires_at NULL on a row without a claim token, and claim the row with caio_claim() to hold it."),
			 errtable(rel)));
}

/*
 * Once a row has a claim token, every UPDATE must set claim_token to it, and
 * once its claim was released, no UPDATE can name that token any more;
 * nobody but caio_claim may give a row a new token, or hold it again, nor
 * give a row without a token a holder or an expiry; a row under a live
 * claim cannot be deleted (a DELETE cannot name a token).
 */
Datum
caio_claim_trigger(PG_FUNCTION_ARGS)
{
	TriggerData *td = caio_trigger_data(fcinfo, "caio_claimable", 0);
	Relation	rel = td->tg_relation;
	TupleDesc	desc = RelationGetDescr(rel);
	HeapTuple	result = td->tg_newtuple ? td->tg_newtuple : td->tg_trigtuple;
	int			att[CLAIM_NCOLUMNS];
	ClaimState	old = {0};
	ClaimState	new;
	CaioColumnWrite sets_token;

	caio_citus_serve_here("claims");

	for (int i = 0; i < CLAIM_NCOLUMNS; i++)
		att[i] = caio_trigger_column(rel, claim_columns[i].name, "claim column",
									 &claim_columns[i].type, 1);

	if (TRIGGER_FIRED_BY_DELETE(td->tg_event))
	{
		claim_state(td->tg_trigtuple, desc, att, &old);
		if (claim_live(&old))
			caio_refuse_missing_claim(rel, old.token, CAIO_CLAIM_DELETE);
		return PointerGetDatum(td->tg_trigtuple);
	}

	if (TRIGGER_FIRED_BY_UPDATE(td->tg_event))
		claim_state(td->tg_trigtuple, desc, att, &old);
	claim_state(result, desc, att, &new);
	/* Whether the write sets claim_token: of an UPDATE, what merge.c says. */
	sets_token = TRIGGER_FIRED_BY_UPDATE(td->tg_event)
		? caio_update_sets(td, att[CLAIM_TOKEN]) : CAIO_COLUMN_SET;

	if (TRIGGER_FIRED_BY_UPDATE(td->tg_event) &&
		claim_in_progress(RelationGetRelid(rel), &td->tg_trigtuple->t_self, new.token))
		;						/* caio_claim giving the row its new token */
	else if (old.token == 0)
	{
		if (new.token != 0)
			caio_refuse_stale_claim(rel, new.token, 0, false);
		claim_check_unclaimed_write(rel, TRIGGER_FIRED_BY_UPDATE(td->tg_event) ? &old : NULL,
									&new);
	}
	else if (sets_token == CAIO_COLUMN_KEPT)
		caio_refuse_missing_claim(rel, old.token, CAIO_CLAIM_NOT_SET);
	else if (sets_token == CAIO_COLUMN_UNKNOWN && new.token == old.token)
		caio_refuse_missing_claim(rel, old.token, CAIO_CLAIM_MERGE_UNKNOWN);
	else if (sets_token == CAIO_COLUMN_UNSEEN && new.token == old.token)
		caio_refuse_missing_claim(rel, old.token, CAIO_CLAIM_UNSEEN);
	else if (new.token == 0)
		caio_refuse_missing_claim(rel, old.token, CAIO_CLAIM_SET_NULL);
	else if (new.token != old.token)
		caio_refuse_stale_claim(rel, new.token, old.token, false);
	else if (!claim_held(&old))
		caio_refuse_stale_claim(rel, new.token, old.token, true);
	else
	{
		claim_check_holder_write(rel, &old, &new);
		caio_count(CAIO_WRITES_ACCEPTED, 1);
	}

	return PointerGetDatum(result);
}

/* ----------------------------------------------------------------
 * caio_claim
 * ----------------------------------------------------------------
 */

/*
 * A caller's text (a filter, an order) is parsed inside a statement of
 * caio's, after its prefix; errors point into the text, not into the
 * caller's statement, and say which argument it was.
 */
typedef struct ClaimText
{
	const char *text;
	int			prefix_len;
	const char *argument;
} ClaimText;

static void
claim_text_error_callback(void *arg)
{
	const ClaimText *text = (const ClaimText *) arg;
	int			position = geterrposition();

	if (position > text->prefix_len)
	{
		errposition(0);
		internalerrposition(position - text->prefix_len);
		internalerrquery(text->text);
	}
	errcontext("caio_claim %s", text->argument);
}

/* The raw statements that prefix followed by the caller's text parses to. */
static List *
claim_parse_text(const char *prefix, const char *text, const char *argument)
{
	ClaimText	arg = {.text = text, .prefix_len = (int) strlen(prefix), .argument = argument};
	ErrorContextCallback callback = {
		.previous = error_context_stack,
		.callback = claim_text_error_callback,
		.arg = (void *) &arg
	};
	char	   *sql = psprintf("%s%s", prefix, text);
	List	   *parsed;

	error_context_stack = &callback;
	parsed = raw_parser(sql, RAW_PARSE_DEFAULT);
	error_context_stack = callback.previous;
	pfree(sql);
	return parsed;
}

/*
 * The one SELECT that the caller's text made of caio's statement, if it
 * parsed to one SELECT, with none of the clauses that it must not add: no
 * FROM, WHERE, GROUP BY, WINDOW, VALUES, LIMIT, OFFSET, FOR UPDATE, WITH,
 * INTO, DISTINCT or set operation.  NULL otherwise.  The target list and
 * the ORDER BY are left to the caller, each of which expects one of them.
 */
static SelectStmt *
claim_parsed_select(List *parsed)
{
	SelectStmt *select;

	if (list_length(parsed) != 1 ||
		!IsA(linitial_node(RawStmt, parsed)->stmt, SelectStmt))
		return NULL;
	select = (SelectStmt *) linitial_node(RawStmt, parsed)->stmt;
	if (select->op != SETOP_NONE ||
		select->distinctClause != NIL || select->intoClause != NULL ||
		select->fromClause != NIL || select->whereClause != NULL ||
		select->groupClause != NIL || select->havingClause != NULL ||
		select->windowClause != NIL || select->valuesLists != NIL ||
		select->limitOffset != NULL || select->limitCount != NULL ||
		select->lockingClause != NIL || select->withClause != NULL)
		return NULL;
	return select;
}

/*
 * A filter is one boolean expression over the table's columns, pasted into
 * caio's statements: check that it parses as exactly that, so that it cannot
 * close the parenthesis it sits in, add clauses, or run other statements.
 */
static void
claim_check_filter(const char *filter)
{
	SelectStmt *select = claim_parsed_select(claim_parse_text("SELECT ", filter, "filter"));

	if (select == NULL || select->sortClause != NIL ||
		list_length(select->targetList) != 1 ||
		linitial_node(ResTarget, select->targetList)->name != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("filter must be a single boolean expression"),
				 errdetail("The filter is placed in a WHERE clause; it cannot hold clauses or statements of its own."),
				 errhint("Write a condition on the table's columns, such as state = 'pending'.")));
}

/*
 * An order is a sort list over the table's own columns, each ASC or DESC and
 * NULLS FIRST or LAST, and nothing else: no expression, so no function call
 * (a side effect, run for every row the claim sorts), no subquery (a read
 * of other tables), no operator of USING, no collation.  It is parsed as the
 * ORDER BY of a statement of caio's, and caio writes the ORDER BY it
 * prepares itself, from the column names it found in the table, each
 * quoted: nothing of the caller's text reaches the statement.
 */
pg_noreturn static void
claim_order_not_a_sort_list(const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_SYNTAX_ERROR),
			 errmsg("order_by must be a sort list of the table's columns"),
			 errdetail("The order_by holds %s; it may hold only column names, each with ASC or DESC and NULLS FIRST or NULLS LAST.",
					   what),
			 errhint("Write the columns to claim by, such as priority DESC, run_at, id.")));
}

/*
 * A column to sort by needs a type with an ordering; checked here so that
 * the error names the column, not the statement caio prepares.
 */
static void
claim_order_check_sortable(Relation rel, AttrNumber attnum, const char *name)
{
	Oid			type = TupleDescAttr(RelationGetDescr(rel), attnum - 1)->atttypid;
	TypeCacheEntry *entry = lookup_type_cache(type, TYPECACHE_LT_OPR | TYPECACHE_GT_OPR);

	if (!OidIsValid(entry->lt_opr) || !OidIsValid(entry->gt_opr))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FUNCTION),
				 errmsg("column \"%s\" of table \"%s\" cannot be sorted",
						name, RelationGetRelationName(rel)),
				 errdetail("Its type %s has no default ordering.", format_type_be(type)),
				 errhint("Sort by another column, or by a column of a type that has one."),
				 errtable(rel)));
}

/* The one column a sort key names: a bare column name, or nothing. */
static const char *
claim_order_column(const SortBy *key)
{
	const ColumnRef *column;

	if (!IsA(key->node, ColumnRef))
		return NULL;
	column = (const ColumnRef *) key->node;
	if (list_length(column->fields) != 1 || !IsA(linitial(column->fields), String))
		return NULL;
	return strVal(linitial(column->fields));
}

/*
 * The sort list for an order, written from the table's column names; an
 * order that is not a sort list of the table's columns is refused.
 */
static char *
claim_order_sql(Relation rel, const char *order)
{
	SelectStmt *select = claim_parsed_select(claim_parse_text("SELECT ORDER BY ", order, "order_by"));
	List	   *keys = select != NULL && select->targetList == NIL ? select->sortClause : NIL;
	ListCell   *lc;
	StringInfoData sql;

	if (keys == NIL)
		claim_order_not_a_sort_list("clauses or statements of its own");

	/* Every key is a column name before any name is looked up. */
	foreach(lc, keys)
	{
		const SortBy *key = lfirst_node(SortBy, lc);

		if (claim_order_column(key) == NULL)
			claim_order_not_a_sort_list("an expression");
		if (key->sortby_dir == SORTBY_USING || key->useOp != NIL)
			claim_order_not_a_sort_list("an operator of USING");
	}

	initStringInfo(&sql);
	foreach(lc, keys)
	{
		const SortBy *key = lfirst_node(SortBy, lc);
		const char *name = claim_order_column(key);
		AttrNumber	attnum = get_attnum(RelationGetRelid(rel), name);

		if (attnum == InvalidAttrNumber || attnum < 0)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("column \"%s\" of table \"%s\" does not exist",
							name, RelationGetRelationName(rel)),
					 attnum < 0 ?
					 errdetail("\"%s\" is a system column; order_by sorts by the table's own columns.", name) :
					 errdetail("order_by sorts by the table's own columns."),
					 errtable(rel)));
		claim_order_check_sortable(rel, attnum, name);
		appendStringInfo(&sql, "%s%s%s%s", foreach_current_index(lc) > 0 ? ", " : "",
						 quote_identifier(name),
						 key->sortby_dir == SORTBY_DESC ? " DESC" :
						 key->sortby_dir == SORTBY_ASC ? " ASC" : "",
						 key->sortby_nulls == SORTBY_NULLS_FIRST ? " NULLS FIRST" :
						 key->sortby_nulls == SORTBY_NULLS_LAST ? " NULLS LAST" : "");
	}
	return sql.data;
}

/*
 * The statements for one table, filter and order, prepared once and kept.
 * They name the table by its qualified name; a table renamed since gets new
 * ones.  The order is kept as the caller wrote it, so that a claim that
 * finds its plans does not parse it again.
 * A slot that a running claim uses is never reused by a claim nested in it.
 */
typedef struct ClaimPlans
{
	Oid			relid;
	int			in_use;
	char	   *table_sql;
	char	   *filter;			/* NULL for none */
	char	   *order;			/* NULL for none */
	SPIPlanPtr	pick;
	SPIPlanPtr	take;
} ClaimPlans;

#define CLAIM_PLAN_SLOTS 16
static ClaimPlans claim_plans[CLAIM_PLAN_SLOTS];
static int	claim_plans_next = 0;

static SPIPlanPtr
claim_prepare(const char *sql, int nargs, Oid *argtypes)
{
	SPIPlanPtr	plan = SPI_prepare_cursor(sql, nargs, argtypes,
										  CURSOR_OPT_GENERIC_PLAN);

	if (plan == NULL)
		elog(ERROR, "caio could not prepare its claim: %s",
			 SPI_result_code_string(SPI_result));
	return plan;
}

/* Whether two optional strings are the same: both NULL, or equal. */
static bool
claim_same_text(const char *a, const char *b)
{
	return a == NULL ? b == NULL : b != NULL && strcmp(a, b) == 0;
}

static bool
claim_plans_match(const ClaimPlans *slot, Oid relid, const char *table_sql,
				  const char *filter, const char *order)
{
	return slot->pick != NULL && slot->relid == relid &&
		strcmp(slot->table_sql, table_sql) == 0 &&
		claim_same_text(slot->filter, filter) &&
		claim_same_text(slot->order, order);
}

/* A slot to keep new plans in, emptied; NULL when every slot is in use. */
static ClaimPlans *
claim_plans_free_slot(void)
{
	for (int tries = 0; tries < CLAIM_PLAN_SLOTS; tries++)
	{
		ClaimPlans *slot = &claim_plans[claim_plans_next];

		claim_plans_next = (claim_plans_next + 1) % CLAIM_PLAN_SLOTS;
		if (slot->in_use > 0)
			continue;
		if (slot->pick != NULL)
		{
			SPI_freeplan(slot->pick);
			SPI_freeplan(slot->take);
			pfree(slot->table_sql);
			if (slot->filter)
				pfree(slot->filter);
			if (slot->order)
				pfree(slot->order);
			slot->pick = NULL;
		}
		return slot;
	}
	return NULL;
}

/*
 * The statement that gives picked rows their claims: $1 holder, $2 expiry,
 * and three arrays, the picked rows' table OIDs, TIDs and new tokens.  An
 * ordinary table has one OID, and its rows are found with one TID scan of
 * the whole array (a join would rescan the table's TIDs row by row, asking
 * the file system for the table's size each time), each row's token by its
 * TID's place in the array (see CLAIM_TAKE_CHUNK); the rows of a
 * partitioned table are matched on (tableoid, ctid), since TIDs repeat
 * across partitions.
 */
static char *
claim_take_sql(Relation rel, const char *table_sql)
{
	if (rel->rd_rel->relkind == RELKIND_RELATION)
		return psprintf("UPDATE ONLY %s AS caio_claimed"
						"   SET claim_holder = $1, claim_expires_at = $2,"
						"       claim_token = ($5)[pg_catalog.array_position($4, caio_claimed.ctid)]"
						" WHERE caio_claimed.ctid OPERATOR(pg_catalog.=) ANY ($4)"
						" RETURNING caio_claimed.*", table_sql);
	return psprintf("UPDATE %s AS caio_claimed"
					"   SET claim_holder = $1, claim_token = caio_picked.token,"
					"       claim_expires_at = $2"
					"  FROM ROWS FROM (pg_catalog.unnest($3), pg_catalog.unnest($4),"
					"                 pg_catalog.unnest($5))"
					"       AS caio_picked(reloid, tid, token)"
					" WHERE caio_claimed.tableoid OPERATOR(pg_catalog.=) caio_picked.reloid"
					"   AND caio_claimed.ctid OPERATOR(pg_catalog.=) caio_picked.tid"
					" RETURNING caio_claimed.*", table_sql);
}

/*
 * The plans for a table, filter and order.  Both are prepared before either
 * is kept, so that a filter or order that fails to prepare leaves the cache
 * as it was.
 * An ordinary table is read with ONLY: its trigger does not guard rows of
 * tables that inherit from it.
 */
static ClaimPlans *
claim_plans_for(Relation rel, const char *filter, const char *order)
{
	Oid			relid = RelationGetRelid(rel);
	char	   *table_sql = quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
													   RelationGetRelationName(rel));
	const char *only = rel->rd_rel->relkind == RELKIND_RELATION ? "ONLY " : "";
	Oid			pick_args[2] = {TIMESTAMPTZOID, INT4OID};
	Oid			take_args[5] = {TEXTOID, TIMESTAMPTZOID, OIDARRAYOID, TIDARRAYOID,
	INT8ARRAYOID};
	SPIPlanPtr	pick;
	SPIPlanPtr	take;
	ClaimPlans *slot;
	char	   *sort_list = NULL;

	for (int i = 0; i < CLAIM_PLAN_SLOTS; i++)
		if (claim_plans_match(&claim_plans[i], relid, table_sql, filter, order))
			return &claim_plans[i];

	if (filter != NULL)
		claim_check_filter(filter);
	if (order != NULL)
		sort_list = claim_order_sql(rel, order);
	/* Shows when a claim prepares, and so when it found its plans kept. */
	elog(DEBUG1, "caio_claim prepares its statements for table \"%s\"%s%s",
		 RelationGetRelationName(rel), sort_list ? " sorted by " : "",
		 sort_list ? sort_list : "");
	/*
	 * Most rows of a queue are finished ones that the filter leaves out, so
	 * the filter is tested first.  PostgreSQL tests a scan's conditions
	 * cheapest first, and moves a column = constant filter behind conditions
	 * that cost as much; the "+ 0" costs the expiry test one operator more,
	 * so that each condition of the filter that costs up to two operators
	 * comes first.  It costs the rows the filter keeps one addition, when
	 * they have an expiry.
	 * A row without a token is unclaimed whatever its expiry: the trigger
	 * gives such a row no expiry now, but caio before 0.6.0 let any write
	 * set one.  The test of the token costs the planner nothing (a NULL
	 * test is no operator), so it moves no condition, and the indexes that
	 * match the filter and the order match as before.
	 */
	pick = claim_prepare(psprintf("SELECT tableoid, ctid FROM %s%s WHERE (\n%s\n)"
								  " AND (claim_token IS NULL OR claim_expires_at IS NULL"
								  " OR claim_expires_at"
								  " OPERATOR(pg_catalog.<=) ($1 OPERATOR(pg_catalog.+)"
								  " '0'::pg_catalog.interval))"
								  "%s LIMIT $2 FOR UPDATE SKIP LOCKED",
								  only, table_sql, filter ? filter : "true",
								  sort_list ? psprintf(" ORDER BY %s", sort_list) : ""),
						 2, pick_args);
	take = claim_prepare(claim_take_sql(rel, table_sql), 5, take_args);

	slot = claim_plans_free_slot();
	if (slot == NULL)
	{
		/* Claims nested too deep to keep plans for: use these once. */
		slot = palloc0(sizeof(ClaimPlans));
		slot->pick = pick;
		slot->take = take;
		slot->order = order ? pstrdup(order) : NULL;
		return slot;
	}
	SPI_keepplan(pick);
	SPI_keepplan(take);
	slot->pick = pick;
	slot->take = take;
	slot->relid = relid;
	slot->table_sql = MemoryContextStrdup(TopMemoryContext, table_sql);
	slot->filter = filter ? MemoryContextStrdup(TopMemoryContext, filter) : NULL;
	slot->order = order ? MemoryContextStrdup(TopMemoryContext, order) : NULL;
	return slot;
}

/*
 * What keeps caio's claim trigger on one table (the claimable one, or one of
 * its partitions) from fencing the rows caio_claim hands out, as a detail;
 * NULL when nothing does.  The trigger must be caio's, as caio_claimable put
 * it, and fire for the writes of ordinary sessions and of this one: enabled
 * in origin or always mode, and not origin mode in a session whose
 * session_replication_role is replica; and for every write: no WHEN clause,
 * no column list.
 */
static char *
claim_trigger_problem(Relation rel)
{
	const int16 events = TRIGGER_TYPE_ROW | TRIGGER_TYPE_BEFORE | TRIGGER_TYPE_INSERT |
		TRIGGER_TYPE_UPDATE | TRIGGER_TYPE_DELETE;
	const char *table = RelationGetRelationName(rel);
	TriggerDesc *triggers = rel->trigdesc;

	for (int i = 0; triggers != NULL && i < triggers->numtriggers; i++)
	{
		Trigger    *trigger = &triggers->triggers[i];
		FmgrInfo	function;

		if (strcmp(trigger->tgname, CLAIM_TRIGGER_NAME) != 0)
			continue;
		fmgr_info(trigger->tgfoid, &function);
		if ((trigger->tgtype & events) != events || function.fn_addr != caio_claim_trigger)
			break;
		if (trigger->tgenabled == TRIGGER_DISABLED)
			return psprintf("The trigger caio_claim on table \"%s\" is disabled.", table);
		if (trigger->tgenabled == TRIGGER_FIRES_ON_REPLICA)
			return psprintf("The trigger caio_claim on table \"%s\" is enabled in replica mode only, so it does not fire for ordinary writes.",
							table);
		if (trigger->tgenabled == TRIGGER_FIRES_ON_ORIGIN &&
			SessionReplicationRole == SESSION_REPLICATION_ROLE_REPLICA)
			return psprintf("session_replication_role is replica, so the trigger caio_claim on table \"%s\", enabled in origin mode, does not fire in this session.",
							table);
		return caio_guard_trigger_gap(table, trigger);
	}
	return psprintf("Table \"%s\" has no trigger caio_claim of caio's.", table);
}

/*
 * The same for a claimable table and, if it is partitioned, each of its
 * partitions, whose own trigger (a clone of the table's) fires for their rows.
 */
static char *
claim_table_problem(Relation rel)
{
	char	   *problem = claim_trigger_problem(rel);
	ListCell   *lc;

	if (problem != NULL || rel->rd_rel->relkind != RELKIND_PARTITIONED_TABLE)
		return problem;
	foreach(lc, find_all_inheritors(RelationGetRelid(rel), AccessShareLock, NULL))
	{
		Relation	part;

		if (lfirst_oid(lc) == RelationGetRelid(rel))
			continue;
		part = relation_open(lfirst_oid(lc), NoLock);
		if (part->rd_rel->relkind == RELKIND_RELATION)
			problem = claim_trigger_problem(part);
		relation_close(part, NoLock);
		if (problem != NULL)
			return problem;
	}
	return NULL;
}

/*
 * A refusal of claim_check_privileges: 42501, with the table (as
 * errtable would name it) and what to grant.
 */
pg_noreturn static void
claim_privilege_refused(Oid table, const char *name, const char *detail,
						const char *grant)
{
	char	   *schema = get_namespace_name(get_rel_namespace(table));

	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("permission denied to claim rows of table \"%s\"", name),
			 errdetail("%s", detail),
			 errhint("Have the table's owner run %s.", grant),
			 schema ? err_generic_string(PG_DIAG_SCHEMA_NAME, schema) : 0,
			 err_generic_string(PG_DIAG_TABLE_NAME, name)));
}

/*
 * Whether the caller may claim rows of the table: the statements that claim
 * run as the caller, and need more than a table's privileges that let it
 * read and write some columns.  The pick reads the rows' system columns
 * ctid and tableoid, which only SELECT on the whole table grants (no column
 * privilege covers a system column), and locks them FOR UPDATE; the take
 * writes the three claim columns (UPDATE on the table, or on each of them)
 * and returns the rows whole.  Checked up front, so that a caller without
 * them is told what to grant rather than refused inside caio's statement,
 * and before the table is locked, so that a caller with no business on the
 * table cannot queue behind, or in front of, the locks of those who have
 * (as PostgreSQL's RangeVarGetRelidExtended callbacks do).
 */
static void
claim_check_privileges(Oid table, const char *name)
{
	Oid			role = GetUserId();
	char	   *schema;
	char	   *table_sql;
	char	   *role_name;
	char	   *role_sql;
	const char *missing[CLAIM_NCOLUMNS];
	int			nmissing = 0;
	bool		may_select = pg_class_aclcheck(table, role, ACL_SELECT) == ACLCHECK_OK;

	if (may_select && pg_class_aclcheck(table, role, ACL_UPDATE) == ACLCHECK_OK)
		return;

	schema = get_namespace_name(get_rel_namespace(table));
	table_sql = schema ? quote_qualified_identifier(schema, name) : pstrdup(quote_identifier(name));
	role_name = GetUserNameFromId(role, false);
	role_sql = pstrdup(quote_identifier(role_name));

	if (!may_select)
		claim_privilege_refused(table, name,
								psprintf("caio_claim needs SELECT on the whole table, which role \"%s\" lacks: it reads the rows' system columns ctid and tableoid, which SELECT on some of its columns does not grant.",
										 role_name),
								psprintf("GRANT SELECT ON %s TO %s", table_sql, role_sql));

	/*
	 * UPDATE on each claim column that the table has (a table without them
	 * is refused later as not claimable, 55000), and on some column.
	 */
	for (int i = 0; i < CLAIM_NCOLUMNS; i++)
	{
		AttrNumber	attnum = get_attnum(table, claim_columns[i].name);

		if (attnum != InvalidAttrNumber &&
			pg_attribute_aclcheck(table, attnum, role, ACL_UPDATE) != ACLCHECK_OK)
			missing[nmissing++] = claim_columns[i].name;
	}
	if (nmissing > 0 ||
		pg_attribute_aclcheck_all(table, role, ACL_UPDATE, ACLMASK_ANY) != ACLCHECK_OK)
		claim_privilege_refused(table, name,
								psprintf("caio_claim writes the columns claim_holder, claim_token and claim_expires_at, and role \"%s\" may not update %s.",
										 role_name,
										 nmissing == 0 ? "any column of the table" :
										 nmissing == 1 ? missing[0] :
										 nmissing == 2 ? psprintf("%s and %s", missing[0], missing[1]) :
										 "any of them"),
								psprintf("GRANT UPDATE ON %s TO %s, or GRANT UPDATE (claim_holder, claim_token, claim_expires_at) ON %s TO %s",
										 table_sql, role_sql, table_sql, role_sql));
}

/*
 * The claimable table that a NULL::table argument names, opened.  It is
 * claimable when caio's claim trigger on it is in place and enabled: without
 * it, nothing would fence the rows that caio_claim hands out.
 */
static Relation
claim_table_open(FunctionCallInfo fcinfo)
{
	Oid			type = get_fn_expr_argtype(fcinfo->flinfo, 0);
	Oid			relid = OidIsValid(type) ? typeidTypeRelid(type) : InvalidOid;
	char		relkind = OidIsValid(relid) ? get_rel_relkind(relid) : '\0';
	char	   *name = OidIsValid(relid) ? get_rel_name(relid) : NULL;
	Relation	rel;
	char	   *problem;

	if (relkind != RELKIND_RELATION && relkind != RELKIND_PARTITIONED_TABLE)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("rowtype must name a table, as NULL::table_name"),
				 errdetail("The rowtype given is of type %s.",
						   OidIsValid(type) ? format_type_be(type) : "unknown")));
	claim_check_privileges(relid, name);
	rel = try_relation_open(relid, AccessShareLock);
	if (rel == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("table \"%s\" was dropped", name),
				 errdetail("Another transaction dropped the table while caio_claim waited for it.")));
	problem = claim_table_problem(rel);
	if (problem != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("table \"%s\" is not claimable", RelationGetRelationName(rel)),
				 errdetail("%s", problem),
				 errhint("Run caio_claimable('%s') first, and keep its trigger enabled (ALTER TABLE ... ENABLE TRIGGER caio_claim).",
						 quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
													RelationGetRelationName(rel)))));
	return rel;
}

/* Whether two tables share rows: the same table, or a partition and its ancestor. */
static bool
claim_tables_overlap(Oid a, Oid b)
{
	return a == b ||
		(get_rel_relispartition(a) && list_member_oid(get_partition_ancestors(a), b)) ||
		(get_rel_relispartition(b) && list_member_oid(get_partition_ancestors(b), a));
}

/*
 * A claim nested in a claim on the same rows (called from the outer one's
 * filter, or from a trigger that it fired) would change rows that the outer
 * one has picked, and the outer one would then hand out claims it never
 * wrote.  Refused before either touches a row.
 */
static void
claim_check_not_nested(Relation rel)
{
	for (const ClaimRun *run = claims_running; run != NULL; run = run->outer)
		if (claim_tables_overlap(RelationGetRelid(rel), RelationGetRelid(run->rel)))
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_IN_USE),
					 errmsg("caio_claim cannot run inside a caio_claim on the same rows"),
					 errdetail("A caio_claim on table \"%s\" is running in this session, and this claim on table \"%s\" was called from its filter or from a trigger it fired.",
							   RelationGetRelationName(run->rel), RelationGetRelationName(rel)),
					 errhint("Claim the rows in one caio_claim, or in one claim after the other."),
					 errtable(rel)));
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

/*
 * The filter (argument 4) or the order (argument 5), NULL for none; blank is
 * an error, with a hint of what NULL means.  The order is also NULL when the
 * function's SQL definition is the one of caio 0.5.0 (a database not yet
 * updated), which has no order_by.
 */
static char *
claim_arg_text(FunctionCallInfo fcinfo, int argno, const char *name, const char *if_null)
{
	char	   *value;

	if (PG_NARGS() <= argno || PG_ARGISNULL(argno))
		return NULL;
	value = text_to_cstring(PG_GETARG_TEXT_PP(argno));
	if (value[strspn(value, " \t\r\n")] == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must not be empty", name),
				 errhint("Pass NULL to %s.", if_null)));
	return value;
}

/* Set up the tuplestore that caio_claim fills with the claimed rows. */
static Tuplestorestate *
claim_result(FunctionCallInfo fcinfo, Relation rel, TupleDesc *desc)
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
	*desc = CreateTupleDescCopy(RelationGetDescr(rel));
	rsinfo->returnMode = SFRM_Materialize;
	rsinfo->setResult = store;
	rsinfo->setDesc = *desc;
	MemoryContextSwitchTo(old);
	return store;
}

/*
 * Add the rows the take statement returned to the result, in the order
 * that rows lists (NULL: as they came).  RETURNING gives the table's live
 * columns in order; the rowtype also has a place for each dropped column,
 * which stays null.
 */
static void
claim_store_rows(SPITupleTable *taken, uint64 count, const int *rows,
				 TupleDesc desc, Tuplestorestate *store)
{
	Datum	   *values = palloc(desc->natts * sizeof(Datum));
	bool	   *nulls = palloc(desc->natts * sizeof(bool));

	for (uint64 i = 0; i < count; i++)
	{
		uint64		row = rows ? (uint64) rows[i] : i;
		int			from = 1;

		for (int att = 0; att < desc->natts; att++)
		{
			if (TupleDescAttr(desc, att)->attisdropped)
			{
				values[att] = (Datum) 0;
				nulls[att] = true;
				continue;
			}
			if (from > taken->tupdesc->natts)
				elog(ERROR, "caio's claim returned fewer columns than the table has");
			values[att] = SPI_getbinval(taken->vals[row], taken->tupdesc, from++,
										&nulls[att]);
		}
		tuplestore_putvalues(store, desc, values, nulls);
	}
	caio_count(CAIO_ROWS_CLAIMED, count);
}

/*
 * The take statement finds each row's token with a linear search of the
 * TIDs, so large claims are taken in chunks of this many rows.
 */
#define CLAIM_TAKE_CHUNK 64

/*
 * The rows were picked and locked, but the statement that claims them left
 * some alone: a BEFORE UPDATE trigger of the table's returned NULL for them
 * (or the filter changed them after they were picked).  Handing them out
 * would give claims that no row holds, so the whole claim fails, with the
 * SQLSTATE of data changes that a trigger got in the way of.
 */
pg_noreturn static void
claim_not_written(Relation rel, int missing)
{
	ereport(ERROR,
			(errcode(ERRCODE_TRIGGERED_DATA_CHANGE_VIOLATION),
			 errmsg("caio_claim could not write its claim to %d of the rows it picked in table \"%s\"",
					missing, RelationGetRelationName(rel)),
			 errdetail("A BEFORE UPDATE trigger on the table returned NULL for them, or the claim's filter changed them after they were picked."),
			 errhint("Let the table's own BEFORE UPDATE triggers return the new row when caio_claim sets the claim columns."),
			 errtable(rel)));
}

/*
 * The take statement returns rows in the order of their TIDs.  With an
 * order_by, the result lists them in the order they were picked, which is
 * the order of their new tokens (tokens[i] is the i-th picked row's): the
 * first of the order first.  A row whose token is none of them (a BEFORE
 * UPDATE trigger that fired after caio's changed it) is not refused here,
 * as it is not without an order: it comes last.
 */
static int *
claim_rows_in_pick_order(const SPITupleTable *taken, int n, const int64 *tokens)
{
	int		   *rows = palloc(n * sizeof(int));
	bool	   *placed = palloc0(n * sizeof(bool));
	int			token_att = SPI_fnumber(taken->tupdesc, claim_columns[CLAIM_TOKEN].name);
	int			next = 0;

	for (int i = 0; i < n && token_att > 0; i++)
		for (int row = 0; row < n; row++)
		{
			bool		isnull;
			Datum		token;

			if (placed[row])
				continue;
			token = SPI_getbinval(taken->vals[row], taken->tupdesc, token_att, &isnull);
			if (!isnull && DatumGetInt64(token) == tokens[i])
			{
				rows[next++] = row;
				placed[row] = true;
				break;
			}
		}
	for (int row = 0; row < n; row++)
		if (!placed[row])
			rows[next++] = row;
	pfree(placed);
	return rows;
}

/* Run the take statement on rows [first, first + n) of the arrays. */
static void
claim_take_chunk(ClaimPlans *plans, Relation rel, Datum *values, const Oid *reloids,
				 const ItemPointerData *tids, const int64 *tokens, int n,
				 TupleDesc desc, Tuplestorestate *store)
{
	Datum	   *datums = palloc(n * sizeof(Datum));

	for (int i = 0; i < n; i++)
		datums[i] = ObjectIdGetDatum(reloids[i]);
	values[2] = PointerGetDatum(construct_array(datums, n, OIDOID,
												sizeof(Oid), true, TYPALIGN_INT));
	for (int i = 0; i < n; i++)
		datums[i] = PointerGetDatum(&tids[i]);
	values[3] = PointerGetDatum(construct_array(datums, n, TIDOID,
												sizeof(ItemPointerData), false,
												TYPALIGN_SHORT));
	for (int i = 0; i < n; i++)
		datums[i] = Int64GetDatum(tokens[i]);
	values[4] = PointerGetDatum(construct_array(datums, n, INT8OID,
												sizeof(int64), FLOAT8PASSBYVAL,
												TYPALIGN_DOUBLE));

	if (SPI_execute_plan(plans->take, values, NULL, false, 0) != SPI_OK_UPDATE_RETURNING)
		elog(ERROR, "caio could not take the picked rows");
	if (SPI_processed != (uint64) n)
		claim_not_written(rel, n - (int) SPI_processed);
	claim_store_rows(SPI_tuptable, SPI_processed,
					 plans->order ? claim_rows_in_pick_order(SPI_tuptable, n, tokens) : NULL,
					 desc, store);
}

/*
 * Give the picked rows their claims, each with a new token drawn now that
 * the rows are locked; add them to the result.
 */
static void
claim_take(ClaimPlans *plans, ClaimRun *run, SPITupleTable *picked, uint64 count,
		   const char *holder, TimestampTz expires_at,
		   TupleDesc desc, Tuplestorestate *store)
{
	Oid		   *reloids = palloc(count * sizeof(Oid));
	ItemPointerData *tids = palloc(count * sizeof(ItemPointerData));
	int64	   *tokens = palloc(count * sizeof(int64));
	Datum		values[5];
	bool		isnull;

	for (uint64 i = 0; i < count; i++)
	{
		reloids[i] = DatumGetObjectId(SPI_getbinval(picked->vals[i], picked->tupdesc, 1, &isnull));
		tids[i] = *(ItemPointer) DatumGetPointer(SPI_getbinval(picked->vals[i], picked->tupdesc, 2, &isnull));
	}
	caio_token_next_n(tokens, (int) count);
	values[0] = CStringGetTextDatum(holder);
	values[1] = TimestampTzGetDatum(expires_at);

	run->count = (int) count;
	run->reloids = reloids;
	run->tids = tids;
	run->tokens = tokens;
	for (uint64 first = 0; first < count; first += CLAIM_TAKE_CHUNK)
		claim_take_chunk(plans, run->rel, values, &reloids[first], &tids[first],
						 &tokens[first], (int) Min(CLAIM_TAKE_CHUNK, count - first),
						 desc, store);
}

/* Pick rows with no live claim, up to max_rows, and claim them. */
static void
claim_rows(ClaimPlans *plans, ClaimRun *run, TimestampTz now, int32 max_rows,
		   const char *holder, TimestampTz expires_at,
		   TupleDesc desc, Tuplestorestate *store)
{
	Datum		values[2] = {TimestampTzGetDatum(now), Int32GetDatum(max_rows)};

	if (SPI_execute_plan(plans->pick, values, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "caio could not pick rows to claim");
	if (SPI_processed > 0)
		claim_take(plans, run, SPI_tuptable, SPI_processed, holder, expires_at,
				   desc, store);
}

Datum
caio_claim(PG_FUNCTION_ARGS)
{
	Relation	rel = claim_table_open(fcinfo);
	char	   *holder = caio_arg_name(fcinfo, 1, "holder");
	Interval   *ttl = caio_arg_ttl(fcinfo, 2);
	int32		max_rows = claim_arg_max_rows(fcinfo);
	char	   *filter = claim_arg_text(fcinfo, 4, "filter", "claim any unclaimed row");
	char	   *order = claim_arg_text(fcinfo, 5, "order_by", "claim rows in the order the plan finds them");
	TupleDesc	desc;
	Tuplestorestate *store = claim_result(fcinfo, rel, &desc);
	TimestampTz now = caio_clock_now(NULL);
	TimestampTz expires_at = caio_expiry(now, ttl);
	ClaimRun	run = {.rel = rel, .outer = claims_running};
	ClaimPlans *volatile plans;

	caio_require_trusted_search_path_for_superuser("caio_claim");
	caio_citus_serve_here("claims");

	claim_check_not_nested(rel);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	plans = claim_plans_for(rel, filter, order);
	plans->in_use++;
	claims_running = &run;
	PG_TRY();
	{
		claim_rows(plans, &run, now, max_rows, holder, expires_at, desc, store);
	}
	PG_FINALLY();
	{
		claims_running = run.outer;
		plans->in_use--;
	}
	PG_END_TRY();
	SPI_finish();
	table_close(rel, NoLock);

	return (Datum) 0;
}
