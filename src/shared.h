/*
 * shared.h
 *		caio's shared memory, when caio is in shared_preload_libraries: one
 *		slot per database, holding that database's counters (stats.c) and
 *		what its token sequence's flushed WAL covers (token_flush.c); and
 *		how many sessions wait for a resource (resource_lock.c).
 */
#ifndef CAIO_SHARED_H
#define CAIO_SHARED_H

#include "port/atomics.h"

#include "stats.h"
#include "token.h"

typedef struct CaioDatabaseSlot
{
	Oid			dbid;			/* InvalidOid: free; changed under the lock */
	CaioStatsCounters stats;
	CaioTokenCovers tokens;
} CaioDatabaseSlot;

/* Databases that get a slot at once. */
#define CAIO_SHARED_DATABASES	64

extern void caio_shared_init(void);
extern bool caio_shared_available(void);
extern CaioDatabaseSlot *caio_database_slot(void);
extern pg_atomic_uint32 *caio_shared_waiters(void);

#endif							/* CAIO_SHARED_H */
