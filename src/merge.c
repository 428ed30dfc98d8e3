/*
 * merge.c
 *		Whether an UPDATE sets a column, also when a MERGE action runs it.
 *
 * A row trigger learns which columns an UPDATE sets from tg_updatedcols.
 * For MERGE, PostgreSQL gives every UPDATE action the union of the columns
 * that any of its UPDATE actions sets, so an action that leaves the token
 * column alone would pass for one that names the row's token.  caio takes
 * each action as the write it is.  It keeps the statements that run in this
 * backend (its ExecutorRun and ExecutorFinish hooks, the only places where a
 * statement's ModifyTable writes rows), finds the MERGE whose row fires the
 * trigger, and asks its actions.  From PostgreSQL 17 on, the MERGE names the
 * action that runs; before, caio knows only whether every UPDATE action
 * sets the column, or none does, or some do.
 *
 * A statement that started before this backend loaded caio (its first write
 * to a caio table loads it) passed no hook.  In the transaction that loaded
 * caio, a trigger that fires outside every hooked statement may fire in such
 * a statement, which caio cannot see into: the write is taken as what the
 * portal's own statement shows only when the trigger provably fires in it,
 * and as unseen otherwise (EXPLAIN ANALYZE, a function that runs a MERGE).
 */
#include "postgres.h"

#include "access/xact.h"
#include "commands/trigger.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "nodes/plannodes.h"
#include "parser/parsetree.h"
#include "tcop/pquery.h"
#include "utils/portal.h"
#include "utils/rel.h"

#include "caio.h"
#include "merge.h"

/* The statements that run in this backend, innermost first. */
typedef struct RunningStatement
{
	QueryDesc  *query;
	bool		looked;			/* merges holds what it runs */
	List	   *merges;			/* its ModifyTableStates that run a MERGE */
	struct RunningStatement *outer;
} RunningStatement;

static RunningStatement *running = NULL;

/*
 * Whether this transaction loaded caio while it ran: statements that started
 * before the load, which no hook saw, may still be running.
 */
static bool loaded_in_this_transaction = false;

static ExecutorRun_hook_type prev_ExecutorRun = NULL;
static ExecutorFinish_hook_type prev_ExecutorFinish = NULL;

static void
merge_ExecutorRun(CAIO_EXECUTOR_RUN_PARAMS)
{
	RunningStatement statement = {.query = queryDesc,.outer = running};

	running = &statement;
	PG_TRY();
	{
		if (prev_ExecutorRun)
			prev_ExecutorRun(CAIO_EXECUTOR_RUN_ARGS);
		else
			standard_ExecutorRun(CAIO_EXECUTOR_RUN_ARGS);
	}
	PG_FINALLY();
	{
		running = statement.outer;
	}
	PG_END_TRY();
}

/* A data-modifying CTE's ModifyTable may run here, after ExecutorRun. */
static void
merge_ExecutorFinish(QueryDesc *queryDesc)
{
	RunningStatement statement = {.query = queryDesc,.outer = running};

	running = &statement;
	PG_TRY();
	{
		if (prev_ExecutorFinish)
			prev_ExecutorFinish(queryDesc);
		else
			standard_ExecutorFinish(queryDesc);
	}
	PG_FINALLY();
	{
		running = statement.outer;
	}
	PG_END_TRY();
}

static void
merge_xact_callback(XactEvent event, void *arg pg_attribute_unused())
{
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		event == XACT_EVENT_PREPARE || event == XACT_EVENT_PARALLEL_COMMIT ||
		event == XACT_EVENT_PARALLEL_ABORT)
		loaded_in_this_transaction = false;
}

void
caio_merge_init(void)
{
	/* A preloaded library, or one loaded between transactions, saw them all. */
	loaded_in_this_transaction = !process_shared_preload_libraries_in_progress &&
		IsTransactionState();
	RegisterXactCallback(merge_xact_callback, NULL);
	prev_ExecutorRun = ExecutorRun_hook;
	ExecutorRun_hook = merge_ExecutorRun;
	prev_ExecutorFinish = ExecutorFinish_hook;
	ExecutorFinish_hook = merge_ExecutorFinish;
}

/* ----------------------------------------------------------------
 * Which actions set the column
 * ----------------------------------------------------------------
 */

/* What the UPDATE actions in a list of MergeActions do with a column. */
typedef struct ActionsSet
{
	int			setting;
	int			keeping;
} ActionsSet;

static void
actions_count(List *actions, int attnum, ActionsSet *count)
{
	ListCell   *lc;

	foreach(lc, actions)
	{
		MergeAction *action = lfirst(lc);

		if (IsA(action, MergeActionState))
			action = ((MergeActionState *) action)->mas_action;
		if (action->commandType != CMD_UPDATE)
			continue;
		if (list_member_int(action->updateColnos, attnum))
			count->setting++;
		else
			count->keeping++;
	}
}

static CaioColumnWrite
actions_verdict(const ActionsSet *count)
{
	if (count->keeping == 0)
		return CAIO_COLUMN_SET;
	if (count->setting == 0)
		return CAIO_COLUMN_KEPT;
	return CAIO_COLUMN_UNKNOWN;
}

/* ----------------------------------------------------------------
 * A MERGE seen through the hooks
 * ----------------------------------------------------------------
 */

static bool
collect_merges(PlanState *planstate, void *context)
{
	List	  **merges = (List **) context;

	if (planstate == NULL)
		return false;
	if (IsA(planstate, ModifyTableState) &&
		((ModifyTableState *) planstate)->operation == CMD_MERGE)
		*merges = list_append_unique_ptr(*merges, planstate);
	return planstate_tree_walker(planstate, collect_merges, context);
}

/*
 * The MERGEs a statement runs: at its top, or in a WITH clause (whose
 * ModifyTables are among the executor's subplans).  Looked for once per run,
 * and only in a statement that can hold one.
 */
static List *
statement_merges(RunningStatement *statement)
{
	QueryDesc  *query = statement->query;
	MemoryContext old_context;
	ListCell   *lc;

	if (statement->looked)
		return statement->merges;
	statement->looked = true;
	if (query->operation != CMD_MERGE && !query->plannedstmt->hasModifyingCTE)
		return NIL;

	/* Kept for the statement's next rows: a trigger runs in a row's memory. */
	old_context = MemoryContextSwitchTo(query->estate->es_query_cxt);
	collect_merges(query->planstate, &statement->merges);
	foreach(lc, query->estate->es_subplanstates)
		collect_merges(lfirst(lc), &statement->merges);
	MemoryContextSwitchTo(old_context);
	return statement->merges;
}

/* The column as the action of a MERGE that updates rel's row sets it. */
static bool
merge_state_verdict(ModifyTableState *merge, const RelationData *rel, int attnum,
					CaioColumnWrite *verdict)
{
	for (int i = 0; i < merge->mt_nrels; i++)
	{
		ResultRelInfo *target = &merge->resultRelInfo[i];
		MergeActionState *action;
		ActionsSet	count = {0};

		if (target->ri_RelationDesc != rel)
			continue;
		action = CAIO_MERGE_RUNNING_ACTION(merge);
		/* cppcheck-suppress knownConditionTrueFalse ; always NULL before PostgreSQL 17 (compat.h) */
		if (action != NULL && action->mas_action->commandType == CMD_UPDATE)
			*verdict = list_member_int(action->mas_action->updateColnos, attnum)
				? CAIO_COLUMN_SET : CAIO_COLUMN_KEPT;
		else
		{
			List	   *lists[] = CAIO_MERGE_UPDATE_ACTION_LISTS(target);

			for (int l = 0; l < (int) lengthof(lists); l++)
				actions_count(lists[l], attnum, &count);
			*verdict = actions_verdict(&count);
		}
		return true;
	}
	return false;
}

/* ----------------------------------------------------------------
 * A MERGE that started before caio was loaded
 * ----------------------------------------------------------------
 */

/*
 * Whether plan is a ModifyTable that runs a MERGE; if it runs it on rel, the
 * verdict of its actions there.  A MERGE on another table (rel's partitioned
 * parent among them) leaves the verdict unknown.
 */
static bool
merge_plan_verdict(const PlannedStmt *stmt, const Plan *plan, Oid relid,
				   int attnum, CaioColumnWrite *verdict)
{
	const ModifyTable *modify = (const ModifyTable *) plan;
	ListCell   *rti;
	ListCell   *actions;

	if (plan == NULL || !IsA(plan, ModifyTable) || modify->operation != CMD_MERGE)
		return false;
	*verdict = CAIO_COLUMN_UNKNOWN;
	forboth(rti, modify->resultRelations, actions, modify->mergeActionLists)
	{
		ActionsSet	count = {0};

		if (rt_fetch(lfirst_int(rti), stmt->rtable)->relid != relid)
			continue;
		actions_count(lfirst(actions), attnum, &count);
		*verdict = actions_verdict(&count);
		break;
	}
	return true;
}

/*
 * Whether the trigger that runs fires in the portal's own statement, not in
 * one that a function, a trigger or EXPLAIN runs inside it.  A row trigger
 * runs in its executor's per-tuple context, a child of the executor's query
 * context, which the portal's statement makes in the portal's context (a
 * statement run through SPI, in SPI's; EXPLAIN's, in a context of its own).
 * Called from the trigger, in the context it was called in.
 */
static bool
fires_in_portal_statement(void)
{
	MemoryContext query = MemoryContextGetParent(CurrentMemoryContext);

	return query != NULL &&
		MemoryContextGetParent(query) == ActivePortal->portalContext;
}

/*
 * The write whose row fires the trigger, in the transaction that loaded caio
 * and outside every statement the hooks saw.  It is established only as the
 * portal's one statement, when the trigger fires in it: a plain UPDATE or an
 * INSERT ... ON CONFLICT DO UPDATE (whose tg_updatedcols are exact), or its
 * one MERGE on rel, whose UPDATE actions all set the column or all keep it.
 * Anything else, a MERGE whose actions differ among them, is unseen.
 */
static CaioColumnWrite
load_statement_verdict(Relation rel, int attnum)
{
	PlannedStmt *stmt;
	CaioColumnWrite verdict = CAIO_COLUMN_SET;
	int			merges = 0;
	ListCell   *sub;

	if (ActivePortal == NULL || list_length(ActivePortal->stmts) != 1 ||
		!fires_in_portal_statement())
		return CAIO_COLUMN_UNSEEN;
	stmt = linitial_node(PlannedStmt, ActivePortal->stmts);
	if (stmt->commandType == CMD_UTILITY)
		return CAIO_COLUMN_UNSEEN;
	merges += merge_plan_verdict(stmt, stmt->planTree, RelationGetRelid(rel),
								 attnum, &verdict);
	foreach(sub, stmt->subplans)
		merges += merge_plan_verdict(stmt, lfirst(sub), RelationGetRelid(rel),
									 attnum, &verdict);
	if (merges > 1 || verdict == CAIO_COLUMN_UNKNOWN)
		return CAIO_COLUMN_UNSEEN;
	return verdict;
}

/*
 * Whether the UPDATE whose row fires a BEFORE ROW trigger (td) sets column
 * attnum of its table.
 */
CaioColumnWrite
caio_update_sets(const TriggerData *td, int attnum)
{
	CaioColumnWrite verdict = CAIO_COLUMN_SET;
	ListCell   *lc;

	if (!bms_is_member(attnum - FirstLowInvalidHeapAttributeNumber,
					   td->tg_updatedcols))
		return CAIO_COLUMN_KEPT;
	/* The trigger fires in the innermost statement that runs. */
	if (running == NULL)
		return loaded_in_this_transaction
			? load_statement_verdict(td->tg_relation, attnum) : CAIO_COLUMN_SET;
	foreach(lc, statement_merges(running))
		if (merge_state_verdict(lfirst(lc), td->tg_relation, attnum, &verdict))
			break;
	return verdict;
}
