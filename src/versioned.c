/*
 * versioned.c
 *		Optimistic concurrency, the lock-free sibling of fencing: on a table
 *		passed to caio_versioned, an UPDATE must set the version column to the
 *		row's version + 1.
 *
 * A writer reads a row at version v and updates it with version = v + 1.
 * If another writer got there first, the row is at v + 1 by then (READ
 * COMMITTED re-checks the newest row version), so v + 1 is no longer one more
 * than the row's and the update is refused with LK002.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/pg_trigger.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "nodes/value.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "caio.h"
#include "guard.h"
#include "refusal.h"
#include "stats.h"
#include "search_path.h"

PG_FUNCTION_INFO_V1(caio_versioned);
PG_FUNCTION_INFO_V1(caio_version_trigger);

#define VERSION_TRIGGER_NAME "caio_version"

static const Oid version_types[] = {INT8OID, INT4OID, INT2OID};

Datum
caio_versioned(PG_FUNCTION_ARGS)
{
	Relation	rel;

	caio_require_trusted_search_path("caio_versioned");
	rel = caio_table_open(fcinfo, 0, ShareRowExclusiveLock);
	(void) caio_table_column(rel, fcinfo, 1, "version column",
							 version_types, lengthof(version_types));
	caio_table_install_trigger(rel, VERSION_TRIGGER_NAME, "caio_version_trigger",
							   list_make1(makeString(NameStr(*PG_GETARG_NAME(1)))),
							   TRIGGER_TYPE_UPDATE);
	table_close(rel, NoLock);
	PG_RETURN_VOID();
}

/* A version column's value as int64; false when it is NULL. */
static bool
version_of(HeapTuple row, TupleDesc desc, int attnum, int64 *version)
{
	bool		isnull;
	Datum		value = SPI_getbinval(row, desc, attnum, &isnull);

	if (isnull)
		return false;
	switch (getBaseType(SPI_gettypeid(desc, attnum)))
	{
		case INT2OID:
			*version = DatumGetInt16(value);
			break;
		case INT4OID:
			*version = DatumGetInt32(value);
			break;
		default:
			*version = DatumGetInt64(value);
			break;
	}
	return true;
}

Datum
caio_version_trigger(PG_FUNCTION_ARGS)
{
	TriggerData *td = caio_trigger_data(fcinfo, "caio_versioned", 1);
	TupleDesc	desc;
	int			attnum;
	int64		old_version = 0;
	int64		new_version = 0;
	bool		has_new;
	bool		set_version;

	if (!TRIGGER_FIRED_BY_UPDATE(td->tg_event))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("caio_version_trigger() must be installed by caio_versioned()")));

	desc = RelationGetDescr(td->tg_relation);
	attnum = caio_trigger_column(td->tg_relation, td->tg_trigger->tgargs[0],
								 "version column", version_types,
								 lengthof(version_types));

	/* A row with no version yet is at version 0. */
	(void) version_of(td->tg_trigtuple, desc, attnum, &old_version);
	has_new = version_of(td->tg_newtuple, desc, attnum, &new_version);
	set_version = bms_is_member(attnum - FirstLowInvalidHeapAttributeNumber,
								td->tg_updatedcols);

	if (has_new && old_version != PG_INT64_MAX && new_version == old_version + 1)
	{
		caio_count(CAIO_WRITES_ACCEPTED, 1);
		return PointerGetDatum(td->tg_newtuple);
	}

	caio_refuse_version(td->tg_relation, td->tg_trigger->tgargs[0], old_version,
						set_version, has_new, new_version);
}
