/*
 * compat.h
 *		Every difference between the PostgreSQL major versions caio supports
 *		(15 to 18; tested on 15, 17 and 18), each named by the version that
 *		made it.  Code elsewhere uses the names defined here and never tests
 *		PG_VERSION_NUM itself.
 */
#ifndef CAIO_COMPAT_H
#define CAIO_COMPAT_H

#include "access/genam.h"
#include "storage/lock.h"
#include "utils/acl.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#if PG_VERSION_NUM < 150000
#error "caio requires PostgreSQL 15 or later"
#endif

/*
 * PostgreSQL 18 replaced the pg_attribute_noreturn() suffix with the
 * pg_noreturn prefix; caio writes the prefix, which is GCC's attribute on
 * older versions.
 */
#ifndef pg_noreturn
#define pg_noreturn pg_attribute_noreturn()
#endif

/*
 * PostgreSQL 18 lets a module name itself and its version, which
 * pg_get_loaded_modules() shows; older versions take only the magic block.
 */
#ifdef PG_MODULE_MAGIC_EXT
#define CAIO_MODULE_MAGIC PG_MODULE_MAGIC_EXT(.name = "caio", .version = CAIO_VERSION)
#else
#define CAIO_MODULE_MAGIC PG_MODULE_MAGIC
#endif

/* PostgreSQL 16 made ownership checks generic over catalogs. */
#if PG_VERSION_NUM >= 160000
#define caio_rel_ownercheck(relid, role) \
	object_ownercheck(RelationRelationId, (relid), (role))
#else
#define caio_rel_ownercheck(relid, role) pg_class_ownercheck((relid), (role))
#endif

/* PostgreSQL 17 renamed backend IDs to proc numbers. */
#if PG_VERSION_NUM >= 170000
#include "storage/procarray.h"
#define CAIO_PROC_OF_VXID(vxid)	ProcNumberGetProc((vxid).procNumber)
#define CAIO_MY_LXID (MyProc->vxid.lxid)
#else
#include "storage/sinvaladt.h"
#define CAIO_PROC_OF_VXID(vxid)	BackendIdGetProc((vxid).backendId)
#define CAIO_MY_LXID (MyProc->lxid)
#endif

/*
 * PostgreSQL 18 gave index_beginscan an argument for EXPLAIN's index
 * statistics, which caio's internal scans do not collect.
 */
#if PG_VERSION_NUM >= 180000
#define caio_index_beginscan(heap, index, snapshot, nkeys, norderbys) \
	index_beginscan((heap), (index), (snapshot), NULL, (nkeys), (norderbys))
#else
#define caio_index_beginscan(heap, index, snapshot, nkeys, norderbys) \
	index_beginscan((heap), (index), (snapshot), (nkeys), (norderbys))
#endif

/*
 * The wait event of a session waiting for a lease.  PostgreSQL 17 lets an
 * extension name its own, so pg_stat_activity shows "CaioLease" (looked up
 * in shared memory once per session); before, the generic "Extension".
 */
#if PG_VERSION_NUM >= 170000
static inline uint32
caio_lease_wait_event(void)
{
	static uint32 event = 0;

	if (event == 0)
		event = WaitEventExtensionNew("CaioLease");
	return event;
}
#else
static inline uint32
caio_lease_wait_event(void)
{
	return PG_WAIT_EXTENSION;
}
#endif

/* PostgreSQL 17 has infinite intervals; older versions have none. */
#if PG_VERSION_NUM >= 170000
#define CAIO_INTERVAL_IS_FINITE(span) (!INTERVAL_NOT_FINITE(span))
#else
#define CAIO_INTERVAL_IS_FINITE(span) ((void) (span), true)
#endif

/*
 * PostgreSQL 16 lets an update that is not HOT still skip the indexes that
 * only summarize (BRIN), and says which indexes it needs as an enum; before,
 * a bool said whether every index needs the new version.
 */
#if PG_VERSION_NUM >= 160000
#include "access/tableam.h"
typedef TU_UpdateIndexes CaioUpdateIndexes;
#define CAIO_UPDATE_INDEXES_NONE(u)	((u) == TU_None)
#define CAIO_UPDATE_INDEXES_SUMMARIZING_ONLY(u)	((u) == TU_Summarizing)
#define CAIO_INDEX_SUMMARIZES(index)	((index)->rd_indam->amsummarizing)
#else
typedef bool CaioUpdateIndexes;
#define CAIO_UPDATE_INDEXES_NONE(u)	(!(u))
#define CAIO_UPDATE_INDEXES_SUMMARIZING_ONLY(u)	((void) (u), false)
#define CAIO_INDEX_SUMMARIZES(index)	((void) (index), false)
#endif

/* PostgreSQL 16 renamed a relation's file node to its file locator. */
#if PG_VERSION_NUM >= 160000
#define CAIO_REL_LOCATOR(rel)	((rel)->rd_locator)
#else
#define CAIO_REL_LOCATOR(rel)	((rel)->rd_node)
#endif

/* PostgreSQL 18 took ExecutorRun's execute_once away. */
#if PG_VERSION_NUM >= 180000
#define CAIO_EXECUTOR_RUN_PARAMS \
	QueryDesc *queryDesc, ScanDirection direction, uint64 count
#define CAIO_EXECUTOR_RUN_ARGS queryDesc, direction, count
#else
#define CAIO_EXECUTOR_RUN_PARAMS \
	QueryDesc *queryDesc, ScanDirection direction, uint64 count, bool execute_once
#define CAIO_EXECUTOR_RUN_ARGS queryDesc, direction, count, execute_once
#endif

/*
 * PostgreSQL 17 keeps a MERGE target's actions by match kind, adds WHEN NOT
 * MATCHED BY SOURCE (whose actions may UPDATE too), and names the action
 * that runs (for merge_action()); before, nothing outside the executor's
 * own stack tells which action runs.
 */
#if PG_VERSION_NUM >= 170000
#define CAIO_MERGE_UPDATE_ACTION_LISTS(rri) \
	{ (rri)->ri_MergeActions[MERGE_WHEN_MATCHED], \
	  (rri)->ri_MergeActions[MERGE_WHEN_NOT_MATCHED_BY_SOURCE] }
#define CAIO_MERGE_RUNNING_ACTION(mtstate)	((mtstate)->mt_merge_action)
#else
#define CAIO_MERGE_UPDATE_ACTION_LISTS(rri)	{ (rri)->ri_matchedMergeAction }
#define CAIO_MERGE_RUNNING_ACTION(mtstate)	((void) (mtstate), (MergeActionState *) NULL)
#endif

#endif							/* CAIO_COMPAT_H */
