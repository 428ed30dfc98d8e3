/*
 * stats.h
 *		caio's counters, in shared memory when caio is preloaded.
 */
#ifndef CAIO_STATS_H
#define CAIO_STATS_H

#include "port/atomics.h"

/* In the order of caio_stats()'s columns. */
typedef enum CaioCounter
{
	CAIO_LEASES_GRANTED,
	CAIO_LEASES_BUSY,
	CAIO_LEASES_TAKEN_OVER,
	CAIO_LEASES_RENEWED,
	CAIO_LEASES_RENEW_LOST,
	CAIO_LEASES_RELEASED,
	CAIO_LEASES_RELEASE_LOST,
	CAIO_WRITES_ACCEPTED,
	CAIO_REFUSED_LK001,
	CAIO_REFUSED_LK002,
	CAIO_REFUSED_LK003,
	CAIO_NONCES_RESERVED,
	CAIO_NONCES_RELEASED,
	CAIO_ROWS_CLAIMED,
	CAIO_COUNTERS				/* how many there are */
} CaioCounter;

/* A database's counters, in its slot of caio's shared memory (shared.h). */
typedef struct CaioStatsCounters
{
	pg_atomic_uint64 counters[CAIO_COUNTERS];
	pg_atomic_uint64 reset_at;	/* a TimestampTz */
} CaioStatsCounters;

extern void caio_stats_init_counters(CaioStatsCounters *stats);
extern void caio_stats_clear(CaioStatsCounters *stats);
extern void caio_count(CaioCounter counter, uint64 n);

#endif							/* CAIO_STATS_H */
