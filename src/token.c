/*
 * token.c
 *		Fencing tokens: one durable sequence, and epochs that keep tokens
 *		growing across a crash, a promoted standby and a restore.
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
 *   tokens, as the sequence logs 32 values ahead.  With shared memory it
 *   waits for less, and moves the sequence at each start (token_flush.c).
 *
 * - A copy that goes on from an older state: a promoted standby, a
 *   point-in-time recovery, a dump restored, a database copied from a
 *   template, a pg_upgrade.  Its sequence stops where its copy stopped, and
 *   tokens that the original issued after that would come again.
 *
 * Against copies, tokens are epoch * 2^47 + n.  caio_token_epoch records the
 * lineage of the tokens: the system identifier and database that draw them,
 * a timeline, and that timeline's epoch.  A later timeline t of the lineage
 * has epoch + (t - timeline_id), so that every timeline (a PostgreSQL
 * timeline ID is never used twice in one history) has an epoch of its own,
 * and the sequence moves to its start before the first token drawn there.
 * CREATE EXTENSION records the lineage, and the table is dumped: a restored
 * database, a template's copy or a pg_upgraded one finds a row of another
 * lineage (beside its own), starts a lineage of its own one epoch above
 * everything it knows of, and keeps only that row.  A database that never
 * moved hands out 1, 2, 3, ... (preloaded, with a gap at each start).
 * caio_start_token_epoch() starts a new lineage by hand, for copies that
 * nothing marks (a file-level snapshot started without recovery, a dump
 * from caio 0.1), and for a logical cutover: there the rows came from
 * another system and its tokens, in whatever epoch it reached, are in
 * caio's tables and the guarded ones, so the new epoch is also above the
 * largest token they hold (token_held.c).
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/xlog.h"
#include "catalog/pg_sequence.h"
#include "catalog/pg_type.h"
#include "commands/sequence.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "caio.h"
#include "catalog.h"
#include "citus.h"
#include "resource_lock.h"
#include "shared.h"
#include "token.h"
#include "search_path.h"

PG_FUNCTION_INFO_V1(caio_start_token_epoch);

#define CAIO_TOKEN_EPOCH_MAX	(PG_INT64_MAX >> CAIO_TOKEN_EPOCH_SHIFT)

/* The timeline whose epoch this backend found in place; 0 for none yet. */
static TimeLineID epoch_checked_timeline = 0;

static const Oid lineage_args[] = {TEXTOID, OIDOID};
static CaioPlan epoch_read = CAIO_PLAN(
	"SELECT pg_catalog.count(*),"
	"       pg_catalog.bool_and(system_identifier OPERATOR(pg_catalog.=) $1::pg_catalog.numeric"
	"                           AND database_oid OPERATOR(pg_catalog.=) $2),"
	"       pg_catalog.max(timeline_id), pg_catalog.max(epoch)"
	"  FROM @extschema@.caio_token_epoch",
	lineage_args);
static const Oid epoch_write_args[] = {TEXTOID, OIDOID, INT8OID, INT8OID, TIMESTAMPTZOID};
static CaioPlan epoch_write = CAIO_PLAN(
	"WITH earlier AS (DELETE FROM @extschema@.caio_token_epoch)"
	"INSERT INTO @extschema@.caio_token_epoch"
	"       (system_identifier, database_oid, timeline_id, epoch, recorded_at)"
	"VALUES ($1::pg_catalog.numeric, $2, $3, $4, $5)",
	epoch_write_args);
static CaioPlan sequence_read = CAIO_PLAN_NO_ARGS(
	"SELECT last_value, is_called FROM @extschema@.caio_token_seq");

/* What caio_token_epoch says, read as the newest committed state. */
typedef struct EpochRecord
{
	int64		rows;
	bool		this_lineage;	/* one row, of this system and database */
	int64		timeline;		/* the newest timeline and epoch recorded */
	int64		epoch;
} EpochRecord;

static EpochRecord
epoch_record_read(Datum *lineage)
{
	EpochRecord record = {0};
	bool		isnull;

	caio_spi_run(&epoch_read, lineage, NULL, true);
	record.rows = DatumGetInt64(caio_spi_value(0, 1, &isnull));
	if (record.rows == 0)
		return record;
	record.this_lineage = record.rows == 1 && DatumGetBool(caio_spi_value(0, 2, &isnull));
	record.timeline = DatumGetInt64(caio_spi_value(0, 3, &isnull));
	record.epoch = DatumGetInt64(caio_spi_value(0, 4, &isnull));
	return record;
}

/* The sequence's last value; *used is false while it never handed out a value. */
static int64
sequence_last(bool *used)
{
	bool		isnull;

	caio_spi_run(&sequence_read, NULL, NULL, true);
	if (used)
		*used = DatumGetBool(caio_spi_value(0, 2, &isnull));
	return DatumGetInt64(caio_spi_value(0, 1, &isnull));
}

/* The epoch the sequence is in. */
static int64
sequence_epoch(bool *used)
{
	return sequence_last(used) >> CAIO_TOKEN_EPOCH_SHIFT;
}

/* The next token will be above last; as the extension owner (setval checks). */
static void
sequence_set(Oid seq, int64 last)
{
	DirectFunctionCall3(setval3_oid, ObjectIdGetDatum(seq), Int64GetDatum(last),
						BoolGetDatum(true));
}

/* Refuse an epoch past the last one tokens have room for. */
static void
epoch_check_room(int64 epoch)
{
	if (epoch > CAIO_TOKEN_EPOCH_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_SEQUENCE_GENERATOR_LIMIT_EXCEEDED),
				 errmsg("caio has no token epoch left"),
				 errdetail("Epoch " INT64_FORMAT " would be needed; tokens are bigint, with room for epochs 0 to " INT64_FORMAT ".",
						   epoch, (int64) CAIO_TOKEN_EPOCH_MAX)));
}

/*
 * Move the sequence to the start of an epoch above the one it is in.  A
 * sequence's move is not undone by a rollback: callers make it their last
 * step, after everything that can fail, so that a failed call never leaves
 * the tokens an epoch further on.
 */
static void
sequence_move(Oid seq, int64 epoch, const char *why)
{
	epoch_check_room(epoch);
	sequence_set(seq, epoch << CAIO_TOKEN_EPOCH_SHIFT);
	ereport(LOG,
			(errmsg("caio moves tokens to epoch " INT64_FORMAT, epoch),
			 errdetail("%s", why)));
}

/*
 * Another timeline of this lineage: its epoch follows from the record, so
 * any number of backends, and retries after a rollback, agree on it, and
 * nothing needs writing.  The lock only makes "move if below" atomic.
 */
static void
epoch_enter_timeline(Oid epoch_table, Oid seq, EpochRecord record, TimeLineID timeline)
{
	int64		epoch = record.epoch + ((int64) timeline - record.timeline);

	if (sequence_epoch(NULL) >= epoch)
		return;
	LockRelationOid(epoch_table, ExclusiveLock);
	if (sequence_epoch(NULL) < epoch)
		sequence_move(seq, epoch,
					  psprintf("The server writes WAL on timeline %u; epoch " INT64_FORMAT " was recorded for timeline " INT64_FORMAT ".",
							   timeline, record.epoch, record.timeline));
	UnlockRelationOid(epoch_table, ExclusiveLock);
}

static bool
epoch_is_this_lineage(EpochRecord record, TimeLineID timeline)
{
	return record.this_lineage && (int64) timeline >= record.timeline;
}

/*
 * Why a new lineage moves the sequence, as the log says it; NULL when it
 * need not move (a sequence never used, and nothing recorded).
 */
static const char *
epoch_move_reason(bool force, bool used, const EpochRecord *record)
{
	if (force)
		return "caio_start_token_epoch() was called.";
	if (record->rows > 0)
		return "This database is a copy of the one that recorded the tokens' epoch (a restore, a template's copy, pg_upgrade, or an earlier timeline).";
	if (used)
		return "The token sequence was used, but no epoch was recorded.";
	return NULL;
}

/*
 * A lineage of its own for this database, one epoch above everything it
 * knows of, recorded under a lock kept until the transaction ends: the new
 * epoch depends on the sequence, so a second backend must find the record
 * rather than move the sequence again.  force (caio_start_token_epoch)
 * starts one even when this database is the recorded lineage, and also
 * above every token its tables hold (token_held.c).  The record is written
 * before the sequence moves, so that a failed write (a table that cannot be
 * written) leaves the sequence where it was.  Returns the epoch.
 */
static int64
epoch_start_lineage(Oid epoch_table, Oid seq, Datum *lineage, TimeLineID timeline,
					bool force)
{
	EpochRecord record;
	bool		used;
	int64		epoch;
	const char *why;
	Datum		values[5];

	LockRelationOid(epoch_table, ExclusiveLock);
	record = epoch_record_read(lineage);
	if (!force && epoch_is_this_lineage(record, timeline))
	{
		epoch_enter_timeline(epoch_table, seq, record, timeline);
		return sequence_epoch(NULL);
	}
	epoch = Max(sequence_epoch(&used), record.epoch);
	if (force)
		epoch = Max(epoch, caio_token_max_held() >> CAIO_TOKEN_EPOCH_SHIFT);
	why = epoch_move_reason(force, used, &record);
	if (why != NULL)
		epoch_check_room(++epoch);
	values[0] = lineage[0];
	values[1] = lineage[1];
	values[2] = Int64GetDatum((int64) timeline);
	values[3] = Int64GetDatum(epoch);
	values[4] = TimestampTzGetDatum(GetCurrentTimestamp());
	caio_spi_run(&epoch_write, values, NULL, false);
	if (why != NULL)
		sequence_move(seq, epoch, why);
	return epoch;
}

/* This system and database, as caio_token_epoch names them. */
static void
epoch_lineage(Datum *lineage)
{
	char		system_identifier[32];

	snprintf(system_identifier, sizeof(system_identifier), UINT64_FORMAT,
			 GetSystemIdentifier());
	lineage[0] = CStringGetTextDatum(system_identifier);
	lineage[1] = ObjectIdGetDatum(MyDatabaseId);
}

/*
 * The sequence as caio made it.  A superuser could alter it, and then tokens
 * would repeat (CYCLE, UNLOGGED) or a resource's tokens go backwards (a
 * CACHE, which hands each backend a block of its own).
 */
static void
sequence_check(Oid seq)
{
	HeapTuple	tuple = SearchSysCache1(SEQRELID, ObjectIdGetDatum(seq));
	Form_pg_sequence form;
	bool		as_made;

	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "cache lookup failed for sequence %u", seq);
	form = (Form_pg_sequence) GETSTRUCT(tuple);
	as_made = form->seqincrement == 1 && form->seqcache == 1 && !form->seqcycle &&
		form->seqmin >= 1 && get_rel_persistence(seq) == RELPERSISTENCE_PERMANENT;
	ReleaseSysCache(tuple);
	if (!as_made)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("caio's token sequence has been altered"),
				 errdetail("caio_token_seq must be logged, with INCREMENT 1, CACHE 1, NO CYCLE and MINVALUE 1, or tokens could repeat, go backwards or stop fencing."),
				 errhint("Run ALTER SEQUENCE caio_token_seq INCREMENT 1 CACHE 1 NO CYCLE MINVALUE 1, and ALTER SEQUENCE caio_token_seq SET LOGGED.")));
}

/*
 * Before a session's first token on a timeline: the sequence is as caio
 * made it, and in this timeline's epoch.
 */
static void
epoch_check(Oid epoch_table, Oid seq, TimeLineID timeline)
{
	Datum		lineage[2];
	CaioSpi		spi;
	EpochRecord record;

	sequence_check(seq);
	epoch_lineage(lineage);
	caio_spi_begin(&spi);
	record = epoch_record_read(lineage);
	if (epoch_is_this_lineage(record, timeline))
	{
		epoch_enter_timeline(epoch_table, seq, record, timeline);
		epoch_checked_timeline = timeline;
	}
	else
		(void) epoch_start_lineage(epoch_table, seq, lineage, timeline, false);
	caio_spi_end(&spi);
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
	return GetWALInsertionTimeLine();
}

/*
 * The sequence's page LSN: that of its newest record, which logged a value
 * at least as large as any it handed out so far.
 */
static XLogRecPtr
sequence_lsn(Oid seq)
{
	Relation	rel = relation_open(seq, AccessShareLock);
	Buffer		buffer = ReadBuffer(rel, 0);
	XLogRecPtr	lsn;

	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	lsn = PageGetLSN(BufferGetPage(buffer));
	UnlockReleaseBuffer(buffer);
	relation_close(rel, AccessShareLock);
	return lsn;
}

/*
 * Flush the WAL that token, the largest just drawn, needs on disk before it
 * leaves: all that covers it, or with shared memory what covers
 * UNFLUSHED_MAX below it (token_flush.c).  Usually it is flushed already.
 */
static void
token_make_durable(Oid seq, CaioTokenCovers *covers, int64 token)
{
	XLogRecPtr	lsn = sequence_lsn(seq);

	if (covers != NULL)
		lsn = caio_token_drawn(covers, seq, token, lsn);
	XLogFlush(lsn);
}

/*
 * Move the sequence UNFLUSHED_MAX above where it restarted, past every
 * token a crash may have taken back (token_flush.c), and flush the move
 * before any token leaves.  With covers, once per server run: one backend
 * moves it, the others wait for the move and find it made.
 *
 * The move draws UNFLUSHED_MAX values rather than set the sequence: drawing
 * only ever moves it forward, so it needs no lock against the sessions that
 * draw tokens meanwhile.  Reading the sequence and setting it would need one
 * that conflicts with nextval, and every open transaction that drew a token
 * holds nextval's lock to its end: the move would wait for all of them, and
 * every later draw would queue behind the move (a deadlock, too, with a
 * transaction that drew a token and then waits for the mover's resource).
 * The movers queue on a lock of their own, let go as soon as the move is
 * flushed.  A sequence at 1 and never called handed out nothing; any other
 * was, or was set by hand.
 */
static void
token_restart_move(CaioTokenCovers *covers, Oid seq)
{
	caio_tag_lock(seq, CAIO_TAG_TOKEN_MOVE, ExclusiveLock);
	if (covers == NULL || !caio_token_restart_moved(covers, seq))
	{
		CaioSpi		spi;
		bool		used;
		int64		last;

		caio_spi_begin(&spi);
		last = sequence_last(&used);
		caio_spi_end(&spi);
		if (used || last > 1)
		{
			int64		moved = last;

			for (int i = 0; i < CAIO_TOKEN_UNFLUSHED_MAX; i++)
				moved = nextval_internal(seq, false);
			ereport(LOG,
					(errmsg("caio moves tokens past those the server may have handed out before it started"),
					 errdetail("The token sequence was at " INT64_FORMAT "; the next token is above " INT64_FORMAT ".",
							   last, moved)));
		}
		XLogFlush(sequence_lsn(seq));
		if (covers != NULL)
			caio_token_set_restart_moved(covers, seq);
	}
	caio_tag_unlock(seq, CAIO_TAG_TOKEN_MOVE, ExclusiveLock);
}

/*
 * This database's covers, after the move that a server's first token needs
 * when caio has shared memory.  A backend whose database has no slot flushes
 * each token's own WAL, but an earlier run may have had a slot and handed
 * tokens out lazily, so it makes the move itself, once.
 */
static CaioTokenCovers *
token_covers_after_move(Oid seq)
{
	static bool moved_by_this_backend = false;
	bool		restart_moved;
	CaioTokenCovers *covers = caio_token_covers(seq, &restart_moved);

	if (covers != NULL)
	{
		if (!restart_moved)
			token_restart_move(covers, seq);
	}
	else if (caio_shared_available() && !moved_by_this_backend)
	{
		token_restart_move(NULL, seq);
		moved_by_this_backend = true;
	}
	return covers;
}

/*
 * caio_token_epoch, also in a session that updated from 0.1 just now (the
 * new table's creation invalidates nothing the catalog caches).
 */
static Oid
epoch_table_of(const CaioCatalog *cat)
{
	return OidIsValid(cat->token_epoch) ? cat->token_epoch :
		caio_member_relation("caio_token_epoch");
}

/*
 * Start a new lineage by hand, for a copy that nothing marks as one and
 * for a logical cutover (rows whose tokens another system issued): the new
 * epoch is above the sequence's, every recorded one and every token the
 * database holds, and the next token is its first.  The move is flushed
 * before the epoch is returned: a crash after the call, even under
 * synchronous_commit = off, cannot take it back.  Returns the epoch.
 */
Datum
caio_start_token_epoch(PG_FUNCTION_ARGS)
{
	const CaioCatalog *cat = caio_catalog();
	Oid			epoch_table = epoch_table_of(cat);
	TimeLineID	timeline = current_timeline();
	Datum		lineage[2];
	CaioSpi		spi;
	int64		epoch;

	caio_require_trusted_search_path("caio_start_token_epoch");
	caio_citus_serve_here("tokens");

	if (!OidIsValid(epoch_table))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("caio's schema has no token epochs"),
				 errhint("Run ALTER EXTENSION caio UPDATE.")));
	sequence_check(cat->token_seq);
	epoch_lineage(lineage);
	caio_spi_begin(&spi);
	epoch = epoch_start_lineage(epoch_table, cat->token_seq, lineage, timeline, true);
	caio_spi_end(&spi);
	XLogFlush(sequence_lsn(cat->token_seq));
	epoch_checked_timeline = 0;
	PG_RETURN_INT64(epoch);
}

/*
 * Tokens come from one sequence for all resources.  Callers draw a token only
 * while they hold the resource's lock and only for a new lease, so a
 * resource's grants follow token order and renewals keep their token.
 */
int64
caio_token_next(void)
{
	int64		token;

	caio_token_next_n(&token, 1);
	return token;
}

/*
 * n tokens, in increasing order (a claim's rows).  One flush covers them
 * all: the sequence's page LSN after the last is at or past the WAL of
 * every earlier one.
 */
void
caio_token_next_n(int64 *tokens, int n)
{
	const CaioCatalog *cat = caio_catalog();
	TimeLineID	timeline = current_timeline();
	CaioTokenCovers *covers;

	Assert(n > 0);
	if (timeline != epoch_checked_timeline)
	{
		/* A schema from 0.1 has no epochs until ALTER EXTENSION caio UPDATE. */
		Oid			epoch_table = epoch_table_of(cat);

		if (OidIsValid(epoch_table))
			epoch_check(epoch_table, cat->token_seq, timeline);
	}
	covers = token_covers_after_move(cat->token_seq);
	for (int i = 0; i < n; i++)
	{
		tokens[i] = nextval_internal(cat->token_seq, false);
		/* A token of 0 would read as "never claimed"; caio's tables have no CHECK. */
		if (tokens[i] <= 0)
			sequence_check(cat->token_seq);
	}
	token_make_durable(cat->token_seq, covers, tokens[n - 1]);
}
