/*
 * nonce.c
 *		Nonce reservation for EVM wallets.
 *
 * A wallet (chain_id, address) has one row in caio_nonce_wallet: the chain's
 * transaction count as last synced, and the next nonce never handed out.
 * Each nonce handed out has a row in caio_nonce_reservation with its state.
 *
 * Reservers queue on the wallet's row, which the reservation updates inside
 * the caller's transaction, so they get consecutive nonces, and a rollback
 * undoes the reservation (and the counter) with everything else: no
 * duplicate, and no hole that caio made itself.  A nonce handed back is
 * reused first, lowest first.  The wallet's lock in the lock manager keeps
 * sync apart from everything else (see wallet_lock).
 */
#include "postgres.h"

#include "access/stratnum.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "common/hashfn.h"
#include "utils/resowner.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"

#include "caio.h"
#include "address.h"
#include "args.h"
#include "catalog.h"
#include "citus.h"
#include "clock.h"
#include "lease.h"
#include "nonce.h"
#include "refusal.h"
#include "resource_lock.h"
#include "rows.h"
#include "stats.h"
#include "search_path.h"

PG_FUNCTION_INFO_V1(caio_nonce_reserve);
PG_FUNCTION_INFO_V1(caio_nonce_release);
PG_FUNCTION_INFO_V1(caio_nonce_sync);
PG_FUNCTION_INFO_V1(caio_nonce_mark);

typedef struct Wallet
{
	int64		chain_id;
	char	   *address;		/* canonical: lowercase */
} Wallet;

/* A reservation's states, in the order a transaction goes through them. */
typedef enum NonceState
{
	NONCE_RESERVED,
	NONCE_SIGNED,
	NONCE_BROADCAST,
	NONCE_MINED,
	NONCE_DROPPED,
	NONCE_RELEASED
} NonceState;

static const char *const nonce_state_names[] = {
	"reserved", "signed", "broadcast", "mined", "dropped", "released"
};

/*
 * Nonces are 0 to 2^53 - 1.  EIP-2681 allows nonces up to 2^64 - 2, but no
 * account will come near 2^53, and a bound far below bigint's keeps every
 * nonce + 1 exact.  The SQL below spells it out too.
 */
#define NONCE_MAX		INT64CONST(9007199254740991)
#define NONCE_MAX_SQL	"9007199254740991"
#define COUNT_MAX		(NONCE_MAX + 1)

/* ----------------------------------------------------------------
 * Statements
 * ----------------------------------------------------------------
 */

/*
 * The wallet's lock: a lock-manager lock until the transaction ends, on a
 * hash of the address seeded with the chain, in a tag space of its own
 * (pg_locks shows it as advisory, objsubid 17220).  Reserve, release and
 * mark share it: reservers queue on the wallet row's lock alone, taken in
 * the statement that bumps the counter, so a hot wallet is held only from
 * there to commit, and a released nonce is claimed only if no other
 * transaction holds its row.  Sync takes it alone, since it reads every
 * reservation to move the counter.
 */
#define WALLET_SHARED	RowExclusiveLock
#define WALLET_ALONE	ExclusiveLock

/*
 * Under REPEATABLE READ (or SERIALIZABLE) a function that met a row another
 * transaction had changed since the snapshot would fail to serialize, so
 * there every function takes the wallet's lock alone, as before 0.3, and
 * then reads and writes the newest rows.  A transaction that needs the lock
 * alone after sharing it (marks, then syncs) waits for the others that
 * share it; two such transactions on one wallet deadlock (40P01).
 */
static void
wallet_lock(const Wallet *wallet, bool alone)
{
	uint64		key = caio_lock_key((uint64) wallet->chain_id, wallet->address);

	caio_tag_lock(key, CAIO_TAG_WALLET,
				  alone || IsolationUsesXactSnapshot() ? WALLET_ALONE : WALLET_SHARED);
}

static const Oid wallet_insert_args[] = {INT8OID, TEXTOID};
static CaioPlan wallet_insert_plan = CAIO_PLAN(
	"INSERT INTO @extschema@.caio_nonce_wallet (chain_id, address)"
	" VALUES ($1, $2) ON CONFLICT DO NOTHING", wallet_insert_args);

static const Oid claim_released_args[] = {INT8OID, TEXTOID, INT8OID, TEXTOID, TEXTOID,
INT8OID, TIMESTAMPTZOID};
static CaioPlan claim_released_plan = CAIO_PLAN(
	"UPDATE @extschema@.caio_nonce_reservation"
	"   SET state = 'reserved', resource = $4, holder = $5, token = $6,"
	"       tx_hash = NULL, tx_hashes = NULL, reserved_at = $7, updated_at = $7"
	" WHERE ctid OPERATOR(pg_catalog.=)"
	"       (SELECT ctid FROM @extschema@.caio_nonce_reservation"
	"         WHERE chain_id OPERATOR(pg_catalog.=) $1"
	"           AND address OPERATOR(pg_catalog.=) $2"
	"           AND nonce OPERATOR(pg_catalog.=) $3"
	"           AND state OPERATOR(pg_catalog.=) 'released'"
	"           FOR UPDATE SKIP LOCKED)"
	"   AND state OPERATOR(pg_catalog.=) 'released'", claim_released_args);

/*
 * Take the wallet's next nonce when a row is already at or above it (left
 * behind after a sync moved the counter down): bump the counter and insert
 * the reservation, taking the row over if it was handed back.  Otherwise (a
 * dropped nonce, consumed on chain) the statement returns nothing and the
 * caller moves the counter past it (free_nonce).  Without such rows,
 * reserve_fresh does the same in C: the hot path.
 */
static const Oid next_over_args[] = {INT8OID, TEXTOID, TEXTOID, TEXTOID, INT8OID,
TIMESTAMPTZOID};
static CaioPlan claim_next_over_plan = CAIO_PLAN(
	"WITH counter AS ("
	"  UPDATE @extschema@.caio_nonce_wallet"
	"     SET next_nonce = next_nonce OPERATOR(pg_catalog.+) 1"
	"   WHERE chain_id OPERATOR(pg_catalog.=) $1"
	"     AND address OPERATOR(pg_catalog.=) $2"
	"     AND next_nonce OPERATOR(pg_catalog.<=) " NONCE_MAX_SQL
	"  RETURNING next_nonce OPERATOR(pg_catalog.-) 1 AS nonce)"
	" INSERT INTO @extschema@.caio_nonce_reservation AS r"
	"        (chain_id, address, nonce, state, resource, holder, token,"
	"         reserved_at, updated_at)"
	" SELECT $1, $2, counter.nonce, 'reserved', $3, $4, $5, $6, $6 FROM counter"
	" ON CONFLICT (chain_id, address, nonce) DO UPDATE"
	"    SET state = 'reserved', resource = excluded.resource,"
	"        holder = excluded.holder, token = excluded.token, tx_hash = NULL,"
	"        tx_hashes = NULL, reserved_at = excluded.reserved_at,"
	"        updated_at = excluded.updated_at"
	"  WHERE r.state OPERATOR(pg_catalog.=) 'released'"
	" RETURNING r.nonce", next_over_args);

static const Oid counter_set_args[] = {INT8OID, TEXTOID, INT8OID};
static CaioPlan counter_set_plan = CAIO_PLAN(
	"UPDATE @extschema@.caio_nonce_wallet SET next_nonce = $3"
	" WHERE chain_id OPERATOR(pg_catalog.=) $1"
	"   AND address OPERATOR(pg_catalog.=) $2", counter_set_args);

static const Oid reservation_lock_args[] = {INT8OID, TEXTOID, INT8OID};
static CaioPlan reservation_lock_plan = CAIO_PLAN(
	"SELECT state, resource, token FROM @extschema@.caio_nonce_reservation"
	" WHERE chain_id OPERATOR(pg_catalog.=) $1"
	"   AND address OPERATOR(pg_catalog.=) $2"
	"   AND nonce OPERATOR(pg_catalog.=) $3"
	" FOR UPDATE", reservation_lock_args);

static const Oid mark_args[] = {INT8OID, TEXTOID, INT8OID, TEXTOID, TEXTOID,
TEXTOID, INT8OID, TIMESTAMPTZOID, TEXTOID};
static CaioPlan mark_plan = CAIO_PLAN(
	"UPDATE @extschema@.caio_nonce_reservation"
	"   SET state = $4,"
	"       tx_hash = COALESCE($5, tx_hash),"
	"       tx_hashes = CASE WHEN $5 IS NULL THEN tx_hashes"
	"                        WHEN tx_hashes IS NULL THEN ARRAY[$5]"
	"                        WHEN $5 OPERATOR(pg_catalog.=) ANY (tx_hashes) THEN tx_hashes"
	"                        ELSE pg_catalog.array_append(tx_hashes, $5) END,"
	"       resource = COALESCE($9, resource),"
	"       holder = COALESCE($6, holder), token = COALESCE($7, token),"
	"       updated_at = $8"
	" WHERE chain_id OPERATOR(pg_catalog.=) $1"
	"   AND address OPERATOR(pg_catalog.=) $2"
	"   AND nonce OPERATOR(pg_catalog.=) $3", mark_args);

static const Oid settle_args[] = {INT8OID, TEXTOID, INT8OID, TIMESTAMPTZOID};
static CaioPlan settle_plan = CAIO_PLAN(
	"UPDATE @extschema@.caio_nonce_reservation"
	"   SET state = 'mined', updated_at = $4"
	" WHERE chain_id OPERATOR(pg_catalog.=) $1"
	"   AND address OPERATOR(pg_catalog.=) $2"
	"   AND nonce OPERATOR(pg_catalog.<) $3"
	"   AND state OPERATOR(pg_catalog.=) 'broadcast'", settle_args);

/* The highest nonce at or above the count that a transaction still uses. */
static const Oid pending_args[] = {INT8OID, TEXTOID, INT8OID};
static CaioPlan pending_top_plan = CAIO_PLAN(
	"SELECT pg_catalog.max(nonce) FROM @extschema@.caio_nonce_reservation"
	" WHERE chain_id OPERATOR(pg_catalog.=) $1"
	"   AND address OPERATOR(pg_catalog.=) $2"
	"   AND nonce OPERATOR(pg_catalog.>=) $3"
	"   AND state OPERATOR(pg_catalog.<>) 'released'"
	"   AND state OPERATOR(pg_catalog.<>) 'dropped'", pending_args);

/*
 * After a sync moved the count down, nonces between it and the counter that
 * no reservation of ours ever used (an earlier count had passed them) are
 * holes now: they get rows in state released, so that reserve fills them,
 * lowest first, and caio_nonce_holes shows them.
 */
static const Oid fill_holes_args[] = {INT8OID, TEXTOID, INT8OID, INT8OID, TIMESTAMPTZOID};
static CaioPlan fill_holes_plan = CAIO_PLAN(
	"INSERT INTO @extschema@.caio_nonce_reservation"
	"       (chain_id, address, nonce, state, reserved_at, updated_at)"
	" SELECT $1, $2, n, 'released', $5, $5"
	"   FROM pg_catalog.generate_series($3, $4 OPERATOR(pg_catalog.-) 1) AS n"
	"  WHERE NOT EXISTS (SELECT FROM @extschema@.caio_nonce_reservation r"
	"                     WHERE r.chain_id OPERATOR(pg_catalog.=) $1"
	"                       AND r.address OPERATOR(pg_catalog.=) $2"
	"                       AND r.nonce OPERATOR(pg_catalog.=) n)", fill_holes_args);

/*
 * The lowest reservation of the wallet, made under a lease and not yet
 * dropped or released, that a sync under lease $3 with token $4 may not
 * touch: any such without a lease; with one, one made on another resource or
 * under a newer token.
 */
static const Oid sync_fenced_args[] = {INT8OID, TEXTOID, TEXTOID, INT8OID};
static CaioPlan sync_fenced_plan = CAIO_PLAN(
	"SELECT state, resource, token, nonce FROM @extschema@.caio_nonce_reservation"
	" WHERE chain_id OPERATOR(pg_catalog.=) $1"
	"   AND address OPERATOR(pg_catalog.=) $2"
	"   AND resource IS NOT NULL"
	"   AND state OPERATOR(pg_catalog.<>) 'released'"
	"   AND state OPERATOR(pg_catalog.<>) 'dropped'"
	"   AND ($3 IS NULL OR resource OPERATOR(pg_catalog.<>) $3"
	"        OR token OPERATOR(pg_catalog.>) $4)"
	" ORDER BY nonce LIMIT 1", sync_fenced_args);

static const Oid wallet_sync_args[] = {INT8OID, TEXTOID, INT8OID, INT8OID, TIMESTAMPTZOID};
static CaioPlan wallet_sync_plan = CAIO_PLAN(
	"UPDATE @extschema@.caio_nonce_wallet"
	"   SET chain_count = $3, next_nonce = $4, synced_at = $5"
	" WHERE chain_id OPERATOR(pg_catalog.=) $1"
	"   AND address OPERATOR(pg_catalog.=) $2", wallet_sync_args);

/* ----------------------------------------------------------------
 * Arguments
 * ----------------------------------------------------------------
 */

static void
wallet_from_args(FunctionCallInfo fcinfo, Wallet *wallet)
{
	caio_arg_required(fcinfo, 0, "chain_id", NULL);
	wallet->chain_id = PG_GETARG_INT64(0);
	if (wallet->chain_id <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("chain_id must be positive"),
				 errdetail("The chain_id given was " INT64_FORMAT ".", wallet->chain_id)));
	wallet->address = caio_arg_address(fcinfo, 1);
}

/*
 * A nonce (max) or a transaction count (max + 1).  A count or a counter of
 * COUNT_MAX says every nonce is used, and reserve refuses.
 */
static int64
arg_count(FunctionCallInfo fcinfo, int argno, const char *what, int64 max)
{
	int64		value;

	caio_arg_required(fcinfo, argno, what, NULL);
	value = PG_GETARG_INT64(argno);
	if (value < 0 || value > max)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be between 0 and " INT64_FORMAT, what, max),
				 errdetail("The %s given was " INT64_FORMAT ".", what, value)));
	return value;
}

static NonceState
state_from_name(const char *name)
{
	for (int i = 0; i < (int) lengthof(nonce_state_names); i++)
		if (strcmp(name, nonce_state_names[i]) == 0)
			return (NonceState) i;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unknown nonce state \"%s\"", caio_echo(name)),
			 errhint("A nonce is reserved, signed, broadcast, mined, dropped or released.")));
	return NONCE_RESERVED;		/* not reached */
}

/*
 * A transaction hash: 0x (not 0X, as for addresses) and 64 hex digits,
 * stored lowercase.
 */
static char *
tx_hash_parse(const char *text)
{
	char	   *hash = pstrdup(text);
	bool		valid = strlen(hash) == 66 && hash[0] == '0' && hash[1] == 'x';

	for (int i = 2; valid && i < 66; i++)
	{
		hash[i] = (char) pg_ascii_tolower((unsigned char) hash[i]);
		valid = (hash[i] >= '0' && hash[i] <= '9') || (hash[i] >= 'a' && hash[i] <= 'f');
	}
	if (!valid)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("invalid transaction hash: \"%s\"", caio_echo(text)),
				 errdetail("A transaction hash is 0x followed by 64 hexadecimal digits.")));
	return hash;
}

/* ----------------------------------------------------------------
 * The wallet row
 * ----------------------------------------------------------------
 */

static void
wallet_values(const Wallet *wallet, Datum *values)
{
	values[0] = Int64GetDatum(wallet->chain_id);
	values[1] = CStringGetTextDatum(wallet->address);
}

/* The most arguments any statement of this file takes. */
#define NONCE_PLAN_MAX_ARGS	9

/*
 * Run one of the statements above, all of whose first two arguments name the
 * wallet: args (and nulls, NULL for none) hold the other nrest.
 */
static uint64
wallet_run(CaioPlan *plan, const Wallet *wallet, int nrest, const Datum *args,
		   const char *nulls, bool read_only)
{
	Datum		values[NONCE_PLAN_MAX_ARGS];
	char		flags[NONCE_PLAN_MAX_ARGS];

	if (plan->nargs != nrest + 2 || plan->nargs > NONCE_PLAN_MAX_ARGS)
		elog(ERROR, "caio: a nonce statement takes %d arguments, not %d",
			 plan->nargs, nrest + 2);
	wallet_values(wallet, values);
	memset(flags, ' ', sizeof(flags));
	for (int i = 0; i < nrest; i++)
	{
		values[i + 2] = args[i];
		if (nulls)
			flags[i + 2] = nulls[i];
	}
	return caio_spi_run(plan, values, flags, read_only);
}

static void
wallet_keys(const Wallet *wallet, ScanKeyData *keys)
{
	ScanKeyInit(&keys[0], 1, BTEqualStrategyNumber, F_INT8EQ,
				Int64GetDatum(wallet->chain_id));
	ScanKeyInit(&keys[1], 2, BTEqualStrategyNumber, F_TEXTEQ,
				CStringGetTextDatum(wallet->address));
}

/* Read (creating it if need be) the wallet's row; the caller holds its lock. */
static void
wallet_read(const Wallet *wallet, int64 *chain_count, int64 *next_nonce)
{
	const CaioCatalog *cat = caio_catalog();
	ScanKeyData keys[2];
	Datum		values[Natts_caio_nonce_wallet];
	bool		isnull[Natts_caio_nonce_wallet];

	wallet_keys(wallet, keys);
	if (!caio_index_first(cat->nonce_wallet, cat->nonce_wallet_pkey, keys, 2,
						  values, isnull, Natts_caio_nonce_wallet))
	{
		wallet_run(&wallet_insert_plan, wallet, 0, NULL, NULL, false);
		*chain_count = 0;
		*next_nonce = 0;
		return;
	}
	*chain_count = DatumGetInt64(values[Anum_caio_nonce_wallet_chain_count - 1]);
	*next_nonce = DatumGetInt64(values[Anum_caio_nonce_wallet_next_nonce - 1]);
}

/*
 * The first reservation of the wallet at or above a nonce, through an index
 * (the primary key, or the partial index of released nonces); false when
 * there is none.
 */
static bool
reservation_from(const Wallet *wallet, Oid index, int64 from, int64 *nonce,
				 char **state)
{
	const CaioCatalog *cat = caio_catalog();
	ScanKeyData keys[3];
	Datum		values[Natts_caio_nonce_reservation];
	bool		isnull[Natts_caio_nonce_reservation];

	wallet_keys(wallet, keys);
	ScanKeyInit(&keys[2], 3, BTGreaterEqualStrategyNumber, F_INT8GE,
				Int64GetDatum(from));
	if (!caio_index_first(cat->nonce_reservation, index, keys, 3, values, isnull,
						  Natts_caio_nonce_reservation))
		return false;
	*nonce = DatumGetInt64(values[Anum_caio_nonce_reservation_nonce - 1]);
	*state = TextDatumGetCString(values[Anum_caio_nonce_reservation_state - 1]);
	return true;
}

/* The lowest released nonce in [from, below); false when there is none. */
static bool
released_lowest(const Wallet *wallet, int64 from, int64 below, int64 *nonce)
{
	char	   *state;

	return reservation_from(wallet, caio_catalog()->nonce_released, from,
							nonce, &state) &&
		*nonce < below && strcmp(state, "released") == 0;
}

/* The next nonce of a walk up the wallet's reservations, as long as it runs. */
static bool
free_nonce_step(TupleTableSlot *slot, void *arg)
{
	int64	   *next = (int64 *) arg;

	if (DatumGetInt64(slot->tts_values[Anum_caio_nonce_reservation_nonce - 1]) != *next ||
		caio_text_is(slot->tts_values[Anum_caio_nonce_reservation_state - 1], "released"))
		return false;
	(*next)++;
	CHECK_FOR_INTERRUPTS();
	return true;
}

/*
 * The lowest nonce at or above from that reserve may hand out: one with no
 * row, or one handed back.  A sync down below nonces marked dropped leaves
 * runs of rows that cannot be handed out above the counter; this walks such
 * a run in the primary key, in C, one index entry each, in constant memory,
 * and each run is walked once, by the sync or reservation that then moves
 * the counter past it.  Through the index rather than SQL, so that no plan
 * built on stale statistics can turn the walk into a scan per row.
 */
static int64
free_nonce(const Wallet *wallet, int64 from)
{
	const CaioCatalog *cat = caio_catalog();
	ScanKeyData keys[3];
	int64		next = from;

	wallet_keys(wallet, keys);
	ScanKeyInit(&keys[2], 3, BTGreaterEqualStrategyNumber, F_INT8GE,
				Int64GetDatum(from));
	caio_index_scan(cat->nonce_reservation, cat->nonce_reservation_pkey, keys, 3,
					Natts_caio_nonce_reservation, free_nonce_step, &next);
	return next;
}

/* ----------------------------------------------------------------
 * caio_nonce_reserve
 * ----------------------------------------------------------------
 */

/* caio.nonce_synchronous_commit */
static bool nonce_synchronous_commit = true;

/* Whether this transaction reserved a nonce and must flush its commit. */
static bool nonce_flush_at_commit = false;

/*
 * A reservation that a crash loses after its commit returned would hand the
 * same nonce out again, so a transaction that reserves one has its commit
 * on disk before the client hears of it, even where synchronous_commit is
 * off.  Where it is off, the flush waits until the transaction's locks are
 * gone (PostgreSQL's ForceSyncCommit would flush while the wallet row is
 * still locked): the next reserver of a hot wallet goes on meanwhile, and
 * concurrent flushes are written together.  That reserver reads a counter
 * that is not yet on disk, but its own flush, later in the same WAL, covers
 * it.  A function's own SET synchronous_commit cannot undo this.
 */
static void
nonce_flush_callback(ResourceReleasePhase phase, bool isCommit, bool isTopLevel,
					 void *arg pg_attribute_unused())
{
	if (phase != RESOURCE_RELEASE_AFTER_LOCKS || !isTopLevel)
		return;
	if (isCommit && nonce_flush_at_commit && !XLogRecPtrIsInvalid(XactLastCommitEnd))
		XLogFlush(XactLastCommitEnd);
	nonce_flush_at_commit = false;
}

void
caio_nonce_init(void)
{
	DefineCustomBoolVariable("caio.nonce_synchronous_commit",
							 "Makes a transaction that reserves a nonce commit synchronously.",
							 "When on, a transaction that reserves a nonce flushes its commit to disk even "
							 "under synchronous_commit = off, so that a crash cannot lose a nonce that was handed out.",
							 &nonce_synchronous_commit, true, PGC_SUSET, 0,
							 NULL, NULL, NULL);
	RegisterResourceReleaseCallback(nonce_flush_callback, NULL);
}

static void
nonce_commit_durably(void)
{
	if (nonce_synchronous_commit)
		nonce_flush_at_commit = true;
}

static void
refuse_exhausted(const Wallet *wallet)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("wallet %s on chain " INT64_FORMAT " has no nonce left",
					wallet->address, wallet->chain_id),
			 errdetail("Nonces are 0 to " INT64_FORMAT "; the next one would be " INT64_FORMAT ", and no nonce below it was handed back.",
					   NONCE_MAX, COUNT_MAX),
			 errhint("Release a reservation that was never broadcast, or call caio_nonce_sync() with the chain's transaction count if it is lower.")));
}

/* What a reservation writes beside its nonce. */
typedef struct ReserveRequest
{
	Wallet		wallet;
	const CaioLease *lease;		/* the lease it goes under, or NULL */
	TimestampTz now;
} ReserveRequest;

/* The lease's resource, holder and token (null without one), then the time. */
static void
reserve_values(const ReserveRequest *req, Datum *values, char *nulls)
{
	memset(nulls, req->lease ? ' ' : 'n', 3);
	if (req->lease)
	{
		values[0] = CStringGetTextDatum(req->lease->resource);
		values[1] = CStringGetTextDatum(req->lease->holder);
		values[2] = Int64GetDatum(req->lease->token);
	}
	values[3] = TimestampTzGetDatum(req->now);
	nulls[3] = ' ';
}

/* Take a handed-back nonce; false when another transaction holds its row. */
static bool
reserve_released(const ReserveRequest *req, int64 nonce)
{
	Datum		values[5] = {0};
	char		nulls[5];

	values[0] = Int64GetDatum(nonce);
	nulls[0] = ' ';
	reserve_values(req, &values[1], &nulls[1]);
	return wallet_run(&claim_released_plan, &req->wallet, lengthof(values),
					  values, nulls, false) > 0;
}

/*
 * Bump the counter and take the nonce it was at, over a row there
 * (claim_next_over_plan); false when that cannot be.
 */
static bool
reserve_counter(const ReserveRequest *req)
{
	Datum		values[4] = {0};
	char		nulls[4];

	reserve_values(req, values, nulls);
	return wallet_run(&claim_next_over_plan, &req->wallet, lengthof(values), values, nulls,
					  false) > 0;
}

/* What wallet_take_counter needs, and the nonce it took. */
typedef struct CounterTake
{
	const Wallet *wallet;
	bool		checked;		/* nothing stands in the counter's way */
	int64		nonce;
} CounterTake;

/*
 * Move the wallet's counter up by one and keep the nonce it was at; false,
 * leaving the row alone, when past the last nonce, or (checked once, on the
 * row as first read) when a handed-back nonce below the counter comes first
 * or a row sits at or above it.  A newer version of the row, read after
 * waiting for the reservers ahead of us, needs no second look for rows at
 * or above the counter: they only move it up and leave rows below it, and
 * no sync can run while we hold the wallet's lock (shared, or alone under
 * REPEATABLE READ).  A nonce handed back while we waited is passed over, as
 * it was when these looks ran before the wait: the next reservation takes it.
 */
static bool
wallet_take_counter(Datum *values, bool *isnull, void *arg)
{
	CounterTake *take = (CounterTake *) arg;
	int64		chain_count = DatumGetInt64(values[Anum_caio_nonce_wallet_chain_count - 1]);
	int64		next = DatumGetInt64(values[Anum_caio_nonce_wallet_next_nonce - 1]);

	if (next > NONCE_MAX)
		return false;
	if (!take->checked)
	{
		int64		nonce;
		char	   *state;

		if (released_lowest(take->wallet, chain_count, next, &nonce) ||
			reservation_from(take->wallet, caio_catalog()->nonce_reservation_pkey,
							 next, &nonce, &state))
			return false;
		take->checked = true;
	}
	take->nonce = next;
	values[Anum_caio_nonce_wallet_next_nonce - 1] = Int64GetDatum(next + 1);
	isnull[Anum_caio_nonce_wallet_next_nonce - 1] = false;
	return true;
}

/*
 * What claim_next_over_plan does when no row is in the way, without SPI:
 * the hot path.  Bump the counter (waiting for the reservers ahead of us on
 * the wallet's row, then reading it again), and insert the reservation at
 * the nonce it was at.  Unless checked, first make sure that nothing is in
 * the way (wallet_take_counter).  False, and nothing written, when the
 * wallet has no row yet, something is in the way, or the counter is past
 * the last nonce.
 */
static bool
reserve_fresh(const ReserveRequest *req, bool checked, int64 *nonce)
{
	const CaioCatalog *cat = caio_catalog();
	ScanKeyData keys[2];
	Datum		values[Natts_caio_nonce_reservation] = {0};
	bool		isnull[Natts_caio_nonce_reservation];
	CaioRowWriter *reservation;
	CounterTake take = {&req->wallet, checked, 0};

	/* Everything but the write is done before the wallet's row is ours. */
	reservation = caio_row_insert_begin(cat->nonce_reservation,
										Natts_caio_nonce_reservation);
	wallet_keys(&req->wallet, keys);
	if (!caio_row_update(cat->nonce_wallet, cat->nonce_wallet_pkey, keys, 2,
						 Natts_caio_nonce_wallet, wallet_take_counter, &take))
	{
		caio_row_insert_cancel(reservation);
		return false;
	}
	*nonce = take.nonce;

	memset(isnull, true, sizeof(isnull));
#define SET(column, value) \
	(values[Anum_caio_nonce_reservation_##column - 1] = (value), \
	 isnull[Anum_caio_nonce_reservation_##column - 1] = false)
	SET(chain_id, Int64GetDatum(req->wallet.chain_id));
	SET(address, CStringGetTextDatum(req->wallet.address));
	SET(nonce, Int64GetDatum(*nonce));
	SET(state, CStringGetTextDatum("reserved"));
	if (req->lease)
	{
		SET(resource, CStringGetTextDatum(req->lease->resource));
		SET(holder, CStringGetTextDatum(req->lease->holder));
		SET(token, Int64GetDatum(req->lease->token));
	}
	SET(reserved_at, TimestampTzGetDatum(req->now));
	SET(updated_at, TimestampTzGetDatum(req->now));
#undef SET
	caio_row_insert_finish(reservation, values, isnull);
	return true;
}

/*
 * Bump the counter and take the nonce it was at.  The counter read before,
 * next_nonce, may lag behind reservers in flight, whose rows we cannot see;
 * it only decides whether rows above the counter (left by a sync that moved
 * it down) need the ON CONFLICT plan: without such rows, the counter's
 * nonce has no row (reservers in flight make rows only at the nonces they
 * take from the counter, below ours), and reserve_fresh takes it.  When the
 * counter was at a row that cannot be handed out, or past the last nonce,
 * the counter moves to the lowest nonce that can be (free_nonce) and the
 * claim is tried once more: the wallet's row is ours until commit (the
 * failed claim locked it; past the last nonce there is nothing to claim), so
 * nobody else can take that nonce meanwhile, and a sync cannot move the
 * counter while we share the wallet's lock.
 */
static int64
reserve_next(const ReserveRequest *req, int64 next_nonce)
{
	const Wallet *wallet = &req->wallet;
	char	   *state;
	int64		nonce;
	bool		isnull;
	Datum		counter;
	int64		chain_count;

	if (!reservation_from(wallet, caio_catalog()->nonce_reservation_pkey,
						  next_nonce, &nonce, &state))
	{
		if (reserve_fresh(req, true, &nonce))
			return nonce;
	}
	else if (reserve_counter(req))
		return DatumGetInt64(caio_spi_value(0, 1, &isnull));

	wallet_read(wallet, &chain_count, &next_nonce);
	if (next_nonce <= NONCE_MAX)
		next_nonce = free_nonce(wallet, next_nonce);
	if (next_nonce > NONCE_MAX)
		refuse_exhausted(wallet);
	counter = Int64GetDatum(next_nonce);
	wallet_run(&counter_set_plan, wallet, 1, &counter, NULL, false);
	if (!reserve_counter(req))
		elog(ERROR, "caio: the nonce counter moved to a nonce it cannot hand out");
	return DatumGetInt64(caio_spi_value(0, 1, &isnull));
}

Datum
caio_nonce_reserve(PG_FUNCTION_ARGS)
{
	ReserveRequest req = {0};
	CaioLease	lease;
	CaioLease	newest;
	CaioSpi		spi;
	int64		chain_count;
	int64		next_nonce;
	int64		nonce;

	caio_require_trusted_search_path_for_superuser("caio_nonce_reserve");
	caio_citus_serve_here("nonces");

	wallet_from_args(fcinfo, &req.wallet);
	if (!PG_ARGISNULL(2))
	{
		caio_lease_from_arg(fcinfo, 2, &lease);
		caio_lease_require_current(&lease, &newest);
		req.lease = &lease;
	}

	nonce_commit_durably();
	wallet_lock(&req.wallet, false);
	req.now = caio_clock_now(NULL);

	/*
	 * The counter's nonce when nothing is in its way, without SPI.
	 * Otherwise the lowest nonce handed back, unless another transaction
	 * holds its row (it is taking it, or handing it back): then the next
	 * nonce, rather than wait for that transaction while holding the wallet
	 * row it may need.
	 */
	if (!reserve_fresh(&req, false, &nonce))
	{
		caio_spi_begin(&spi);
		wallet_read(&req.wallet, &chain_count, &next_nonce);
		if (!released_lowest(&req.wallet, chain_count, next_nonce, &nonce) ||
			!reserve_released(&req, nonce))
			nonce = reserve_next(&req, next_nonce);
		caio_spi_end(&spi);
	}

	caio_count(CAIO_NONCES_RESERVED, 1);
	PG_RETURN_INT64(nonce);
}

/* ----------------------------------------------------------------
 * caio_nonce_release and caio_nonce_mark
 * ----------------------------------------------------------------
 */

typedef struct Reservation
{
	NonceState	state;
	char	   *resource;		/* of the lease it went under, or NULL */
	int64		token;
} Reservation;

/* The state, resource and token of the statement's first row. */
static void
reservation_from_spi(Reservation *reservation)
{
	bool		isnull;
	char	   *state;

	state = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
	reservation->state = state_from_name(state);
	reservation->resource = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2);
	reservation->token = DatumGetInt64(caio_spi_value(0, 3, &isnull));
	if (isnull)
		reservation->token = 0;
}

/* Lock and read a reservation; false when the wallet has no such nonce. */
static bool
reservation_lock(const Wallet *wallet, int64 nonce, Reservation *reservation)
{
	Datum		arg = Int64GetDatum(nonce);

	if (wallet_run(&reservation_lock_plan, wallet, 1, &arg, NULL, false) == 0)
		return false;
	reservation_from_spi(reservation);
	return true;
}

static void
refuse_move(const Wallet *wallet, int64 nonce, NonceState from, NonceState to)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("cannot move nonce " INT64_FORMAT " of wallet %s on chain " INT64_FORMAT " from %s to %s",
					nonce, wallet->address, wallet->chain_id,
					nonce_state_names[from], nonce_state_names[to]),
			 errdetail("A reservation moves forward: reserved, signed, broadcast, then mined or dropped; one that was never broadcast can be released.")));
}

/*
 * Whether a reservation may move from one state to another.  Marking signed
 * or broadcast again records another attempt (a replacement transaction);
 * repeating a final mark is a harmless retry.  mined may become dropped: a
 * sync marks every broadcast nonce below the chain's count mined, and only
 * the caller can tell that the transaction mined with it was not ours.
 */
static bool
move_allowed(NonceState from, NonceState to)
{
	if (to == NONCE_RESERVED)
		return false;
	if (to == from)
		return true;
	switch (from)
	{
		case NONCE_RESERVED:
			return true;
		case NONCE_SIGNED:
		case NONCE_BROADCAST:
			return to > from && (to != NONCE_RELEASED || from == NONCE_SIGNED);
		case NONCE_MINED:
			return to == NONCE_DROPPED;
		default:
			return false;		/* dropped and released are final */
	}
}

static void
mark_write(const Wallet *wallet, int64 nonce, NonceState to, const char *tx_hash,
		   const CaioLease *lease)
{
	Datum		values[7] = {0};
	char		nulls[7] = "       ";

	values[0] = Int64GetDatum(nonce);
	values[1] = CStringGetTextDatum(nonce_state_names[to]);
	if (tx_hash)
		values[2] = CStringGetTextDatum(tx_hash);
	else
		nulls[2] = 'n';
	if (lease)
	{
		values[3] = CStringGetTextDatum(lease->holder);
		values[4] = Int64GetDatum(lease->token);
		values[6] = CStringGetTextDatum(lease->resource);
	}
	else
		nulls[3] = nulls[4] = nulls[6] = 'n';
	values[5] = TimestampTzGetDatum(caio_clock_now(NULL));
	wallet_run(&mark_plan, wallet, lengthof(values), values, nulls, false);
}

/*
 * A reservation made under a lease is fenced: a mark must name a current
 * lease on the same resource, with a token no older than the reservation's.
 */
static void
mark_check_fence(const Wallet *wallet, int64 nonce, const Reservation *reservation,
				 const CaioLease *lease, const char *action)
{
	CaioRefusedNonce refused = {wallet->chain_id, wallet->address, nonce,
	reservation->resource, reservation->token, action};

	if (reservation->resource == NULL)
		return;
	if (lease == NULL)
		caio_refuse_missing_nonce_lease(&refused);
	if (strcmp(lease->resource, reservation->resource) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the lease is on resource \"%s\", but nonce %lld was reserved under a lease on \"%s\"",
						lease->resource, (long long) nonce, reservation->resource)));
	if (lease->token < reservation->token)
		caio_refuse_stale_nonce(&refused, lease->token);
}

/*
 * Move a reservation, which the caller has locked, to a new state: fenced,
 * forward only, and consistent with the chain's count (a nonce the count
 * has passed was mined by someone, so it can be dropped but not released;
 * one it has not passed may still be mined, so it cannot be dropped).
 */
static void
nonce_move(const Wallet *wallet, int64 nonce, const Reservation *reservation,
		   NonceState to, const char *tx_hash, const CaioLease *lease)
{
	int64		chain_count;
	int64		next_nonce;

	mark_check_fence(wallet, nonce, reservation, lease,
					 to == NONCE_RELEASED && lease == NULL ? "release" : "mark");
	if (!move_allowed(reservation->state, to))
		refuse_move(wallet, nonce, reservation->state, to);

	wallet_read(wallet, &chain_count, &next_nonce);
	if (to == NONCE_DROPPED && nonce >= chain_count)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot mark nonce " INT64_FORMAT " of wallet %s on chain " INT64_FORMAT " dropped",
						nonce, wallet->address, wallet->chain_id),
				 errdetail("The chain's transaction count, " INT64_FORMAT ", has not passed it: a transaction with this nonce may still be mined.",
						   chain_count),
				 errhint("Call caio_nonce_sync() with the chain's count first.")));
	if (to == NONCE_RELEASED && nonce < chain_count)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot release nonce " INT64_FORMAT " of wallet %s on chain " INT64_FORMAT,
						nonce, wallet->address, wallet->chain_id),
				 errdetail("The chain's transaction count, " INT64_FORMAT ", says a transaction with this nonce was mined.",
						   chain_count),
				 errhint("Mark it mined, or dropped if that transaction was not yours.")));
	mark_write(wallet, nonce, to, tx_hash, lease);
	if (to == NONCE_RELEASED && reservation->state != NONCE_RELEASED)
		caio_count(CAIO_NONCES_RELEASED, 1);
}

Datum
caio_nonce_mark(PG_FUNCTION_ARGS)
{
	Wallet		wallet;
	int64		nonce;
	NonceState	to;
	char	   *tx_hash = NULL;
	CaioLease	lease;
	CaioLease	newest;
	bool		under_lease = !PG_ARGISNULL(5);
	CaioSpi		spi;
	Reservation reservation;

	caio_require_trusted_search_path_for_superuser("caio_nonce_mark");
	caio_citus_serve_here("nonces");

	wallet_from_args(fcinfo, &wallet);
	nonce = arg_count(fcinfo, 2, "nonce", NONCE_MAX);
	caio_arg_required(fcinfo, 3, "state", NULL);
	to = state_from_name(text_to_cstring(PG_GETARG_TEXT_PP(3)));
	if (!PG_ARGISNULL(4))
		tx_hash = tx_hash_parse(text_to_cstring(PG_GETARG_TEXT_PP(4)));
	if (under_lease)
	{
		caio_lease_from_arg(fcinfo, 5, &lease);
		caio_lease_require_current(&lease, &newest);
	}

	caio_spi_begin(&spi);
	wallet_lock(&wallet, false);
	if (!reservation_lock(&wallet, nonce, &reservation))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("nonce " INT64_FORMAT " of wallet %s on chain " INT64_FORMAT " is not reserved",
						nonce, wallet.address, wallet.chain_id),
				 errhint("Reserve nonces with caio_nonce_reserve().")));
	nonce_move(&wallet, nonce, &reservation, to, tx_hash,
			   under_lease ? &lease : NULL);
	caio_spi_end(&spi);

	PG_RETURN_VOID();
}

/*
 * Hand back a nonce that was never broadcast.  It takes no lease, so a
 * reservation made under one must be released with caio_nonce_mark(...,
 * 'released', lease => ...) instead (LK003 here).
 */
Datum
caio_nonce_release(PG_FUNCTION_ARGS)
{
	Wallet		wallet;
	int64		nonce;
	CaioSpi		spi;
	Reservation reservation;
	bool		released = false;

	caio_require_trusted_search_path_for_superuser("caio_nonce_release");
	caio_citus_serve_here("nonces");

	wallet_from_args(fcinfo, &wallet);
	nonce = arg_count(fcinfo, 2, "nonce", NONCE_MAX);

	caio_spi_begin(&spi);
	wallet_lock(&wallet, false);
	if (reservation_lock(&wallet, nonce, &reservation) &&
		reservation.state != NONCE_RELEASED)
	{
		nonce_move(&wallet, nonce, &reservation, NONCE_RELEASED, NULL, NULL);
		released = true;
	}
	caio_spi_end(&spi);

	PG_RETURN_BOOL(released);
}

/* ----------------------------------------------------------------
 * caio_nonce_sync
 * ----------------------------------------------------------------
 */

/* Broadcast nonces below the chain's count are mined. */
static void
sync_settle(const Wallet *wallet, int64 count, TimestampTz now)
{
	Datum		args[2] = {Int64GetDatum(count), TimestampTzGetDatum(now)};

	wallet_run(&settle_plan, wallet, lengthof(args), args, NULL, false);
}

/* The count, or one past the highest nonce at or above it still in use. */
static int64
sync_pending_above(const Wallet *wallet, int64 count)
{
	Datum		from = Int64GetDatum(count);
	bool		isnull;
	Datum		top;

	wallet_run(&pending_top_plan, wallet, 1, &from, NULL, true);
	top = caio_spi_value(0, 1, &isnull);
	return isnull ? count : Max(count, DatumGetInt64(top) + 1);
}

static void
sync_fill_holes(const Wallet *wallet, int64 count, int64 next_nonce, TimestampTz now)
{
	Datum		args[3] = {Int64GetDatum(count), Int64GetDatum(next_nonce),
	TimestampTzGetDatum(now)};

	wallet_run(&fill_holes_plan, wallet, lengthof(args), args, NULL, false);
}

static void
sync_write(const Wallet *wallet, int64 count, int64 next_nonce, TimestampTz now)
{
	Datum		args[3] = {Int64GetDatum(count), Int64GetDatum(next_nonce),
	TimestampTzGetDatum(now)};

	wallet_run(&wallet_sync_plan, wallet, lengthof(args), args, NULL, false);
}

/*
 * A sync settles broadcast nonces and moves the count and the counter, up or
 * down, which changes what every reservation of the wallet may still become
 * (released below the count, dropped above it) and which nonces the wallet's
 * next reservations get.  So a wallet whose nonces went under a lease is the
 * lease's: while any of those reservations is not yet dropped or released, a
 * sync must name a current lease on their resource (the caller's, checked
 * before), with a token no older than any of theirs, the fence of
 * caio_nonce_mark.  Without a lease only a superuser (trusted) may sync such
 * a wallet; one whose nonces never went under a lease syncs as before.
 */
static void
sync_check_fence(const Wallet *wallet, const CaioLease *lease, bool trusted)
{
	Datum		args[2] = {0};
	char		nulls[2] = "nn";
	Reservation reservation;
	bool		isnull;
	int64		nonce;

	if (lease == NULL && trusted)
		return;
	if (lease)
	{
		args[0] = CStringGetTextDatum(lease->resource);
		args[1] = Int64GetDatum(lease->token);
		nulls[0] = nulls[1] = ' ';
	}
	if (wallet_run(&sync_fenced_plan, wallet, lengthof(args), args, nulls, true) == 0)
		return;
	reservation_from_spi(&reservation);
	nonce = DatumGetInt64(caio_spi_value(0, 4, &isnull));
	mark_check_fence(wallet, nonce, &reservation, lease, "sync");
	elog(ERROR, "caio: the sync's fence let through nonce " INT64_FORMAT, nonce);
}

/* How many holes a sync down may open; more means a bad reading. */
#define SYNC_MAX_HOLES	1000000

/*
 * The chain's count is the truth: broadcast nonces below it are mined, and
 * the next nonce becomes the count, up or down, but never at or below a
 * nonce that a transaction still uses.
 */
Datum
caio_nonce_sync(PG_FUNCTION_ARGS)
{
	Wallet		wallet;
	int64		count;
	CaioSpi		spi;
	int64		old_count;
	int64		next_nonce;
	int64		nonce;
	TimestampTz now;
	CaioLease	lease;
	CaioLease	newest;
	/* The 0.6.0 function, before the update, passes no lease argument. */
	bool		under_lease = PG_NARGS() > 3 && !PG_ARGISNULL(3);
	bool		trusted = superuser();

	caio_require_trusted_search_path_for_superuser("caio_nonce_sync");
	caio_citus_serve_here("nonces");

	wallet_from_args(fcinfo, &wallet);
	count = arg_count(fcinfo, 2, "chain_count", COUNT_MAX);
	if (under_lease)
	{
		caio_lease_from_arg(fcinfo, 3, &lease);
		caio_lease_require_current(&lease, &newest);
	}

	caio_spi_begin(&spi);
	wallet_lock(&wallet, true);
	sync_check_fence(&wallet, under_lease ? &lease : NULL, trusted);
	wallet_read(&wallet, &old_count, &next_nonce);
	now = caio_clock_now(NULL);

	sync_settle(&wallet, count, now);
	next_nonce = sync_pending_above(&wallet, count);

	if (count < old_count)
	{
		if (next_nonce - count > SYNC_MAX_HOLES)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("chain_count " INT64_FORMAT " is too far below the wallet's nonces",
							count),
					 errdetail("Nonce " INT64_FORMAT " is still in use; syncing down to " INT64_FORMAT " would leave up to " INT64_FORMAT " holes, more than %d.",
							   next_nonce - 1, count, next_nonce - count, SYNC_MAX_HOLES),
					 errhint("Check the reading: pass the \"latest\" transaction count of a node that is in sync.")));
		sync_fill_holes(&wallet, count, next_nonce, now);
	}
	/* Past dropped nonces at the counter: sync returns what reserve will. */
	next_nonce = free_nonce(&wallet, next_nonce);
	sync_write(&wallet, count, next_nonce, now);

	if (!released_lowest(&wallet, count, next_nonce, &nonce))
		nonce = next_nonce;
	caio_spi_end(&spi);

	PG_RETURN_INT64(nonce);
}
