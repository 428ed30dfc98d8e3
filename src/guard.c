/*
 * guard.c
 *		The user tables that caio guards with its triggers (fenced, versioned
 *		and claimable tables): opened for their owner only, the columns a
 *		caller or a trigger names checked against the table, and caio's
 *		BEFORE ROW triggers installed as the extension owner.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/table.h"
#include "catalog/dependency.h"
#include "catalog/indexing.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_trigger.h"
#include "commands/event_trigger.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "parser/parse_func.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "caio.h"
#include "args.h"
#include "catalog.h"
#include "citus.h"
#include "guard.h"

PG_FUNCTION_INFO_V1(caio_guard_inheritance);

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
	if (getExtensionOfObject(RelationRelationId, relid) == caio_catalog()->extension)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied: \"%s\" is one of caio's own tables",
						get_rel_name(relid)),
				 errdetail("caio's tables change only through caio's functions.")));
	if (!caio_rel_ownercheck(relid, GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_TABLE, get_rel_name(relid));
	rel = table_open(relid, mode);
	caio_citus_refuse_table(relid, get_func_name(fcinfo->flinfo->fn_oid));
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
	if (TupleDescAttr(RelationGetDescr(rel), attnum - 1)->attgenerated)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("column \"%s\" of table \"%s\" is a generated column",
						column, RelationGetRelationName(rel)),
				 errdetail("caio's trigger on the table names it as the %s, and reads it before generated columns are computed, so it would check the row's old value.",
						   what),
				 errhint("Make the column a plain one again, or install the trigger again with another column.")));
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
 * A guarded table that has inheritance children now (caio_table_open refused
 * them, and caio's event trigger refuses new ones, but a superuser can get
 * around both): its row triggers do not fire for the children's rows, which
 * a write through the table reaches, so no write to the table goes through.
 */
static void
check_no_inheritance_children(Relation rel)
{
	if (rel->rd_rel->relkind != RELKIND_RELATION || !rel->rd_rel->relhassubclass ||
		find_inheritance_children(RelationGetRelid(rel), NoLock) == NIL)
		return;
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("table \"%s\" has inheritance children", RelationGetRelationName(rel)),
			 errdetail("caio's trigger on the table does not fire for the rows of its children, so they would go unguarded."),
			 errhint("Detach the children (ALTER TABLE ... NO INHERIT), or use declarative partitioning."),
			 errtable(rel)));
}

/*
 * The function that installs the trigger function funcoid, when it is one of
 * caio's guard trigger functions; NULL for any other function.  Known by its
 * C entry point, as a trigger may reach caio's function under any name.
 */
const char *
caio_guard_installer(Oid funcoid)
{
	FmgrInfo	function;

	fmgr_info(funcoid, &function);
	if (function.fn_addr == caio_fence_trigger)
		return "caio_protect";
	if (function.fn_addr == caio_version_trigger)
		return "caio_versioned";
	if (function.fn_addr == caio_claim_trigger)
		return "caio_claimable";
	return NULL;
}

/*
 * Why a trigger that runs one of caio's trigger functions does not see every
 * write, as a sentence; NULL when it does.  A WHEN clause skips the rows it
 * does not match, and a column list (UPDATE OF) the updates that set none of
 * its columns, so those writes would go unchecked.
 */
char *
caio_guard_trigger_gap(const char *table, const Trigger *trigger)
{
	if (trigger->tgqual == NULL && trigger->tgnattr == 0)
		return NULL;
	if (trigger->tgqual != NULL)
		return psprintf("The trigger %s on table \"%s\" has a WHEN clause, so it does not check the rows that the clause does not match.",
						trigger->tgname, table);
	if (trigger->tgnattr > 0)
		return psprintf("The trigger %s on table \"%s\" has a column list (UPDATE OF), so it does not fire for an UPDATE that sets none of those columns.",
						trigger->tgname, table);
	return NULL;
}

/*
 * Refuse a trigger on rel that runs one of caio's trigger functions with a
 * WHEN clause or a column list (caio_guard_trigger_gap); any other trigger
 * passes.
 */
void
caio_check_guard_trigger(Relation rel, const Trigger *trigger, int sqlerrcode)
{
	/* The gap first: it is cheap, and this runs for every row written. */
	char	   *gap = caio_guard_trigger_gap(RelationGetRelationName(rel), trigger);
	const char *installer;

	if (gap == NULL)
		return;
	installer = caio_guard_installer(trigger->tgfoid);
	if (installer == NULL)
		return;
	ereport(ERROR,
			(errcode(sqlerrcode),
			 errmsg("trigger \"%s\" on table \"%s\" must have no WHEN clause and no column list",
					trigger->tgname, RelationGetRelationName(rel)),
			 errdetail("%s", gap),
			 errhint("Drop the trigger; %s() installs caio's own, which checks every write.",
					 installer),
			 errtable(rel)));
}

/*
 * Refuse, before caio installs its trigger trigger_name on rel, any other
 * trigger of caio's function on rel or its partitions that would not see
 * every write.  The triggers named trigger_name are about to be replaced.
 */
static void
check_guard_triggers(Relation rel, const char *trigger_name)
{
	ListCell   *lc;

	foreach(lc, find_all_inheritors(RelationGetRelid(rel), ShareRowExclusiveLock, NULL))
	{
		Relation	part = table_open(lfirst_oid(lc), NoLock);
		TriggerDesc *triggers = part->trigdesc;

		for (int i = 0; triggers != NULL && i < triggers->numtriggers; i++)
			if (strcmp(triggers->triggers[i].tgname, trigger_name) != 0)
				caio_check_guard_trigger(part, &triggers->triggers[i],
										 ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE);
		table_close(part, NoLock);
	}
}

/*
 * The TriggerData of a call to one of caio's trigger functions, refused when
 * the function was not installed the way its installer installs it, or the
 * table no longer is as it was checked then.
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
	caio_check_guard_trigger(td->tg_relation, td->tg_trigger,
							 ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE);
	check_no_inheritance_children(td->tg_relation);
	return td;
}

/*
 * One of caio's trigger functions, by name in caio's schema; only a function
 * that belongs to the extension, as for its relations (caio_member_relation):
 * the trigger runs it for every writer of the table.
 */
static Oid
caio_trigger_function(const CaioCatalog *cat, const char *function_name)
{
	/* cppcheck-suppress unknownEvaluationOrder ; list_make2's cells are independent */
	List	   *name = list_make2(makeString(get_namespace_name(cat->schema)),
								  makeString((char *) function_name));
	Oid			funcoid = LookupFuncName(name, 0, NULL, true);

	if (!OidIsValid(funcoid) ||
		getExtensionOfObject(ProcedureRelationId, funcoid) != cat->extension)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("extension \"caio\" has no function %s()", function_name),
				 errdetail("caio uses only functions that belong to the extension."),
				 errhint("Run ALTER EXTENSION caio UPDATE, or drop and create the extension again.")));
	return funcoid;
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
	Oid			funcoid = caio_trigger_function(cat, function_name);
	Oid			old_trigger = get_trigger_oid(relid, trigger_name, true);
	CreateTrigStmt *stmt = makeNode(CreateTrigStmt);
	Oid			saved_user;
	int			saved_context;
	int			guc_level;

	check_guard_triggers(rel, trigger_name);
	if (OidIsValid(old_trigger))
	{
		ObjectAddress old = {TriggerRelationId, old_trigger, 0};

		performDeletion(&old, DROP_RESTRICT, 0);
		CommandCounterIncrement();
	}

	stmt->trigname = (char *) trigger_name;
	stmt->relation = makeRangeVar(get_namespace_name(RelationGetNamespace(rel)),
								  RelationGetRelationName(rel), -1);
	stmt->funcname = list_make1(makeString((char *) function_name));
	stmt->args = args;
	stmt->row = true;
	stmt->timing = TRIGGER_TYPE_BEFORE;
	stmt->events = events;

	GetUserIdAndSecContext(&saved_user, &saved_context);
	SetUserIdAndSecContext(cat->owner,
						   saved_context | SECURITY_LOCAL_USERID_CHANGE);
	guc_level = caio_search_path_pin();
	CreateTrigger(stmt, NULL, relid, InvalidOid, InvalidOid, InvalidOid,
				  funcoid, InvalidOid, NULL, false, false);
	caio_search_path_restore(guc_level);
	SetUserIdAndSecContext(saved_user, saved_context);
	CommandCounterIncrement();
}

/* ----------------------------------------------------------------
 * Inheritance children of guarded tables
 * ----------------------------------------------------------------
 */

/* The name of caio's trigger that guards a table, or NULL when none does. */
static const char *
guarding_trigger(Relation rel)
{
	TriggerDesc *triggers = rel->trigdesc;

	for (int i = 0; triggers != NULL && i < triggers->numtriggers; i++)
		if (caio_guard_installer(triggers->triggers[i].tgfoid) != NULL)
			return triggers->triggers[i].tgname;
	return NULL;
}

/* The inheritance parents of a table (partitioned ones among them). */
static List *
inheritance_parents(Oid relid)
{
	List	   *parents = NIL;
	Relation	inherits = table_open(InheritsRelationId, AccessShareLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tuple;

	ScanKeyInit(&key, Anum_pg_inherits_inhrelid, BTEqualStrategyNumber,
				F_OIDEQ, ObjectIdGetDatum(relid));
	scan = systable_beginscan(inherits, InheritsRelidSeqnoIndexId, true, NULL, 1, &key);
	while (HeapTupleIsValid(tuple = systable_getnext(scan)))
		parents = lappend_oid(parents, ((Form_pg_inherits) GETSTRUCT(tuple))->inhparent);
	systable_endscan(scan);
	table_close(inherits, AccessShareLock);
	return parents;
}

/*
 * Refuse a table that is an inheritance child, at any depth, of a table
 * that caio guards: a write through that table reaches the child's rows,
 * and its row trigger does not fire for them.  Partitions are not such
 * children: they get the partitioned table's triggers.
 */
static void
refuse_guarded_ancestor(Oid child)
{
	List	   *ancestors = inheritance_parents(child);
	ListCell   *lc;

	/* The list grows as it is walked: each ancestor's parents join it. */
	foreach(lc, ancestors)
	{
		Relation	parent = table_open(lfirst_oid(lc), AccessShareLock);
		const char *trigger = NULL;

		if (parent->rd_rel->relkind == RELKIND_RELATION)
		{
			trigger = guarding_trigger(parent);
			ancestors = list_concat_unique_oid(ancestors,
											   inheritance_parents(lfirst_oid(lc)));
		}
		if (trigger != NULL)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("table \"%s\" cannot inherit from \"%s\"",
							get_rel_name(child), RelationGetRelationName(parent)),
					 errdetail("caio guards \"%s\" with its trigger %s, which does not fire for the rows of inheritance children, so they would go unguarded.",
							   RelationGetRelationName(parent), trigger),
					 errhint("Use declarative partitioning (partitions get the trigger), or guard each table on its own without inheritance.")));
		table_close(parent, AccessShareLock);
	}
}

/*
 * The tables and triggers that the command made or changed.  Triggers are
 * read in C, not joined here: this query's snapshot predates the command.
 */
static const char *const ddl_objects_sql =
"SELECT DISTINCT classid, objid FROM pg_catalog.pg_event_trigger_ddl_commands()"
" WHERE classid OPERATOR(pg_catalog.=) ANY (ARRAY['pg_catalog.pg_class'::pg_catalog.regclass,"
"                                                  'pg_catalog.pg_trigger'::pg_catalog.regclass])"
"   AND objsubid OPERATOR(pg_catalog.=) 0";

/* The table of a trigger, or InvalidOid when it is gone. */
static Oid
trigger_table(Oid trigger_oid)
{
	Relation	pg_trigger = table_open(TriggerRelationId, AccessShareLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tuple;
	Oid			relid = InvalidOid;

	ScanKeyInit(&key, Anum_pg_trigger_oid, BTEqualStrategyNumber,
				F_OIDEQ, ObjectIdGetDatum(trigger_oid));
	scan = systable_beginscan(pg_trigger, TriggerOidIndexId, true, NULL, 1, &key);
	if (HeapTupleIsValid(tuple = systable_getnext(scan)))
		relid = ((Form_pg_trigger) GETSTRUCT(tuple))->tgrelid;
	systable_endscan(scan);
	table_close(pg_trigger, AccessShareLock);
	return relid;
}

/*
 * Refuse a trigger made by CREATE [OR REPLACE] TRIGGER that runs one of
 * caio's trigger functions with a WHEN clause or a column list.  Checked
 * here, not only when it fires: a trigger with UPDATE OF never fires for
 * the updates it lets through.
 */
static void
refuse_partial_guard_trigger(Oid trigger_oid)
{
	Oid			relid = trigger_table(trigger_oid);
	Relation	rel;
	TriggerDesc *triggers;

	if (!OidIsValid(relid))
		return;
	rel = table_open(relid, AccessShareLock);
	triggers = rel->trigdesc;

	for (int i = 0; triggers != NULL && i < triggers->numtriggers; i++)
		if (triggers->triggers[i].tgoid == trigger_oid)
			caio_check_guard_trigger(rel, &triggers->triggers[i],
									 ERRCODE_FEATURE_NOT_SUPPORTED);
	table_close(rel, AccessShareLock);
}

/*
 * caio's event trigger at the end of CREATE TABLE, ALTER TABLE (foreign
 * tables too) and CREATE TRIGGER.  No table the command made or changed may
 * be an inheritance child of a table that caio guards: caio_protect,
 * caio_claimable and caio_versioned refuse a table that has such children,
 * and this keeps one from being added later.  No trigger it made may run
 * caio's trigger functions for only some writes (WHEN, UPDATE OF).
 */
Datum
caio_guard_inheritance(PG_FUNCTION_ARGS)
{
	int			guc_level;
	List	   *classes = NIL;
	List	   *objects = NIL;

	if (!CALLED_AS_EVENT_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("caio_guard_inheritance() must be called as an event trigger")));
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	guc_level = caio_search_path_pin();
	if (SPI_execute(ddl_objects_sql, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "caio could not read the event trigger's commands");
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		bool		isnull;

		classes = lappend_oid(classes, DatumGetObjectId(caio_spi_value((int) i, 1, &isnull)));
		objects = lappend_oid(objects, DatumGetObjectId(caio_spi_value((int) i, 2, &isnull)));
	}
	caio_search_path_restore(guc_level);
	SPI_finish();

	for (int i = 0; i < list_length(objects); i++)
	{
		Oid			object = list_nth_oid(objects, i);

		if (list_nth_oid(classes, i) == TriggerRelationId)
			refuse_partial_guard_trigger(object);
		else if (get_rel_relkind(object) != '\0')
			refuse_guarded_ancestor(object);
	}
	PG_RETURN_NULL();
}
