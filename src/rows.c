/*
 * rows.c
 *		Writing caio's own tables without SPI, on the hot paths.
 *
 * A renewal, a grant or a nonce reservation changes one row of a table that
 * only caio writes, found by its primary key.  Through SPI, each such write
 * plans nothing but still starts and ends an executor, which costs more than
 * the write.  Here the row is read through the index as caio_index_scan
 * reads (the newest committed state and this transaction's own changes),
 * changed in C, and written through the table access method, with its index
 * entries made as the executor makes them.  What the executor would add and
 * these tables do not need is left out: caio's tables have no triggers,
 * rules, row security or CHECK constraints; a table that has grown triggers,
 * or an index whose constraint caio cannot check, is refused rather than
 * written behind their back.
 *
 * Concurrent writers of one row are those that share a lock (renewals of a
 * lease, reservations on a wallet); the others hold their resource's lock
 * alone.  A write that meets a newer version waits, inside the table access
 * method, for the transaction that made it, then reads the row again and
 * decides again: what an UPDATE does under READ COMMITTED, at every
 * isolation level, since caio's tables are read at their newest whatever
 * the caller's isolation.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "tcop/utility.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "caio.h"
#include "catalog.h"
#include "rows.h"

/*
 * Open one of caio's tables to write it.  As the executor would, refuse in a
 * read-only transaction (a standby's too) with the SQLSTATE and message of
 * the statement the write stands for.
 */
static Relation
rows_open(Oid heap_oid, int ncolumns, const char *command)
{
	Relation	heap;

	PreventCommandIfReadOnly(command);
	PreventCommandIfParallelMode(command);
	heap = table_open(heap_oid, RowExclusiveLock);
	caio_table_check_columns(heap, ncolumns, true);
	if (heap->trigdesc != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("caio's table \"%s\" has triggers",
						RelationGetRelationName(heap)),
				 errdetail("caio writes its own tables directly, without firing triggers, so it refuses to write a table whose triggers would be skipped."),
				 errhint("Drop the triggers on \"%s\"; read caio's views, or decode its changes from the WAL, to follow them.",
						 RelationGetRelationName(heap))));
	return heap;
}

/* caio's C code writes every NOT NULL column; a slip is a bug, not bad input. */
static void
rows_check_not_null(Relation heap, const bool *isnull)
{
	TupleDesc	desc = RelationGetDescr(heap);

	for (int i = 0; i < desc->natts; i++)
		if (isnull[i] && TupleDescAttr(desc, i)->attnotnull)
			elog(ERROR, "caio wrote a null into column %d of \"%s\"",
				 i + 1, RelationGetRelationName(heap));
}

/*
 * An executor state for an index's expressions and predicate, evaluated on
 * the new row version; made only for an index that has them.
 */
static EState *
rows_index_estate(EState **estate, TupleTableSlot *slot)
{
	if (*estate == NULL)
	{
		*estate = CreateExecutorState();
		GetPerTupleExprContext(*estate)->ecxt_scantuple = slot;
	}
	return *estate;
}

/* Whether a new row version belongs in a (maybe partial) index. */
static bool
rows_in_index(IndexInfo *info, TupleTableSlot *slot, EState **estate)
{
	EState	   *state;

	if (info->ii_Predicate == NIL)
		return true;
	state = rows_index_estate(estate, slot);
	return ExecQual(ExecPrepareQual(info->ii_Predicate, state),
					GetPerTupleExprContext(state));
}

/*
 * Enter a new row version into the table's indexes, as ExecInsertIndexTuples
 * does for the kinds of index that caio's tables have (columns, a predicate,
 * unique checks at once).  unchanged says that an update kept every indexed
 * column, which lets a btree delete the older versions' entries bottom-up;
 * summarizing_only, that a HOT update needs only the summarizing indexes.
 */
static void
rows_index(Relation heap, TupleTableSlot *slot, bool unchanged,
		   bool summarizing_only)
{
	List	   *index_oids = RelationGetIndexList(heap);
	EState	   *estate = NULL;
	ListCell   *lc;

	foreach(lc, index_oids)
	{
		Relation	index = index_open(lfirst_oid(lc), RowExclusiveLock);
		IndexInfo  *info = BuildIndexInfo(index);

		if (info->ii_ExclusionOps != NULL || !index->rd_index->indimmediate)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("caio cannot maintain index \"%s\" on its table \"%s\"",
							RelationGetRelationName(index),
							RelationGetRelationName(heap)),
					 errdetail("caio writes its own tables directly, and checks unique keys at once; it does not check exclusion or deferred constraints."),
					 errhint("Drop the index.")));
		if (info->ii_ReadyForInserts &&
			(!summarizing_only || CAIO_INDEX_SUMMARIZES(index)) &&
			rows_in_index(info, slot, &estate))
		{
			Datum		values[INDEX_MAX_KEYS];
			bool		isnull[INDEX_MAX_KEYS];

			FormIndexDatum(info, slot,
						   info->ii_Expressions != NIL ?
						   rows_index_estate(&estate, slot) : NULL,
						   values, isnull);
			(void) index_insert(index, values, isnull, &slot->tts_tid, heap,
								index->rd_index->indisunique ?
								UNIQUE_CHECK_YES : UNIQUE_CHECK_NO,
								unchanged, info);
		}
		index_close(index, NoLock);
	}
	if (estate != NULL)
		FreeExecutorState(estate);
	list_free(index_oids);
}

/*
 * The row that the keys find, copied out of its buffer; its TID in
 * slot->tts_tid.  The snapshot is the newest, after this command's changes.
 */
static bool
rows_find(Relation heap, Relation index, ScanKey keys, int nkeys,
		  Snapshot snapshot, TupleTableSlot *slot)
{
	IndexScanDesc scan = caio_index_beginscan(heap, index, snapshot, nkeys, 0);
	bool		found;

	index_rescan(scan, keys, nkeys, NULL, 0);
	found = index_getnext_slot(scan, ForwardScanDirection, slot);
	if (found)
		ExecMaterializeSlot(slot);
	index_endscan(scan);
	return found;
}

/* The row as change() leaves it, in new_slot; false when it declines. */
static bool
rows_change(TupleTableSlot *old_slot, TupleTableSlot *new_slot,
			CaioRowChange change, void *arg)
{
	int			natts = old_slot->tts_tupleDescriptor->natts;

	slot_getallattrs(old_slot);
	ExecClearTuple(new_slot);
	memcpy(new_slot->tts_values, old_slot->tts_values, natts * sizeof(Datum));
	memcpy(new_slot->tts_isnull, old_slot->tts_isnull, natts * sizeof(bool));
	if (!change(new_slot->tts_values, new_slot->tts_isnull, arg))
		return false;
	ExecStoreVirtualTuple(new_slot);
	return true;
}

/* Write new_slot over the version in old_slot; TM_Ok or why not. */
static TM_Result
rows_write(Relation heap, TupleTableSlot *old_slot, TupleTableSlot *new_slot,
		   Snapshot snapshot)
{
	TM_FailureData failure;
	LockTupleMode lockmode;
	CaioUpdateIndexes update_indexes;
	TM_Result	result;

	rows_check_not_null(heap, new_slot->tts_isnull);
	result = table_tuple_update(heap, &old_slot->tts_tid, new_slot,
								GetCurrentCommandId(true), snapshot,
								InvalidSnapshot, true, &failure, &lockmode,
								&update_indexes);
	if (result == TM_Ok && !CAIO_UPDATE_INDEXES_NONE(update_indexes))
		rows_index(heap, new_slot, true,
				   CAIO_UPDATE_INDEXES_SUMMARIZING_ONLY(update_indexes));
	return result;
}

/*
 * Change the row of a table of caio's that a unique index finds with these
 * keys; false when there is none or change() declines.  When another
 * transaction changed or deleted the row first, wait for it to end (the
 * table access method does), read the row again and ask change() again.
 */
bool
caio_row_update(Oid heap_oid, Oid index_oid, ScanKey keys, int nkeys,
				int ncolumns, CaioRowChange change, void *arg)
{
	Relation	heap = rows_open(heap_oid, ncolumns, "UPDATE");
	Relation	index = index_open(index_oid, RowExclusiveLock);
	TupleTableSlot *old_slot = table_slot_create(heap, NULL);
	TupleTableSlot *new_slot = MakeSingleTupleTableSlot(RelationGetDescr(heap),
														&TTSOpsVirtual);
	bool		updated = false;

	for (int i = 0; i < nkeys; i++)
		keys[i].sk_collation = index->rd_indcollation[keys[i].sk_attno - 1];
	for (;;)
	{
		Snapshot	snapshot;
		bool		written = false;
		TM_Result	result = TM_Ok;

		CommandCounterIncrement();
		snapshot = RegisterSnapshot(GetLatestSnapshot());
		if (rows_find(heap, index, keys, nkeys, snapshot, old_slot) &&
			rows_change(old_slot, new_slot, change, arg))
		{
			result = rows_write(heap, old_slot, new_slot, snapshot);
			written = true;
		}
		UnregisterSnapshot(snapshot);

		if (!written || result == TM_Ok)
		{
			updated = written;
			break;
		}
		if (result != TM_Updated && result != TM_Deleted)
			elog(ERROR, "caio could not update a row of \"%s\": result %d",
				 RelationGetRelationName(heap), (int) result);
		CHECK_FOR_INTERRUPTS();
	}

	ExecDropSingleTupleTableSlot(new_slot);
	ExecDropSingleTupleTableSlot(old_slot);
	index_close(index, NoLock);
	table_close(heap, NoLock);
	return updated;
}

/* Insert a row into a table of caio's; a duplicate key is 23505, as in SQL. */
void
caio_row_insert(Oid heap_oid, int ncolumns, const Datum *values,
				const bool *isnull)
{
	Relation	heap = rows_open(heap_oid, ncolumns, "INSERT");
	TupleTableSlot *slot = MakeSingleTupleTableSlot(RelationGetDescr(heap),
													&TTSOpsVirtual);

	rows_check_not_null(heap, isnull);
	ExecClearTuple(slot);
	memcpy(slot->tts_values, values, ncolumns * sizeof(Datum));
	memcpy(slot->tts_isnull, isnull, ncolumns * sizeof(bool));
	ExecStoreVirtualTuple(slot);
	table_tuple_insert(heap, slot, GetCurrentCommandId(true), 0, NULL);
	rows_index(heap, slot, false, false);

	ExecDropSingleTupleTableSlot(slot);
	table_close(heap, NoLock);
}
