/*
 * refusal.h
 *		Every refusal caio raises with its own SQLSTATEs (LK001 stale, LK002
 *		version conflict, LK003 missing token), one function per kind.  Each
 *		counts the refusal, logs it when caio.log_refusals is on, and raises
 *		it, so that the three never disagree.
 */
#ifndef CAIO_REFUSAL_H
#define CAIO_REFUSAL_H

#include "utils/relcache.h"

#include "lease.h"

/* LK003: a write to a protected table that named no token, and why. */
typedef enum CaioTokenMissing
{
	CAIO_TOKEN_NOT_SET,			/* an INSERT or UPDATE that set no token */
	CAIO_TOKEN_DELETE,			/* a DELETE, or a move to another partition */
	CAIO_TOKEN_MERGE_UNKNOWN,	/* a MERGE action that may have set none */
	CAIO_TOKEN_UNSEEN			/* an UPDATE in a statement caio did not see */
} CaioTokenMissing;

/* LK003: a write that named no claim token, and why. */
typedef enum CaioClaimMissing
{
	CAIO_CLAIM_DELETE,			/* a DELETE of a claimed row */
	CAIO_CLAIM_NOT_SET,			/* an UPDATE that did not set claim_token */
	CAIO_CLAIM_SET_NULL,		/* an UPDATE that set it to NULL */
	CAIO_CLAIM_MERGE_UNKNOWN,	/* a MERGE action that may have set none */
	CAIO_CLAIM_UNSEEN			/* an UPDATE in a statement caio did not see */
} CaioClaimMissing;

/* The nonce a mark was refused for. */
typedef struct CaioRefusedNonce
{
	int64		chain_id;
	const char *address;
	int64		nonce;
	const char *resource;		/* of the lease it was reserved under */
	int64		token;			/* the token it was last written under */
	const char *action;			/* "mark", "release", ... */
} CaioRefusedNonce;

extern void caio_refusal_init(void);

/* Writes to a protected table, and caio_use. */
pg_noreturn extern void caio_refuse_stale_write(Relation rel, const char *resource,
												int64 named, const CaioLease *newest,
												int64 row_token);
pg_noreturn extern void caio_refuse_missing_token(Relation rel, const char *resource,
												  const char *token_column,
												  const CaioLease *newest,
												  CaioTokenMissing why);
pg_noreturn extern void caio_refuse_stale_lease(const CaioLease *lease,
												const CaioLease *newest);

/* Writes to a claimable table. */
pg_noreturn extern void caio_refuse_stale_claim(Relation rel, int64 named,
												int64 current, bool released);
pg_noreturn extern void caio_refuse_missing_claim(Relation rel, int64 current,
												  CaioClaimMissing why);

/* caio_nonce_mark on a nonce reserved under a lease. */
pg_noreturn extern void caio_refuse_stale_nonce(const CaioRefusedNonce *nonce,
												int64 named);
pg_noreturn extern void caio_refuse_missing_nonce_lease(const CaioRefusedNonce *nonce);

/* Updates of a versioned table. */
pg_noreturn extern void caio_refuse_version(Relation rel, const char *column,
											int64 row_version, bool set_version,
											bool has_new, int64 new_version);

#endif							/* CAIO_REFUSAL_H */
