/*
 * stats.c
 *		What caio did, counted in shared memory (refusal.c logs what it refused).
 *
 * The counters live in this database's slot of caio's shared memory
 * (shared.c), which exists only when caio is in shared_preload_libraries.
 * Without it every count is a no-op and the caio_stats view says why it has
 * nothing to show; everything else works.  A count is made when caio
 * decides, whether or not the transaction commits: a refusal is an error,
 * and the error rolls the transaction back.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "caio.h"
#include "shared.h"
#include "stats.h"
#include "search_path.h"

PG_FUNCTION_INFO_V1(caio_stats);
PG_FUNCTION_INFO_V1(caio_stats_reset);

void
caio_stats_init_counters(CaioStatsCounters *stats)
{
	for (int c = 0; c < CAIO_COUNTERS; c++)
		pg_atomic_init_u64(&stats->counters[c], 0);
	pg_atomic_init_u64(&stats->reset_at, 0);
}

void
caio_stats_clear(CaioStatsCounters *stats)
{
	for (int c = 0; c < CAIO_COUNTERS; c++)
		pg_atomic_write_u64(&stats->counters[c], 0);
	pg_atomic_write_u64(&stats->reset_at, (uint64) GetCurrentTimestamp());
}

/* This database's counters; NULL without shared memory or a slot. */
static CaioStatsCounters *
stats_of_this_database(void)
{
	CaioDatabaseSlot *slot = caio_database_slot();

	return slot ? &slot->stats : NULL;
}

void
caio_count(CaioCounter counter, uint64 n)
{
	CaioStatsCounters *stats = stats_of_this_database();

	if (stats != NULL)
		pg_atomic_fetch_add_u64(&stats->counters[counter], (int64) n);
}

static void
stats_require_shared_memory(void)
{
	if (!caio_shared_available())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("caio's counters are not collected"),
				 errdetail("The counters live in shared memory, which caio has only when it is loaded through shared_preload_libraries."),
				 errhint("Add caio to shared_preload_libraries and restart the server; everything else in caio works without it.")));
}

static CaioStatsCounters *
stats_require_slot(void)
{
	CaioStatsCounters *stats = stats_of_this_database();

	if (stats == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("caio's counters are kept for %d databases at most, and this one has none",
						CAIO_SHARED_DATABASES),
				 errdetail("Every slot belonged to another database that exists when this session first looked."),
				 errhint("Drop databases you no longer use; a new session looks again.")));
	return stats;
}

Datum
caio_stats(PG_FUNCTION_ARGS)
{
	TupleDesc	desc;
	Datum		values[CAIO_COUNTERS + 1];
	bool		nulls[CAIO_COUNTERS + 1] = {false};
	CaioStatsCounters *stats;

	stats_require_shared_memory();
	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "caio_stats() must return a row");
	if (desc->natts != CAIO_COUNTERS + 1)
		elog(ERROR, "caio_stats() is declared with %d columns, the library has %d",
			 desc->natts, CAIO_COUNTERS + 1);

	stats = stats_require_slot();

	for (int c = 0; c < CAIO_COUNTERS; c++)
		values[c] = Int64GetDatum((int64) pg_atomic_read_u64(&stats->counters[c]));
	values[CAIO_COUNTERS] =
		TimestampTzGetDatum((TimestampTz) pg_atomic_read_u64(&stats->reset_at));

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}

/* Granted to nobody: superusers, and roles they grant EXECUTE to, reset. */
Datum
caio_stats_reset(PG_FUNCTION_ARGS)
{
	caio_require_trusted_search_path("caio_stats_reset");
	stats_require_shared_memory();
	caio_stats_clear(stats_require_slot());
	PG_RETURN_VOID();
}
