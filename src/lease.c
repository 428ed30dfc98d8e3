/*
 * lease.c
 *		Leases: locks that expire, each with a fencing token.
 *
 * A resource's row in caio_lease_state holds its newest lease, live or not.
 * Everything that changes the row first takes the resource's lock (see
 * resource_lock.c), so reading the row, deciding in C and writing it back is
 * one step as far as every other caio session can tell.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "storage/latch.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "caio.h"
#include "args.h"
#include "catalog.h"
#include "citus.h"
#include "clock.h"
#include "lease.h"
#include "refusal.h"
#include "resource_lock.h"
#include "rows.h"
#include "stats.h"
#include "token.h"
#include "search_path.h"

PG_FUNCTION_INFO_V1(caio_acquire);
PG_FUNCTION_INFO_V1(caio_renew);
PG_FUNCTION_INFO_V1(caio_release);
PG_FUNCTION_INFO_V1(caio_lease_of);
PG_FUNCTION_INFO_V1(caio_lease_purge);

/* The columns of caio_lease, in order. */
enum
{
	LEASE_RESOURCE = 1,
	LEASE_HOLDER,
	LEASE_TOKEN,
	LEASE_ACQUIRED_AT,
	LEASE_EXPIRES_AT,
	LEASE_NATTS = LEASE_EXPIRES_AT
};

/* ----------------------------------------------------------------
 * Conversions between SQL values and Lease
 * ----------------------------------------------------------------
 */

/* renew, release and use identify a lease by (resource, holder, token) alone. */
void
caio_lease_from_arg(FunctionCallInfo fcinfo, int argno, CaioLease *lease)
{
	HeapTupleHeader row;
	bool		null_resource,
				null_holder,
				null_token;
	Datum		resource,
				holder,
				token;

	caio_arg_required(fcinfo, argno, "lease", NULL);
	row = PG_GETARG_HEAPTUPLEHEADER(argno);
	resource = GetAttributeByNum(row, LEASE_RESOURCE, &null_resource);
	holder = GetAttributeByNum(row, LEASE_HOLDER, &null_holder);
	token = GetAttributeByNum(row, LEASE_TOKEN, &null_token);
	if (null_resource || null_holder || null_token)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lease must name a resource, a holder and a token"),
				 errhint("Pass the lease that caio_acquire() returned.")));

	memset(lease, 0, sizeof(*lease));
	lease->resource = TextDatumGetCString(resource);
	lease->holder = TextDatumGetCString(holder);
	lease->token = DatumGetInt64(token);
	caio_check_name(lease->resource, "resource");
	caio_check_name(lease->holder, "holder");
	if (lease->token <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lease token must be positive"),
				 errdetail("The token given was " INT64_FORMAT ".", lease->token)));
}

Datum
caio_lease_to_datum(FunctionCallInfo fcinfo, const CaioLease *lease)
{
	TupleDesc	tupdesc;
	Datum		values[LEASE_NATTS];
	bool		nulls[LEASE_NATTS] = {false};

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "caio_lease is not a composite type");
	tupdesc = BlessTupleDesc(tupdesc);

	values[LEASE_RESOURCE - 1] = CStringGetTextDatum(lease->resource);
	values[LEASE_HOLDER - 1] = CStringGetTextDatum(lease->holder);
	values[LEASE_TOKEN - 1] = Int64GetDatum(lease->token);
	values[LEASE_ACQUIRED_AT - 1] = TimestampTzGetDatum(lease->acquired_at);
	values[LEASE_EXPIRES_AT - 1] = TimestampTzGetDatum(lease->expires_at);
	return HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls));
}

/*
 * Where each resource's row was found last (its HOT chain, and the shared
 * buffer its page was in), by the hash of its name: while the page stays in
 * that buffer, the next lookup reads the chain there instead of descending
 * the index, which was most of a fenced write's own cost.  Only a hint: a
 * row found there is taken only if it is the resource's, so a stale entry or
 * two resources with one hash cost an index lookup, never a wrong answer.
 * Per session, bounded: emptied when full.
 */
typedef struct LeaseHint
{
	uint64		key;			/* caio_resource_key of the resource */
	CaioRowPlace place;
} LeaseHint;

#define LEASE_HINTS_MAX 8192

static HTAB *lease_hints = NULL;

static LeaseHint *
lease_hint(uint64 key, HASHACTION action)
{
	if (lease_hints == NULL || hash_get_num_entries(lease_hints) >= LEASE_HINTS_MAX)
	{
		HASHCTL		ctl = {.keysize = sizeof(uint64),.entrysize = sizeof(LeaseHint)};

		if (lease_hints != NULL)
			hash_destroy(lease_hints);
		lease_hints = hash_create("caio lease hints", 256, &ctl,
								  HASH_ELEM | HASH_BLOBS);
	}
	return hash_search(lease_hints, &key, action, NULL);
}

/* The primary-key search for a resource's row. */
static void
lease_key(const char *resource, ScanKeyData *key)
{
	ScanKeyInit(key, Anum_caio_lease_state_resource, BTEqualStrategyNumber,
				F_TEXTEQ, CStringGetTextDatum(resource));
}

/* The row of a resource, from its hint or else its primary key. */
static bool
lease_stored_row(const char *resource, Datum *values, bool *isnull)
{
	const CaioCatalog *cat = caio_catalog();
	uint64		key = caio_resource_key(resource);
	LeaseHint  *hint = lease_hint(key, HASH_FIND);
	ScanKeyData scankey;
	CaioRowPlace place;

	if (hint != NULL &&
		caio_heap_fetch(cat->lease_state, &hint->place, values, isnull,
						Natts_caio_lease_state) &&
		caio_text_is(values[Anum_caio_lease_state_resource - 1], resource))
		return true;

	lease_key(resource, &scankey);
	if (!caio_index_first_at(cat->lease_state, cat->lease_state_pkey, &scankey, 1,
							 values, isnull, Natts_caio_lease_state, &place))
	{
		if (hint != NULL)
			(void) lease_hint(key, HASH_REMOVE);
		return false;
	}
	lease_hint(key, HASH_ENTER)->place = place;
	return true;
}

/*
 * Read a resource's row into *lease; false when it has none.  This is the
 * hot path of every acquire and fenced write, so it reads the table
 * directly rather than through SPI.
 */
bool
caio_lease_lookup(const char *resource, CaioLease *lease)
{
	Datum		values[Natts_caio_lease_state];
	bool		isnull[Natts_caio_lease_state];

	if (!lease_stored_row(resource, values, isnull))
		return false;

	lease->resource = (char *) resource;
	lease->holder = TextDatumGetCString(values[Anum_caio_lease_state_holder - 1]);
	lease->holder_role = DatumGetObjectId(values[Anum_caio_lease_state_holder_role - 1]);
	lease->token = DatumGetInt64(values[Anum_caio_lease_state_token - 1]);
	lease->acquired_at = DatumGetTimestampTz(values[Anum_caio_lease_state_acquired_at - 1]);
	lease->expires_at = DatumGetTimestampTz(values[Anum_caio_lease_state_expires_at - 1]);
	lease->released = !isnull[Anum_caio_lease_state_released_at - 1];
	return true;
}

static bool
lease_is_live(const CaioLease *lease, TimestampTz now)
{
	return !lease->released && lease->expires_at > now;
}

/* Only the role that holds a lease (or one with its privileges) may touch it. */
void
caio_lease_check_owner(const CaioLease *lease, Oid caller, const char *action)
{
	char	   *role_name;

	if (has_privs_of_role(caller, lease->holder_role))
		return;
	role_name = GetUserNameFromId(lease->holder_role, true);
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("permission denied to %s the lease on resource \"%s\"",
					action, lease->resource),
			 errdetail("The lease is held by role \"%s\".",
					   role_name ? role_name : "(dropped)"),
			 errhint("Only the role that acquired a lease, or a superuser, can %s it.",
					 action)));
}

/*
 * Refuse (42501) a caller without the privileges of the role that acquired
 * the lease it names.  caio_use and the nonce functions then hold the
 * resource's lock until the transaction ends, so this runs before that lock
 * is taken: otherwise anyone who can read caio_leases could pin another
 * role's lease, blocking its release and every takeover, for as long as it
 * keeps a transaction open.  A lease that is not the resource's newest pins
 * nothing worth refusing here: the check under the lock refuses it (LK001).
 * The caller is GetUserId(), so this runs before caio_spi_begin.
 */
void
caio_lease_require_holder(const CaioLease *lease)
{
	CaioLease	newest;

	if (caio_lease_lookup(lease->resource, &newest) &&
		newest.token == lease->token)
		caio_lease_check_owner(&newest, GetUserId(), "use");
}

/*
 * Whether newest, a resource's lease as read, is the current one for token
 * (and holder, unless NULL): the same token, not released.  Expiry is not
 * looked at: a lease stays current until a takeover or a release replaces
 * it, which is what makes a fenced write under an expired but untaken lease
 * safe.  The one test behind fenced writes, caio_use and nonce marks.
 */
bool
caio_lease_is_current(const CaioLease *newest, int64 token, const char *holder)
{
	return newest->token == token && !newest->released &&
		(holder == NULL || strcmp(newest->holder, holder) == 0);
}

/*
 * Hold a resource's lock in share mode until the transaction ends, so that
 * no new lease on it can be granted meanwhile, and read its lease into
 * *newest; false when it has none.
 */
bool
caio_lease_pin(const char *resource, CaioLease *newest)
{
	caio_resource_lock(caio_resource_key(resource), ShareLock);
	return caio_lease_lookup(resource, newest);
}

/*
 * Check that a lease is the caller's (42501 otherwise, before any lock), and
 * its resource's current one (LK001 otherwise), and keep it so until the
 * transaction ends (caio_lease_pin).  Runs as the caller (before
 * caio_spi_begin).
 */
void
caio_lease_require_current(const CaioLease *lease, CaioLease *newest)
{
	bool		found;

	caio_lease_require_holder(lease);
	found = caio_lease_pin(lease->resource, newest);
	if (!found || !caio_lease_is_current(newest, lease->token, lease->holder))
		caio_refuse_stale_lease(lease, found ? newest : NULL);
	/* Again: the token may have been granted since the first look. */
	caio_lease_check_owner(newest, GetUserId(), "use");
}

/* ----------------------------------------------------------------
 * Acquire
 * ----------------------------------------------------------------
 */

typedef struct AcquireRequest
{
	char	   *resource;
	char	   *holder;
	Interval   *ttl;
	uint64		key;
	Oid			caller;
} AcquireRequest;

typedef enum AcquireOutcome
{
	ACQUIRE_GRANTED,			/* *lease is ours */
	ACQUIRE_HELD,				/* another holder's lease is live */
	ACQUIRE_LOCKED				/* another transaction is changing the resource */
} AcquireOutcome;

/* A lease as its resource's row in caio_lease_state. */
static void
lease_row(const CaioLease *lease, Datum *values, bool *isnull)
{
	memset(isnull, false, Natts_caio_lease_state * sizeof(bool));
	values[Anum_caio_lease_state_resource - 1] = CStringGetTextDatum(lease->resource);
	values[Anum_caio_lease_state_holder - 1] = CStringGetTextDatum(lease->holder);
	values[Anum_caio_lease_state_holder_role - 1] = ObjectIdGetDatum(lease->holder_role);
	values[Anum_caio_lease_state_token - 1] = Int64GetDatum(lease->token);
	values[Anum_caio_lease_state_acquired_at - 1] = TimestampTzGetDatum(lease->acquired_at);
	values[Anum_caio_lease_state_expires_at - 1] = TimestampTzGetDatum(lease->expires_at);
	values[Anum_caio_lease_state_released_at - 1] = (Datum) 0;
	isnull[Anum_caio_lease_state_released_at - 1] = true;
}

/* Change a resource's row, under its lock; false when it has none or change declines. */
static bool
lease_row_update(const char *resource, CaioRowChange change, void *arg)
{
	const CaioCatalog *cat = caio_catalog();
	ScanKeyData key;

	lease_key(resource, &key);
	return caio_row_update(cat->lease_state, cat->lease_state_pkey, &key, 1,
						   Natts_caio_lease_state, change, arg);
}

/*
 * The same, for a row read under the resource's lock held alone: it cannot
 * have gone meanwhile.
 */
static void
lease_row_replace(const char *resource, CaioRowChange change, void *arg)
{
	if (!lease_row_update(resource, change, arg))
		elog(ERROR, "caio: the lease row of \"%s\" vanished under its lock",
			 resource);
}

/* A takeover: the new lease's values replace the row's. */
static bool
lease_change_to(Datum *values, bool *isnull, void *arg)
{
	lease_row((const CaioLease *) arg, values, isnull);
	return true;
}

/* The same lease asked for again: only its expiry moves. */
static bool
lease_change_expiry(Datum *values, bool *isnull, void *arg)
{
	values[Anum_caio_lease_state_expires_at - 1] = TimestampTzGetDatum(*(TimestampTz *) arg);
	isnull[Anum_caio_lease_state_expires_at - 1] = false;
	return true;
}

/*
 * Grant a new lease: the resource's first row, or a takeover of its row.
 * The caller holds the resource's lock alone, and read the row under it.
 */
static void
lease_grant(const AcquireRequest *req, bool takeover, TimestampTz now,
			TimestampTz expires_at, CaioLease *lease)
{
	lease->resource = req->resource;
	lease->holder = req->holder;
	lease->holder_role = req->caller;
	lease->token = caio_token_next();
	lease->acquired_at = now;
	lease->expires_at = expires_at;
	lease->released = false;

	if (!takeover)
	{
		Datum		values[Natts_caio_lease_state];
		bool		isnull[Natts_caio_lease_state];

		lease_row(lease, values, isnull);
		caio_row_insert(caio_catalog()->lease_state, Natts_caio_lease_state,
						values, isnull);
	}
	else
		lease_row_replace(lease->resource, lease_change_to, lease);
}

/* Whether a live lease belongs to someone other than the requester. */
static bool
lease_held_by_other(const AcquireRequest *req, const CaioLease *lease,
					TimestampTz now)
{
	return lease_is_live(lease, now) &&
		!(strcmp(lease->holder, req->holder) == 0 &&
		  has_privs_of_role(req->caller, lease->holder_role));
}

/*
 * One attempt.  A retry while waiting first looks without the lock: while
 * another holder's lease is live there is nothing to do, and taking and
 * dropping the lock would wake the other waiters for nothing (whatever later
 * changes the lease ends a transaction that wakes us).  Otherwise, and on a
 * first attempt, look under the lock.  The new token is drawn only then, and
 * only for a new lease, so a resource's grants follow token order.
 *
 * The clock that dates the grant is read only once the lock is held: a
 * release that committed while we were on our way to the lock then lies in
 * the past, and a new lease never claims to start before the one it follows
 * ended.
 */
static AcquireOutcome
lease_try_acquire(const AcquireRequest *req, bool retry, CaioLease *lease,
				  TimestampTz *busy_until)
{
	TimestampTz now;
	TimestampTz expires_at;
	bool		found;
	bool		taken_over;

	if (retry && caio_lease_lookup(req->resource, lease) &&
		lease_held_by_other(req, lease, caio_clock_now(NULL)))
	{
		*busy_until = lease->expires_at;
		return ACQUIRE_HELD;
	}

	if (!caio_resource_trylock(req->key))
		return ACQUIRE_LOCKED;

	now = caio_clock_now(NULL);
	expires_at = caio_expiry(now, req->ttl);
	found = caio_lease_lookup(req->resource, lease);
	if (found && lease_held_by_other(req, lease, now))
	{
		caio_resource_unlock(req->key, ExclusiveLock);
		*busy_until = lease->expires_at;
		return ACQUIRE_HELD;
	}
	if (found && lease_is_live(lease, now))
	{
		/* The same holder asking again: a retry after a lost reply. */
		lease_row_replace(req->resource, lease_change_expiry, &expires_at);
		caio_count(CAIO_LEASES_RENEWED, 1);
		lease->resource = req->resource;
		lease->holder = req->holder;
		lease->expires_at = expires_at;
		return ACQUIRE_GRANTED;
	}

	taken_over = found && !lease->released;
	lease_grant(req, found, now, expires_at, lease);
	caio_count(CAIO_LEASES_GRANTED, 1);
	if (taken_over)
		caio_count(CAIO_LEASES_TAKEN_OVER, 1);
	return ACQUIRE_GRANTED;
}

/* Microseconds since start, by the monotonic clock. */
static int64
usecs_since(instr_time start)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, start);
	return (int64) INSTR_TIME_GET_MICROSEC(now);
}

/*
 * The longest a waiter sleeps before it looks again, whatever it was told.
 * Whoever changes a resource wakes its waiters when its transaction ends, but
 * only from a session that has caio loaded, and only at the end of a
 * transaction that it runs itself.  A transaction that is PREPAREd hands its
 * locks and its changes to COMMIT PREPARED or ROLLBACK PREPARED, which may run
 * in any session, maybe one that never loaded caio, and without
 * shared_preload_libraries nothing of caio runs there: nobody would wake the
 * waiters.  So every sleep ends after this long at most.  A look costs a
 * primary key lookup without a lock while the lease is held (see
 * lease_try_acquire), or a lock attempt that fails without waiting, so once a
 * second per waiter is cheap, and it bounds what a prepared transaction adds
 * to a waiter's delay by one second.
 */
#define ACQUIRE_MAX_SLEEP_MS	1000

/*
 * How long to sleep: until the deadline, or until the busy lease expires,
 * and never longer than ACQUIRE_MAX_SLEEP_MS.
 */
static long
acquire_sleep_ms(AcquireOutcome outcome, int64 remaining_usecs,
				 TimestampTz busy_until)
{
	bool		frozen;
	TimestampTz now = caio_clock_now(&frozen);
	int64		usecs = Min(remaining_usecs, ACQUIRE_MAX_SLEEP_MS * INT64CONST(1000));

	/* A frozen clock moves only by caio_clock_*, which wakes us. */
	if (outcome == ACQUIRE_HELD && !frozen)
		usecs = Min(usecs, busy_until - now);
	return (long) ((Max(usecs, 0) + 999) / 1000);
}

/*
 * Try, and while the resource is busy and `wait` lasts, sleep until someone
 * changes the resource, its lease expires, or the wait ends.  `wait` is
 * measured by the monotonic clock.  Registering as a waiter before the
 * second look means no wake-up can fall between a look and the sleep.  Each
 * attempt runs in a memory context of its own, reset before the next, so a
 * long wait does not accumulate memory.
 */
static bool
lease_acquire(const AcquireRequest *req, int64 wait_usecs, CaioLease *lease)
{
	MemoryContext attempt_context = AllocSetContextCreate(CurrentMemoryContext,
														  "caio acquire attempt",
														  ALLOCSET_SMALL_SIZES);
	instr_time	start;
	TimestampTz busy_until = 0;
	bool		waiting = false;
	AcquireOutcome outcome;

	INSTR_TIME_SET_CURRENT(start);
	for (;;)
	{
		MemoryContext old_context;
		int64		remaining;

		old_context = MemoryContextSwitchTo(attempt_context);
		outcome = lease_try_acquire(req, waiting, lease, &busy_until);
		MemoryContextSwitchTo(old_context);

		remaining = wait_usecs - usecs_since(start);
		if (outcome == ACQUIRE_GRANTED || remaining <= 0)
			break;
		MemoryContextReset(attempt_context);
		if (!waiting)
		{
			caio_waiter_enter(req->key);
			waiting = true;
			continue;
		}
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 acquire_sleep_ms(outcome, remaining, busy_until),
						 caio_lease_wait_event());
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}

	if (waiting)
		caio_waiter_leave(req->key);
	/* A granted lease points only at the request's strings and plain values. */
	MemoryContextDelete(attempt_context);
	return outcome == ACQUIRE_GRANTED;
}

Datum
caio_acquire(PG_FUNCTION_ARGS)
{
	AcquireRequest req;
	int64		wait_usecs;
	CaioLease	lease;
	bool		granted;

	caio_require_trusted_search_path_for_superuser("caio_acquire");
	caio_citus_serve_here("leases");

	req.resource = caio_arg_name(fcinfo, 0, "resource");
	req.holder = caio_arg_name(fcinfo, 1, "holder");
	req.ttl = caio_arg_ttl(fcinfo, 2);
	wait_usecs = caio_arg_wait_usecs(fcinfo, 3);
	req.key = caio_resource_key(req.resource);
	req.caller = GetUserId();

	granted = lease_acquire(&req, wait_usecs, &lease);

	if (!granted)
	{
		caio_count(CAIO_LEASES_BUSY, 1);
		PG_RETURN_NULL();
	}
	PG_RETURN_DATUM(caio_lease_to_datum(fcinfo, &lease));
}

/* ----------------------------------------------------------------
 * Renew, release, look up
 * ----------------------------------------------------------------
 */

/*
 * What renew and release change: the row only if it still is this lease (and
 * for a renewal, one that has not expired by now), one timestamp column.
 * The row's holder_role goes into the lease, and one other column into
 * returned.
 */
typedef struct HeldChange
{
	CaioLease  *lease;
	bool		renew;
	TimestampTz now;
	TimestampTz set_to;			/* into expires_at (renew) or released_at */
	TimestampTz returned;		/* acquired_at (renew) or expires_at */
} HeldChange;

static bool
lease_change_held(Datum *values, bool *isnull, void *arg)
{
	HeldChange *change = (HeldChange *) arg;
	AttrNumber	set = change->renew ? Anum_caio_lease_state_expires_at :
		Anum_caio_lease_state_released_at;
	AttrNumber	returned = change->renew ? Anum_caio_lease_state_acquired_at :
		Anum_caio_lease_state_expires_at;

	if (!isnull[Anum_caio_lease_state_released_at - 1] ||
		DatumGetInt64(values[Anum_caio_lease_state_token - 1]) != change->lease->token ||
		!caio_text_is(values[Anum_caio_lease_state_holder - 1],
					  change->lease->holder))
		return false;
	if (change->renew &&
		DatumGetTimestampTz(values[Anum_caio_lease_state_expires_at - 1]) <= change->now)
		return false;

	change->lease->holder_role =
		DatumGetObjectId(values[Anum_caio_lease_state_holder_role - 1]);
	change->returned = DatumGetTimestampTz(values[returned - 1]);
	values[set - 1] = TimestampTzGetDatum(change->set_to);
	isnull[set - 1] = false;
	return true;
}

/*
 * Change the lease's row under the resource's lock, which queues behind a
 * takeover in flight so that we see its outcome (renew shares the lock with
 * fenced writes; release waits for them, so that a transaction that wrote
 * under a lease finishes under it).  Returns whether the row was this lease.
 */
static bool
lease_update_held(HeldChange *change)
{
	return lease_row_update(change->lease->resource, lease_change_held, change);
}

/*
 * Whether the lease is worth queueing for its resource's lock: only when it
 * is the resource's newest lease, unreleased, and the caller may act on it
 * (else 42501, before the queue).  A request in the queue makes every later
 * one that conflicts with it wait too, the holder's next writes among them,
 * so a role that may not act on the lease, or one that names a lease that
 * no longer is (or not yet is, to this session) the newest, must not get
 * there.  A lease that is not the newest never becomes it again: tokens
 * only grow.  Under the lock everything is checked again.
 */
static bool
lease_worth_the_lock(const CaioLease *lease, const char *action)
{
	CaioLease	newest;

	if (!caio_lease_lookup(lease->resource, &newest) ||
		!caio_lease_is_current(&newest, lease->token, lease->holder))
		return false;
	caio_lease_check_owner(&newest, GetUserId(), action);
	return true;
}

Datum
caio_renew(PG_FUNCTION_ARGS)
{
	CaioLease	lease;
	Interval   *ttl;
	HeldChange	change = {.lease = &lease, .renew = true};
	bool		renewed;
	uint64		key;

	caio_require_trusted_search_path_for_superuser("caio_renew");
	caio_citus_serve_here("leases");

	caio_lease_from_arg(fcinfo, 0, &lease);
	ttl = caio_arg_ttl(fcinfo, 1);
	if (!lease_worth_the_lock(&lease, "renew"))
	{
		caio_count(CAIO_LEASES_RENEW_LOST, 1);
		PG_RETURN_NULL();
	}
	key = caio_resource_key(lease.resource);

	caio_resource_lock(key, ShareLock);
	change.now = caio_clock_now(NULL);
	change.set_to = caio_expiry(change.now, ttl);
	renewed = lease_update_held(&change);
	if (renewed)
		caio_lease_check_owner(&lease, GetUserId(), "renew");
	else
		caio_resource_unlock(key, ShareLock);	/* changed nothing: hold nothing */

	caio_count(renewed ? CAIO_LEASES_RENEWED : CAIO_LEASES_RENEW_LOST, 1);
	if (!renewed)
		PG_RETURN_NULL();
	lease.acquired_at = change.returned;
	lease.expires_at = change.set_to;
	PG_RETURN_DATUM(caio_lease_to_datum(fcinfo, &lease));
}

/*
 * A release marks the row released even when the lease had expired, so that
 * its token stops fencing at once; it returns true only for a live lease.
 */
Datum
caio_release(PG_FUNCTION_ARGS)
{
	CaioLease	lease;
	HeldChange	change = {.lease = &lease, .renew = false};
	bool		matched;
	uint64		key;

	caio_require_trusted_search_path_for_superuser("caio_release");
	caio_citus_serve_here("leases");

	caio_lease_from_arg(fcinfo, 0, &lease);
	if (!lease_worth_the_lock(&lease, "release"))
	{
		caio_count(CAIO_LEASES_RELEASE_LOST, 1);
		PG_RETURN_BOOL(false);
	}
	key = caio_resource_key(lease.resource);

	caio_resource_lock(key, ExclusiveLock);
	change.now = caio_clock_now(NULL);
	change.set_to = change.now;
	matched = lease_update_held(&change);
	if (matched)
		caio_lease_check_owner(&lease, GetUserId(), "release");
	else
		caio_resource_unlock(key, ExclusiveLock);	/* changed nothing */

	matched = matched && change.returned > change.now;
	caio_count(matched ? CAIO_LEASES_RELEASED : CAIO_LEASES_RELEASE_LOST, 1);
	PG_RETURN_BOOL(matched);
}

Datum
caio_lease_of(PG_FUNCTION_ARGS)
{
	char	   *resource = caio_arg_name(fcinfo, 0, "resource");
	CaioLease	lease;
	bool		live;

	caio_require_trusted_search_path_for_superuser("caio_lease_of");
	caio_citus_serve_here("leases");

	live = caio_lease_lookup(resource, &lease) &&
		lease_is_live(&lease, caio_clock_now(NULL));

	if (!live)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(caio_lease_to_datum(fcinfo, &lease));
}

/* ----------------------------------------------------------------
 * Purge
 * ----------------------------------------------------------------
 */

/*
 * A purge deletes at most this many leases per call, looking at as many
 * candidates per statement.  Each deleted lease keeps its resource's lock
 * until the transaction ends (see caio_lease_purge), and those locks live in
 * the shared lock table, which is sized for about max_locks_per_transaction
 * (64) locks per connection: a thousand leave it room, and keep the purge's
 * transaction short.
 */
#define PURGE_BATCH		1000

static const Oid purge_scan_args[] = {TEXTOID, TIMESTAMPTZOID, INT4OID};
static CaioPlan purge_scan_plan = CAIO_PLAN(
	"SELECT resource FROM @extschema@.caio_lease_state"
	" WHERE resource OPERATOR(pg_catalog.>) $1"
	"   AND (expires_at OPERATOR(pg_catalog.<) $2"
	"        OR released_at OPERATOR(pg_catalog.<) $2)"
	" ORDER BY resource LIMIT $3", purge_scan_args);
static const Oid purge_args[] = {TEXTOID, TIMESTAMPTZOID};
static CaioPlan purge_plan = CAIO_PLAN(
	"DELETE FROM @extschema@.caio_lease_state"
	" WHERE resource OPERATOR(pg_catalog.=) $1"
	"   AND (expires_at OPERATOR(pg_catalog.<) $2"
	"        OR released_at OPERATOR(pg_catalog.<) $2)", purge_args);

/*
 * Up to `limit` resources after `after` whose lease ended before cutoff, in
 * order, copied out of SPI's result (the deletes overwrite it).
 */
static int
purge_candidates(const char *after, TimestampTz cutoff, int limit,
				 char **resources)
{
	Datum		values[3] = {CStringGetTextDatum(after),
		TimestampTzGetDatum(cutoff), Int32GetDatum(limit)};
	int			n = (int) caio_spi_run(&purge_scan_plan, values, NULL, true);

	for (int i = 0; i < n; i++)
	{
		bool		isnull;

		resources[i] = TextDatumGetCString(caio_spi_value(i, 1, &isnull));
	}
	SPI_freetuptable(SPI_tuptable);
	return n;
}

/*
 * Delete one resource's row if its lease still ended before cutoff.  Under
 * the resource's lock, taken without waiting and kept until the transaction
 * ends, like a release's: the row is read and changed only by those who hold
 * that lock, so nobody is using it while it goes, and until the delete
 * commits nobody sees a row that is about to vanish (an acquire would
 * otherwise queue behind the delete's row lock, and then find nothing to
 * update).  A resource that someone is using is skipped: it is not idle.
 */
static bool
purge_one(const char *resource, TimestampTz cutoff)
{
	uint64		key = caio_resource_key(resource);
	Datum		values[2] = {CStringGetTextDatum(resource),
	TimestampTzGetDatum(cutoff)};

	if (!caio_resource_trylock(key))
		return false;
	if (caio_spi_run(&purge_plan, values, NULL, false) > 0)
		return true;
	caio_resource_unlock(key, ExclusiveLock);	/* renewed meanwhile */
	return false;
}

/*
 * Delete the leases that were released or expired more than older_than ago,
 * at most PURGE_BATCH per call; returns how many.  Tokens come from one
 * sequence, so a new lease on a purged resource still gets a larger token,
 * and a write under a purged lease's token finds no lease and is refused.
 */
Datum
caio_lease_purge(PG_FUNCTION_ARGS)
{
	Interval   *older_than;
	TimestampTz cutoff;
	MemoryContext batch_context;
	CaioSpi		spi;
	char	   *resources[PURGE_BATCH];
	char	   *after = pstrdup("");	/* below every resource: they are not empty */
	int64		deleted = 0;

	caio_require_trusted_search_path("caio_lease_purge");
	caio_citus_serve_here("leases");

	caio_arg_required(fcinfo, 0, "older_than", NULL);
	older_than = PG_GETARG_INTERVAL_P(0);
	cutoff = caio_ago(caio_clock_now(NULL), older_than, "older_than");

	batch_context = AllocSetContextCreate(CurrentMemoryContext,
										  "caio purge batch", ALLOCSET_DEFAULT_SIZES);
	caio_spi_begin(&spi);
	while (deleted < PURGE_BATCH)
	{
		MemoryContext old_context = MemoryContextSwitchTo(batch_context);
		int			n = purge_candidates(after, cutoff, PURGE_BATCH, resources);

		for (int i = 0; i < n && deleted < PURGE_BATCH; i++)
			if (purge_one(resources[i], cutoff))
				deleted++;
		MemoryContextSwitchTo(old_context);
		if (n < PURGE_BATCH)
			break;
		after = pstrdup(resources[n - 1]);
		MemoryContextReset(batch_context);
		CHECK_FOR_INTERRUPTS();
	}
	caio_spi_end(&spi);
	MemoryContextDelete(batch_context);
	PG_RETURN_INT64(deleted);
}
