/*
 * stats.c
 *		What caio did, counted in shared memory (refusal.c logs what it refused).
 *
 * The counters need shared memory, which an extension gets only when it is
 * in shared_preload_libraries.  Without it every count is a no-op and the
 * caio_stats view says why it has nothing to show; everything else works.
 * Counters are kept per database (caio is installed per database) in a
 * fixed number of slots; a slot whose database was dropped is reused.  A
 * count is made when caio decides, whether or not the transaction commits:
 * a refusal is an error, and the error rolls the transaction back.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "caio.h"
#include "stats.h"

PG_FUNCTION_INFO_V1(caio_stats);
PG_FUNCTION_INFO_V1(caio_stats_reset);

/* Databases whose counters are kept at once. */
#define STATS_DATABASES	64

typedef struct StatsSlot
{
	Oid			dbid;			/* InvalidOid: free; changed under the lock */
	pg_atomic_uint64 counters[CAIO_COUNTERS];
	pg_atomic_uint64 reset_at;	/* a TimestampTz */
} StatsSlot;

typedef struct StatsShared
{
	LWLock	   *lock;			/* guards the slots' dbid */
	StatsSlot	slots[STATS_DATABASES];
} StatsShared;

static StatsShared *stats_shared = NULL;

/* This backend's slot, found on first use (a backend stays in one database). */
static StatsSlot *my_slot = NULL;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static void
stats_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(MAXALIGN(sizeof(StatsShared)));
	RequestNamedLWLockTranche("caio", 1);
}

static void
stats_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	stats_shared = ShmemInitStruct("caio stats", sizeof(StatsShared), &found);
	if (!found)
	{
		stats_shared->lock = &(GetNamedLWLockTranche("caio"))->lock;
		for (int i = 0; i < STATS_DATABASES; i++)
		{
			stats_shared->slots[i].dbid = InvalidOid;
			for (int c = 0; c < CAIO_COUNTERS; c++)
				pg_atomic_init_u64(&stats_shared->slots[i].counters[c], 0);
			pg_atomic_init_u64(&stats_shared->slots[i].reset_at, 0);
		}
	}
	LWLockRelease(AddinShmemInitLock);
}

void
caio_stats_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
		return;
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = stats_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = stats_shmem_startup;
}

static void
slot_clear(StatsSlot *slot)
{
	for (int c = 0; c < CAIO_COUNTERS; c++)
		pg_atomic_write_u64(&slot->counters[c], 0);
	pg_atomic_write_u64(&slot->reset_at, (uint64) GetCurrentTimestamp());
}

/* This database's slot, under the lock in either mode; NULL if none. */
static StatsSlot *
slot_find(Oid dbid)
{
	for (int i = 0; i < STATS_DATABASES; i++)
		if (stats_shared->slots[i].dbid == dbid)
			return &stats_shared->slots[i];
	return NULL;
}

/* Under the lock alone: take a slot still free, or still a gone database's. */
static StatsSlot *
slot_take(const Oid *seen, const bool *gone)
{
	for (int i = 0; i < STATS_DATABASES; i++)
	{
		StatsSlot  *slot = &stats_shared->slots[i];

		if (gone[i] && slot->dbid == seen[i])
		{
			slot->dbid = MyDatabaseId;
			slot_clear(slot);
			return slot;
		}
	}
	return NULL;
}

/*
 * Find or take this database's slot; NULL when every slot belongs to a
 * database that exists.  Which databases are gone is asked of the catalog
 * with no lock held (a catalog read can wait), and a slot is taken over
 * only if it still names the database found gone.
 */
static StatsSlot *
slot_claim(void)
{
	Oid			seen[STATS_DATABASES];
	bool		gone[STATS_DATABASES];
	StatsSlot  *slot;

	LWLockAcquire(stats_shared->lock, LW_SHARED);
	slot = slot_find(MyDatabaseId);
	for (int i = 0; i < STATS_DATABASES; i++)
		seen[i] = stats_shared->slots[i].dbid;
	LWLockRelease(stats_shared->lock);
	if (slot != NULL)
		return slot;

	for (int i = 0; i < STATS_DATABASES; i++)
		gone[i] = !OidIsValid(seen[i]) ||
			!SearchSysCacheExists1(DATABASEOID, ObjectIdGetDatum(seen[i]));

	LWLockAcquire(stats_shared->lock, LW_EXCLUSIVE);
	slot = slot_find(MyDatabaseId);
	if (slot == NULL)
		slot = slot_take(seen, gone);
	LWLockRelease(stats_shared->lock);
	return slot;
}

/* This backend's slot; a backend that found none does not look again. */
static StatsSlot *
slot_of_this_database(void)
{
	static bool looked = false;

	if (stats_shared == NULL || !OidIsValid(MyDatabaseId))
		return NULL;
	if (!looked)
	{
		my_slot = slot_claim();
		looked = true;
	}
	return my_slot;
}

void
caio_count(CaioCounter counter, uint64 n)
{
	StatsSlot  *slot = slot_of_this_database();

	if (slot != NULL)
		pg_atomic_fetch_add_u64(&slot->counters[counter], (int64) n);
}

static void
stats_require_shared_memory(void)
{
	if (stats_shared == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("caio's counters are not collected"),
				 errdetail("The counters live in shared memory, which caio has only when it is loaded through shared_preload_libraries."),
				 errhint("Add caio to shared_preload_libraries and restart the server; everything else in caio works without it.")));
}

static StatsSlot *
stats_require_slot(void)
{
	StatsSlot  *slot = slot_of_this_database();

	if (slot == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("caio's counters are kept for %d databases at most, and this one has none",
						STATS_DATABASES),
				 errdetail("Every slot belonged to another database that exists when this session first looked."),
				 errhint("Drop databases you no longer use; a new session looks again.")));
	return slot;
}

Datum
caio_stats(PG_FUNCTION_ARGS)
{
	TupleDesc	desc;
	Datum		values[CAIO_COUNTERS + 1];
	bool		nulls[CAIO_COUNTERS + 1] = {false};
	StatsSlot  *slot;

	stats_require_shared_memory();
	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "caio_stats() must return a row");
	if (desc->natts != CAIO_COUNTERS + 1)
		elog(ERROR, "caio_stats() is declared with %d columns, the library has %d",
			 desc->natts, CAIO_COUNTERS + 1);

	slot = stats_require_slot();

	for (int c = 0; c < CAIO_COUNTERS; c++)
		values[c] = Int64GetDatum((int64) pg_atomic_read_u64(&slot->counters[c]));
	values[CAIO_COUNTERS] =
		TimestampTzGetDatum((TimestampTz) pg_atomic_read_u64(&slot->reset_at));

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}

/* Granted to nobody: superusers, and roles they grant EXECUTE to, reset. */
Datum
caio_stats_reset(PG_FUNCTION_ARGS)
{
	stats_require_shared_memory();
	slot_clear(stats_require_slot());
	PG_RETURN_VOID();
}
