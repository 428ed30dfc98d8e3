/*
 * guard.c
 *		The user tables that caio guards with its triggers (fenced, versioned
 *		and claimable tables): opened for their owner only, the columns a
 *		caller or a trigger names checked against the table, and caio's
 *		BEFORE ROW triggers installed as the extension owner.
 */
#include "postgres.h"

#include "access/table.h"
#include "catalog/dependency.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_trigger.h"
#include "commands/extension.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "caio.h"
#include "args.h"
#include "catalog.h"
#include "guard.h"

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
	int			guc_level;

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
	guc_level = caio_search_path_pin();
	CreateTrigger(stmt, NULL, relid, InvalidOid, InvalidOid, InvalidOid,
				  InvalidOid, InvalidOid, NULL, false, false);
	caio_search_path_restore(guc_level);
	SetUserIdAndSecContext(saved_user, saved_context);
	CommandCounterIncrement();
}
