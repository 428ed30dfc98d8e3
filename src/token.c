/*
 * token.c
 *		Fencing tokens: one durable sequence, and epochs that keep tokens
 *		growing across a crash, a promoted standby and a restore elsewhere.
 *
 * Every lease and every claim gets its token from caio_token_seq.  A token
 * must be larger than every token this database ever handed out, and two
 * things can make a sequence go back:
 *
 * - A crash.  A sequence writes WAL ahead of the values it hands out, but
 *   nothing flushes that WAL before the value reaches the client, and with
 *   synchronous_commit = off, or before the transaction commits, a crash can
 *   lose it; the sequence then restarts below a token somebody holds.  So
 *   caio flushes the sequence's WAL before a token leaves: once per 32
 *   tokens, as the sequence logs 32 values ahead.
 *
 * - A promoted standby, a point-in-time recovery, or a restore into another
 *   cluster.  The new primary's sequence stops where its copy of the WAL
 *   stopped, and tokens the old primary issued after that come again.  Each
 *   of these starts a new WAL timeline or a new system identifier, which
 *   caio records in caio_token_epoch.  When a token is drawn under a
 *   timeline or system the table does not name, the sequence first moves to
 *   the start of the next epoch: tokens are epoch * 2^47 + n, so a database
 *   that never failed over hands out 1, 2, 3, ... and one that did jumps
 *   past everything the old primary could have issued in that epoch.
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/xlog.h"
#include "access/xact.h"
#include "catalog/pg_type.h"
#include "commands/sequence.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/fmgrprotos.h"
#include "utils/numeric.h"

#include "caio.h"

/* The timeline this backend last found recorded in caio_token_epoch. */
static TimeLineID epoch_checked_timeline = 0;

static const Oid epoch_args[] = {TEXTOID, INT8OID, TIMESTAMPTZOID};
static CaioPlan epoch_read = CAIO_PLAN(
	"SELECT system_identifier OPERATOR(pg_catalog.=) $1::pg_catalog.numeric"
	"   AND timeline_id OPERATOR(pg_catalog.=) $2"
	"  FROM @extschema@.caio_token_epoch",
	epoch_args);
static CaioPlan epoch_write = CAIO_PLAN(
	"INSERT INTO @extschema@.caio_token_epoch"
	"       (system_identifier, timeline_id, recorded_at)"
	"VALUES ($1::pg_catalog.numeric, $2, $3)"
	"ON CONFLICT (singleton) DO UPDATE"
	"   SET system_identifier = excluded.system_identifier,"
	"       timeline_id = excluded.timeline_id,"
	"       recorded_at = excluded.recorded_at",
	epoch_args);

/* What caio_token_epoch says of this system and timeline. */
typedef enum EpochRecord
{
	EPOCH_NONE,					/* no row yet */
	EPOCH_CURRENT,				/* names this system and timeline */
	EPOCH_OTHER					/* names another */
} EpochRecord;

static EpochRecord
epoch_read_record(Datum *values)
{
	bool		isnull;

	if (caio_spi_run(&epoch_read, values, NULL, true) == 0)
		return EPOCH_NONE;
	return DatumGetBool(caio_spi_value(0, 1, &isnull)) ? EPOCH_CURRENT : EPOCH_OTHER;
}

/* The timeline that WAL is written on now. */
static TimeLineID
current_timeline(void)
{
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("caio cannot issue a token during recovery"),
				 errhint("Acquire leases and claim rows on the primary.")));
	return CAIO_INSERT_TIMELINE();
}

/*
 * Move the sequence to the start of the next epoch: past every value it
 * could have handed out in this one.
 */
static int64
epoch_advance(Oid seq)
{
	int64		last = nextval_internal(seq, false);
	int64		next_start = ((last >> CAIO_TOKEN_EPOCH_SHIFT) + 1) << CAIO_TOKEN_EPOCH_SHIFT;

	DirectFunctionCall3(setval3_oid, ObjectIdGetDatum(seq),
						Int64GetDatum(next_start), BoolGetDatum(true));
	return next_start >> CAIO_TOKEN_EPOCH_SHIFT;
}

/*
 * Make sure caio_token_epoch names this system and timeline, starting a new
 * epoch first when it names others.  No row means this database never drew
 * a token under this rule (a new install, or one updated from 0.1): there is
 * nothing to protect, so it is recorded as it is.  Only a change takes the
 * table's lock, which serialises backends that notice it at once; the newest
 * committed state is read after it, so the second finds the first's record.
 */
static void
epoch_check(Oid epoch_table, Oid seq, TimeLineID timeline)
{
	char		system_identifier[32];
	Datum		values[3];
	CaioSpi		spi;
	EpochRecord record;

	snprintf(system_identifier, sizeof(system_identifier), UINT64_FORMAT,
			 GetSystemIdentifier());
	values[0] = CStringGetTextDatum(system_identifier);
	values[1] = Int64GetDatum((int64) timeline);
	values[2] = TimestampTzGetDatum(GetCurrentTimestamp());

	caio_spi_begin(&spi);
	record = epoch_read_record(values);
	if (record != EPOCH_CURRENT)
	{
		LockRelationOid(epoch_table, ExclusiveLock);
		record = epoch_read_record(values);
	}
	if (record == EPOCH_OTHER)
	{
		int64		epoch = epoch_advance(seq);

		ereport(LOG,
				(errmsg("caio starts token epoch " INT64_FORMAT " on timeline %u",
						epoch, timeline),
				 errdetail("Tokens were last drawn on another timeline or in another cluster; "
						   "the token sequence moves past every token that could have been issued there.")));
	}
	if (record != EPOCH_CURRENT)
		caio_spi_run(&epoch_write, values, NULL, false);
	caio_spi_end(&spi);

	/* Trust the record without reading it only once it is committed. */
	if (record == EPOCH_CURRENT)
		epoch_checked_timeline = timeline;
}

/*
 * Flush the WAL that covers the value the sequence just handed out.  The
 * sequence's page LSN is that of its newest record, which logged a value at
 * least as large as this one.  Usually it is flushed already.
 */
static void
token_make_durable(Oid seq)
{
	Relation	rel = relation_open(seq, AccessShareLock);
	Buffer		buffer = ReadBuffer(rel, 0);
	XLogRecPtr	lsn;

	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	lsn = PageGetLSN(BufferGetPage(buffer));
	UnlockReleaseBuffer(buffer);
	relation_close(rel, AccessShareLock);
	XLogFlush(lsn);
}

/*
 * Tokens come from one sequence for all resources.  Callers draw a token only
 * while they hold the resource's lock and only for a new lease, so a
 * resource's grants follow token order and renewals keep their token.
 */
int64
caio_token_next(void)
{
	const CaioCatalog *cat = caio_catalog();
	TimeLineID	timeline = current_timeline();
	int64		token;

	if (timeline != epoch_checked_timeline)
	{
		/* A schema from 0.1 has no epochs until ALTER EXTENSION caio UPDATE. */
		Oid			epoch_table = OidIsValid(cat->token_epoch) ? cat->token_epoch :
			get_relname_relid("caio_token_epoch", cat->schema);

		if (OidIsValid(epoch_table))
			epoch_check(epoch_table, cat->token_seq, timeline);
	}
	token = nextval_internal(cat->token_seq, false);
	token_make_durable(cat->token_seq);
	return token;
}
