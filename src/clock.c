/*
 * clock.c
 *		The time every caio function reads: the server's clock_timestamp(), or a
 *		test clock frozen for the whole database.
 *
 * The test clock is a row in caio_clock, so that every session sees it without
 * shared memory.  Each backend caches it and forgets the cache when the table's
 * relcache entry is invalidated; the functions that move the clock send that
 * invalidation, which reaches other sessions when they commit.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "storage/sinval.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/snapmgr.h"

#include "caio.h"
#include "args.h"
#include "catalog.h"
#include "clock.h"
#include "resource_lock.h"
#include "search_path.h"

PG_FUNCTION_INFO_V1(caio_now);
PG_FUNCTION_INFO_V1(caio_clock_set);
PG_FUNCTION_INFO_V1(caio_clock_advance);
PG_FUNCTION_INFO_V1(caio_clock_reset);

/* The cache is good while no invalidation arrived since it was loaded. */
static uint64 clock_invalidations = 1;
static uint64 clock_loaded_at = 0;
static bool clock_frozen = false;
static TimestampTz clock_frozen_at = 0;

static const Oid set_args[] = {TIMESTAMPTZOID};
static const Oid advance_args[] = {TIMESTAMPTZOID, INTERVALOID};

static CaioPlan read_plan = CAIO_PLAN_NO_ARGS(
	"SELECT frozen_at FROM @extschema@.caio_clock");
static CaioPlan set_plan = CAIO_PLAN(
	"INSERT INTO @extschema@.caio_clock AS c (frozen_at) VALUES ($1)"
	" ON CONFLICT (singleton) DO UPDATE SET frozen_at = excluded.frozen_at"
	" RETURNING frozen_at", set_args);
static CaioPlan advance_plan = CAIO_PLAN(
	"INSERT INTO @extschema@.caio_clock AS c (frozen_at)"
	" VALUES ($1 OPERATOR(pg_catalog.+) $2)"
	" ON CONFLICT (singleton)"
	" DO UPDATE SET frozen_at = c.frozen_at OPERATOR(pg_catalog.+) $2"
	" RETURNING frozen_at", advance_args);
static CaioPlan reset_plan = CAIO_PLAN_NO_ARGS(
	"DELETE FROM @extschema@.caio_clock");

void
caio_clock_forget(void)
{
	clock_invalidations++;
}

/*
 * Read the row with the newest snapshot: the statement's snapshot may predate
 * the change whose invalidation we just received.
 */
static void
clock_load(void)
{
	CaioSpi		spi;
	bool		isnull;

	caio_spi_begin(&spi);
	clock_frozen = false;
	if (caio_spi_run(&read_plan, NULL, NULL, true) > 0)
	{
		clock_frozen_at = DatumGetTimestampTz(caio_spi_value(0, 1, &isnull));
		clock_frozen = true;
	}
	caio_spi_end(&spi);
}

TimestampTz
caio_clock_now(bool *frozen)
{
	AcceptInvalidationMessages();

	/*
	 * An invalidation that arrives during the load, or a load that fails,
	 * leaves the cache stale, and the next reading loads again.
	 */
	while (clock_loaded_at != clock_invalidations)
	{
		uint64		seen = clock_invalidations;

		clock_load();
		clock_loaded_at = seen;
	}
	if (frozen)
		*frozen = clock_frozen;
	return clock_frozen ? clock_frozen_at : GetCurrentTimestamp();
}

Datum
caio_now(PG_FUNCTION_ARGS)
{
	(void) fcinfo;
	PG_RETURN_TIMESTAMPTZ(caio_clock_now(NULL));
}

/*
 * Every session must see the move: invalidate the table's relcache entry (our
 * callback then forgets the cached value here and, at commit, everywhere), and
 * wake every caio waiter once we commit, since their leases may have expired.
 */
static TimestampTz
clock_write(CaioPlan *plan, Datum *values)
{
	CaioSpi		spi;
	TimestampTz result = 0;
	bool		isnull = true;

	caio_spi_begin(&spi);
	if (caio_spi_run(plan, values, NULL, false) > 0 && plan != &reset_plan)
		result = DatumGetTimestampTz(caio_spi_value(0, 1, &isnull));
	caio_spi_end(&spi);

	CacheInvalidateRelcacheByRelid(caio_catalog()->clock);
	caio_clock_forget();
	caio_wake_all_waiters_at_end();
	return isnull ? GetCurrentTimestamp() : result;
}

Datum
caio_clock_set(PG_FUNCTION_ARGS)
{
	TimestampTz frozen_at;
	Datum		values[1];

	caio_require_trusted_search_path("caio_clock_set");
	caio_arg_required(fcinfo, 0, "frozen_at",
					  "Call caio_clock_reset() to go back to the server clock.");
	frozen_at = PG_GETARG_TIMESTAMPTZ(0);
	if (TIMESTAMP_NOT_FINITE(frozen_at))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("frozen_at must be finite")));

	values[0] = TimestampTzGetDatum(frozen_at);
	PG_RETURN_TIMESTAMPTZ(clock_write(&set_plan, values));
}

Datum
caio_clock_advance(PG_FUNCTION_ARGS)
{
	Interval   *step;
	Datum		values[2];

	caio_require_trusted_search_path("caio_clock_advance");
	caio_arg_required(fcinfo, 0, "step", NULL);
	step = PG_GETARG_INTERVAL_P(0);
	caio_check_finite(step, "step");
	if (step->month < 0 || step->day < 0 || step->time < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("step must not be negative"),
				 errdetail("The test clock only moves forward; "
						   "use caio_clock_set() to put it anywhere.")));

	/*
	 * A running clock freezes at the server's time plus the step.  Adding
	 * here first reports an out-of-range result without our SQL as context.
	 */
	(void) DirectFunctionCall2(timestamptz_pl_interval,
							   TimestampTzGetDatum(caio_clock_now(NULL)),
							   IntervalPGetDatum(step));
	values[0] = TimestampTzGetDatum(GetCurrentTimestamp());
	values[1] = IntervalPGetDatum(step);
	PG_RETURN_TIMESTAMPTZ(clock_write(&advance_plan, values));
}

Datum
caio_clock_reset(PG_FUNCTION_ARGS)
{
	caio_require_trusted_search_path("caio_clock_reset");
	(void) fcinfo;
	PG_RETURN_TIMESTAMPTZ(clock_write(&reset_plan, NULL));
}
