/*
 * shared.c
 *		caio's shared memory: a slot per database (caio is installed per
 *		database), for the counters and for the token sequence's flushed WAL.
 *
 * An extension gets shared memory only when it is in
 * shared_preload_libraries.  Without it there are no slots; the counters
 * then count nothing and every token waits for its own WAL flush, as
 * before shared memory.  The slots are made afresh by every server start
 * and every restart after a crash: token_flush.c relies on that.  A slot
 * whose database was dropped is reused.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/inval.h"
#include "utils/syscache.h"

#include "caio.h"
#include "shared.h"

/*
 * The count of waiters is read at every commit that took a resource's lock:
 * a cache line of its own keeps the counters' writes from evicting it.
 */
typedef union CaioWaiterCount
{
	pg_atomic_uint32 sessions;	/* waiting for a resource, in any database */
	/* cppcheck-suppress unusedStructMember ; it only pads the line */
	char		pad[PG_CACHE_LINE_SIZE];
} CaioWaiterCount;

typedef struct CaioShared
{
	CaioWaiterCount waiters;	/* first: shared memory starts on a cache line */
	LWLock	   *lock;			/* guards the slots' dbid */
	CaioDatabaseSlot slots[CAIO_SHARED_DATABASES];
} CaioShared;

static CaioShared *caio_shared = NULL;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static void
shared_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(MAXALIGN(sizeof(CaioShared)));
	RequestNamedLWLockTranche("caio", 1);
}

static void
slot_clear(CaioDatabaseSlot *slot)
{
	caio_stats_clear(&slot->stats);
	caio_token_covers_clear(&slot->tokens);
}

static void
shared_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	caio_shared = ShmemInitStruct("caio", sizeof(CaioShared), &found);
	if (!found)
	{
		caio_shared->lock = &(GetNamedLWLockTranche("caio"))->lock;
		pg_atomic_init_u32(&caio_shared->waiters.sessions, 0);
		for (int i = 0; i < CAIO_SHARED_DATABASES; i++)
		{
			caio_shared->slots[i].dbid = InvalidOid;
			caio_stats_init_counters(&caio_shared->slots[i].stats);
			caio_token_covers_init(&caio_shared->slots[i].tokens);
		}
	}
	LWLockRelease(AddinShmemInitLock);
}

void
caio_shared_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
		return;
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = shared_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = shared_startup;
}

bool
caio_shared_available(void)
{
	return caio_shared != NULL;
}

/* This database's slot, under the lock in either mode; NULL if none. */
static CaioDatabaseSlot *
slot_find(Oid dbid)
{
	for (int i = 0; i < CAIO_SHARED_DATABASES; i++)
		if (caio_shared->slots[i].dbid == dbid)
			return &caio_shared->slots[i];
	return NULL;
}

/* Under the lock alone: take a slot still free, or still a gone database's. */
static CaioDatabaseSlot *
slot_take(const Oid *seen, const bool *gone)
{
	for (int i = 0; i < CAIO_SHARED_DATABASES; i++)
	{
		CaioDatabaseSlot *slot = &caio_shared->slots[i];

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
static CaioDatabaseSlot *
slot_claim(void)
{
	Oid			seen[CAIO_SHARED_DATABASES];
	bool		gone[CAIO_SHARED_DATABASES];
	CaioDatabaseSlot *slot;

	LWLockAcquire(caio_shared->lock, LW_SHARED);
	slot = slot_find(MyDatabaseId);
	for (int i = 0; i < CAIO_SHARED_DATABASES; i++)
		seen[i] = caio_shared->slots[i].dbid;
	LWLockRelease(caio_shared->lock);
	if (slot != NULL)
		return slot;

	/* A database created since this backend's catalog snapshot exists. */
	AcceptInvalidationMessages();
	for (int i = 0; i < CAIO_SHARED_DATABASES; i++)
		gone[i] = !OidIsValid(seen[i]) ||
			!SearchSysCacheExists1(DATABASEOID, ObjectIdGetDatum(seen[i]));

	LWLockAcquire(caio_shared->lock, LW_EXCLUSIVE);
	slot = slot_find(MyDatabaseId);
	if (slot == NULL)
		slot = slot_take(seen, gone);
	LWLockRelease(caio_shared->lock);
	return slot;
}

/*
 * This database's slot, or NULL without shared memory or when every slot
 * is taken; a backend that found none does not look again (a backend stays
 * in one database).
 */
CaioDatabaseSlot *
caio_database_slot(void)
{
	static CaioDatabaseSlot *my_slot = NULL;
	static bool looked = false;

	if (caio_shared == NULL || !OidIsValid(MyDatabaseId))
		return NULL;
	if (!looked)
	{
		my_slot = slot_claim();
		looked = true;
	}
	return my_slot;
}

/* The count of sessions waiting for a resource; NULL without shared memory. */
pg_atomic_uint32 *
caio_shared_waiters(void)
{
	return caio_shared == NULL ? NULL : &caio_shared->waiters.sessions;
}
