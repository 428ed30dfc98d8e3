/*
 * args.c
 *		Checks of the arguments that caio's SQL-callable functions share.
 *		Every argument is required; names are 1 to 255 bytes; a ttl is
 *		positive, finite and at most 366 days by the calendar; a wait is
 *		real time, at most a day.
 */
#include "postgres.h"

#include "common/int.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "caio.h"
#include "args.h"

/* Every argument is required: NULL is refused, never mistaken for "busy". */
void
caio_arg_required(FunctionCallInfo fcinfo, int argno, const char *what,
				  const char *hint)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must not be null", what),
				 hint ? errhint("%s", hint) : 0));
}

void
caio_check_name(const char *value, const char *what)
{
	size_t		len = strlen(value);

	if (len == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must not be empty", what)));
	if (len > CAIO_NAME_MAX_BYTES)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s is too long", what),
				 errdetail("A %s is at most %d bytes; this one is %zu bytes.",
						   what, CAIO_NAME_MAX_BYTES, len)));
}

/* A resource or holder name: not NULL, 1 to 255 bytes. */
char *
caio_arg_name(FunctionCallInfo fcinfo, int argno, const char *what)
{
	char	   *value;

	caio_arg_required(fcinfo, argno, what, NULL);
	value = text_to_cstring(PG_GETARG_TEXT_PP(argno));
	caio_check_name(value, what);
	return value;
}

/* An interval's length with months counted as 30 days, as comparisons do. */
static double
interval_usecs(const Interval *span)
{
	return (double) span->month * DAYS_PER_MONTH * USECS_PER_DAY +
		(double) span->day * USECS_PER_DAY + (double) span->time;
}

static char *
interval_text(Interval *span)
{
	return DatumGetCString(DirectFunctionCall1(interval_out,
											   IntervalPGetDatum(span)));
}

Interval *
caio_arg_ttl(FunctionCallInfo fcinfo, int argno)
{
	Interval   *ttl;
	double		usecs;

	caio_arg_required(fcinfo, argno, "ttl", NULL);
	ttl = PG_GETARG_INTERVAL_P(argno);
	caio_check_finite(ttl, "ttl");
	usecs = interval_usecs(ttl);
	if (usecs <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("ttl must be positive"),
				 errdetail("The ttl given was %s.", interval_text(ttl))));
	if (usecs > (double) CAIO_TTL_MAX_DAYS * USECS_PER_DAY)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("ttl must be at most %d days", CAIO_TTL_MAX_DAYS),
				 errdetail("The ttl given was %s.", interval_text(ttl)),
				 errhint("Hold a lease for a shorter time and renew it.")));
	return ttl;
}

/*
 * Infinite intervals exist from PostgreSQL 17 on; no ttl, wait or clock step
 * can be one.
 */
void
caio_check_finite(const Interval *span, const char *what)
{
	if (!CAIO_INTERVAL_IS_FINITE(span))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be finite", what)));
}

/* `wait` is a real duration, whatever the test clock says. */
int64
caio_arg_wait_usecs(FunctionCallInfo fcinfo, int argno)
{
	Interval   *wait;
	double		usecs;

	caio_arg_required(fcinfo, argno, "wait",
					  "Pass interval '0' to try once without waiting.");
	wait = PG_GETARG_INTERVAL_P(argno);
	caio_check_finite(wait, "wait");
	usecs = interval_usecs(wait);
	if (usecs < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("wait must not be negative"),
				 errdetail("The wait given was %s.", interval_text(wait))));
	if (usecs > (double) CAIO_WAIT_MAX_DAYS * USECS_PER_DAY)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("wait must be at most %d day", CAIO_WAIT_MAX_DAYS),
				 errdetail("The wait given was %s.", interval_text(wait))));
	return (int64) usecs;
}

/*
 * Whether an expiry is at most CAIO_TTL_MAX_DAYS after now, by the calendar:
 * the limit on every lease and claim, whether caio_acquire, caio_renew,
 * caio_claim or a claim's renewal through an UPDATE set it.  -infinity has
 * ended already; infinity, and a span too large to compute, are over it.
 */
bool
caio_expiry_within_limit(TimestampTz now, TimestampTz expires_at)
{
	int64		ahead;

	if (TIMESTAMP_IS_NOBEGIN(expires_at))
		return true;
	return !TIMESTAMP_IS_NOEND(expires_at) &&
		!pg_sub_s64_overflow(expires_at, now, &ahead) &&
		ahead <= (int64) CAIO_TTL_MAX_DAYS * USECS_PER_DAY;
}

/*
 * now + ttl, refused when the calendar makes it no later than now, or more
 * than CAIO_TTL_MAX_DAYS later.  caio_arg_ttl counts a month as 30 days, so
 * months and days of opposite signs ('1000 mons -29634 days') pass it while
 * the calendar makes the lease far longer: the span is what is limited.
 */
TimestampTz
caio_expiry(TimestampTz now, Interval *ttl)
{
	TimestampTz expires_at;

	expires_at = DatumGetTimestampTz(DirectFunctionCall2(timestamptz_pl_interval,
														 TimestampTzGetDatum(now),
														 IntervalPGetDatum(ttl)));
	if (expires_at <= now)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("ttl must be positive"),
				 errdetail("The ttl given was %s, which ends no later than it starts.",
						   interval_text(ttl))));
	if (!caio_expiry_within_limit(now, expires_at))
	{
		Interval   *span = DatumGetIntervalP(DirectFunctionCall2(timestamp_mi,
																 TimestampTzGetDatum(expires_at),
																 TimestampTzGetDatum(now)));

		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("ttl must be at most %d days", CAIO_TTL_MAX_DAYS),
				 errdetail("The ttl given was %s, which would make the lease last %s.",
						   interval_text(ttl), interval_text(span)),
				 errhint("Hold a lease for a shorter time and renew it.")));
	}
	return expires_at;
}

/*
 * now - span, for an argument that says how long ago: refused when it is
 * negative, or when the calendar puts it later than now (months and days of
 * opposite signs).  The first test comes first, so that a huge negative span
 * is called negative rather than out of range.
 */
TimestampTz
caio_ago(TimestampTz now, Interval *span, const char *what)
{
	TimestampTz then = now;

	caio_check_finite(span, what);
	if (interval_usecs(span) >= 0)
		then = DatumGetTimestampTz(DirectFunctionCall2(timestamptz_mi_interval,
													   TimestampTzGetDatum(now),
													   IntervalPGetDatum(span)));
	if (interval_usecs(span) < 0 || then > now)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must not be negative", what),
				 errdetail("The %s given was %s.", what, interval_text(span))));
	return then;
}
