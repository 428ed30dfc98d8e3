/*
 * token.h
 *		Fencing tokens: epoch << CAIO_TOKEN_EPOCH_SHIFT | n, never repeated.
 */
#ifndef CAIO_TOKEN_H
#define CAIO_TOKEN_H

#include "access/xlogdefs.h"
#include "storage/spin.h"

#define CAIO_TOKEN_EPOCH_SHIFT	47

/*
 * With shared memory, at most this many tokens are handed out above what
 * the token sequence's flushed WAL covers, and the first token after a
 * server start or a crash is at least this far above the sequence's value.
 */
#define CAIO_TOKEN_UNFLUSHED_MAX	4096

/* Sequence records remembered: 64 cover up to 64 * 33 tokens back. */
#define CAIO_TOKEN_COVERS	64

/*
 * A database's token sequence records, as backends saw them after drawing:
 * the WAL up to lsn makes the sequence restart above token.  In its slot of
 * caio's shared memory (shared.h), made afresh by every start.
 */
typedef struct CaioTokenCover
{
	int64		token;
	XLogRecPtr	lsn;
} CaioTokenCover;

typedef struct CaioTokenCovers
{
	slock_t		mutex;
	Oid			dbid;			/* the database and sequence they are of */
	Oid			seq;
	bool		restart_moved;	/* moved past what a crash may have lost */
	int			count;
	int			newest;
	CaioTokenCover covers[CAIO_TOKEN_COVERS];
} CaioTokenCovers;

extern int64 caio_token_next(void);
extern void caio_token_next_n(int64 *tokens, int n);

/* token_held.c */
extern int64 caio_token_max_held(void);

/* token_flush.c */
extern void caio_token_covers_init(CaioTokenCovers *covers);
extern void caio_token_covers_clear(CaioTokenCovers *covers);
extern CaioTokenCovers *caio_token_covers(Oid seq, bool *restart_moved);
extern bool caio_token_restart_moved(CaioTokenCovers *covers, Oid seq);
extern void caio_token_set_restart_moved(CaioTokenCovers *covers, Oid seq);
extern XLogRecPtr caio_token_drawn(CaioTokenCovers *covers, Oid seq, int64 token,
								   XLogRecPtr lsn);

#endif							/* CAIO_TOKEN_H */
