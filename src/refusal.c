/*
 * refusal.c
 *		The refusals that carry caio's own SQLSTATEs, in one place: LK001 (a
 *		stale token), LK002 (a version conflict) and LK003 (no token named).
 *		Each function counts the refusal (caio_stats), logs it when
 *		caio.log_refusals is on, and raises it; the SQLSTATE is written once,
 *		in the REFUSE macro below, so that the counter, the log and the error
 *		cannot disagree.  Messages take their numbers through %lld, which
 *		message catalogs can translate (INT64_FORMAT inside a format cannot).
 */
#include "postgres.h"

#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "caio.h"
#include "refusal.h"
#include "stats.h"

/* caio.log_refusals */
static bool log_refusals = false;

static const char *const fence_hint =
"Acquire the resource again and retry the write under the new lease.";
static const char *const claim_hint =
"Name the token your claim returned; if the row's token is newer, the claim was taken over: stop working on the row.";
static const char *const claim_missing_hint =
"Set claim_token to the token your claim returned.";
/*
 * The write was in a statement that started before the session loaded caio
 * and that caio cannot see into (EXPLAIN ANALYZE, a function's statement, a
 * MERGE): run again, it is seen.
 */
static const char *const unseen_because =
"The write is an UPDATE in a statement that started before this session loaded caio (EXPLAIN, a statement run by a function, or a MERGE whose actions caio cannot tell apart), and it kept the row's %s; caio cannot tell whether the UPDATE set it, so it takes it as naming none";
static const char *const unseen_hint =
"Retry the statement (caio is loaded now and sees it)%s; preloading caio (shared_preload_libraries or session_preload_libraries) avoids this.";
static const char *const version_hint =
"Re-read the row and retry the update with its new version.";

void
caio_refusal_init(void)
{
	DefineCustomBoolVariable("caio.log_refusals",
							 "Logs every write, lease use or nonce change that caio refuses.",
							 "Each refusal is logged with its SQLSTATE, the table, the resource, "
							 "and the token (or version) named beside the newest one.",
							 &log_refusals, false, PGC_SUSET, 0,
							 NULL, NULL, NULL);
}

static const char *
refusal_number(const int64 *value)
{
	return value ? psprintf(INT64_FORMAT, *value) : "none";
}

/*
 * Count and log a refusal.  what is "token", "claim token" or "version";
 * named and current are the one the write named and the resource's (or
 * row's) current one, NULL for none.
 */
static void
refusal_note(int sqlstate, Relation rel, const char *resource,
			 const char *what, const int64 *named, const int64 *current)
{
	if (sqlstate == ERRCODE_CAIO_FENCING)
		caio_count(CAIO_REFUSED_LK001, 1);
	else if (sqlstate == ERRCODE_CAIO_VERSION_CONFLICT)
		caio_count(CAIO_REFUSED_LK002, 1);
	else
		caio_count(CAIO_REFUSED_LK003, 1);

	if (!log_refusals)
		return;
	ereport(LOG,
			(errmsg("caio refused %s: table %s, resource %s, %s named %s, current %s",
					unpack_sql_state(sqlstate),
					rel ? quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
													 RelationGetRelationName(rel))
					: "(none)",
					resource ? quote_literal_cstr(resource) : "(none)",
					what, refusal_number(named), refusal_number(current))));
}

/* Tokens start at 1: 0 stands for "there is none". */
#define TOKEN_OR_NONE(token)	((token) > 0 ? &(token) : NULL)

/* Count, log and raise, with the SQLSTATE named once. */
#define REFUSE(sqlstate, rel, resource, what, named, current, ...) \
	do { \
		refusal_note((sqlstate), (rel), (resource), (what), (named), (current)); \
		ereport(ERROR, (errcode(sqlstate), __VA_ARGS__)); \
		pg_unreachable(); \
	} while (0)

/* ----------------------------------------------------------------
 * Protected tables and caio_use
 * ----------------------------------------------------------------
 */

/*
 * LK001 for a write to a protected table under token named: newest is the
 * resource's lease (NULL when it has none); when that lease is current, the
 * row itself carries a newer token, row_token.
 */
void
caio_refuse_stale_write(Relation rel, const char *resource, int64 named,
						const CaioLease *newest, int64 row_token)
{
	const char *table = RelationGetRelationName(rel);

#define REFUSE_STALE_WRITE(current, ...) \
	REFUSE(ERRCODE_CAIO_FENCING, rel, resource, "token", &named, (current), \
		   errmsg("stale fencing token for resource \"%s\" on table \"%s\"", \
				  resource, table), \
		   __VA_ARGS__, errhint("%s", fence_hint), errtable(rel))

	if (newest == NULL)
		REFUSE_STALE_WRITE(NULL,
						   errdetail("The write named token %lld, but the resource has no lease on record (none was granted, or it was purged).",
									 (long long) named));
	if (caio_lease_is_current(newest, named, NULL))
		REFUSE_STALE_WRITE(&row_token,
						   errdetail("The write named token %lld, but the row already carries token %lld; a row's token never goes backwards.",
									 (long long) named, (long long) row_token));
	if (newest->token == named)
		REFUSE_STALE_WRITE(&newest->token,
						   errdetail("The write named token %lld, whose lease was released; the newest token for the resource is %lld.",
									 (long long) named, (long long) newest->token));
	REFUSE_STALE_WRITE(&newest->token,
					   errdetail("The write named token %lld, but the newest token for the resource is %lld.",
								 (long long) named, (long long) newest->token));
#undef REFUSE_STALE_WRITE
}

/*
 * Why a write to a protected table named no token: how its detail begins,
 * and its hint.
 */
static void
missing_token_why(const char *token_column, CaioTokenMissing why,
				  const char **because, const char **hint)
{
	switch (why)
	{
		case CAIO_TOKEN_DELETE:
			*because = "A DELETE names no token in its row (nor does a row's move to another partition, which PostgreSQL runs as a DELETE from the old partition and an INSERT into the new one)";
			*hint = "Call caio_use(lease) first: it covers the transaction's writes to the resource's rows, deletes and moves included.";
			return;
		case CAIO_TOKEN_MERGE_UNKNOWN:
			*because = psprintf("The write is an UPDATE action of a MERGE whose UPDATE actions do not all set column \"%s\", and it kept the row's token; this PostgreSQL does not tell a trigger which action runs, so caio takes it as naming no token,",
								token_column);
			*hint = psprintf("Set \"%s\" in every UPDATE action of the MERGE or in none, or call caio_use(lease) first.",
							 token_column);
			return;
		case CAIO_TOKEN_UNSEEN:
			*because = psprintf("%s,", psprintf(unseen_because, "token"));
			*hint = psprintf(unseen_hint, ", or call caio_use(lease) first");
			return;
		case CAIO_TOKEN_NOT_SET:
			break;
	}
	*because = psprintf("The write did not set column \"%s\"", token_column);
	*hint = psprintf("Set \"%s\" to the token of your lease, or call caio_use(lease) first.",
					 token_column);
}

/* LK003 for a write that named no token and no lease through caio_use. */
void
caio_refuse_missing_token(Relation rel, const char *resource,
						  const char *token_column, const CaioLease *newest,
						  CaioTokenMissing why)
{
	const char *table = RelationGetRelationName(rel);
	const char *because;
	const char *hint;

	missing_token_why(token_column, why, &because, &hint);

#define REFUSE_MISSING_TOKEN(current, ...) \
	REFUSE(ERRCODE_CAIO_FENCING_MISSING, rel, resource, "token", NULL, (current), \
		   errmsg("missing fencing token for resource \"%s\" on table \"%s\"", \
				  resource, table), \
		   __VA_ARGS__, errhint("%s", hint), errtable(rel))

	if (newest == NULL)
		REFUSE_MISSING_TOKEN(NULL,
							 errdetail("%s and no lease on the resource was named with caio_use() in this transaction; the resource has no lease on record (none was granted, or it was purged).",
									   because));
	REFUSE_MISSING_TOKEN(&newest->token,
						 errdetail("%s and no lease on the resource was named with caio_use() in this transaction; the newest token for the resource is %lld.",
								   because, (long long) newest->token));
#undef REFUSE_MISSING_TOKEN
}

/* LK001 for caio_use of a lease that is not its resource's current one. */
void
caio_refuse_stale_lease(const CaioLease *lease, const CaioLease *newest)
{
#define REFUSE_STALE_LEASE(current, ...) \
	REFUSE(ERRCODE_CAIO_FENCING, NULL, lease->resource, "token", &lease->token, \
		   (current), \
		   errmsg("lease on resource \"%s\" is not current", lease->resource), \
		   __VA_ARGS__, errhint("%s", fence_hint))

	if (newest == NULL)
		REFUSE_STALE_LEASE(NULL,
						   errdetail("The lease names token %lld, but the resource has no lease on record (none was granted, or it was purged).",
									 (long long) lease->token));
	if (newest->token == lease->token && newest->released)
		REFUSE_STALE_LEASE(&newest->token,
						   errdetail("The lease names token %lld, which was released; the newest token for the resource is %lld.",
									 (long long) lease->token, (long long) newest->token));
	REFUSE_STALE_LEASE(&newest->token,
					   errdetail("The lease names token %lld held by \"%s\", but the newest token for the resource is %lld, held by \"%s\".",
								 (long long) lease->token, lease->holder,
								 (long long) newest->token, newest->holder));
#undef REFUSE_STALE_LEASE
}

/* ----------------------------------------------------------------
 * Claimable tables (claimed rows belong to no resource)
 * ----------------------------------------------------------------
 */

/*
 * LK001 for a write naming claim token named where the row's is current (0
 * when it was never claimed); released: the named claim was released.
 */
void
caio_refuse_stale_claim(Relation rel, int64 named, int64 current, bool released)
{
	const char *table = RelationGetRelationName(rel);

#define REFUSE_STALE_CLAIM(...) \
	REFUSE(ERRCODE_CAIO_FENCING, rel, NULL, "claim token", &named, \
		   TOKEN_OR_NONE(current), \
		   errmsg("stale claim token for a row of table \"%s\"", table), \
		   __VA_ARGS__, errtable(rel))

	if (current == 0)
		REFUSE_STALE_CLAIM(errdetail("The write named claim token %lld, but the row was never claimed; claim tokens come from caio_claim() only.",
									 (long long) named),
						   errhint("%s", claim_hint));
	if (released)
		REFUSE_STALE_CLAIM(errdetail("The write named claim token %lld, whose claim was released; only caio_claim() can claim the row again.",
									 (long long) named),
						   errhint("A released claim is over: claim the row again with caio_claim() to write to it."));
	REFUSE_STALE_CLAIM(errdetail("The write named claim token %lld, but the row's claim token is %lld.",
								 (long long) named, (long long) current),
					   errhint("%s", claim_hint));
#undef REFUSE_STALE_CLAIM
}

/* LK003 for a write to a claimed row that named no claim token. */
void
caio_refuse_missing_claim(Relation rel, int64 current, CaioClaimMissing why)
{
	const char *table = RelationGetRelationName(rel);

#define REFUSE_MISSING_CLAIM(...) \
	REFUSE(ERRCODE_CAIO_FENCING_MISSING, rel, NULL, "claim token", NULL, \
		   TOKEN_OR_NONE(current), \
		   errmsg("missing claim token for a row of table \"%s\"", table), \
		   __VA_ARGS__, errtable(rel))

	if (why == CAIO_CLAIM_DELETE)
		REFUSE_MISSING_CLAIM(errdetail("The row is claimed under token %lld; a DELETE cannot name it.",
									   (long long) current),
							 errhint("Release the claim first (an UPDATE that sets claim_holder and claim_expires_at to NULL and names the token), or let it expire."));
	if (why == CAIO_CLAIM_SET_NULL)
		REFUSE_MISSING_CLAIM(errdetail("The row is claimed under token %lld; the write set claim_token to NULL.",
									   (long long) current),
							 errhint("%s", claim_missing_hint));
	if (why == CAIO_CLAIM_MERGE_UNKNOWN)
		REFUSE_MISSING_CLAIM(errdetail("The row is claimed under token %lld; the write is an UPDATE action of a MERGE whose UPDATE actions do not all set claim_token, and this PostgreSQL does not tell a trigger which action runs, so caio takes it as naming no claim token.",
									   (long long) current),
							 errhint("Set claim_token in every UPDATE action of the MERGE, or in none."));
	if (why == CAIO_CLAIM_UNSEEN)
		REFUSE_MISSING_CLAIM(errdetail("The row is claimed under token %lld. %s.",
									   (long long) current,
									   psprintf(unseen_because, "claim_token")),
							 errhint(unseen_hint, ""));
	REFUSE_MISSING_CLAIM(errdetail("The row is claimed under token %lld; the write did not set claim_token.",
								   (long long) current),
						 errhint("%s", claim_missing_hint));
#undef REFUSE_MISSING_CLAIM
}

/* ----------------------------------------------------------------
 * Nonces reserved under a lease
 * ----------------------------------------------------------------
 */

void
caio_refuse_stale_nonce(const CaioRefusedNonce *nonce, int64 named)
{
	REFUSE(ERRCODE_CAIO_FENCING, NULL, nonce->resource, "token", &named,
		   TOKEN_OR_NONE(nonce->token),
		   errmsg("stale fencing token for nonce %lld of wallet %s on chain %lld",
				  (long long) nonce->nonce, nonce->address,
				  (long long) nonce->chain_id),
		   errdetail("The %s named token %lld, but the reservation was last written under token %lld.",
					 nonce->action, (long long) named, (long long) nonce->token),
		   errhint("Acquire the resource again and retry under the new lease."));
}

void
caio_refuse_missing_nonce_lease(const CaioRefusedNonce *nonce)
{
	/* A sync has no 'released' to offer, but has a trusted way round. */
	const char *hint = strcmp(nonce->action, "sync") == 0
		? psprintf("Pass the current lease on \"%s\" to caio_nonce_sync(); without a lease, only a superuser can sync this wallet.",
				   nonce->resource)
		: psprintf("Pass the current lease on \"%s\" to caio_nonce_mark(), with state 'released' to release the nonce.",
				   nonce->resource);

	REFUSE(ERRCODE_CAIO_FENCING_MISSING, NULL, nonce->resource, "token", NULL,
		   TOKEN_OR_NONE(nonce->token),
		   errmsg("missing fencing token for nonce %lld of wallet %s on chain %lld",
				  (long long) nonce->nonce, nonce->address,
				  (long long) nonce->chain_id),
		   errdetail("The nonce is fenced by token %lld of a lease on resource \"%s\"; the %s named no lease.",
					 (long long) nonce->token, nonce->resource, nonce->action),
		   errhint("%s", hint));
}

/* ----------------------------------------------------------------
 * Versioned tables
 * ----------------------------------------------------------------
 */

/*
 * LK002 for an update of a row at row_version that did not set the version
 * column to row_version + 1: set_version says whether it set the column at
 * all, has_new whether to a value (new_version) rather than NULL.
 */
void
caio_refuse_version(Relation rel, const char *column, int64 row_version,
					bool set_version, bool has_new, int64 new_version)
{
	const char *table = RelationGetRelationName(rel);
	const int64 *named = set_version && has_new ? &new_version : NULL;

#define REFUSE_VERSION(...) \
	REFUSE(ERRCODE_CAIO_VERSION_CONFLICT, rel, NULL, "version", named, \
		   &row_version, \
		   errmsg("version conflict on table \"%s\"", table), \
		   __VA_ARGS__, errtable(rel))

	if (row_version == PG_INT64_MAX)
		REFUSE_VERSION(errdetail("The row is at version %lld, the largest a version can be, so no update can advance it.",
								 (long long) row_version),
					   errhint("Only a row whose version is below the largest can be updated; the table's owner can lower it with the trigger disabled."));
	if (!set_version)
		REFUSE_VERSION(errdetail("The update did not set column \"%s\"; the row is at version %lld, so the update must set %lld.",
								 column, (long long) row_version,
								 (long long) row_version + 1),
					   errhint("%s", version_hint));
	if (!has_new)
		REFUSE_VERSION(errdetail("The update set version NULL, but the row is at version %lld, so the update must set %lld.",
								 (long long) row_version, (long long) row_version + 1),
					   errhint("%s", version_hint));
	REFUSE_VERSION(errdetail("The update set version %lld, but the row is at version %lld, so the update must set %lld.",
							 (long long) new_version, (long long) row_version,
							 (long long) row_version + 1),
				   errhint("%s", version_hint));
#undef REFUSE_VERSION
}
