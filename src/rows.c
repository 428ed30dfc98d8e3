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
 * the caller's isolation.  (What the change callback looks at again is the
 * callback's own choice: see nonce.c's wallet_take_counter.)
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
 * One of caio's tables opened to write, with what making its index entries
 * needs, all prepared before the row is written: a reservation writes while
 * it holds the hot wallet's row, and every other reserver waits that long.
 */
struct CaioRowWriter
{
	Relation	heap;
	int			nindexes;
	Relation   *indexes;
	IndexInfo **infos;
	ExprState **predicates;		/* NULL for an index without a predicate */
	EState	   *estate;			/* for predicates and expressions, or NULL */
	TupleTableSlot *slot;		/* the new row version */
};

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
 * caio cannot write a table whose triggers it would skip, nor check a
 * deferred or exclusion constraint.
 */
static void
rows_check_writable(Relation heap, Relation index, const IndexInfo *info)
{
	if (heap->trigdesc != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("caio's table \"%s\" has triggers",
						RelationGetRelationName(heap)),
				 errdetail("caio writes its own tables directly, without firing triggers, so it refuses to write a table whose triggers would be skipped."),
				 errhint("Drop the triggers on \"%s\"; read caio's views, or decode its changes from the WAL, to follow them.",
						 RelationGetRelationName(heap))));
	if (index != NULL &&
		(info->ii_ExclusionOps != NULL || !index->rd_index->indimmediate))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("caio cannot maintain index \"%s\" on its table \"%s\"",
						RelationGetRelationName(index),
						RelationGetRelationName(heap)),
				 errdetail("caio writes its own tables directly, and checks unique keys at once; it does not check exclusion or deferred constraints."),
				 errhint("Drop the index.")));
}

/* The executor state for the indexes' expressions and predicates. */
static EState *
rows_estate(CaioRowWriter *writer)
{
	if (writer->estate == NULL)
	{
		writer->estate = CreateExecutorState();
		GetPerTupleExprContext(writer->estate)->ecxt_scantuple = writer->slot;
	}
	return writer->estate;
}

/*
 * Open one of caio's tables to write it.  As the executor would, refuse in a
 * read-only transaction (a standby's too) with the SQLSTATE and message of
 * the statement the write stands for.
 */
static void
rows_open(CaioRowWriter *writer, Oid heap_oid, int ncolumns, const char *command)
{
	List	   *index_oids;
	int			i = 0;
	ListCell   *lc;

	PreventCommandIfReadOnly(command);
	PreventCommandIfParallelMode(command);
	memset(writer, 0, sizeof(*writer));
	writer->heap = table_open(heap_oid, RowExclusiveLock);
	caio_table_check_columns(writer->heap, ncolumns, true);
	rows_check_writable(writer->heap, NULL, NULL);
	writer->slot = MakeSingleTupleTableSlot(RelationGetDescr(writer->heap),
											&TTSOpsVirtual);

	index_oids = RelationGetIndexList(writer->heap);
	writer->nindexes = list_length(index_oids);
	writer->indexes = palloc(writer->nindexes * sizeof(Relation));
	writer->infos = palloc(writer->nindexes * sizeof(IndexInfo *));
	writer->predicates = palloc0(writer->nindexes * sizeof(ExprState *));
	foreach(lc, index_oids)
	{
		writer->indexes[i] = index_open(lfirst_oid(lc), RowExclusiveLock);
		writer->infos[i] = BuildIndexInfo(writer->indexes[i]);
		rows_check_writable(writer->heap, writer->indexes[i], writer->infos[i]);
		if (writer->infos[i]->ii_Predicate != NIL)
			writer->predicates[i] = ExecPrepareQual(writer->infos[i]->ii_Predicate,
													rows_estate(writer));
		i++;
	}
	list_free(index_oids);
}

static void
rows_close(CaioRowWriter *writer)
{
	for (int i = 0; i < writer->nindexes; i++)
		index_close(writer->indexes[i], NoLock);
	if (writer->estate != NULL)
		FreeExecutorState(writer->estate);
	ExecDropSingleTupleTableSlot(writer->slot);
	table_close(writer->heap, NoLock);
}

/* One of the table's indexes, as the writer opened it, to search it. */
static Relation
rows_index_of(const CaioRowWriter *writer, Oid index_oid)
{
	for (int i = 0; i < writer->nindexes; i++)
		if (RelationGetRelid(writer->indexes[i]) == index_oid)
			return writer->indexes[i];
	elog(ERROR, "caio: index %u is not an index of \"%s\"", index_oid,
		 RelationGetRelationName(writer->heap));
	return NULL;
}

/*
 * Enter the new row version (in writer->slot, just written) into the
 * table's indexes, as ExecInsertIndexTuples does: each index that is ready,
 * whose predicate it meets, unique keys checked at once.  unchanged says
 * that an update kept every indexed column, which lets a btree delete the
 * older versions' entries bottom-up; summarizing_only, that a HOT update
 * needs only the summarizing indexes.
 */
static void
rows_index(CaioRowWriter *writer, bool unchanged, bool summarizing_only)
{
	TupleTableSlot *slot = writer->slot;

	if (writer->estate != NULL)
		ResetPerTupleExprContext(writer->estate);
	for (int i = 0; i < writer->nindexes; i++)
	{
		Relation	index = writer->indexes[i];
		IndexInfo  *info = writer->infos[i];
		Datum		values[INDEX_MAX_KEYS];
		bool		isnull[INDEX_MAX_KEYS];

		if (!info->ii_ReadyForInserts ||
			(summarizing_only && !CAIO_INDEX_SUMMARIZES(index)) ||
			(writer->predicates[i] != NULL &&
			 !ExecQual(writer->predicates[i], GetPerTupleExprContext(writer->estate))))
			continue;
		FormIndexDatum(info, slot,
					   info->ii_Expressions != NIL ? rows_estate(writer) : NULL,
					   values, isnull);
		(void) index_insert(index, values, isnull, &slot->tts_tid, writer->heap,
							index->rd_index->indisunique ?
							UNIQUE_CHECK_YES : UNIQUE_CHECK_NO,
							unchanged, info);
	}
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

/* Write the writer's new row over the version in old_slot; TM_Ok or why not. */
static TM_Result
rows_write(CaioRowWriter *writer, TupleTableSlot *old_slot, Snapshot snapshot)
{
	TM_FailureData failure;
	LockTupleMode lockmode;
	CaioUpdateIndexes update_indexes;
	TM_Result	result;

	rows_check_not_null(writer->heap, writer->slot->tts_isnull);
	result = table_tuple_update(writer->heap, &old_slot->tts_tid, writer->slot,
								GetCurrentCommandId(true), snapshot,
								InvalidSnapshot, true, &failure, &lockmode,
								&update_indexes);
	if (result == TM_Ok && !CAIO_UPDATE_INDEXES_NONE(update_indexes))
		rows_index(writer, true,
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
	CaioRowWriter writer;
	Relation	index;
	TupleTableSlot *old_slot;
	bool		updated = false;

	rows_open(&writer, heap_oid, ncolumns, "UPDATE");
	index = rows_index_of(&writer, index_oid);
	old_slot = table_slot_create(writer.heap, NULL);
	caio_index_keys_collate(index, keys, nkeys);
	for (;;)
	{
		Snapshot	snapshot = caio_read_snapshot();
		bool		written = false;
		TM_Result	result = TM_Ok;

		if (rows_find(writer.heap, index, keys, nkeys, snapshot, old_slot) &&
			rows_change(old_slot, writer.slot, change, arg))
		{
			result = rows_write(&writer, old_slot, snapshot);
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
				 RelationGetRelationName(writer.heap), (int) result);
		CHECK_FOR_INTERRUPTS();
	}

	ExecDropSingleTupleTableSlot(old_slot);
	rows_close(&writer);
	return updated;
}

/*
 * Open a table of caio's to insert a row, with everything its indexes need
 * prepared, so that caio_row_insert_finish does only the writing.
 */
CaioRowWriter *
caio_row_insert_begin(Oid heap_oid, int ncolumns)
{
	CaioRowWriter *writer = palloc(sizeof(CaioRowWriter));

	rows_open(writer, heap_oid, ncolumns, "INSERT");
	return writer;
}

/* Insert the row and close the table; a duplicate key is 23505, as in SQL. */
void
caio_row_insert_finish(CaioRowWriter *writer, const Datum *values,
					   const bool *isnull)
{
	TupleTableSlot *slot = writer->slot;
	int			natts = slot->tts_tupleDescriptor->natts;

	rows_check_not_null(writer->heap, isnull);
	ExecClearTuple(slot);
	memcpy(slot->tts_values, values, natts * sizeof(Datum));
	memcpy(slot->tts_isnull, isnull, natts * sizeof(bool));
	ExecStoreVirtualTuple(slot);
	table_tuple_insert(writer->heap, slot, GetCurrentCommandId(true), 0, NULL);
	rows_index(writer, false, false);
	rows_close(writer);
	pfree(writer);
}

/* Close the table without inserting anything. */
void
caio_row_insert_cancel(CaioRowWriter *writer)
{
	rows_close(writer);
	pfree(writer);
}

void
caio_row_insert(Oid heap_oid, int ncolumns, const Datum *values,
				const bool *isnull)
{
	caio_row_insert_finish(caio_row_insert_begin(heap_oid, ncolumns), values,
						   isnull);
}
