/*
 * token_flush.c
 *		How far the token sequence's WAL must be flushed before a token
 *		leaves, when caio has shared memory.
 *
 * A token must not come again after a crash, so the sequence's WAL that
 * covers it must reach disk.  Without shared memory caio flushes up to the
 * sequence's newest record before each token leaves (token.c): a wait for
 * the disk once per 32 tokens, which is most of what a lease or a claim
 * costs above plain SQL under synchronous_commit = off.
 *
 * With shared memory the rule is looser and just as safe:
 *
 * - A token t leaves only once the flushed WAL covers t - UNFLUSHED_MAX
 *   (and at least token 1).  The records seen lately are kept here; the
 *   oldest that covers enough was written some two thousand tokens ago, and
 *   the WAL writer has nearly always flushed it by then, so nobody waits.
 *
 * - The first token after every server start, and after every restart that
 *   follows a crash (both make this shared memory afresh), comes only after
 *   the sequence was moved UNFLUSHED_MAX above where it restarted, and that
 *   move flushed (token.c).  A crash lost at most UNFLUSHED_MAX tokens
 *   above the flushed WAL, so the move passes every token handed out before
 *   it.  A sequence that never handed out a token is not moved: the first
 *   token needs its own record flushed, so tokens still start at 1.
 *
 * The price is a gap of up to UNFLUSHED_MAX tokens at each start; tokens
 * only have to grow.  Covers are kept per database, for the sequence they
 * were seen on (a sequence made again by DROP and CREATE EXTENSION starts
 * with none).
 */
#include "postgres.h"

#include "miscadmin.h"

#include "caio.h"
#include "shared.h"
#include "token.h"

/* Under the mutex (or before anyone else can see them): nothing seen yet. */
static void
covers_reset(CaioTokenCovers *covers, Oid dbid, Oid seq)
{
	covers->dbid = dbid;
	covers->seq = seq;
	covers->restart_moved = false;
	covers->count = 0;
	covers->newest = 0;
}

/* Under the mutex: whether they are this database's covers of seq. */
static bool
covers_are_of(const CaioTokenCovers *covers, Oid seq)
{
	return covers->dbid == MyDatabaseId && covers->seq == seq;
}

void
caio_token_covers_init(CaioTokenCovers *covers)
{
	SpinLockInit(&covers->mutex);
	covers_reset(covers, InvalidOid, InvalidOid);
}

/* A slot taken over from a dropped database: nothing it saw applies. */
void
caio_token_covers_clear(CaioTokenCovers *covers)
{
	SpinLockAcquire(&covers->mutex);
	covers_reset(covers, InvalidOid, InvalidOid);
	SpinLockRelease(&covers->mutex);
}

/*
 * This database's covers of seq, and in *restart_moved whether the sequence
 * was moved since this server started (read in the same look, since every
 * token asks both); NULL without shared memory, without a slot, or when the
 * slot went to another database meanwhile (it found this one gone on a
 * stale catalog).  Every use checks again whose they are.
 */
CaioTokenCovers *
caio_token_covers(Oid seq, bool *restart_moved)
{
	CaioDatabaseSlot *slot = caio_database_slot();
	CaioTokenCovers *covers;
	bool		ours;

	if (slot == NULL)
		return NULL;
	covers = &slot->tokens;
	SpinLockAcquire(&covers->mutex);
	/* New in the slot, or another sequence's (DROP and CREATE EXTENSION). */
	if (!OidIsValid(covers->dbid) ||
		(covers->dbid == MyDatabaseId && covers->seq != seq))
		covers_reset(covers, MyDatabaseId, seq);
	ours = covers_are_of(covers, seq);
	*restart_moved = ours && covers->restart_moved;
	SpinLockRelease(&covers->mutex);
	return ours ? covers : NULL;
}

/* Whether the sequence was moved since this server started, looked at again. */
bool
caio_token_restart_moved(CaioTokenCovers *covers, Oid seq)
{
	bool		moved;

	SpinLockAcquire(&covers->mutex);
	moved = covers_are_of(covers, seq) && covers->restart_moved;
	SpinLockRelease(&covers->mutex);
	return moved;
}

void
caio_token_set_restart_moved(CaioTokenCovers *covers, Oid seq)
{
	SpinLockAcquire(&covers->mutex);
	if (covers_are_of(covers, seq))
		covers->restart_moved = true;
	SpinLockRelease(&covers->mutex);
}

/*
 * token was drawn, the largest of a call, and the sequence's page LSN was
 * then lsn (so WAL up to lsn covers token).  Remembers a newer record, and
 * returns how far WAL must be flushed before token leaves: the oldest
 * remembered record that covers token - UNFLUSHED_MAX, or lsn itself when
 * none does (or when the covers are no longer this database's).
 */
XLogRecPtr
caio_token_drawn(CaioTokenCovers *covers, Oid seq, int64 token, XLogRecPtr lsn)
{
	int64		needed = Max(token - CAIO_TOKEN_UNFLUSHED_MAX, 1);
	XLogRecPtr	point = lsn;

	SpinLockAcquire(&covers->mutex);
	if (!covers_are_of(covers, seq))
	{
		SpinLockRelease(&covers->mutex);
		return lsn;
	}
	if (covers->count == 0 || lsn > covers->covers[covers->newest].lsn)
	{
		covers->newest = (covers->newest + 1) % CAIO_TOKEN_COVERS;
		covers->covers[covers->newest].token = token;
		covers->covers[covers->newest].lsn = lsn;
		covers->count = Min(covers->count + 1, CAIO_TOKEN_COVERS);
	}
	for (int age = covers->count - 1; age >= 0; age--)
	{
		CaioTokenCover *cover =
			&covers->covers[(covers->newest - age + CAIO_TOKEN_COVERS) % CAIO_TOKEN_COVERS];

		if (cover->token >= needed)
		{
			point = Min(point, cover->lsn);
			break;
		}
	}
	SpinLockRelease(&covers->mutex);
	return point;
}
